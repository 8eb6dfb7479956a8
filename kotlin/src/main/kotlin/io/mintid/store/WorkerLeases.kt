package io.mintid.store

import io.mintid.Acquisition
import io.mintid.LeaseException
import io.mintid.LeaseGuard
import io.mintid.LeaseNoneFound
import io.mintid.LeasePolicy
import io.mintid.WorkerLease
import javax.sql.DataSource

/**
 * One row of the `worker_lease` table, as `lease_load` reads it.
 *
 * @property workerId the Snowflake worker id.
 * @property owner the holder's identity, or null while the id is free.
 * @property fencingToken the latest holder's fencing token.
 * @property leaseDeadlineMillis when the lease ends unless renewed (for a released row: when it
 *   was released), Unix ms.
 * @property highWaterMillis no ID of this worker id carries a later time (see `docs/spec.md`,
 *   "The high-water mark"), Unix ms.
 */
data class WorkerLeaseRow(
    val workerId: Long,
    val owner: String?,
    val fencingToken: Long,
    val leaseDeadlineMillis: Long,
    val highWaterMillis: Long,
)

/**
 * Worker-id leases in one database (any JDBC driver), under one [LeasePolicy]: a process takes a
 * free or expired Snowflake worker id from the shared `worker_lease` table, renews it well
 * before its deadline, and releases it on shutdown with its high-water mark. The rules are the
 * core's ([Acquisition], [LeaseGuard]); this class runs the `lease_*` named queries.
 *
 * Most callers want [LeasedSnowflake], which holds the lease, renews it from a daemon thread and
 * stops issuing IDs when it is no longer safe. Apply the schema first ([Migrations.migrate]).
 * Thread-safe; each call takes a connection from [dataSource] and returns it. SQLite needs
 * connections whose transactions take the write lock at `BEGIN` (see [Dialect.SQLITE]).
 *
 * @property dataSource where connections come from.
 * @property dialect the database's SQL dialect.
 * @property policy the lease policy (its layout says which worker ids exist).
 * @property clock the time every decision and statement uses (the system clock by default).
 */
