package io.mintid.store

import io.mintid.Claim
import io.mintid.Decision
import io.mintid.Failure
import io.mintid.Fence
import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.Incoming
import io.mintid.Outcome
import io.mintid.Record
import io.mintid.RecordException
import io.mintid.RecordPolicy
import io.mintid.RecordStatus
import io.mintid.ResponseTooLargeException
import io.mintid.StaleSnapshotException
import java.sql.Connection
import javax.sql.DataSource

/**
 * A claim written with a lease ("lease and fence"): the caller runs the operation and calls
 * [complete] or [fail] before [leaseDeadlineMillis]; after it another request may take the key
 * over, and a late write is refused (`record.stale_token`).
 */
class RecordLease internal constructor(
    private val store: IdempotencyStore,
    private val key: IdempotencyKey,
    private val record: Record,
) : LeaseResult {
    override val decision: String get() = "execute"

    /** The fencing token of this claim. */
    val token: Long get() = record.token

    /** When the lease ends (Unix ms). */
    val leaseDeadlineMillis: Long get() = record.leaseDeadlineMillis

    /**
     * Stores the response.
     *
     * @throws RecordException `record.stale_token` (taken over) or `record.not_pending`.
     * @throws ResponseTooLargeException `store.response_too_large` (the claim is failed for good).
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     */
    fun complete(response: StoredResponse) = store.complete(record, key, response)

    /**
     * Stores a failure: final (replayed, or released when the policy stores no errors) or
     * retryable (released), with an optional [response] kept with a final one.
     *
     * @throws RecordException `record.stale_token` or `record.not_pending`.
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     */
    @JvmOverloads
    fun fail(
        error: String,
        retryable: Boolean = false,
        response: StoredResponse? = null,
    ) = store.fail(record, key, OperationException(error, retryable, response))
}

/**
 * Idempotency records in one database (any JDBC driver), under one [RecordPolicy]: the shared
 * schema's named queries, run as the core's decisions say.
 *
 * Three ways in, named alike in every mintid language:
 * - [runOnce]: claim, run, store, replay to duplicates;
 * - [inTransaction]: the same inside the caller's transaction, so that the record commits or
 *   rolls back with the business writes;
 * - [claimLease]: a claim with a lease and a fencing token, completed or failed later (long
 *   external calls).
 *
 * Apply the schema first ([Migrations.migrate]). Each call takes its connections from
 * [dataSource] (a pool, typically) and returns them; on MySQL/MariaDB the URL must say
 * `useAffectedRows=true`.
 *
 * @property dataSource where connections come from.
 * @property dialect the database's SQL dialect.
 * @property policy the record policy.
 * @property clock the time every decision and statement uses (the system clock by default).
 */
