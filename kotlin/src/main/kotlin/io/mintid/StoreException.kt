package io.mintid

/**
 * A store driver's failure (`store.*` codes, made by the core's record driver and the same in
 * every mintid language): see [io.mintid.store.IdempotencyStore]. When a database error is
 * behind it, [part] names its class (`connection_lost`, `serialization`, `unique_violation`,
 * `constraint`, `other`) and the driver's exception is the [cause]; the driver's text is never
 * in [detail] (it may name hosts, ports and users): log the cause.
 *
 * @property problem the HTTP problem to answer with (the core's: `storage_unavailable`).
 */
sealed class StoreException(
    code: String,
    detail: String,
    part: String?,
    val problem: Problem?,
    cause: Throwable?,
) : MintidException(code, detail, part, null) {
    init {
        if (cause != null) initCause(cause)
    }
}

/**
 * The database cannot be reached or the connection broke (`store.unavailable`, 503): before the
 * claim was written nothing ran; after the operation ran, the record stays pending until its
 * lease passes.
 */
class StoreUnavailableException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.unavailable", detail, part, problem, cause)

/**
 * An operation's response is over the 1 MiB the store keeps (`store.response_too_large`): the
 * operation ran, its response was not stored, and the key replays this error as a final
 * failure.
 */
class ResponseTooLargeException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.response_too_large", detail, part, problem, cause)

/**
 * An operation's response has a content type over 255 bytes or not printable ASCII
 * (`store.response_not_storable`): stored as a final failure, like a response too large.
 */
class ResponseNotStorableException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.response_not_storable", detail, part, problem, cause)

/**
 * An operation returned something that is not a response (`store.not_a_response`: from Java,
 * `null`): the claim was released, nothing is stored.
 */
class NotAResponseException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.not_a_response", detail, part, problem, cause)

/**
 * A claim neither inserted its record nor found the one in the way, round after round
 * (`store.stale_snapshot`): the caller's transaction reads an old snapshot (MySQL/MariaDB
 * `REPEATABLE READ` after an earlier read of the table). Nothing was run; claim before reading,
 * or use `READ COMMITTED`.
 */
class StaleSnapshotException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.stale_snapshot", detail, part, problem, cause)

/** The database kept reporting serialization failures or deadlocks (`store.conflict`): nothing was run. */
class StoreConflictException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.conflict", detail, part, problem, cause)

/**
 * A renewal of the record's lease found the key taken over or completed (`store.record_lost`):
 * the operation no longer holds its record, and its completion will be refused.
 */
class RecordLostException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.record_lost", detail, part, problem, cause)

/** A store query failed for another reason: a constraint, a permission, a syntax error (`store.query_failed`). */
class QueryFailedException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.query_failed", detail, part, problem, cause)

/**
 * A mintid table does not exist: the database was never migrated (`store.schema_missing`). The
 * message names the fix: `Migrations.migrate(dataSource, dialect)` once at start-up (Spring:
 * `mintid.migrate=true`, or Flyway/Liquibase with the starter's locations). An HTTP edge still
 * answers 503 and logs it.
 */
class SchemaMissingException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.schema_missing", detail + FIX, part, problem, cause) {
    private companion object {
        /** What the message adds to the core's: this host's migrate call. */
        const val FIX =
            ": call Migrations.migrate(dataSource, dialect) once at start-up (Spring Boot: mintid.migrate=true," +
                " or Flyway/Liquibase with the starter's locations), or apply the files under schema/"
    }
}

/** A row the driver cannot read: the schema is not the one the core expects (`store.unexpected_row`). */
class UnexpectedRowException internal constructor(
    detail: String,
    part: String?,
    problem: Problem?,
    cause: Throwable?,
) : StoreException("store.unexpected_row", detail, part, problem, cause)

/** The [StoreException] of the core's [code], with the database error [cause] behind it, if any. */
internal fun storeException(
    code: String,
    detail: String,
    part: String?,
    problem: String?,
    cause: Throwable?,
): MintidException {
    val answer = problemNamed(problem)
    return when (code) {
        "store.unavailable" -> StoreUnavailableException(detail, part, answer, cause)
        "store.response_too_large" -> ResponseTooLargeException(detail, part, answer, cause)
        "store.response_not_storable" -> ResponseNotStorableException(detail, part, answer, cause)
        "store.not_a_response" -> NotAResponseException(detail, part, answer, cause)
        "store.stale_snapshot" -> StaleSnapshotException(detail, part, answer, cause)
        "store.conflict" -> StoreConflictException(detail, part, answer, cause)
        "store.record_lost" -> RecordLostException(detail, part, answer, cause)
        "store.unexpected_row" -> UnexpectedRowException(detail, part, answer, cause)
        "store.query_failed" -> QueryFailedException(detail, part, answer, cause)
        "store.schema_missing" -> SchemaMissingException(detail, part, answer, cause)
        // The native library ships in this jar: a code without a class is a build fault.
        else -> throw IllegalStateException("no exception class for the core's $code: $detail", cause)
    }
}
