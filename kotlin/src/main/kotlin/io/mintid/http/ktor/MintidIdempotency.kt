package io.mintid.http.ktor

import io.ktor.http.ContentType
import io.ktor.http.HttpStatusCode
import io.ktor.http.content.ByteArrayContent
import io.ktor.http.content.OutgoingContent
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.ApplicationCallPipeline
import io.ktor.server.application.Hook
import io.ktor.server.application.createRouteScopedPlugin
import io.ktor.server.application.hooks.CallFailed
import io.ktor.server.application.hooks.ResponseBodyReadyForSend
import io.ktor.server.application.hooks.ResponseSent
import io.ktor.server.request.ApplicationReceivePipeline
import io.ktor.server.request.RequestAlreadyConsumedException
import io.ktor.server.request.httpMethod
import io.ktor.server.request.path
import io.ktor.server.request.queryString
import io.ktor.server.request.receiveChannel
import io.ktor.server.response.respond
import io.ktor.server.routing.Route
import io.ktor.server.routing.RoutingPipelineCall
import io.ktor.server.routing.post
import io.ktor.util.AttributeKey
import io.ktor.util.pipeline.PipelinePhase
import io.ktor.utils.io.ByteChannel
import io.ktor.utils.io.ByteReadChannel
import io.ktor.utils.io.readRemaining
import io.ktor.utils.io.toByteArray
import io.mintid.Freshness
import io.mintid.KeyRing
import io.mintid.http.Admission
import io.mintid.http.GrantEndpoint
import io.mintid.http.HandlerTransaction
import io.mintid.http.HttpAnswer
import io.mintid.http.HttpHandler
import io.mintid.http.HttpIdempotency
import io.mintid.http.HttpRequestView
import io.mintid.http.HttpRules
import io.mintid.http.Start
import io.mintid.store.IdempotencyStore
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlinx.io.readByteArray
import java.sql.Connection
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException

/**
 * The settings of [MintidIdempotency]: [store] and [scope] are required, the rest have the
 * defaults every mintid integration shares (`tests/http/README.md`).
 */
class MintidIdempotencyConfig {
    /** Where records live; its policy decides waiting and whether 5xx answers are stored. */
    var store: IdempotencyStore? = null

    /**
     * Whose keys these are: the authenticated user or tenant, e.g. `"user:${principal.id}"`, or
     * null when the call has no authenticated caller (answered 401 before any key is read).
     */
    var scope: ((ApplicationCall) -> String?)? = null

    /** Verifies signed request IDs; without it only `Idempotency-Key` is read. */
    var keyRing: KeyRing? = null

    /** The header of signed request IDs. */
    var requestIdHeader: String = HttpRules.REQUEST_ID_HEADER

    /** Whether plain `Idempotency-Key` values count (default: only without a key ring). */
    var acceptIdempotencyKey: Boolean? = null

    /** Freshness bounds of signed request IDs. */
    var freshness: Freshness = Freshness.DEFAULT

    /** The methods covered; others pass through untouched. */
    var methods: List<String> = HttpRules.DEFAULT_METHODS

    /** Which covered calls need a key (default: all of them). */
    var routes: ((ApplicationCall) -> Boolean)? = null

    /** The largest body read, in bytes; above it the answer is 413. */
    var bodyLimit: Int = HttpRules.DEFAULT_BODY_LIMIT.toInt()

    /** Response headers stored and replayed besides content-type. */
    var storedHeaders: List<String> = HttpRules.DEFAULT_STORED_HEADERS

    /** The key kind of a call (default [HttpRules.defaultKind] of its method and path). */
    var kind: ((ApplicationCall) -> String)? = null

    /**
     * Whether covered routes run in the same-transaction mode (default false: run-once, the route
     * commits its own writes, then the record completes): each in a transaction of the store's
     * database ([HttpIdempotency.Builder.sameTransaction]), the route's writes on
     * [handlerTransaction], so that they, the claim and the completed record commit together or
     * roll back together.
     */
    var sameTransaction: Boolean = false
}

private class CallView(
    override val raw: ApplicationCall,
) : HttpRequestView<ApplicationCall> {
    override val method: String get() = raw.request.httpMethod.value

    // The raw path (the core decodes escapes): under every route prefix, as the client sent it.
    override val path: String get() = raw.request.path()
    override val query: String get() = raw.request.queryString()

    override fun header(name: String): String? = raw.request.headers.getAll(name)?.joinToString(", ")

    override val bodyConsumedFix: String get() = KTOR_BODY_FIX
}

/** The claim a call runs under, until its response is stored. */
private val CLAIM = AttributeKey<Start.Claimed>("io.mintid.claim")

/** The request body the plugin read, handed to the route's `receive`. */
private val BODY = AttributeKey<ByteArray>("io.mintid.body")

