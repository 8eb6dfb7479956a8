package io.mintid.store

import io.mintid.Acquisition
import io.mintid.LeaseGuard
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
 * before its deadline, and releases it on shutdown with its high-water mark. Each of the three
 * is a driver of the core (`LeaseAcquisition`, `LeaseRenewal`, `LeaseRelease`: every loop,
 * retry, pause, deadline and error code); this class runs the statements they name.
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
 * @property metrics where the database errors of its statements are reported ([StoreMetrics.NONE] by default).
 */
class WorkerLeases
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: LeasePolicy,
        val clock: StoreClock = StoreClock.SYSTEM,
        val metrics: StoreMetrics = StoreMetrics.NONE,
    ) {
        /**
         * Takes the lowest usable free or expired worker id for [owner] (host, pod or process; the
         * core makes it storable: 1 to 255 bytes, cut with a marker, `tests/vectors/limits.json`), seeding the table's rows on first use, and returns once the new
         * holder may issue (after an expired lease: the previous holder's clock-skew bound). A
         * free row whose high-water mark lies too far ahead of this clock is skipped for the
         * next one. With [timeoutMillis], it waits up to that long for a worker id to become
         * usable.
         *
         * @throws io.mintid.LeaseException `lease.no_worker_free` when every worker id is held by
         *   a live lease, `lease.high_water_ahead` when only rows too far ahead are free (both
         *   without [timeoutMillis]), `lease.acquire_timeout` when [timeoutMillis] passed.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        @JvmOverloads
        fun acquire(
            owner: String,
            timeoutMillis: Long? = null,
        ): LeaseGuard {
            val spec = Wire.leaseAcquireSpec(dialect, fields, owner, timeoutMillis)
            val a = (run().once(Wire.Kind.LEASE_ACQUIRE, spec) as Wire.Step.Done).value as Wire.Acquired
            val lease = WorkerLease(a.workerId, a.fencingToken, a.leaseDeadlineMillis, a.highWaterMillis, true)
            return LeaseGuard(Acquisition(lease, a.expectedToken, a.acquiredMillis, a.startAfterMillis, a.readyAtMillis), policy)
        }

        /**
         * Renews [guard]'s lease, storing [highWaterMillis] (no ID issued under it carries a
         * later time); the guard learns the outcome. A renewal the clock refuses
         * (`lease.clock_behind`, `lease.expired`) or the database does not answer counts as a
         * failed attempt: the next one is due after the policy's retry delay.
         *
         * @throws io.mintid.LeaseException `lease.lost` (another holder took the id: for good),
         *   `lease.expired` (too late: acquire again), `lease.clock_behind`, `lease.released`.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun renew(
            guard: LeaseGuard,
            highWaterMillis: Long,
        ) {
            WireDriver(Wire.Kind.LEASE_RENEW, Wire.guardSpec(Wire.Kind.LEASE_RENEW, dialect, guard.wireId)).use { wire ->
                run().drive(wire, mark(highWaterMillis))
            }
        }

        /**
         * Releases [guard]'s lease, storing the final [highWaterMillis]: the worker id is free at
         * once and its next holder starts after the mark. Call it after the threads issuing IDs
         * have stopped. Returns whether the row was still this holder's (false: the lease was
         * already lost or released).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`: the guard is ended
         *   anyway, and the lease runs out at its deadline.
         */
        fun release(
            guard: LeaseGuard,
            highWaterMillis: Long,
        ): Boolean = release(guard) { highWaterMillis }

        /** [release], reading the high-water time once [guard] has stopped issuing. */
        internal fun release(
            guard: LeaseGuard,
            highWaterMillis: () -> Long,
        ): Boolean {
            // Made first: the guard stops issuing, then the high-water time is read.
            WireDriver(Wire.Kind.LEASE_RELEASE, Wire.guardSpec(Wire.Kind.LEASE_RELEASE, dialect, guard.wireId)).use { wire ->
                return (run().drive(wire, mark(highWaterMillis())) as Wire.Step.Done).value as Boolean
            }
        }

        /**
         * The row of [workerId], or null (for operators and tests).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun load(workerId: Long): WorkerLeaseRow? {
            // The columns in the query's SELECT order; a MySQL owner is VARBINARY.
            val row = dataSource.query(dialect, "lease_load", workerId).firstOrNull() ?: return null
            val owner = row[1].let { if (it is ByteArray) it.decodeToString() else it as String? }
            return WorkerLeaseRow(row[0] as Long, owner, row[2] as Long, row[3] as Long, row[4] as Long)
        }

        private val fields =
            Wire.LeaseFields(
                policy.layout.timeBits,
                policy.layout.workerBits,
                policy.layout.sequenceBits,
                policy.layout.datacenterBits,
                policy.layout.epochMillis,
                policy.layout.tickMillis,
                policy.leaseMillis,
                policy.renewIntervalMillis,
                policy.safetyMarginMillis,
                policy.renewRetryMillis,
                policy.maxSkewMillis,
                policy.maxStartWaitMillis,
            )

        private fun mark(highWaterMillis: Long) = Wire.input(Wire.Input.MARK, clock.nowMillis()).u64(highWaterMillis).done()

        private fun run() = DriverRun.pooled(dataSource, dialect, clock, metrics)
    }
