package io.mintid

import uniffi.mintid_ffi.recordClaimApply
import uniffi.mintid_ffi.recordComplete
import uniffi.mintid_ffi.recordDecide
import uniffi.mintid_ffi.recordFail
import uniffi.mintid_ffi.recordHttpConstants
import uniffi.mintid_ffi.recordIsRemovable
import uniffi.mintid_ffi.recordPolicyDefault
import uniffi.mintid_ffi.recordProblemDetails
import uniffi.mintid_ffi.recordRetryAfterSecs
import uniffi.mintid_ffi.recordStatusParse
import uniffi.mintid_ffi.recordStatusText
import uniffi.mintid_ffi.CheckedRecordPolicy as FfiCheckedPolicy
import uniffi.mintid_ffi.Claim as FfiClaim
import uniffi.mintid_ffi.Decision as FfiDecision
import uniffi.mintid_ffi.Expected as FfiExpected
import uniffi.mintid_ffi.Failure as FfiFailure
import uniffi.mintid_ffi.Fence as FfiFence
import uniffi.mintid_ffi.Incoming as FfiIncoming
import uniffi.mintid_ffi.Outcome as FfiOutcome
import uniffi.mintid_ffi.Problem as FfiProblem
import uniffi.mintid_ffi.Record as FfiRecord
import uniffi.mintid_ffi.RecordPolicy as FfiPolicy
import uniffi.mintid_ffi.RecordStatus as FfiStatus

// Times (Unix ms), durations and tokens are the core's unsigned 64-bit values, carried in
// Longs with the same bits (java.lang.Long.toUnsignedString reads one above 2^63 - 1); the core
// refuses any arithmetic that would overflow (record.time_overflow, record.token_exhausted).

/** Where an idempotency [Record] is in its life; [text] is how storage writes it. */
enum class RecordStatus(
    internal val ffi: FfiStatus,
) {
    /** Claimed; the operation runs. */
    PENDING(FfiStatus.PENDING),

    /** Completed; its response is replayed. */
    SUCCEEDED(FfiStatus.SUCCEEDED),

    /** Failed for good; its error is replayed. */
    FAILED(FfiStatus.FAILED),

    /** Failed in a way worth retrying; the next request runs again. */
    FAILED_RETRYABLE(FfiStatus.FAILED_RETRYABLE),
    ;

    /** The stored text: `pending`, `succeeded`, `failed` or `failed_retryable`. */
    val text: String get() = recordStatusText(ffi)

    /** Reading stored texts. */
    companion object {
        /**
         * Reads a stored status text.
         *
         * @throws RecordException `record.unknown_status`.
         */
        @JvmStatic
        fun parse(text: String): RecordStatus = of(core { recordStatusParse(text) })

        internal fun of(status: FfiStatus): RecordStatus = entries.first { it.ffi == status }
    }
}

/** What a stored result was. */
enum class Outcome {
    /** A completed request's response. */
    SUCCEEDED,

    /** The error of a request that failed for good. */
    FAILED,
}

/** How an operation failed, as its holder reports it. */
enum class Failure(
    internal val ffi: FfiFailure,
) {
    /** Worth retrying: the key is released. */
    RETRYABLE(FfiFailure.RETRYABLE),

    /** Final: the error is stored and replayed (if the policy stores errors). */
    FINAL(FfiFailure.FINAL),
}

/**
 * The HTTP problems of the idempotency rules (RFC 9457 `application/problem+json`), with the
 * status, `type` and `title` the core assigns.
 */