/** The record's transaction a call's route runs in (the same-transaction mode), until the route answers. */
private val ROUTE_TRANSACTION = AttributeKey<RouteTransaction>("io.mintid.transaction")

/** Marks the route of a [grantEndpoint]: the plugin never covers it. */
private val GRANT_ROUTE = AttributeKey<Unit>("io.mintid.grant")

/**
 * Hands the route's `receive` the body the plugin read, in place of whatever the receive pipeline
 * carries (the engine's channel, already drained, or Ktor's token of a body received before).
 */
private object ReceiveKeptBody : Hook<(ApplicationCall) -> ByteArray?> {
    override fun install(
        pipeline: ApplicationCallPipeline,
        handler: (ApplicationCall) -> ByteArray?,
    ) {
        pipeline.receivePipeline.intercept(ApplicationReceivePipeline.Before) {
            handler(context)?.let { proceedWith(ByteReadChannel(it)) }
        }
    }
}

/**
 * The remedy when a plugin read the body before [MintidIdempotency] (`http.body_consumed`).
 */
private const val KTOR_BODY_FIX =
    "install DoubleReceive (io.ktor:ktor-server-double-receive) so that MintidIdempotency reads the bytes it keeps, " +
        "or stop the plugin that receives the body before the route from doing so"

/**
 * Runs just before the route's handler: after every plugin of the call, Ktor's authentication
 * included (`authenticate {}` checks the principal before this phase), so the scope function
 * can read `call.principal()`. The handler gets the call and the rest of the pipeline (the route),
 * to run it inside (the same-transaction mode); else the route runs after it.
 */
private object AroundHandler : Hook<suspend (ApplicationCall, suspend () -> Unit) -> Unit> {
    private val phase = PipelinePhase("MintidIdempotency")

    override fun install(
        pipeline: ApplicationCallPipeline,
        handler: suspend (ApplicationCall, suspend () -> Unit) -> Unit,
    ) {
        pipeline.insertPhaseBefore(ApplicationCallPipeline.Call, phase)
        pipeline.intercept(phase) {
            handler(context) { proceed() }
            // An answer of the plugin's own (a replay, a refusal): the route does not run.
            if (context.response.isCommitted) finish()
        }
    }
}

/**
 * A route in the record's transaction: [HttpIdempotency.runInTransaction] runs on
 * [Dispatchers.IO] ([sent], what to send once the transaction ended) with a handler that hands
 * the route the transaction's connection ([started]) and blocks until the route's [answer].
 */
private class RouteTransaction {
    /** The transaction's connection once the route may run; null when it will not (a replay, a refusal). */
    val started = CompletableDeferred<Connection?>()

    /** The route's answer, or why it has none (it threw, was cancelled, or ended without one). */
    val answer = CompletableFuture<HttpAnswer>()

    /** What to send once the transaction ended. */
    lateinit var sent: Deferred<HttpAnswer>

    /** The connection [handlerTransaction] gives the route, once it runs. */
    var connection: Connection? = null

    /** The handler [HttpIdempotency.runInTransaction] runs: hands over the connection, then waits for the route. */
    val handler =
        HttpHandler<ApplicationCall> { _, _ ->
            started.complete(HandlerTransaction.connection())
            try {
                answer.get()
            } catch (failed: ExecutionException) {
                throw failed.cause ?: failed
            }
        }

    /** Hands the route's [answer] (null: one that cannot be stored, which rolls back) over and waits for what to send. */
    suspend fun answered(answer: HttpAnswer?): HttpAnswer {
        if (answer == null) this.answer.completeExceptionally(IllegalStateException("the route's response cannot be stored")) else this.answer.complete(answer)
        return sent.await()
    }
}

/**
 * Exactly-once requests for a Ktor server: [HttpIdempotency] as a route-scoped plugin, installed
 * in the routes it covers, inside `authenticate {}` when the scope needs the principal (it runs
 * after authentication, just before the route's handler). A [grantEndpoint] route is never
 * covered.
 *
 * A covered call (POST and PATCH by default) needs a key: a signed request ID (with a
 * [MintidIdempotencyConfig.keyRing]) or an `Idempotency-Key`. The plugin reads the body (the
 * route still `receive`s it), claims the key in the store, lets the route answer once and stores
 * that answer; duplicates get it replayed with `Idempotent-Replayed: true`. Refusals are the
 * core's `application/problem+json` (401 without a caller, 400, 409 with `Retry-After`, 422,
 * 503; 413 over the body limit). A route that throws answers 500 (`about:blank`), stored like any 5xx.
 *
 * ```kotlin
 * routing {
 *     authenticate {
 *         install(MintidIdempotency) {
 *             store = IdempotencyStore(dataSource, Dialect.POSTGRES)
 *             scope = { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } }
 *         }
 *         post("/orders") { … }
 *     }
 * }
 * ```
 */
