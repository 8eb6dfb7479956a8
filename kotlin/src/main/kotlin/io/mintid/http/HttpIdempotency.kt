package io.mintid.http

import io.mintid.ArgumentException
import io.mintid.Freshness
import io.mintid.HttpException
import io.mintid.IdempotencyHttp
import io.mintid.IdempotencyKey
import io.mintid.IdempotencyKeyException
import io.mintid.KeyRing
import io.mintid.Problem
import io.mintid.RequestIdException
import io.mintid.StoreException
import io.mintid.Uuid7
import io.mintid.requireNonNegative
import io.mintid.store.Executed
import io.mintid.store.FingerprintMismatch
import io.mintid.store.IdempotencyStore
import io.mintid.store.InProgress
import io.mintid.store.KeyTooOld
import io.mintid.store.NotExecuted
import io.mintid.store.OperationException
import io.mintid.store.RecordLease
import io.mintid.store.Replayed
import io.mintid.store.Spans
import io.mintid.store.StoreRequest
import io.mintid.store.Wire
import io.mintid.store.traced
import io.mintid.store.wayName
import uniffi.mintid_ffi.KeyAdmission
import java.io.IOException
import java.io.InputStream

/**
 * A request as the integrations see it; [raw] is the framework's own (a Ktor `ApplicationCall`,
 * a servlet request, …) for the caller's functions.
 */
interface HttpRequestView<out R> {
    /** The method, upper case. */
    val method: String

    /** The full path as the application sees it (mount prefix included), without the query. */
    val path: String

    /** The raw query string, without the `?` (empty without one). */
    val query: String get() = ""

    /** A header's value (names are case-insensitive; repeated ones joined with `, `), or null. */
    fun header(name: String): String?

    /** The body's declared length (`Content-Length`), or null when the request names none. */
    val declaredLength: Long? get() = header("content-length")?.trim()?.toLongOrNull()?.takeIf { it >= 0 }

    /**
     * Whether the framework says the body stream had ended, or was taken by another reader,
     * before the middleware read it (asked once, just before the body is read; default: it cannot
     * tell, and only a body shorter than [declaredLength] counts as consumed).
     */
    val bodyEndedBeforeRead: Boolean get() = false

    /**
     * The remedy, in the framework's words, when another reader consumed the body first
     * (`http.body_consumed`).
     */
    val bodyConsumedFix: String get() = "put the idempotency middleware before anything that reads the request body"

    /** The framework's request. */
    val raw: R
}

/**
 * Whose keys a request's are: the authenticated user or tenant, e.g. `user:42` (1–64 bytes), or
 * null when the request has no authenticated caller (answered 401 before any key is read).
 */
fun interface ScopeFunction<in R> {
    /** The scope of [request], or null without an authenticated caller. */
    fun scopeOf(request: HttpRequestView<R>): String?
}

/** Which covered requests need a key (a route predicate). */
fun interface RoutePredicate<in R> {
    /** Whether [request] is covered. */
    fun covers(request: HttpRequestView<R>): Boolean
}

/** The logged-in user's scope for a grant, or null when nobody is logged in (401). */
fun interface GrantScopeFunction<in R> {
    /** The scope of [request]'s user, or null. */
    fun scopeOf(request: HttpRequestView<R>): String?
}

/** A request's key kind (1–32 of `a-z 0-9 . _ -`). */
fun interface KindFunction<in R> {
    /** The kind of [request]'s key. */
    fun kindOf(request: HttpRequestView<R>): String
}

/** A framework-neutral handler: a request and its body in, a complete answer out. */
fun interface HttpHandler<in R> {
    /** Answers [request], whose body is [body]; may throw the body's [IOException] (Java lambdas too). */
    @Throws(IOException::class)
    fun handle(
        request: HttpRequestView<R>,
        body: InputStream,
    ): HttpAnswer
}

/** What [HttpIdempotency.admit] decided: go on with the key, or answer at once. */
sealed interface Admission {
    /**
     * A request whose key was read and verified.
     *
     * @property key the idempotency key.
     * @property keyCreatedMillis when the key was created (a signed request ID's UUIDv7 time), if known.
     * @property query the request's raw query string, which takes part in its fingerprint.
     */
    class Admitted internal constructor(
        val key: IdempotencyKey,
        val keyCreatedMillis: Long?,
        val query: String,
    ) : Admission

