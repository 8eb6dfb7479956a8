package io.mintid

import uniffi.mintid_ffi.leaseAcquire
import uniffi.mintid_ffi.leaseNoneFound
import uniffi.mintid_ffi.Acquisition as FfiAcquisition
import uniffi.mintid_ffi.LeaseGuard as FfiGuard
import uniffi.mintid_ffi.LeaseNoneFound as FfiNoneFound
import uniffi.mintid_ffi.LeasePolicy as FfiPolicy
import uniffi.mintid_ffi.Renewal as FfiRenewal
import uniffi.mintid_ffi.WorkerLease as FfiLease

// Worker-id leases: a worker takes a free or expired Snowflake worker id from the shared
// `worker_lease` table, with a fencing token, and consults a LeaseGuard before handing out IDs
// and while renewing. Times (Unix ms), ids, tokens and counts are the core's unsigned 64-bit
// values carried in Longs with the same bits; the core refuses arithmetic that would overflow.

/**
 * The rules of worker-id leases for one [layout]. Unset durations take the core's defaults.
 *
 * @property layout the Snowflake layout whose worker ids are leased (default `classic`).
 * @param leaseMillis how long a lease lasts from its acquisition or renewal.
 * @param renewIntervalMillis how often a holder renews.
 * @param safetyMarginMillis how long before the deadline a holder stops handing out IDs.
 * @param renewRetryMillis how soon a failed renewal is retried.
 * @param maxSkewMillis the clock skew between workers that the rules allow for.
 * @param maxStartWaitMillis the longest a new holder waits before its first ID.
 * @throws LeaseException `lease.invalid_policy`.
 */
class LeasePolicy
    @JvmOverloads
    constructor(
        val layout: SnowflakeLayout = SnowflakeLayout.classic(),
        leaseMillis: Long? = null,
        renewIntervalMillis: Long? = null,
        safetyMarginMillis: Long? = null,
        renewRetryMillis: Long? = null,
        maxSkewMillis: Long? = null,
        maxStartWaitMillis: Long? = null,
    ) {
        internal val ffi =
            core {
                FfiPolicy(
                    layout.ffi,
                    leaseMillis?.toULong(),
                    renewIntervalMillis?.toULong(),
                    safetyMarginMillis?.toULong(),
                    renewRetryMillis?.toULong(),
                    maxSkewMillis?.toULong(),
                    maxStartWaitMillis?.toULong(),
                )
            }

        /** The largest worker id a lease can hold. */
        val maxWorker: Long get() = ffi.maxWorker().toLong()

        /** How long a lease lasts from its acquisition or renewal. */
        val leaseMillis: Long get() = ffi.leaseMillis().toLong()

        /** How often a holder renews. */
        val renewIntervalMillis: Long get() = ffi.renewIntervalMillis().toLong()

        /** How long before the deadline a holder stops handing out IDs. */
        val safetyMarginMillis: Long get() = ffi.safetyMarginMillis().toLong()

        /** How soon a failed renewal is retried. */
        val renewRetryMillis: Long get() = ffi.renewRetryMillis().toLong()

        /** The clock skew between workers that the rules allow for. */
        val maxSkewMillis: Long get() = ffi.maxSkewMillis().toLong()

        /** The longest a new holder waits before its first ID. */
        val maxStartWaitMillis: Long get() = ffi.maxStartWaitMillis().toLong()
    }

/**
 * One row of the `worker_lease` table.
 *
 * @property workerId the Snowflake worker id.
 * @property fencingToken bumped by every acquisition.
 * @property leaseDeadlineMillis when the lease ends unless renewed (Unix ms).
 * @property highWaterMillis the latest time the holder may have issued IDs for (Unix ms).
 * @property held whether a worker holds it.
 */