enum class Problem(
    internal val ffi: FfiProblem,
) {
    /** 400: no key. */
    MISSING_KEY(FfiProblem.MISSING_KEY),

    /** 400: a key that breaks the key rules. */
    MALFORMED_KEY(FfiProblem.MALFORMED_KEY),

    /** 400: a request ID that does not verify. */
    INVALID_REQUEST_ID(FfiProblem.INVALID_REQUEST_ID),

    /** 400: the request ID's grant expired. */
    GRANT_EXPIRED(FfiProblem.GRANT_EXPIRED),

    /** 409: the first request is still running. */
    IN_PROGRESS(FfiProblem.IN_PROGRESS),

    /** 422: the key was used with another payload. */
    FINGERPRINT_MISMATCH(FfiProblem.FINGERPRINT_MISMATCH),

    /** 400: the key is older than retention. */
    KEY_TOO_OLD(FfiProblem.KEY_TOO_OLD),

    /** 503: storage is unavailable. */
    STORAGE_UNAVAILABLE(FfiProblem.STORAGE_UNAVAILABLE),

    /** 400: a JSON content type with a body that is not JSON. */
    MALFORMED_BODY(FfiProblem.MALFORMED_BODY),
    ;

    private val details by lazy { recordProblemDetails(ffi) }

    /** The stable name, e.g. `in_progress`. */
    val problemName: String get() = details.name

    /** The HTTP status code. */
    val status: Int get() = details.status.toInt()

    /** The `type` URI. */
    val typeUri: String get() = details.typeUri

    /** The `title`. */
    val title: String get() = details.title

    internal companion object {
        fun of(problem: FfiProblem): Problem = entries.first { it.ffi == problem }
    }
}

/** The core's default record policy, read once. */
private val DEFAULT_RECORD_POLICY = recordPolicyDefault()

/**
 * The rules a host sets for its records. Every call that takes a policy checks it; every value
 * left out keeps the core's default (a 60 s lease, 24 h retention, errors stored, a 1 s retry
 * hint, no waiting).
 *
 * @property leaseMillis how long a claim holds the key before another request may reclaim it.
 * @property retentionMillis how long a record is kept, from the key's creation.
 * @property storeErrors whether final failures are stored and replayed.
 * @property retryAfterMillis the longest retry delay suggested to a concurrent duplicate.
 * @property maxWaitMillis how long a duplicate waits for the first request (0: not at all).
 * @property pollMillis how often a waiting duplicate reloads the record.
 */
data class RecordPolicy
    @JvmOverloads
    constructor(
        val leaseMillis: Long = DEFAULT_RECORD_POLICY.leaseMillis.toLong(),
        val retentionMillis: Long = DEFAULT_RECORD_POLICY.retentionMillis.toLong(),
        val storeErrors: Boolean = DEFAULT_RECORD_POLICY.storeErrors,
        val retryAfterMillis: Long = DEFAULT_RECORD_POLICY.retryAfterMillis.toLong(),
        val maxWaitMillis: Long = DEFAULT_RECORD_POLICY.maxWaitMillis.toLong(),
        val pollMillis: Long = DEFAULT_RECORD_POLICY.pollMillis.toLong(),
    ) {
        /**
         * Checks the policy against the core's rules.
         *
         * @throws RecordException `record.invalid_policy`.
         */
        fun check() {
            checked
        }

        /** The policy as the core checked and holds it: made once, passed to every call. */
        internal val checked: FfiCheckedPolicy by lazy { core { FfiCheckedPolicy(toFfi()) } }

        internal fun toFfi() =
            FfiPolicy(
                leaseMillis.toULong(),
                retentionMillis.toULong(),
                storeErrors,
                retryAfterMillis.toULong(),
                maxWaitMillis.toULong(),
                pollMillis.toULong(),
            )

        /** The core's default. */
        companion object {
            /** The core's default policy. */
            @JvmField
            val DEFAULT: RecordPolicy = RecordPolicy()
        }
    }

/**
 * What identifies one claim of a key: the holder passes it back to complete or fail, and a late
 * write from an older claim is refused.
 *
 * @property token the fencing token.
 * @property createdMillis the record's creation time (Unix ms).
 */
data class Fence(
    val token: Long,
    val createdMillis: Long,
) {
    internal fun toFfi() = FfiFence(token.toULong(), createdMillis.toULong())
}

/**
 * The stored state of one idempotency key: one row of the shared schema.
 *
 * @property status where the record is in its life.
 * @property fingerprint the fingerprint of the payload that first used the key.
 * @property token the fencing token of the latest claim.
 * @property leaseDeadlineMillis while pending, when the holder's lease ends (Unix ms).
 * @property createdMillis when the key was first claimed (Unix ms).
 * @property expiresMillis when the record leaves retention (Unix ms).
 */
