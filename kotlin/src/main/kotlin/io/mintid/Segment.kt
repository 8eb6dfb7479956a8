package io.mintid

import uniffi.mintid_ffi.segmentAdapt
import uniffi.mintid_ffi.segmentPolicyNew
import uniffi.mintid_ffi.SegmentAllocator as FfiAllocator
import uniffi.mintid_ffi.SegmentPolicy as FfiPolicy

// Segment allocators (Leaf's segment mode): IDs from a database counter, fetched a segment at a
// time, the next segment fetched before the current one runs out, the step adapting to the
// rate. Counts, steps and times are the core's unsigned 64-bit values carried in Longs.

/** The core's default segment policy, read once. */
private val DEFAULT_SEGMENT_POLICY = core { segmentPolicyNew() }

/**
 * How segments are sized and fetched; every value left out keeps the core's default (steps from
 * 1000 within 100 to 1 000 000, fetched at 10 % used, doubled below 15 minutes, halved above 30).
 *
 * @property initialStep the first segment's size.
 * @property minStep the smallest step.
 * @property maxStep the largest step.
 * @property fetchAtPercent fetch the next segment once this percentage of the current one is used.
 * @property growBelowMillis double the step when a segment lasted less than this.
 * @property shrinkAboveMillis halve the step when a segment lasted more than this.
 */
data class SegmentPolicy
    @JvmOverloads
    constructor(
        val initialStep: Long = DEFAULT_SEGMENT_POLICY.initialStep.toLong(),
        val minStep: Long = DEFAULT_SEGMENT_POLICY.minStep.toLong(),
        val maxStep: Long = DEFAULT_SEGMENT_POLICY.maxStep.toLong(),
        val fetchAtPercent: Int = DEFAULT_SEGMENT_POLICY.fetchAtPercent.toInt(),
        val growBelowMillis: Long = DEFAULT_SEGMENT_POLICY.growBelowMillis.toLong(),
        val shrinkAboveMillis: Long = DEFAULT_SEGMENT_POLICY.shrinkAboveMillis.toLong(),
    ) {
        internal fun toFfi() =
            FfiPolicy(
                initialStep.toULong(),
                minStep.toULong(),
                maxStep.toULong(),
                requireUByte(fetchAtPercent, "fetch_at_percent"),
                growBelowMillis.toULong(),
                shrinkAboveMillis.toULong(),
            )

        /**
         * Checks the policy against the core's rules; returns it.
         *
         * @throws SegmentException `segment.invalid_policy`.
         */
        fun check(): SegmentPolicy {
            core {
                segmentPolicyNew(
                    initialStep.toULong(),
                    minStep.toULong(),
                    maxStep.toULong(),
                    requireUByte(fetchAtPercent, "fetch_at_percent"),
                    growBelowMillis.toULong(),
                    shrinkAboveMillis.toULong(),
                )
            }
            return this
        }

        /**
         * The step after a segment of [step] IDs lasted [lastedMillis].
         *
         * @throws SegmentException `segment.invalid_policy`.
         */
        fun adapt(
            step: Long,
            lastedMillis: Long,
        ): Long = core { segmentAdapt(toFfi(), step.toULong(), lastedMillis.toULong()) }.toLong()

        /** Factories. */
        companion object {
            /**
             * A policy with these steps and the core's defaults for the rest.
             *
             * @throws SegmentException `segment.invalid_policy`.
             */
            @JvmStatic
            fun of(
                initialStep: Long,
                minStep: Long,
                maxStep: Long,
            ): SegmentPolicy {
                val made = core { segmentPolicyNew(initialStep.toULong(), minStep.toULong(), maxStep.toULong()) }
                return SegmentPolicy(
                    made.initialStep.toLong(),
                    made.minStep.toLong(),
                    made.maxStep.toLong(),
                    made.fetchAtPercent.toInt(),
                    made.growBelowMillis.toLong(),
                    made.shrinkAboveMillis.toLong(),
                )
            }
        }
    }

/**
 * Hands out IDs from fetched segments; tells its host when to fetch the next segment
 * ([fetchDue]) and takes the fetched row ([fetched]). Safe to share between threads.
 *
 * @param policy how segments are sized and fetched.
 * @throws SegmentException `segment.invalid_policy`.
 */
class SegmentAllocator(
    policy: SegmentPolicy,
) {
    private val ffi = core { FfiAllocator(policy.toFfi()) }

    /** The next ID, or `null` when the segments in memory are used up. */
    fun nextId(): Long? = ffi.nextId()?.toLong()

    /**
     * Up to [count] IDs (fewer when the segments in memory run out).
     *
     * @throws ArgumentException `argument.batch_too_large` above 65536.
     */
    fun fill(count: Int): LongArray {
        val bytes = core { ffi.fill(requireNonNegative(count.toLong(), "the count").toUInt()) }
        val ids = LongArray(bytes.size / Long.SIZE_BYTES)
        java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(ids)
        return ids
    }

    /** IDs left in memory. */
    val remaining: Long get() = ffi.remaining().toLong()

    /** The current step. */
    val step: Long get() = ffi.step().toLong()

    /** Whether a fetch is in flight. */
    val fetchInFlight: Boolean get() = ffi.fetchInFlight()

    /** The step to fetch now, or `null` when no fetch is due at [nowMillis]. */
    fun fetchDue(nowMillis: Long): Long? = ffi.fetchDue(nowMillis.toULong())?.toLong()

    /**
     * Takes a fetched segment: the counter row's new [maxId] and the [step] it advanced by.
     *
     * @throws SegmentException a `segment.*` code.
     */
    fun fetched(
        maxId: Long,
        step: Long,
        nowMillis: Long,
    ) = core { ffi.fetched(maxId.toULong(), step.toULong(), nowMillis.toULong()) }

    /** Records that the fetch failed: the next [fetchDue] asks again. */
    fun fetchFailed() = ffi.fetchFailed()
}