    /** A refusal (400 with the core's problem). */
    class Refused internal constructor(
        /** The answer to send. */
        val answer: HttpAnswer,
    ) : Admission
}

/** What [HttpIdempotency.start] decided: run the handler under a claim, or answer at once. */
sealed interface Start {
    /** The key was claimed: run the handler, then [HttpIdempotency.finish] (or [HttpIdempotency.abandon]). */
    class Claimed internal constructor(
        internal val lease: RecordLease,
    ) : Start

    /** A replay (with `Idempotent-Replayed: true`), 409 with `Retry-After`, 422, 400 or 503. */
    class Answered internal constructor(
        /** The answer to send. */
        val answer: HttpAnswer,
    ) : Start
}

/**
 * Exactly-once HTTP requests for any JVM framework, with the behaviour every mintid integration
 * shares (`tests/http/README.md`): covered methods and routes, the key (a signed request ID
 * verified by the core, or an `Idempotency-Key`), the body fingerprint, running the handler once
 * through an [IdempotencyStore] (claim with a lease, store the answer through the core's
 * envelope, replay duplicates with `Idempotent-Replayed: true`) and the core's
 * `application/problem+json` refusals (400, 409 with `Retry-After`, 422, 503; 413 over the body
 * limit).
 *
 * [wrap] turns a [HttpHandler] into one that does all of it; the steps ([covers], [admit],
 * [readBody], [start], [finish], or [runInTransaction] in the same-transaction mode) are
 * public for frameworks that run the handler themselves (the Ktor plugin does). The store is
 * blocking JDBC: call from threads that may block.
 *
 * Build one with [builder]: only the store and the scope function are required.
 */