data class WorkerLease(
    val workerId: Long,
    val fencingToken: Long,
    val leaseDeadlineMillis: Long,
    val highWaterMillis: Long,
    val held: Boolean,
) {
    internal fun toFfi() =
        FfiLease(workerId.toULong(), fencingToken.toULong(), leaseDeadlineMillis.toULong(), highWaterMillis.toULong(), held)

    internal companion object {
        fun of(row: FfiLease) =
            WorkerLease(row.workerId.toLong(), row.fencingToken.toLong(), row.leaseDeadlineMillis.toLong(), row.highWaterMillis.toLong(), row.held)
    }
}

/**
 * An acquired lease: the row to write (compare-and-set on [expectedToken]) and when IDs may
 * start.
 *
 * @property lease the row to write.
 * @property expectedToken the token the row must still have.
 * @property acquiredMillis when it was acquired (Unix ms).
 * @property startAfterMillis new IDs must come from ticks after this time.
 * @property readyAtMillis the first time IDs may be handed out.
 */
data class Acquisition(
    val lease: WorkerLease,
    val expectedToken: Long,
    val acquiredMillis: Long,
    val startAfterMillis: Long,
    val readyAtMillis: Long,
) {
    internal fun toFfi() =
        FfiAcquisition(lease.toFfi(), expectedToken.toULong(), acquiredMillis.toULong(), startAfterMillis.toULong(), readyAtMillis.toULong())

    /** Acquiring. */
    companion object {
        /**
         * Takes [row] (as the `lease_find` query returned it) at [nowMillis].
         *
         * @throws LeaseException `lease.still_held` and the other `lease.*` codes.
         */
        @JvmStatic
        fun acquire(
            row: WorkerLease,
            nowMillis: Long,
            policy: LeasePolicy,
        ): Acquisition {
            val made = core { leaseAcquire(row.toFfi(), nowMillis.toULong(), policy.ffi) }
            return Acquisition(
                WorkerLease.of(made.lease),
                made.expectedToken.toLong(),
                made.acquiredMillis.toLong(),
                made.startAfterMillis.toLong(),
                made.readyAtMillis.toLong(),
            )
        }

        /**
         * What to do when no row was free: [LeaseNoneFound.SEED] the table, or
         * [LeaseNoneFound.RETRY] later; from the `lease_count` query's [present] and [free].
         *
         * @throws LeaseException `lease.no_worker_free`.
         */
        @JvmStatic
        fun noneFound(
            present: Long,
            free: Long,
            policy: LeasePolicy,
        ): LeaseNoneFound =
            when (core { leaseNoneFound(present.toULong(), free.toULong(), policy.ffi) }) {
                FfiNoneFound.SEED -> LeaseNoneFound.SEED
                FfiNoneFound.RETRY -> LeaseNoneFound.RETRY
            }
    }
}

/** What [Acquisition.noneFound] says to do. */
enum class LeaseNoneFound {
    /** Insert the worker ids (the table is empty or short). */
    SEED,

    /** Every worker id is held for now: try again later. */
    RETRY,
}

/**
 * A renewal to write with `lease_renew`.
 *
 * @property workerId the worker id.
 * @property fencingToken the holder's token.
 * @property leaseDeadlineMillis the new deadline.
 * @property highWaterMillis the high-water time to store.
 * @property nowMillis when it was made.
 */
data class Renewal(
    val workerId: Long,
    val fencingToken: Long,
    val leaseDeadlineMillis: Long,
    val highWaterMillis: Long,
    val nowMillis: Long,
) {
    internal fun toFfi() =
        FfiRenewal(workerId.toULong(), fencingToken.toULong(), leaseDeadlineMillis.toULong(), highWaterMillis.toULong(), nowMillis.toULong())
}

/**
 * A release to write with `lease_release`.
 *
 * @property workerId the worker id.
 * @property fencingToken the holder's token.
 * @property highWaterMillis the high-water time to store.
 * @property nowMillis when it was made.
 */
data class Release(
    val workerId: Long,
    val fencingToken: Long,
    val highWaterMillis: Long,
    val nowMillis: Long,
)

