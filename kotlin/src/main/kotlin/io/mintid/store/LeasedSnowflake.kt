package io.mintid.store

import io.mintid.LeaseException
import io.mintid.LeaseGuard
import io.mintid.Snowflake
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean

/**
 * A Snowflake generator on a leased worker id ([WorkerLeases]), which any number of threads may
 * share. It issues only IDs whose time lies after the previous holder's high-water mark (so IDs
 * keep increasing across restarts and moves), renews the lease from a daemon thread, and
 * **stops issuing** once the lease is lost or could not be renewed before its stop point:
 * [nextId] then throws a [LeaseException] (`lease.lost`, `lease.expired`) instead of risking a
 * duplicate with the next holder. [close] stops the heartbeat and releases the lease with the
 * high-water mark, the generator's own high-water time read after it stopped issuing.
 *
 * ```kotlin
 * LeasedSnowflake.acquire(WorkerLeases(dataSource, Dialect.POSTGRES, LeasePolicy(layout)), "api-7f9c:4242").use { ids ->
 *     val id: Long = ids.nextId()
 * }
 * ```
 *
 * The generator reads the system clock; the leases' [WorkerLeases.clock] should be the system
 * clock too.
 */
class LeasedSnowflake private constructor(
    private val leases: WorkerLeases,
    /** The lease's guard: the worker id, the token, the deadline and stop point. */
    val guard: LeaseGuard,
) : AutoCloseable {
    private val snowflake =
        Snowflake
            .builder(leases.policy.layout, guard.workerId)
            .startingAfterUnixMillis(guard.startAfterMillis)
            .build()
    private val closed = AtomicBoolean()
    private val heartbeat =
        ScheduledThreadPoolExecutor(1) { task ->
            Thread(task, "mintid-lease-${guard.workerId}").apply { isDaemon = true }
        }.apply { executeExistingDelayedTasksAfterShutdownPolicy = false }

    init {
        scheduleRenewal()
    }

    /** The leased worker id, in every ID. */
    val workerId: Long get() = guard.workerId

    /**
     * No ID issued so far carries a later time (Unix ms): the generator's high-water time, or the
     * lease's start point before the first ID. Renewals and the release store it.
     */
    val highWaterMillis: Long get() = maxOf(guard.startAfterMillis, snowflake.highWaterUnixMillis ?: 0)

    /**
     * The next ID, admitted by the lease's guard.
     *
     * @throws LeaseException `lease.expired` (not renewed in time), `lease.lost` (another holder
     *   took the id), `lease.released` (after [close]).
     * @throws io.mintid.SnowflakeException as [Snowflake.nextId] does.
     */
    fun nextId(): Long {
        guard.check(leases.clock.nowMillis())
        val id = snowflake.nextId()
        guard.admit(id)
        return id
    }

    /**
     * [count] new consecutive IDs, admitted together (one check, one admission).
     *
     * @throws LeaseException as [nextId] does; the IDs of a refused batch are dropped.
     * @throws io.mintid.ArgumentException `argument.negative`, `argument.batch_too_large` above
     *   65536.
     */
    fun nextIds(count: Int): LongArray {
        guard.check(leases.clock.nowMillis())
        val ids = snowflake.nextIds(count)
        guard.admitAll(ids)
        return ids
    }

    /** The next beat, when the guard says the next renewal is due (none once the lease is over). */
    private fun scheduleRenewal() {
        if (closed.get() || !guard.isLive) return
        val wait = (guard.nextRenewalAtMillis - leases.clock.nowMillis()).coerceAtLeast(0)
        try {
            heartbeat.schedule(::beat, wait, TimeUnit.MILLISECONDS)
        } catch (_: RejectedExecutionException) {
            // Closed meanwhile.
        }
    }

    private fun beat() {
        try {
            leases.renew(guard, highWaterMillis)
        } catch (_: Exception) {
            // Counted by the core (a failed attempt, or the lease lost for good): nextId reports it.
        }
        scheduleRenewal()
    }

    /**
     * Stops the heartbeat and releases the lease with the high-water mark, once; whether the row
     * was still this holder's (false when the lease was lost, or on a second call). Stop the
     * threads calling [nextId] first.
     *
     * @throws io.mintid.StoreUnavailableException `store.unavailable`: the lease then ends at its
     *   deadline, and the next holder waits out the clock-skew bound.
     */
    fun release(): Boolean {
        if (!closed.compareAndSet(false, true)) return false
        heartbeat.shutdown()
        // A renewal under way finishes (or its connection times out) before the release.
        if (!heartbeat.awaitTermination(leases.policy.leaseMillis, TimeUnit.MILLISECONDS)) heartbeat.shutdownNow()
        return leases.release(guard) { highWaterMillis }
    }

    /** [release]: stops the heartbeat and releases the lease. */
    override fun close() {
        release()
    }

    /** Acquiring. */
    companion object {
        /**
         * Acquires a worker id for [owner] (host, pod or process; stored as [WorkerLeases.acquire] says) on the leases'
         * policy's layout, waiting until the new holder may issue (after an expired lease: the
         * previous holder's clock-skew bound, at most the policy's `maxStartWaitMillis`), and up
         * to [timeoutMillis] for a worker id to become usable.
         *
         * @throws LeaseException `lease.no_worker_free`, `lease.high_water_ahead`,
         *   `lease.acquire_timeout`.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        @JvmStatic
        @JvmOverloads
        fun acquire(
            leases: WorkerLeases,
            owner: String,
            timeoutMillis: Long? = null,
        ): LeasedSnowflake {
            val guard = leases.acquire(owner, timeoutMillis)
            try {
                return LeasedSnowflake(leases, guard)
            } catch (error: Throwable) {
                // No generator: give the id back at once.
                try {
                    leases.release(guard, guard.startAfterMillis)
                } catch (releaseError: Exception) {
                    error.addSuppressed(releaseError)
                }
                throw error
            }
        }
    }
}
