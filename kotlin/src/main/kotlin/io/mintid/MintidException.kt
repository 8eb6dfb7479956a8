package io.mintid

import uniffi.mintid_ffi.MintidException as FfiException

/**
 * A failure reported by mintid: the core's stable dotted [code] (the same in every language,
 * and the one the shared test vectors name) and its one-line [detail].
 *
 * Every mintid call fails with a subclass of this unchecked exception, one per concern, so a
 * caller can catch all of them at once or just the concern it handles.
 *
 * @property code the stable dotted code, e.g. `"uuid7.wrong_version"`.
 * @property detail what was wrong, with the offending value.
 * @property part the part of the input at fault (`"kind"`, `"scope"`, `"id"` for a key), or null.
 * @property position the zero-based byte offset of the problem in the input, or null.
 */
sealed class MintidException(
    val code: String,
    val detail: String,
    val part: String?,
    val position: Long?,
) : RuntimeException("$code: $detail")

/**
 * A value that no mintid type can hold, such as a byte string of the wrong length, a negative
 * number where only non-negative ones make sense, or a batch that is too large
 * (`argument.*` codes).
 */
class ArgumentException internal constructor(
    code: String,
    detail: String,
    part: String? = null,
    position: Long? = null,
) : MintidException(code, detail, part, position)

/** The native library failed unexpectedly (`internal.panic`); please report it. */
class InternalException internal constructor(
    detail: String,
) : MintidException("internal.panic", detail, null, null)

/** Snowflake layouts, IDs and generators (`snowflake.*` codes). */
class SnowflakeException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** UUID text and bytes of any version (`uuid.*` codes). */
class UuidException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** UUIDv7 values and generators (`uuid7.*` codes). */
class Uuid7Exception internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** Idempotency keys and `Idempotency-Key` headers (`key.*` codes); [part] and [position] say where. */
class IdempotencyKeyException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** Payload fingerprints (`fingerprint.*` codes); [position] says where a JSON input went wrong. */
class FingerprintException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/**
 * Grants, key rings and request IDs (`request_id.*` codes).
 *
 * @property problem the HTTP problem the core maps this failure to (`invalid_request_id`,
 *   `grant_expired`, `key_too_old`), or null when it is the server's own fault (an invalid
 *   scope, a key-ring error): then no client problem applies.
 */
class RequestIdException internal constructor(
    code: String,
    detail: String,
    part: String?,
    position: Long?,
    val problem: Problem? = null,
) : MintidException(code, detail, part, position)

/** The idempotency record state machine (`record.*` codes). */
class RecordException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** Worker-id leases (`lease.*` codes). */
class LeaseException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/** Segment allocators (`segment.*` codes). */
class SegmentException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/**
 * The HTTP integrations' shared rules (`http.*` codes), e.g. `http.bad_stored_response` with its
 * [position].
 *
 * @property problem the HTTP problem the core maps this failure to (`malformed_body` for a JSON
 *   content type whose body is not JSON), or null for the server's own faults.
 */
class HttpException internal constructor(code: String, detail: String, part: String?, position: Long?, val problem: Problem? = null) :
    MintidException(code, detail, part, position)

/** The transactional outbox (`outbox.*` codes). */
class OutboxException internal constructor(code: String, detail: String, part: String?, position: Long?) :
    MintidException(code, detail, part, position)

/**
 * Runs a call into the core, turning its error into the matching [MintidException] (and a
 * missing native library into an [UnsupportedPlatformException] naming the platform).
 */
internal inline fun <T> core(call: () -> T): T =
    try {
        call()
    } catch (error: FfiException) {
        throw error.toMintid()
    } catch (error: uniffi.mintid_ffi.InternalException) {
        throw InternalException("the native library failed: ${error.message}")
    } catch (error: LinkageError) {
        throw NativeLibrary.explain(error)
    }

/**
 * [core] for a store driver's call: a `store.*` error gets [cause] (the database driver's
 * exception behind the answer last pushed, if any) as its cause.
 */
internal inline fun <T> coreStore(
    cause: () -> Throwable?,
    call: () -> T,
): T =
    try {
        call()
    } catch (error: FfiException) {
        throw error.toMintid(if (error is FfiException.Store && error.part != null) cause() else null)
    }

private fun FfiException.toMintid(cause: Throwable? = null): MintidException =
    when (this) {
        is FfiException.Argument -> ArgumentException(code, detail, part, position?.toLong())
        is FfiException.Snowflake -> SnowflakeException(code, detail, part, position?.toLong())
        is FfiException.Uuid -> UuidException(code, detail, part, position?.toLong())
        is FfiException.Uuid7 -> Uuid7Exception(code, detail, part, position?.toLong())
        is FfiException.Key -> IdempotencyKeyException(code, detail, part, position?.toLong())
        is FfiException.Fingerprint -> FingerprintException(code, detail, part, position?.toLong())
        is FfiException.RequestId ->
            RequestIdException(code, detail, part, position?.toLong(), problemNamed(problem))
        is FfiException.Record -> RecordException(code, detail, part, position?.toLong())
        is FfiException.Lease -> LeaseException(code, detail, part, position?.toLong())
        is FfiException.Segment -> SegmentException(code, detail, part, position?.toLong())
        is FfiException.Outbox -> OutboxException(code, detail, part, position?.toLong())
        is FfiException.Http -> HttpException(code, detail, part, position?.toLong(), problemNamed(problem))
        is FfiException.Store -> storeException(code, detail, part, problem, cause)
    }

internal fun problemNamed(name: String?): Problem? = name?.let { Problem.entries.firstOrNull { it.problemName == name } }

/** Checks on the JVM side what the core's unsigned types cannot be told: no negative values. */
internal fun requireNonNegative(value: Long, what: String): ULong {
    if (value < 0) throw ArgumentException("argument.negative", "$what must not be negative, got $value")
    return value.toULong()
}

/** [value] as the core's `u16`, or `argument.out_of_range`. */
internal fun requireUShort(
    value: Int,
    what: String,
): UShort {
    if (value !in 0..UShort.MAX_VALUE.toInt()) {
        throw ArgumentException("argument.out_of_range", "$what must fit in 16 bits, got $value")
    }
    return value.toUShort()
}

/** [value] as the core's `u8`, or `argument.out_of_range`. */
internal fun requireUByte(
    value: Int,
    what: String,
): UByte {
    if (value !in 0..UByte.MAX_VALUE.toInt()) {
        throw ArgumentException("argument.out_of_range", "$what must fit in 8 bits, got $value")
    }
    return value.toUByte()
}

/** A count or time from the core that may exceed `Long.MAX_VALUE`, saturated there. */
internal fun ULong.saturatedToLong(): Long = if (this > Long.MAX_VALUE.toULong()) Long.MAX_VALUE else toLong()

/** [value] as the core's `u32`, or `argument.out_of_range`. */
internal fun requireUInt(
    value: Long,
    what: String,
): UInt {
    if (value !in 0..UInt.MAX_VALUE.toLong()) {
        throw ArgumentException("argument.out_of_range", "$what must fit in 32 bits, got $value")
    }
    return value.toUInt()
}