/**
 * What a lease holder consults: before handing out IDs ([check], [admit]) and to renew on time.
 * Safe to share between threads. [WorkerLeases.acquire][io.mintid.store.WorkerLeases.acquire]
 * makes one; so does the constructor, from an [Acquisition] whose row was written under [LeasePolicy].
 */
class LeaseGuard internal constructor(
    internal val ffi: FfiGuard,
) {
    /** The guard of [acquisition], whose row was written, under [policy]. */
    constructor(acquisition: Acquisition, policy: LeasePolicy) : this(FfiGuard(acquisition.toFfi(), policy.ffi))

    /** The worker id held. */
    val workerId: Long get() = ffi.workerId().toLong()

    /** The serial a lease renew or release wire names this guard by (the core's guard registry). */
    internal val wireId: Long get() = ffi.wireId().toLong()

    /** The holder's fencing token. */
    val fencingToken: Long get() = ffi.fencingToken().toLong()

    /** New IDs must come from ticks after this time. */
    val startAfterMillis: Long get() = ffi.startAfterMillis().toLong()

    /** The first time IDs may be handed out. */
    val readyAtMillis: Long get() = ffi.readyAtMillis().toLong()

    /** When the lease ends unless renewed. */
    val leaseDeadlineMillis: Long get() = ffi.leaseDeadlineMillis().toLong()

    /** When the holder must stop handing out IDs. */
    val stopAtMillis: Long get() = ffi.stopAtMillis().toLong()

    /** When the next renewal is due. */
    val nextRenewalAtMillis: Long get() = ffi.nextRenewalAtMillis().toLong()

    /** Whether the lease is still live (not lost). */
    val isLive: Boolean get() = ffi.isLive()

    /** Whether a renewal is due at [nowMillis]. */
    fun renewDue(nowMillis: Long): Boolean = ffi.renewDue(nowMillis.toULong())

    /**
     * Checks that IDs may be handed out at [nowMillis].
     *
     * @throws LeaseException a `lease.*` code.
     */
    fun check(nowMillis: Long) = core { ffi.check(nowMillis.toULong()) }

    /**
     * Checks that [id] may be handed out under this lease.
     *
     * @throws LeaseException a `lease.*` code.
     * @throws SnowflakeException `snowflake.id_out_of_range` for a negative [id].
     */
    fun admit(id: Long) = core { ffi.admit(id.toULong()) }

    /**
     * Checks every one of [ids], as [admit] does.
     *
     * @throws LeaseException a `lease.*` code.
     */
    fun admitAll(ids: LongArray) = core { ffi.admitAll(ids.map { it.toULong() }) }

    /**
     * The renewal to write at [nowMillis], storing [highWaterMillis].
     *
     * @throws LeaseException a `lease.*` code.
     */
    fun renewal(
        nowMillis: Long,
        highWaterMillis: Long,
    ): Renewal {
        val made = core { ffi.renewal(nowMillis.toULong(), highWaterMillis.toULong()) }
        return Renewal(made.workerId.toLong(), made.fencingToken.toLong(), made.leaseDeadlineMillis.toLong(), made.highWaterMillis.toLong(), made.nowMillis.toLong())
    }

    /**
     * Records that [renewal] was written, with the affected-row count [rows] of `lease_renew`.
     *
     * @throws LeaseException `lease.lost` and the other `lease.*` codes.
     */
    fun renewed(
        renewal: Renewal,
        rows: Long,
    ) = core { ffi.renewed(renewal.toFfi(), rows.toULong()) }

    /** Records that a renewal failed at [nowMillis] (it is retried after the policy's delay). */
    fun renewalFailed(nowMillis: Long) = ffi.renewalFailed(nowMillis.toULong())

    /** The release to write at [nowMillis], storing [highWaterMillis]. */
    fun release(
        nowMillis: Long,
        highWaterMillis: Long,
    ): Release {
        val made = ffi.release(nowMillis.toULong(), highWaterMillis.toULong())
        return Release(made.workerId.toLong(), made.fencingToken.toLong(), made.highWaterMillis.toLong(), made.nowMillis.toLong())
    }
}