class IdempotencyStore
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: RecordPolicy = RecordPolicy.DEFAULT,
        val clock: StoreClock = StoreClock.SYSTEM,
    ) {
        private val queries = DialectQueries(dialect)

        init {
            policy.check()
        }

        /**
         * Runs [operation] once for [key]: the first request claims the key, runs it and stores its
         * response; a duplicate replays what was stored, waits for a request in flight (the
         * policy's `maxWaitMillis`) or is answered [InProgress]. An operation that throws is
         * failed (see [OperationException]) and its exception rethrown.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`: before the claim was
         *   written nothing ran; when the database fails after the operation ran, the record
         *   stays pending until its lease passes, then the key may be taken over.
         * @throws ResponseTooLargeException `store.response_too_large` (the operation ran; its
         *   key replays this error).
         * @throws RecordException `record.stale_token` when the lease passed and another
         *   request took the key over before completion.
         */
        fun runOnce(
            key: IdempotencyKey,
            request: StoreRequest,
            operation: Operation,
        ): RunResult {
            val record =
                when (val claimed = claim(::usePooled, key, request)) {
                    is ClaimResult.Written -> claimed.record
                    is ClaimResult.Refused -> return claimed.result
                }
            val response =
                try {
                    operation.run()
                } catch (error: Throwable) {
                    try {
                        fail(record, key, error)
                    } catch (storeError: Exception) {
                        error.addSuppressed(storeError)
                    }
                    throw error
                }
            complete(record, key, response)
            return Executed(response)
        }

        /**
         * [runOnce] inside the caller's transaction on [connection] (autocommit off): the claim,
         * [operation]'s writes on the same connection and the completion commit or roll back
         * together. An operation that throws leaves the failure to the caller's rollback:
         * nothing is stored.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws ResponseTooLargeException `store.response_too_large` (roll back: nothing
         *   happened).
         */
        fun inTransaction(
            connection: Connection,
            key: IdempotencyKey,
            request: StoreRequest,
            operation: TransactionalOperation,
        ): RunResult {
            val record =
                when (val claimed = claim({ action -> translated { action(connection) } }, key, request)) {
                    is ClaimResult.Written -> claimed.record
                    is ClaimResult.Refused -> return claimed.result
                }
            val response = operation.run(connection)
            checkSize(response)?.let { throw it }
            write(connection, "complete", record, key, responseValues(response))
            return Executed(response)
        }

        /**
         * Runs [action] in one transaction on a connection of [dataSource]: committed when it
         * returns, rolled back when it throws. With [inTransaction] inside, the record and the
         * business writes go together.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable` when no connection
         *   can be had or it breaks.
         */
        fun <T> transaction(action: java.util.function.Function<Connection, T>): T = dataSource.inTransaction { action.apply(it) }

        /**
         * Claims [key] with a lease: a [RecordLease] to complete or fail, or the replay or
         * refusal a duplicate gets.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun claimLease(
            key: IdempotencyKey,
            request: StoreRequest,
        ): LeaseResult =
            when (val claimed = claim(::usePooled, key, request)) {
                is ClaimResult.Written -> RecordLease(this, key, claimed.record)
                is ClaimResult.Refused -> claimed.result
            }

        /**
         * The stored record of [key], or null.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun load(key: IdempotencyKey): StoredRecord? = dataSource.withConnection { load(it, key) }

        /**
         * Deletes expired records (a pending one only once its lease passed too), [batchSize] per
         * statement until a batch comes back short; returns the total deleted.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        @JvmOverloads
        fun cleanup(batchSize: Int = 1000): Long {
            require(batchSize > 0) { "the batch size must be positive, not $batchSize" }
            var total = 0L
            while (true) {
                val deleted =
                    dataSource.withConnection {
                        it.execRows(query("cleanup"), mapOf("now_millis" to clock.nowMillis(), "batch_size" to batchSize.toLong()))
                    }
                total += deleted
                if (deleted < batchSize) return total
            }
        }

        internal fun complete(
            record: Record,
            key: IdempotencyKey,
            response: StoredResponse,
        ) {
            checkSize(response)?.let { tooLarge ->
                fail(record, key, OperationException(tooLarge.code))
                throw tooLarge
            }
            dataSource.withConnection { write(it, "complete", record, key, responseValues(response)) }
        }

        internal fun fail(
            record: Record,
            key: IdempotencyKey,
            error: Throwable,
        ) {
            val final = error is OperationException && !error.retryable
            val message = error.message ?: error.toString()
            val after = record.fail(record.fence, if (final) Failure.FINAL else Failure.RETRYABLE, policy)
            dataSource.withConnection { connection ->
                if (after.status == RecordStatus.FAILED) {
                    val response = (error as? OperationException)?.response
                    val values = mapOf("error" to message) + (response?.let { responseValues(it) } ?: NO_RESPONSE)
                    write(connection, "fail", record, key, values)
                } else {
                    write(connection, "release", record, key, mapOf("error" to message))
                }
            }
        }

        private sealed interface ClaimResult {
            class Written(
                val record: Record,
            ) : ClaimResult

            class Refused(
                val result: NotExecuted,
            ) : ClaimResult
        }

        private fun usePooled(action: (Connection) -> Unit) = dataSource.withConnection(action)

        /** Decides and writes claims until one is written or the decision is not to execute. */
        private fun claim(
            use: ((Connection) -> Unit) -> Unit,
            key: IdempotencyKey,
            request: StoreRequest,
        ): ClaimResult {
            var waited = 0L
            // A fresh key is claimed in one round trip: the insert is tried before any load.
            var loaded = false
            var stored: StoredRecord? = null
            var rounds = 0
            while (true) {
                // Each lost race means another request wrote the key in between; endless losses
                // mean a snapshot that cannot see the row (MySQL REPEATABLE READ after an earlier
                // read in the caller's transaction).
                rounds += 1
                if (rounds > MAX_CLAIM_ROUNDS) {
                    throw StaleSnapshotException(
                        "the claim of $key neither inserted nor found its record $MAX_CLAIM_ROUNDS times: the transaction reads an old snapshot",
                    )
                }
                var written: Record? = null
                var decided: Decision? = null
                use { connection ->
                    val incoming = Incoming(request.fingerprint, request.keyCreatedMillis, waited)
                    val decision = Decision.decide(stored?.record, incoming, clock.nowMillis(), policy)
                    when {
                        decision is Decision.Execute -> {
                            if (writeClaim(connection, key, decision.claim)) {
                                written = decision.claim.record
                            } else {
                                stored = load(connection, key)
                                loaded = true
                            }
                        }
                        !loaded -> {
                            stored = load(connection, key)
                            loaded = true
                        }
                        else -> decided = decision
                    }
                }
                written?.let { return ClaimResult.Written(it) }
                when (val decision = decided) {
                    null, is Decision.Execute -> continue
                    is Decision.Wait -> {
                        clock.pause(decision.pollMillis)
                        waited += decision.pollMillis
                        use { stored = load(it, key) }
                        rounds = 0
                    }
                    is Decision.Replay -> return ClaimResult.Refused(replay(stored, decision.outcome))
                    is Decision.InProgress -> return ClaimResult.Refused(InProgress(decision.retryAfterMillis, decision.retryAfterSecs))
                    is Decision.FingerprintMismatch -> return ClaimResult.Refused(FingerprintMismatch())
                    is Decision.KeyTooOld -> return ClaimResult.Refused(KeyTooOld())
                }
            }
        }

        private fun replay(
            stored: StoredRecord?,
            outcome: Outcome,
        ): Replayed =
            if (outcome == Outcome.SUCCEEDED) {
                Replayed(outcome, stored?.response ?: StoredResponse("", ByteArray(0)), null)
            } else {
                Replayed(outcome, stored?.response, stored?.error ?: "")
            }

        private fun writeClaim(
            connection: Connection,
            key: IdempotencyKey,
            claim: Claim,
        ): Boolean {
            val record = claim.record
            val common =
                keyValues(key) +
                    mapOf(
                        "fencing_token" to record.token,
                        "lease_deadline_millis" to record.leaseDeadlineMillis,
                        "now_millis" to clock.nowMillis(),
                    )
            val expected = claim.expected
            if (expected == null) {
                val query = query("claim")
                val values =
                    common +
                        mapOf(
                            "fingerprint" to record.fingerprint.digest(),
                            "created_millis" to record.createdMillis,
                            "expires_millis" to record.expiresMillis,
                        )
                // `claim` returns a row (PostgreSQL, SQLite) or an affected-row count (MySQL).
                return if (query.kind == ResultKind.ONE) connection.rows(query, values).size == 1 else connection.execRows(query, values) == 1L
            }
            val values =
                common +
                    mapOf(
                        "expected_token" to expected.fence.token,
                        "expected_created_millis" to expected.fence.createdMillis,
                        "expected_status" to expected.status.text,
                    )
            return connection.execRows(query("reclaim"), values) == 1L
        }

        /** Runs a fenced write; when it changes no row, the core says why (`record.stale_token`, …). */
        private fun write(
            connection: Connection,
            name: String,
            record: Record,
            key: IdempotencyKey,
            values: Map<String, Any?>,
        ) {
            val fence: Fence = record.fence
            val all =
                keyValues(key) +
                    mapOf("fencing_token" to fence.token, "created_millis" to fence.createdMillis, "now_millis" to clock.nowMillis()) +
                    values
            if (connection.execRows(query(name), all) == 1L) return
            val current = load(connection, key)
            (current?.record ?: record).complete(fence)
            throw RecordException(
                "record.stale_token",
                "the $name of token ${fence.token} changed no row: the record was taken over or removed",
                null,
                null,
            )
        }

        private fun load(
            connection: Connection,
            key: IdempotencyKey,
        ): StoredRecord? {
            val row = connection.rows(query("load"), keyValues(key)).firstOrNull() ?: return null
            val body = row.bytes("response_body")
            return StoredRecord(
                Record(
                    RecordStatus.parse(row.text("status") ?: ""),
                    Fingerprint.ofDigest(row.bytes("fingerprint") ?: ByteArray(0)),
                    row.long("fencing_token"),
                    row.long("lease_deadline_millis"),
                    row.long("created_millis"),
                    row.long("expires_millis"),
                ),
                body?.let { StoredResponse(row.text("response_content_type") ?: "", it) },
                row.text("error"),
            )
        }

        private fun query(name: String): NamedQuery = queries[name]

        private companion object {
            const val MAX_CLAIM_ROUNDS = 100
            val NO_RESPONSE = mapOf("response_body" to SqlNull.BYTES, "response_content_type" to SqlNull.TEXT)

            fun keyValues(key: IdempotencyKey): Map<String, Any?> = mapOf("scope" to key.scope, "kind" to key.kind, "key_id" to key.id)

            fun responseValues(response: StoredResponse): Map<String, Any?> =
                mapOf("response_body" to response.bodyBytes(), "response_content_type" to response.contentType)

            fun checkSize(response: StoredResponse): ResponseTooLargeException? =
                if (response.size <= MAX_RESPONSE_BYTES) {
                    null
                } else {
                    ResponseTooLargeException("the response has ${response.size} bytes, more than the $MAX_RESPONSE_BYTES stored")
                }
        }
    }