data class Record(
    val status: RecordStatus,
    val fingerprint: Fingerprint,
    val token: Long,
    val leaseDeadlineMillis: Long,
    val createdMillis: Long,
    val expiresMillis: Long,
) {
    /** The fence of the latest claim. */
    val fence: Fence get() = Fence(token, createdMillis)

    /**
     * The record after its holder ([fence]) completed the operation.
     *
     * @throws RecordException `record.stale_token` or `record.not_pending`.
     */
    fun complete(fence: Fence): Record = of(core { recordComplete(toFfi(), fence.toFfi()) })

    /**
     * The record after its holder ([fence]) failed the operation.
     *
     * @throws RecordException `record.stale_token`, `record.not_pending` or `record.invalid_policy`.
     */
    fun fail(
        fence: Fence,
        failure: Failure,
        policy: RecordPolicy,
    ): Record = of(core { recordFail(toFfi(), fence.toFfi(), failure.ffi, policy.checked) })

    /** Whether cleanup may delete the record at [nowMillis]. */
    fun isRemovable(nowMillis: Long): Boolean = core { recordIsRemovable(toFfi(), nowMillis.toULong()) }

    internal fun toFfi() =
        FfiRecord(
            status.ffi,
            fingerprint.digestBytes(),
            token.toULong(),
            leaseDeadlineMillis.toULong(),
            createdMillis.toULong(),
            expiresMillis.toULong(),
        )

    internal companion object {
        fun of(record: FfiRecord) =
            Record(
                RecordStatus.of(record.status),
                Fingerprint.ofDigest(record.fingerprint),
                record.token.toLong(),
                record.leaseDeadlineMillis.toLong(),
                record.createdMillis.toLong(),
                record.expiresMillis.toLong(),
            )
    }
}

/**
 * What the core needs to know about an incoming request.
 *
 * @property fingerprint the fingerprint of the request's payload.
 * @property keyCreatedMillis when the key was created (Unix ms), when known: a key older than
 *   retention is refused instead of silently run again.
 * @property waitedMillis how long the request has already waited for a concurrent duplicate.
 */
data class Incoming
    @JvmOverloads
    constructor(
        val fingerprint: Fingerprint,
        val keyCreatedMillis: Long? = null,
        val waitedMillis: Long = 0,
    ) {
        internal fun toFfi() = FfiIncoming(fingerprint.digestBytes(), keyCreatedMillis?.toULong(), waitedMillis.toULong())
    }

/**
 * The state a compare-and-set claim expects to replace.
 *
 * @property fence the fence of the record as it was loaded.
 * @property status the status of the record as it was loaded.
 */
data class Expected(
    val fence: Fence,
    val status: RecordStatus,
)

/**
 * A claim on a key: the row to write, and what it must replace (`null`: insert). The storage
 * adapter writes it with one conditional statement and then runs the operation.
 *
 * @property record the record to write: pending, with the new token and lease.
 * @property expected `null` to insert; otherwise the record the claim replaces.
 */
data class Claim(
    val record: Record,
    val expected: Expected?,
) {
    /** The fence the claim's holder completes or fails with. */
    val fence: Fence get() = record.fence

    /**
     * Applies the claim at [nowMillis] to the record storage holds then ([current]), as the
     * adapter's SQL does; returns the record written.
     *
     * @throws RecordException `record.claim_expired` or `record.claim_conflict`.
     */
    fun apply(
        current: Record?,
        nowMillis: Long,
    ): Record = Record.of(core { recordClaimApply(toFfi(), current?.toFfi(), nowMillis.toULong()) })

    internal fun toFfi() =
        FfiClaim(record.toFfi(), expected?.let { FfiExpected(it.fence.toFfi(), it.status.ffi) })

    internal companion object {
        fun of(claim: FfiClaim) =
            Claim(
                Record.of(claim.record),
                claim.expected?.let {
                    Expected(Fence(it.fence.token.toLong(), it.fence.createdMillis.toLong()), RecordStatus.of(it.status))
                },
            )
    }
}