val MintidIdempotency =
    createRouteScopedPlugin("MintidIdempotency", ::MintidIdempotencyConfig) {
        requireNotNull(route) {
            "install MintidIdempotency in a route (routing { install(MintidIdempotency) … }, or inside authenticate {}), " +
                "where the route and the principal are known"
        }
        val config = pluginConfig
        val store = requireNotNull(config.store) { "MintidIdempotency needs a store" }
        val scope = requireNotNull(config.scope) { "MintidIdempotency needs a scope function" }
        val routes = config.routes
        val kind = config.kind
        val idempotency =
            HttpIdempotency
                .builder<ApplicationCall>(store) { scope(it.raw) }
                .keyRing(config.keyRing)
                .requestIdHeader(config.requestIdHeader)
                .apply { config.acceptIdempotencyKey?.let { acceptIdempotencyKey(it) } }
                .freshness(config.freshness)
                .methods(config.methods)
                .routes(routes?.let { predicate -> { predicate(it.raw) } })
                .bodyLimit(config.bodyLimit)
                .storedHeaders(config.storedHeaders)
                .kind(kind?.let { function -> { function(it.raw) } })
                .handlerErrors { error -> application.environment.log.error("mintid: a route or the store failed", error) }
                .apply { if (config.sameTransaction) sameTransaction() }
                .build()

        on(AroundHandler) { call, route ->
            if ((call as? RoutingPipelineCall)?.route?.attributes?.contains(GRANT_ROUTE) == true) return@on
            val view = CallView(call)
            if (!idempotency.covers(view)) return@on
            val admitted =
                when (val admission = idempotency.admit(view)) {
                    is Admission.Refused -> return@on call.respondAnswer(admission.answer)
                    is Admission.Admitted -> admission
                }
            // Through the receive pipeline: DoubleReceive's kept bytes when a plugin read the body
            // first, else Ktor's RequestAlreadyConsumedException (the raw channel would be empty).
            val (body, ended) =
                try {
                    call.receiveChannel().readRemaining(idempotency.bodyLimit + 1L).readByteArray() to false
                } catch (_: RequestAlreadyConsumedException) {
                    ByteArray(0) to true
                }
            if (body.size > idempotency.bodyLimit) return@on call.respondAnswer(idempotency.tooLarge())
            idempotency.checkBodyRead(view, ended, body.size)
            call.attributes.put(BODY, body)
            if (config.sameTransaction) return@on runInTransaction(idempotency, call, view, admitted, body, route)
            val contentType = view.header("content-type")
            // Not cancellable: a claim made is kept (and released by ResponseSent) even if the call is cancelled meanwhile.
            when (val started = withContext(NonCancellable + Dispatchers.IO) { idempotency.start(admitted, contentType, body) }) {
                is Start.Answered -> call.respondAnswer(started.answer)
                is Start.Claimed -> call.attributes.put(CLAIM, started)
            }
        }

        on(ReceiveKeptBody) { call -> call.attributes.getOrNull(BODY) }

        on(CallFailed) { call, cause ->
            if (call.attributes.contains(CLAIM)) {
                application.environment.log.error("mintid: a route failed", cause)
                call.respondAnswer(HttpAnswer.status(500))
            }
        }

        on(ResponseBodyReadyForSend) { call, content ->
            val claimed = call.attributes.takeOrNull(CLAIM)
            val transaction = call.attributes.takeOrNull(ROUTE_TRANSACTION)
            if (claimed == null && transaction == null) return@on
            val bytes = content.bytesOrNull()
            val status = content.status ?: call.response.status() ?: HttpStatusCode.OK
            val headers =
                buildList {
                    content.contentType?.let { add("content-type" to it.toString()) }
                    call.response.headers.allValues().forEach { name, values -> values.forEach { add(name to it) } }
                    content.headers.forEach { name, values -> values.forEach { add(name to it) } }
                }
            val answer = bytes?.let { HttpAnswer(status.value, headers, it) }
            // The route has answered: its answer is stored even if the call is cancelled now (the
            // client went away), then the cancellation goes on (issue 25, item 5).
            val sent =
                withContext(NonCancellable + Dispatchers.IO) {
                    when {
                        transaction != null -> transaction.answered(answer)
                        answer == null -> null.also { idempotency.abandon(claimed!!, IllegalStateException("a ${content::class.simpleName} response cannot be stored")) }
                        else -> idempotency.finish(claimed!!, answer)
                    }
                } ?: return@on
            if (sent === answer) {
                transformBodyTo(ByteArrayContent(bytes, content.contentType, status))
            } else {
                // The store failed after the route answered: the failure's answer instead.
                transformBodyTo(ByteArrayContent(sent.body, ContentType.parse(sent.header("content-type") ?: "application/octet-stream"), HttpStatusCode.fromValue(sent.status)))
            }
        }

        on(ResponseSent) { call ->
            // A call that ended without a response the plugin saw: release its key.
            val claimed = call.attributes.getOrNull(CLAIM) ?: return@on
            call.attributes.remove(CLAIM)
            idempotency.abandon(claimed, IllegalStateException("the call ended without a stored response"))
        }
    }

