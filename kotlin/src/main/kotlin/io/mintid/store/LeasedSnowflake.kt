package io.mintid.store

import io.mintid.LeaseException
import io.mintid.LeaseGuard
import io.mintid.Snowflake
import java.util.concurrent.Executors
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean

/**
 * A Snowflake generator on a leased worker id ([WorkerLeases]), which any number of threads may
 * share. It issues only IDs whose time lies after the previous holder's high-water mark (so IDs
 * keep increasing across restarts and moves), renews the lease from a daemon thread, and
 * **stops issuing** once the lease is lost or could not be renewed before its stop point:
 * [nextId] then throws a [LeaseException] (`lease.lost`, `lease.expired`) instead of risking a
 * duplicate with the next holder. [close] stops the heartbeat and releases the lease with the
 * high-water mark.
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
    private val heartbeat: ScheduledExecutorService =
        Executors.newSingleThreadScheduledExecutor { task ->
            Thread(task, "mintid-lease-${guard.workerId}").apply { isDaemon = true }
        }

    init {
        val tick = (leases.policy.renewIntervalMillis / 10).coerceIn(1, 1000)
        heartbeat.scheduleWithFixedDelay(::beat, tick, tick, TimeUnit.MILLISECONDS)
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

    /** Renews when due; a failure is counted by the guard, which stops issuing in time. */
    private fun beat() {
        if (!guard.isLive || !guard.renewDue(leases.clock.nowMillis())) return
        try {
            leases.renew(guard, highWaterMillis)
        } catch (_: Exception) {
            // Counted by the guard (a failed attempt, or the lease lost for good): nextId reports it.
        }
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
        if (!guard.isLive) return false
        return leases.release(guard, highWaterMillis)
    }

    /** [release]: stops the heartbeat and releases the lease. */
    override fun close() {
        release()
    }

    /** Acquiring. */
    companion object {
        /**
         * Acquires a worker id for [owner] (host, pod or process; 1 to 255 bytes) and waits until
         * the new holder may issue (after an expired lease: the previous holder's clock-skew
         * bound, at most the policy's `maxStartWaitMillis`).
         *
         * @throws LeaseException `lease.no_worker_free`, `lease.high_water_ahead`.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws IllegalArgumentException for an empty or longer [owner].
         */
        @JvmStatic
        fun acquire(
            leases: WorkerLeases,
            owner: String,
        ): LeasedSnowflake {
            val guard = leases.acquire(owner)
            try {
                val wait = guard.readyAtMillis - leases.clock.nowMillis()
                if (wait > 0) leases.clock.pause(wait)
                return LeasedSnowflake(leases, guard)
            } catch (error: Throwable) {
                // Interrupted while waiting, or no generator: give the id back at once.
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