/**
 * What to do with an incoming request, with what the HTTP answer needs: the result of
 * [Decision.decide]. [name] is the stable name shared by every language; the refusing decisions
 * carry the [problem] to answer with.
 */
sealed class Decision(
    /** `execute`, `replay`, `in_progress`, `wait`, `fingerprint_mismatch` or `key_too_old`. */
    val name: String,
    /** The problem to answer with, for the refusing decisions; otherwise `null`. */
    val problem: Problem?,
) {
    /** Write [claim] (insert or compare-and-set), then run the operation. */
    class Execute internal constructor(
        /** The claim to write. */
        val claim: Claim,
        name: String,
    ) : Decision(name, null)

    /** Return the stored result. */
    class Replay internal constructor(
        /** Which stored result to return. */
        val outcome: Outcome,
        name: String,
    ) : Decision(name, null)

    /** The first request still runs: answer 409 with `Retry-After`. */
    class InProgress internal constructor(
        /** The suggested retry delay, in milliseconds. */
        val retryAfterMillis: Long,
        /** The `Retry-After` seconds to send. */
        val retryAfterSecs: Long,
        name: String,
        problem: Problem?,
    ) : Decision(name, problem)

    /** Wait [pollMillis], reload the record and decide again. */
    class Wait internal constructor(
        /** The pause before deciding again, in milliseconds. */
        val pollMillis: Long,
        name: String,
    ) : Decision(name, null)

    /** The key was used with another payload: answer 422. */
    class FingerprintMismatch internal constructor(
        name: String,
        problem: Problem?,
    ) : Decision(name, problem)

    /** The key is older than retention: answer 400 instead of running it again. */
    class KeyTooOld internal constructor(
        name: String,
        problem: Problem?,
    ) : Decision(name, problem)

    override fun toString(): String = "Decision($name)"

    /** The state machine. */
    companion object {
        /**
         * Decides what to do with [incoming], given the stored record of its key ([existing],
         * `null` when there is no row) at [nowMillis] under [policy].
         *
         * @throws RecordException `record.invalid_policy`, `record.time_overflow` or
         *   `record.token_exhausted`.
         */
        @JvmStatic
        fun decide(
            existing: Record?,
            incoming: Incoming,
            nowMillis: Long,
            policy: RecordPolicy,
        ): Decision =
            of(core { recordDecide(existing?.toFfi(), incoming.toFfi(), nowMillis.toULong(), policy.checked) })

        private fun of(decision: FfiDecision): Decision {
            val problem = decision.problem?.let { Problem.of(it) }
            return when {
                decision.claim != null -> Execute(Claim.of(decision.claim!!), decision.name)
                decision.outcome != null ->
                    Replay(if (decision.outcome == FfiOutcome.SUCCEEDED) Outcome.SUCCEEDED else Outcome.FAILED, decision.name)
                decision.retryAfterMillis != null ->
                    InProgress(decision.retryAfterMillis!!.toLong(), decision.retryAfterSecs?.toLong() ?: 0, decision.name, problem)
                decision.pollMillis != null -> Wait(decision.pollMillis!!.toLong(), decision.name)
                problem == Problem.FINGERPRINT_MISMATCH -> FingerprintMismatch(decision.name, problem)
                else -> KeyTooOld(decision.name, problem)
            }
        }
    }
}

/** The HTTP side of the idempotency rules: header names and values, `Retry-After`. */
object IdempotencyHttp {
    private val constants by lazy { recordHttpConstants() }

    /** The content type of problem answers: `application/problem+json`. */
    @JvmStatic
    val problemContentType: String get() = constants.problemContentType

    /** The header that marks a replayed answer. */
    @JvmStatic
    val replayedHeader: String get() = constants.replayedHeader

    /** The value of [replayedHeader]. */
    @JvmStatic
    val replayedValue: String get() = constants.replayedValue

    /** The header carrying a retry delay in seconds. */
    @JvmStatic
    val retryAfterHeader: String get() = constants.retryAfterHeader

    /** The `Retry-After` seconds for a delay in milliseconds (rounded up, at least 1). */
    @JvmStatic
    fun retryAfterSecs(millis: Long): Long = recordRetryAfterSecs(millis.toULong()).toLong()
}