/**
 * The same-transaction mode's call: [HttpIdempotency.runInTransaction] on [Dispatchers.IO], the
 * [route] run inside it once the key is claimed (its answer handed over by
 * `ResponseBodyReadyForSend`), or the replay or refusal sent when it is not. A route that throws
 * before it answered rolls back and answers what the transaction ended with (500); a call
 * cancelled or ended without an answer rolls back too. The transaction always runs to its end
 * (the call waits for it).
 */
private suspend fun runInTransaction(
    idempotency: HttpIdempotency<ApplicationCall>,
    call: ApplicationCall,
    view: HttpRequestView<ApplicationCall>,
    admitted: Admission.Admitted,
    body: ByteArray,
    route: suspend () -> Unit,
) = coroutineScope {
    val transaction = RouteTransaction()
    transaction.sent =
        async(Dispatchers.IO) {
            try {
                idempotency.runInTransaction(admitted, view, body, transaction.handler)
            } finally {
                transaction.started.complete(null)
            }
        }
    try {
        transaction.connection = transaction.started.await() ?: return@coroutineScope call.respondAnswer(transaction.sent.await())
        call.attributes.put(ROUTE_TRANSACTION, transaction)
        try {
            route()
        } catch (error: CancellationException) {
            throw error
        } catch (error: Exception) {
            // After the route answered, the failure is Ktor's; before, the transaction's answer.
            if (call.attributes.takeOrNull(ROUTE_TRANSACTION) == null) throw error
            transaction.answer.completeExceptionally(error)
            call.respondAnswer(withContext(NonCancellable) { transaction.sent.await() })
        }
    } finally {
        call.attributes.remove(ROUTE_TRANSACTION)
        transaction.answer.completeExceptionally(IllegalStateException("the call ended without an answer from the route"))
    }
}

/**
 * The connection of the record's transaction this call's route runs in, under
 * [MintidIdempotency] with [MintidIdempotencyConfig.sameTransaction]: the route's writes on it
 * (blocking JDBC, so inside `withContext(Dispatchers.IO)`), the claim and the completed record
 * commit together when the route has answered, or roll back together. Write before you respond:
 * the response ends the transaction.
 *
 * @throws IllegalStateException anywhere else (a call not covered, not in the same-transaction
 *   mode, or whose route has answered).
 */
fun ApplicationCall.handlerTransaction(): Connection =
    attributes.getOrNull(ROUTE_TRANSACTION)?.connection ?: throw IllegalStateException(
        "no record transaction here: only a covered route under MintidIdempotency with sameTransaction = true runs in one, until it answers",
    )

/** The bytes of a response body, or null for one that is not a plain body (an upgrade). */
private suspend fun OutgoingContent.bytesOrNull(): ByteArray? =
    when (this) {
        is OutgoingContent.ByteArrayContent -> bytes()
        is OutgoingContent.NoContent -> ByteArray(0)
        is OutgoingContent.ReadChannelContent -> readFrom().toByteArray()
        is OutgoingContent.WriteChannelContent ->
            coroutineScope {
                val channel = ByteChannel()
                launch {
                    try {
                        writeTo(channel)
                    } finally {
                        channel.flushAndClose()
                    }
                }
                channel.toByteArray()
            }
        else -> null
    }

/**
 * Sends [answer]: its status, headers and body (`content-type` as the body's type; the engine
 * sets the length).
 */
suspend fun ApplicationCall.respondAnswer(answer: HttpAnswer) {
    var contentType: ContentType? = null
    for ((name, value) in answer.headers) {
        when {
            name.equals("content-type", ignoreCase = true) -> contentType = ContentType.parse(value)
            name.equals("content-length", ignoreCase = true) -> Unit
            else -> response.headers.append(name, value, safeOnly = false)
        }
    }
    respond(ByteArrayContent(answer.body, contentType, HttpStatusCode.fromValue(answer.status)))
}

/**
 * A grant endpoint at `POST` [path]: the logged-in user's grant as JSON, or 401 when [scope]
 * gives no user (see [GrantEndpoint.answer]). [MintidIdempotency] never covers it, wherever it
 * is installed.
 */
fun Route.grantEndpoint(
    path: String,
    endpoint: GrantEndpoint,
    scope: (ApplicationCall) -> String?,
): Route = post(path) { call.respondAnswer(endpoint.answer(scope(call))) }.apply { attributes.put(GRANT_ROUTE, Unit) }
