package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.Outcome
import io.mintid.Problem
import io.mintid.Record
import uniffi.mintid_ffi.storeLimits

/** The largest response a store keeps: the core's `record.response_body` limit, 1 MiB. */
@JvmField
val MAX_RESPONSE_BYTES: Int = storeLimits().first { it.name == "record.response_body" }.maxBytes.toInt()

/**
 * An operation's response, stored and replayed byte for byte.
 *
 * @property contentType its content type (at most 255 ASCII bytes).
 * @property body its bytes (at most [MAX_RESPONSE_BYTES]).
 */
class StoredResponse(
    val contentType: String,
    body: ByteArray,
) {
    private val bytes = body.copyOf()

    /** A copy of the body. */
    val body: ByteArray get() = bytes.copyOf()

    internal fun bodyBytes(): ByteArray = bytes

    override fun equals(other: Any?): Boolean = other is StoredResponse && contentType == other.contentType && bytes.contentEquals(other.bytes)

    override fun hashCode(): Int = 31 * contentType.hashCode() + bytes.contentHashCode()

    override fun toString(): String = "StoredResponse($contentType, ${bytes.size} bytes)"
}

/**
 * What the store needs about a request besides its key.
 *
 * @property fingerprint the payload's fingerprint.
 * @property keyCreatedMillis when the key was created (a verified request ID's time), if known.
 */
data class StoreRequest
    @JvmOverloads
    constructor(
        val fingerprint: Fingerprint,
        val keyCreatedMillis: Long? = null,
    )

/**
 * Thrown by an operation to fail it: a final failure (the default) is stored and replayed to
 * duplicates when the policy stores errors; a retryable one releases the key. Any other
 * exception thrown by an operation counts as retryable and is rethrown: unchanged when it is
 * unchecked, in a [CheckedOperationException] when it is checked.
 *
 * @property retryable whether a later request may run the operation again.
 * @property response a response to store with a final failure (e.g. a problem document), or null.
 */
class OperationException
    @JvmOverloads
    constructor(
        message: String,
        val retryable: Boolean = false,
        val response: StoredResponse? = null,
    ) : RuntimeException(message)

/**
 * A record as stored: the core's [record] plus what it replays.
 *
 * @property record the core's fields.
 * @property response the stored response, or null.
 * @property error the stored error text, or null.
 */
data class StoredRecord(
    val record: Record,
    val response: StoredResponse?,
    val error: String?,
)

/** What a [IdempotencyStore.claimLease] gave: a [RecordLease], or one of the [NotExecuted] results. */
sealed interface LeaseResult {
    /** `execute`, `replay`, `in_progress`, `fingerprint_mismatch` or `key_too_old`. */
    val decision: String
}

/** The outcome of a request: run ([Executed]), replayed, or refused. */
sealed interface RunResult {
    /** `execute`, `replay`, `in_progress`, `fingerprint_mismatch` or `key_too_old`. */
    val decision: String
}

/** Every outcome but running the operation: a replay or a refusal (a refusal names its [problem]). */
sealed class NotExecuted(
    override val decision: String,
    /** The HTTP problem of a refusal; null for a replay. */
    val problem: Problem?,
) : RunResult,
    LeaseResult

/** The operation ran here and returned [response]. */
class Executed internal constructor(
    /** The operation's response. */
    val response: StoredResponse,
) : RunResult {
    override val decision: String get() = "execute"
}

/**
 * Not run: the stored result of the first request. [outcome] `SUCCEEDED` replays [response];
 * `FAILED` replays [error] (and [response], when the failure stored one).
 */
class Replayed internal constructor(
    /** Which stored result. */
    val outcome: Outcome,
    /** The stored response, or null (a failure without one). */
    val response: StoredResponse?,
    /** The stored error text of a failure; null for a success. */
    val error: String?,
) : NotExecuted("replay", null)

/** Refused: another request holds the key (409 with `Retry-After`). */
class InProgress internal constructor(
    /** The suggested retry delay, in milliseconds. */
    val retryAfterMillis: Long,
    /** The `Retry-After` seconds to send. */
    val retryAfterSecs: Long,
) : NotExecuted("in_progress", Problem.IN_PROGRESS)

/** Refused: the key was first used with another payload (422). */
class FingerprintMismatch internal constructor() : NotExecuted("fingerprint_mismatch", Problem.FINGERPRINT_MISMATCH)

/** Refused: the key is older than retention (400). */
class KeyTooOld internal constructor() : NotExecuted("key_too_old", Problem.KEY_TOO_OLD)

/** The store's clock: the host's time, read before each statement, and how a driver's pause is slept. */
interface StoreClock {
    /** The time, in Unix milliseconds. */
    fun nowMillis(): Long

    /** Pauses [millis] milliseconds, as the core's driver asks (a waiting duplicate between reloads, a retry after a deadlock). */
    fun pause(millis: Long) = Thread.sleep(millis)

    /** The system clock. */
    companion object {
        /** `System.currentTimeMillis()` and `Thread.sleep`. */
        @JvmField
        val SYSTEM: StoreClock =
            object : StoreClock {
                override fun nowMillis(): Long = System.currentTimeMillis()
            }
    }
}

/**
 * An operation run once ([IdempotencyStore.runOnce]). Kotlin: `{ response }` or
 * `{ held -> … }`; Java: `held -> response`, which may throw checked exceptions (a JDBC call's
 * `SQLException`) with no try/catch.
 */
fun interface Operation {
    /**
     * Runs the operation while the store renews [held]'s lease in the background; throw
     * [OperationException] to fail it. [HeldRecord.lost] turns true (and [HeldRecord.checkHeld]
     * throws) once a renewal found the key taken over: stop before writing more.
     */
    @Throws(Exception::class)
    fun run(held: HeldRecord): StoredResponse
}

/**
 * An operation run inside the caller's transaction ([IdempotencyStore.inTransaction]); from
 * Java it may throw checked exceptions with no try/catch.
 */
fun interface TransactionalOperation {
    /** Runs the operation on [connection], the transaction's; throw to roll back. */
    @Throws(Exception::class)
    fun run(connection: java.sql.Connection): StoredResponse
}

/** The work of [IdempotencyStore.transaction]; from Java it may throw checked exceptions with no try/catch. */
fun interface TransactionAction<T> {
    /** Works on [connection], the transaction's; throw to roll back. */
    @Throws(Exception::class)
    fun run(connection: java.sql.Connection): T
}

/**
 * A checked exception (from Java: a JDBC call's `SQLException`, an `IOException`) thrown by an
 * operation or a [TransactionAction], rethrown by the store unchecked: [cause] is that
 * exception, and the message is its message. Unchecked exceptions are rethrown unchanged.
 */
class CheckedOperationException internal constructor(
    cause: Throwable,
) : RuntimeException(cause.message ?: cause.toString(), cause)

/** This exception as the store rethrows it: unchanged when unchecked, else in a [CheckedOperationException]. */
internal fun Throwable.unchecked(): Throwable = if (this is RuntimeException || this is Error) this else CheckedOperationException(this)