class HttpIdempotency<R> private constructor(
    builder: Builder<R>,
) {
    private val store: IdempotencyStore = builder.store
    private val scope: ScopeFunction<R> = builder.scope
    private val keyRing: KeyRing? = builder.keyRing
    private val requestIdHeader: String = builder.requestIdHeader
    private val acceptIdempotencyKey: Boolean = builder.acceptIdempotencyKey ?: (builder.keyRing == null)
    private val freshness: Freshness = builder.freshness
    private val methods: Set<String> = builder.methods.map { it.uppercase() }.toSet()
    private val routes: RoutePredicate<R>? = builder.routes
    private val storedHeaders: List<String> = builder.storedHeaders.toList()
    private val kind: KindFunction<R> = builder.kind ?: KindFunction { HttpRules.defaultKind(it.method, it.path) }
    private val handlerErrors: (Throwable) -> Unit = builder.handlerErrors
    private val grantPath: String? = builder.grantPath
    private val grantEndpoint: GrantEndpoint? = builder.grantEndpoint
    private val grantScope: GrantScopeFunction<R>? = builder.grantScope
    private val transactions: RecordTransactions? = builder.transactions

    /** The largest body read, in bytes. */
    val bodyLimit: Int = builder.bodyLimit

    /**
     * The grant endpoint's answer when [request] is a `POST` to its path (see [Builder.grant]),
     * else null.
     */
    fun grant(request: HttpRequestView<R>): HttpAnswer? {
        if (grantEndpoint == null || grantScope == null || request.path != grantPath) return null
        if (request.method.uppercase() != "POST") return null
        return grantEndpoint.answer(grantScope.scopeOf(request))
    }

    /**
     * Whether [request] is covered: its method is, it is not for the grant endpoint, and the
     * route predicate (if any) accepts it.
     */
    fun covers(request: HttpRequestView<R>): Boolean =
        request.path != grantPath && request.method.uppercase() in methods && (routes?.covers(request) ?: true)

    /**
     * Reads the key, before the body: a signed request ID (with a key ring) from its header, else
     * an accepted `Idempotency-Key`, verified and scoped. Refusals, the core's `admit_key` first:
     * 401 when the scope function finds no caller; 400 `missing_key` naming the header(s) the
     * route accepts, `malformed_key`, `invalid_request_id`, `grant_expired`, `key_too_old`.
     *
     * @throws io.mintid.MintidException when the scope or kind function gives a value the core
     *   refuses, or the key ring fails: the server's configuration, not the client's key.
     */
    fun admit(request: HttpRequestView<R>): Admission {
        val scope = scope.scopeOf(request)
        val signed = keyRing?.let { request.header(requestIdHeader) }
        val plain = request.header(HttpRules.IDEMPOTENCY_KEY_HEADER)
        val source =
            HttpRules.admitKey(
                keyRing?.let { requestIdHeader },
                acceptIdempotencyKey,
                caller = scope != null,
                requestIdSent = signed != null,
                idempotencyKeySent = plain != null,
            )
        if (source is KeyAdmission.Refused) {
            return Admission.Refused(HttpAnswer.refusal(source.status.toInt(), source.document))
        }
        checkNotNull(scope) { "the core admits no request without a caller" }
        val kind = kind.kindOf(request)
        if (keyRing != null && signed != null && source is KeyAdmission.SignedRequestId) {
            val uuid =
                try {
                    keyRing.verify(IdempotencyKey.parseHeader(signed), scope, store.clock.nowMillis(), freshness)
                } catch (error: IdempotencyKeyException) {
                    val problem = HttpRules.keyRefusal(error, signed = true) ?: throw error
                    store.metrics.requestIdRejected(error.code)
                    return Admission.Refused(HttpAnswer.problem(problem, error.detail))
                } catch (error: RequestIdException) {
                    val problem = HttpRules.keyRefusal(error, signed = true) ?: throw error
                    store.metrics.requestIdRejected(error.code)
                    return Admission.Refused(HttpAnswer.problem(problem, error.detail))
                }
            return Admission.Admitted(IdempotencyKey.of(kind, scope, uuid.toString()), Uuid7.timestampMillis(uuid), request.query)
        }
        return try {
            Admission.Admitted(IdempotencyKey.fromHeader(kind, scope, plain ?: ""), null, request.query)
        } catch (error: IdempotencyKeyException) {
            Admission.Refused(HttpAnswer.problem(HttpRules.keyRefusal(error, signed = false) ?: throw error, error.detail))
        }
    }

    /**
     * The body of [request] from [input], or null when it holds more than [bodyLimit] bytes (then
     * answer [tooLarge]).
     *
     * @throws io.mintid.HttpException `http.body_consumed` when something read the body before
     *   the middleware (see [checkBodyRead]).
     */
    fun readBody(
        request: HttpRequestView<R>,
        input: InputStream,
    ): ByteArray? {
        val ended = request.bodyEndedBeforeRead
        val bytes = input.readNBytes(bodyLimit + 1)
        if (bytes.size > bodyLimit) return null
        checkBodyRead(request, ended, bytes.size)
        return bytes
    }

    /**
     * Refuses a body another reader consumed before the middleware, the core's rule (never
     * fingerprinted as empty, which would replay another body's answer): [request] declares a
     * body (`Content-Length` above 0, or a `Transfer-Encoding`) and its stream had ended before
     * the middleware read it ([endedBeforeRead]) or gave fewer than its declared bytes ([read],
     * within [bodyLimit]).
     *
     * @throws io.mintid.HttpException `http.body_consumed`, naming [HttpRequestView.bodyConsumedFix]:
     *   the server's configuration, not the client's request (no problem document).
     */
    fun checkBodyRead(
        request: HttpRequestView<R>,
        endedBeforeRead: Boolean,
        read: Int,
    ) = HttpRules.checkBodyRead(request.declaredLength, request.header("transfer-encoding") != null, endedBeforeRead, read, request.bodyConsumedFix)

    /** The answer for a body over [bodyLimit]: 413 `about:blank`, nothing stored. */
    fun tooLarge(): HttpAnswer = HttpAnswer.status(413, "the body exceeds $bodyLimit bytes")

    /**
     * Claims the admitted key for a request with [body] of [contentType] (fingerprinted by the
     * core with the request's query string): [Start.Claimed] when the handler must run now, else
     * [Start.Answered] with the replay or refusal; 400 `malformed_body` for a JSON content type
     * whose body is not JSON; 503 `storage_unavailable` when the store fails (nothing ran; the
     * failure goes to `handlerErrors`, never into the answer).
     */
    fun start(
        admitted: Admission.Admitted,
        contentType: String?,
        body: ByteArray,
    ): Start {
        val request = storeRequest(admitted, contentType, body) { return Start.Answered(it) }
        val result =
            try {
                store.claimLease(admitted.key, request)
            } catch (error: StoreException) {
                // Every store failure's problem is storage_unavailable (the core's rule).
                handlerErrors(error)
                return Start.Answered(HttpAnswer.problem(error.problem ?: Problem.STORAGE_UNAVAILABLE))
            }
        return when (result) {
            is RecordLease -> Start.Claimed(result)
            is NotExecuted -> Start.Answered(answerOf(result))
        }
    }

    /** The request's fingerprint (the core's, with its query string), or [refuse] with 400 `malformed_body`. */
    private inline fun storeRequest(
        admitted: Admission.Admitted,
        contentType: String?,
        body: ByteArray,
        refuse: (HttpAnswer) -> Nothing,
    ): StoreRequest {
        val fingerprint =
            try {
                HttpRules.fingerprintRequest(contentType, admitted.query, body)
            } catch (error: HttpException) {
                refuse(HttpAnswer.problem(error.problem ?: throw error, error.detail))
            }
        return StoreRequest(fingerprint, admitted.keyCreatedMillis)
    }

    /** The answer to a request not run: the replay (with `Idempotent-Replayed: true`), 409 with `Retry-After`, 422 or 400. */
    private fun answerOf(result: NotExecuted): HttpAnswer =
        when (result) {
            is Replayed -> {
                val stored = result.response
                val replayed =
                    if (stored == null) {
                        HttpAnswer.status(500, result.error)
                    } else {
                        HttpRules.decodeEnvelope(stored.contentType, stored.body)
                    }
                replayed.withHeader(IdempotencyHttp.replayedHeader.lowercase(), IdempotencyHttp.replayedValue)
            }
            is InProgress ->
                HttpAnswer.problem(
                    Problem.IN_PROGRESS,
                    null,
                    listOf(IdempotencyHttp.retryAfterHeader.lowercase() to result.retryAfterSecs.toString()),
                )
            is FingerprintMismatch -> HttpAnswer.problem(Problem.FINGERPRINT_MISMATCH)
            is KeyTooOld -> HttpAnswer.problem(Problem.KEY_TOO_OLD)
        }

    /**
     * The same-transaction way ([Builder.sameTransaction]), the step for frameworks that run the
     * handler themselves (the Ktor plugin does): [handler] runs once for the admitted key with
     * [body] (read by [readBody]) in the record's transaction ([IdempotencyStore.inTransaction],
     * its connection given by [HandlerTransaction.connection] on the calling thread), so its
     * writes, the claim and the completed record commit together. Returns what to send: a replay
     * or refusal when the handler did not run; the handler's answer once committed. A 5xx answer
     * or a throw rolls everything back and stores nothing (the core's rule for that way): the
     * 5xx is sent, a throw answers 500. A store failure answers 503 `storage_unavailable` before
     * the handler ran, 500 after. Blocking: the call returns when the transaction has ended.
     *
     * @throws IllegalStateException when the middleware was built without [Builder.sameTransaction].
     */
    fun runInTransaction(
        admitted: Admission.Admitted,
        request: HttpRequestView<R>,
        body: ByteArray,
        handler: HttpHandler<R>,
    ): HttpAnswer {
        val transactions = checkNotNull(transactions) { "runInTransaction needs a middleware built with sameTransaction()" }
        val stored = storeRequest(admitted, request.header("content-type"), body) { return it }
        var ran: HttpAnswer? = null
        var threw = false
        val result =
            try {
                transactions.transaction { connection ->
                    store.inTransaction(connection, admitted.key, stored) {
                        val answer =
                            try {
                                HandlerTransaction.within(connection) { handler.handle(request, body.inputStream()) }
                            } catch (error: Exception) {
                                threw = true
                                throw error
                            }
                        ran = answer
                        val envelope = HttpRules.encodeEnvelope(answer, storedHeaders)
                        if (answer.status >= 500) throw OperationException("the handler answered ${answer.status}", false, envelope)
                        envelope
                    }
                }
            } catch (error: Exception) {
                val answered = ran
                if (answered != null && answered.status >= 500 && error is OperationException) return answered
                handlerErrors(error)
                val problem = if (answered == null && !threw && error is StoreException) error.problem ?: Problem.STORAGE_UNAVAILABLE else null
                return if (problem == null) HttpAnswer.status(500) else HttpAnswer.problem(problem)
            }
        return when (result) {
            is Executed -> checkNotNull(ran) { "the store ran no handler" }
            is NotExecuted -> answerOf(result)
        }
    }

    /**
     * Stores the handler's [answer] under the claim and returns what to send: [answer] itself
     * once stored. A status below 500 completes the key (replayed to duplicates); 500 and above is
     * a final failure, stored and replayed when the store's policy stores errors, else the key is
     * released. If storing fails (the database went away, a response the store cannot keep), the
     * failure goes to `handlerErrors` and the answer is 500 (`about:blank`, no detail): a retry
     * gets what the record holds.
     */
    fun finish(
        claimed: Start.Claimed,
        answer: HttpAnswer,
    ): HttpAnswer {
        try {
            val stored = HttpRules.encodeEnvelope(answer, storedHeaders)
            if (answer.status >= 500) {
                claimed.lease.fail("the handler answered ${answer.status}", false, stored)
            } else {
                claimed.lease.complete(stored)
            }
        } catch (error: Exception) {
            handlerErrors(error)
            return HttpAnswer.status(500)
        }
        return answer
    }

    /** Releases the claim without an answer (the handler could not run): the next request runs it. */
    fun abandon(
        claimed: Start.Claimed,
        error: Throwable,
    ) {
        try {
            claimed.lease.fail(error.toString(), true, null)
        } catch (storeError: Exception) {
            error.addSuppressed(storeError)
        }
    }

    /**
     * Handles one request: an uncovered one goes to [handler] untouched; a covered one is admitted,
     * its body read up to the limit (`http.body_consumed` when something read it first, see
     * [checkBodyRead]), and [handler] runs once for its key. A handler that throws
     * answers 500 (`about:blank`), stored like any 5xx; the exception goes to the builder's
     * `handlerErrors`. An uncovered request's [handler] may throw its [IOException].
     */
    @Throws(IOException::class)
    fun handle(
        request: HttpRequestView<R>,
        body: InputStream,
        handler: HttpHandler<R>,
    ): HttpAnswer {
        grant(request)?.let { return it }
        if (!covers(request)) return handler.handle(request, body)
        val admitted =
            when (val admission = admit(request)) {
                is Admission.Refused -> return admission.answer
                is Admission.Admitted -> admission
            }
        val bytes = readBody(request, body) ?: return tooLarge()
        if (transactions != null) return runInTransaction(admitted, request, bytes, handler)
        val claimed =
            when (val started = start(admitted, request.header("content-type"), bytes)) {
                is Start.Answered -> return started.answer
                is Start.Claimed -> started
            }
        val answer =
            try {
                // The handler is the operation mintid runs for the key.
                store.metrics.traced(Spans.OPERATION, wayName(Wire.Way.LEASE), { null }) { handler.handle(request, bytes.inputStream()) }
            } catch (error: Exception) {
                handlerErrors(error)
                HttpAnswer.status(500)
            } catch (error: Throwable) {
                abandon(claimed, error)
                throw error
            }
        return finish(claimed, answer)
    }

    /** [handler] behind this middleware: see [handle]. */
    fun wrap(handler: HttpHandler<R>): HttpHandler<R> = HttpHandler { request, body -> handle(request, body, handler) }

    /**
     * The settings of an [HttpIdempotency]; all but the store and the scope function have safe
     * defaults (`tests/http/README.md`).
     */
    class Builder<R> internal constructor(
        internal val store: IdempotencyStore,
        internal val scope: ScopeFunction<R>,
    ) {
        internal var keyRing: KeyRing? = null
        internal var requestIdHeader: String = HttpRules.REQUEST_ID_HEADER
        internal var acceptIdempotencyKey: Boolean? = null
        internal var freshness: Freshness = Freshness.DEFAULT
        internal var methods: List<String> = HttpRules.DEFAULT_METHODS
        internal var routes: RoutePredicate<R>? = null
        internal var bodyLimit: Int = HttpRules.DEFAULT_BODY_LIMIT.toInt()
        internal var storedHeaders: List<String> = HttpRules.DEFAULT_STORED_HEADERS
        internal var kind: KindFunction<R>? = null
        internal var handlerErrors: (Throwable) -> Unit = { error -> LOGGER.log(System.Logger.Level.ERROR, "mintid: a handler or the store failed", error) }
        internal var grantPath: String? = null
        internal var grantEndpoint: GrantEndpoint? = null
        internal var grantScope: GrantScopeFunction<R>? = null
        internal var transactions: RecordTransactions? = null

        /** Verifies signed request IDs with [keyRing]; without one only `Idempotency-Key` is read. */
        fun keyRing(keyRing: KeyRing?) = apply { this.keyRing = keyRing }

        /** The header of signed request IDs (default `Mintid-Request-Id`). */
        fun requestIdHeader(name: String) =
            apply {
                require(name.isNotBlank()) { "the request ID header must be named" }
                requestIdHeader = name
            }

        /** Whether plain `Idempotency-Key` values count: default true without a key ring, false with one. */
        fun acceptIdempotencyKey(accept: Boolean) = apply { acceptIdempotencyKey = accept }

        /** Freshness bounds of signed request IDs (the age should not exceed the store's retention). */
        fun freshness(freshness: Freshness) = apply { this.freshness = freshness }

        /** The methods covered (default POST and PATCH); others pass through untouched. */
        fun methods(methods: Collection<String>) =
            apply {
                require(methods.all { it.isNotBlank() }) { "a covered method must be named" }
                this.methods = methods.toList()
            }

        /** Which covered requests need a key (default: all of them). */
        fun routes(routes: RoutePredicate<R>?) = apply { this.routes = routes }

        /** The largest body read, in bytes (default 1 MiB); above it the answer is 413. */
        fun bodyLimit(bytes: Int) =
            apply {
                requireNonNegative(bytes.toLong(), "the body limit")
                if (bytes == Int.MAX_VALUE) {
                    throw ArgumentException("argument.out_of_range", "the body limit must be 0 to ${Int.MAX_VALUE - 1} bytes, not $bytes")
                }
                bodyLimit = bytes
            }

        /** Response headers stored and replayed besides content-type (default [HttpRules.DEFAULT_STORED_HEADERS]). */
        fun storedHeaders(names: Collection<String>) = apply { storedHeaders = names.toList() }

        /** The key kind of a request (default [HttpRules.defaultKind] of its method and path). */
        fun kind(kind: KindFunction<R>?) = apply { this.kind = kind }

        /** Receives a handler's exception (answered 500) and every store failure, with its cause (default: logged). */
        fun handlerErrors(receiver: java.util.function.Consumer<Throwable>) = apply { handlerErrors = receiver::accept }

        /**
         * Serves the grant endpoint at [path] (the full path) from the middleware itself, so that
         * it is never covered: a `POST` there answers [endpoint]'s grant for [scope] of the
         * request, or 401 when it gives none.
         */
        fun grant(
            path: String,
            endpoint: GrantEndpoint,
            scope: GrantScopeFunction<R>,
        ) = apply {
            require(path.startsWith("/")) { "the grant path must start with '/', not $path" }
            grantPath = path
            grantEndpoint = endpoint
            grantScope = scope
        }

        /**
         * Runs covered handlers in the same-transaction mode (default: run-once, the handler
         * commits its own writes, then the record completes): each in a transaction of
         * [transactions] (the store's own by default), through the store's
         * [IdempotencyStore.inTransaction], with [HandlerTransaction.connection] its
         * connection. Its writes there, the claim and the completed record commit or roll
         * back together; a failed handler (5xx, a throw) stores nothing.
         */
        @JvmOverloads
        fun sameTransaction(transactions: RecordTransactions = RecordTransactions.of(store)) = apply { this.transactions = transactions }

        /** The middleware. */
        fun build(): HttpIdempotency<R> = HttpIdempotency(this)
    }

    /** Building one. */
    companion object {
        private val LOGGER: System.Logger = System.getLogger("io.mintid.http")

        /** The settings for a middleware over [store] whose keys are scoped by [scope]. */
        @JvmStatic
        fun <R> builder(
            store: IdempotencyStore,
            scope: ScopeFunction<R>,
        ): Builder<R> = Builder(store, scope)
    }
}