class WorkerLeases
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: LeasePolicy,
        val clock: StoreClock = StoreClock.SYSTEM,
    ) {
        private val queries = Statements.of(dialect)

        /**
         * Takes the lowest free or expired worker id for [owner] (host, pod or process: 1 to 255
         * bytes of UTF-8), seeding the table's rows on first use. The guard's
         * [LeaseGuard.readyAtMillis] says when IDs may start ([LeasedSnowflake.acquire] waits for
         * it).
         *
         * @throws LeaseException `lease.no_worker_free` when every worker id is held by a live
         *   lease, `lease.high_water_ahead` when the stored high-water mark is far ahead of this
         *   clock.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws IllegalArgumentException for an empty or longer [owner].
         */
        fun acquire(owner: String): LeaseGuard {
            val ownerBytes = owner.toByteArray(Charsets.UTF_8).size
            require(ownerBytes in 1..MAX_OWNER_BYTES) { "the owner must have 1 to $MAX_OWNER_BYTES bytes of UTF-8, not $ownerBytes" }
            while (true) {
                val now = clock.nowMillis()
                val window = mapOf("max_worker" to policy.maxWorker, "now_millis" to now)
                val attempt = dataSource.inTransaction { connection -> take(connection, owner, window, now) }
                when (attempt) {
                    is TakeAttempt.Taken -> return attempt.guard
                    TakeAttempt.Raced -> continue
                    TakeAttempt.NoneFound -> noneFound(window)
                }
            }
        }

        private sealed interface TakeAttempt {
            class Taken(
                val guard: LeaseGuard,
            ) : TakeAttempt

            /** Another process took the row between find and take. */
            object Raced : TakeAttempt

            /** No free or ended row was found (or none could be locked). */
            object NoneFound : TakeAttempt
        }

        /** `lease_find`, the core's decision, `lease_take`, inside the acquisition's transaction. */
        private fun take(
            connection: java.sql.Connection,
            owner: String,
            window: Map<String, Long>,
            now: Long,
        ): TakeAttempt {
            val row = connection.rows(queries["lease_find"], window).firstOrNull() ?: return TakeAttempt.NoneFound
            val found =
                WorkerLease(
                    row.long("worker_id"),
                    row.long("fencing_token"),
                    row.long("lease_deadline_millis"),
                    row.long("high_water_millis"),
                    row.text("owner") != null,
                )
            val made = Acquisition.acquire(found, now, policy)
            val values =
                mapOf(
                    "worker_id" to made.lease.workerId,
                    "owner" to owner,
                    "fencing_token" to made.lease.fencingToken,
                    "lease_deadline_millis" to made.lease.leaseDeadlineMillis,
                    "high_water_millis" to made.lease.highWaterMillis,
                    "expected_token" to made.expectedToken,
                    "now_millis" to made.acquiredMillis,
                )
            return if (connection.execRows(queries["lease_take"], values) == 1L) TakeAttempt.Taken(LeaseGuard(made, policy)) else TakeAttempt.Raced
        }

        /** After `lease_find` found nothing: the core says seed, retry, or `lease.no_worker_free`. */
        private fun noneFound(window: Map<String, Long>) {
            dataSource.withConnection { connection ->
                val count = connection.rows(queries["lease_count"], window).firstOrNull()
                val present = count?.long("present_count") ?: 0
                val free = count?.long("free_count") ?: 0
                when (Acquisition.noneFound(present, free, policy)) {
                    LeaseNoneFound.SEED -> connection.execRows(queries["lease_seed"], window)
                    // Free rows were locked by concurrent acquisitions: let them commit.
                    LeaseNoneFound.RETRY -> clock.pause(RETRY_PAUSE_MILLIS)
                }
            }
        }

        /**
         * Renews [guard]'s lease, storing [highWaterMillis] (no ID issued under it carries a
         * later time); the guard learns the outcome. A renewal that gets no answer, or that the
         * clock refuses (`lease.clock_behind`), counts as a failed attempt: the next one is due
         * after the policy's retry delay.
         *
         * @throws LeaseException `lease.lost` (another holder took the id: for good),
         *   `lease.expired` (too late: acquire again), `lease.clock_behind`, `lease.released`.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun renew(
            guard: LeaseGuard,
            highWaterMillis: Long,
        ) {
            val now = clock.nowMillis()
            val renewal =
                try {
                    guard.renewal(now, highWaterMillis)
                } catch (error: LeaseException) {
                    if (error.code == "lease.clock_behind") guard.renewalFailed(now)
                    throw error
                }
            val values =
                mapOf(
                    "worker_id" to renewal.workerId,
                    "fencing_token" to renewal.fencingToken,
                    "lease_deadline_millis" to renewal.leaseDeadlineMillis,
                    "high_water_millis" to renewal.highWaterMillis,
                    "now_millis" to renewal.nowMillis,
                )
            val rows =
                try {
                    dataSource.withConnection { it.execRows(queries["lease_renew"], values) }
                } catch (error: Exception) {
                    guard.renewalFailed(now)
                    throw error
                }
            guard.renewed(renewal, rows)
        }

        /**
         * Releases [guard]'s lease, storing the final [highWaterMillis]: the worker id is free at
         * once and its next holder starts after the mark. Call it after the threads issuing IDs
         * have stopped. Returns whether the row was still this holder's (false: the lease was
         * already lost).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`: the guard is ended
         *   anyway, and the lease runs out at its deadline.
         */
        fun release(
            guard: LeaseGuard,
            highWaterMillis: Long,
        ): Boolean {
            val release = guard.release(clock.nowMillis(), highWaterMillis)
            val values =
                mapOf(
                    "worker_id" to release.workerId,
                    "fencing_token" to release.fencingToken,
                    "high_water_millis" to release.highWaterMillis,
                    "now_millis" to release.nowMillis,
                )
            return dataSource.withConnection { it.execRows(queries["lease_release"], values) } == 1L
        }

        /**
         * The row of [workerId], or null (for operators and tests).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun load(workerId: Long): WorkerLeaseRow? {
            val row = dataSource.withConnection { it.rows(queries["lease_load"], mapOf("worker_id" to workerId)).firstOrNull() } ?: return null
            return WorkerLeaseRow(
                row.long("worker_id"),
                row.text("owner"),
                row.long("fencing_token"),
                row.long("lease_deadline_millis"),
                row.long("high_water_millis"),
            )
        }

        private companion object {
            /** `worker_lease.owner` holds 1 to 255 bytes (`docs/spec.md`). */
            const val MAX_OWNER_BYTES = 255

            /** How long to let concurrent acquisitions commit before looking again. */
            const val RETRY_PAUSE_MILLIS = 5L
        }
    }
