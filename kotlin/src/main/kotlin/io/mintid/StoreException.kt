package io.mintid

/**
 * A storage adapter's own failure (`store.*` codes, the same in every mintid language): see
 * [io.mintid.store.IdempotencyStore].
 *
 * @property problem the HTTP problem to answer with, or null when the caller decides.
 */
sealed class StoreException(
    code: String,
    detail: String,
    val problem: Problem?,
    cause: Throwable?,
) : MintidException(code, detail, null, null) {
    init {
        if (cause != null) initCause(cause)
    }
}

/**
 * The database cannot be reached or the connection broke (`store.unavailable`, problem
 * `storage_unavailable`, 503): nothing was run, and nothing half-written. The driver's error is
 * the [cause].
 */
class StoreUnavailableException internal constructor(
    detail: String,
    cause: Throwable?,
) : StoreException("store.unavailable", detail, Problem.STORAGE_UNAVAILABLE, cause)

/**
 * An operation's response is larger than the store keeps (`store.response_too_large`): the
 * operation ran, its response was not stored, and the key replays this error as a final
 * failure.
 */
class ResponseTooLargeException internal constructor(
    detail: String,
) : StoreException("store.response_too_large", detail, null, null)

/**
 * A claim neither inserted its record nor found the one in the way, round after round
 * (`store.stale_snapshot`): the caller's transaction reads an old snapshot (MySQL/MariaDB
 * `REPEATABLE READ` after an earlier read of the table). Nothing was run; claim before reading,
 * or use `READ COMMITTED`.
 */
class StaleSnapshotException internal constructor(
    detail: String,
) : StoreException("store.stale_snapshot", detail, null, null)
