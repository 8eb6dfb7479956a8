package io.mintid

import uniffi.mintid_ffi.snowflakeIdFromBase32
import uniffi.mintid_ffi.snowflakeIdFromDecimal
import uniffi.mintid_ffi.snowflakeIdToBase32
import uniffi.mintid_ffi.Snowflake as FfiSnowflake

/**
 * A Snowflake ID generator for one worker, which any number of threads may share.
 *
 * IDs are `Long`s: every layout has at most 63 bits, so an ID is never negative. Every ID is
 * unique; each thread sees its IDs increase; and an ID's tick is never more than 1 ms behind
 * the wall clock when it is handed out (its tick ends at most 1 ms before). The core reserves
 * IDs in bulk (one boundary crossing per batch, the batch size following the caller's rate)
 * and this generator hands them out from a lock-free buffer; IDs reserved but never handed out
 * are dropped, never issued twice.
 *
 * ```kotlin
 * val ids = Snowflake.builder(SnowflakeLayout.classic(), worker = 7).build()
 * val id: Long = ids.nextId()
 * ```
 *
 * Java: `Snowflake.builder(SnowflakeLayout.classic(), 7).build().nextId()`.
 */
class Snowflake private constructor(
    private val ffi: FfiSnowflake,
    /** The layout of the IDs. */
    val layout: SnowflakeLayout,
    testClock: ManualClock?,
) {
    private val buffer =
        object : IdBuffer(1, rfcOrder = false, testClock) {
            override fun fetchBatch(handedOut: Int) = core { ffi.nextBatch(handedOut.toUInt()) }

            override fun fetch(count: Int) = core { ffi.nextBytes(count.toUInt()) }
        }

    /**
     * The next ID.
     *
     * @throws SnowflakeException `snowflake.epoch_in_future`, `snowflake.clock_rolled_back`,
     *   `snowflake.time_exhausted` or `snowflake.wait_exceeded`.
     */
    fun nextId(): Long {
        while (true) {
            val batch = buffer.current
            val offset = buffer.claim(batch)
            if (offset >= 0) return buffer.word(batch, offset)
            buffer.refill(batch, offset)
        }
    }

    /**
     * [count] new consecutive IDs from one boundary crossing, in increasing order. Their ticks
     * are those of this call (a count beyond one tick's capacity waits for later ticks, or
     * borrows them under [SequencePolicy.BorrowAhead]).
     *
     * @throws ArgumentException `argument.negative` for a negative [count],
     *   `argument.batch_too_large` above 65536.
     * @throws SnowflakeException as [nextId] does; the IDs of a failed call are dropped, never
     *   issued.
     */
    fun nextIds(count: Int): LongArray = buffer.bulk(count)

    /** The next ID as 13 Crockford base32 digits; see [nextId]. */
    fun nextBase32(): String = toBase32(nextId())

    /**
     * The highest ID the core has reserved (or the generator started after), or `null`. It is at
     * least every ID handed out: persist it and pass it to [Builder.startingAfterId] after a
     * restart so new IDs stay above all old ones.
     */
    val highWater: Long? get() = ffi.highWater()?.toLong()

    /** The Unix millisecond at which the tick of [highWater] starts, or `null`. */
    val highWaterUnixMillis: Long? get() = ffi.highWaterUnixMillis()?.toLong()

    /** The worker id in every ID. */
    val worker: Long get() = ffi.worker().toLong()

    /** What the generator does when the clock goes backwards. */
    val rollbackPolicy: RollbackPolicy get() = RollbackPolicy.fromFfi(ffi.rollbackPolicy())

    /** What the generator does when a tick's sequence numbers are used up. */
    val sequencePolicy: SequencePolicy get() = SequencePolicy.fromFfi(ffi.sequencePolicy())

    /**
     * Options for a [Snowflake] generator; made by [Snowflake.builder]. Unset options take the
     * core's defaults: rollback [RollbackPolicy.Wait] 5 ms, [SequencePolicy.WaitForNextTick], no
     * starting point, the system clock.
     */
    class Builder internal constructor(
        private val layout: SnowflakeLayout,
        private val worker: Long,
    ) {
        private var rollback: RollbackPolicy? = null
        private var sequence: SequencePolicy? = null
        private var afterId: Long? = null
        private var afterUnixMillis: Long? = null
        private var clock: ManualClock? = null

        /** What to do when the clock goes backwards. */
        fun rollback(policy: RollbackPolicy) = apply { rollback = policy }

        /** What to do when a tick's sequence numbers are used up. */
        fun sequencePolicy(policy: SequencePolicy) = apply { sequence = policy }

        /**
         * Issue only IDs whose (tick, sequence) comes after [id]'s: pass the [highWater] a
         * previous run saved. Its worker field is not compared.
         */
        fun startingAfterId(id: Long) = apply { afterId = id }

        /** Issue only IDs from ticks after the one containing [unixMillis]. */
        fun startingAfterUnixMillis(unixMillis: Long) = apply { afterUnixMillis = unixMillis }

        /**
         * Read [clock] instead of the system clock, for tests: the generator then fetches one ID
         * per boundary crossing, so every call sees the time the test set.
         */
        fun clock(clock: ManualClock) = apply { this.clock = clock }

        /**
         * The generator.
         *
         * @throws SnowflakeException `snowflake.worker_out_of_range` (a negative worker
         *   included), `snowflake.id_out_of_range` for a [startingAfterId] that does not fit the
         *   layout, `snowflake.time_exhausted` for a [startingAfterUnixMillis] past the layout's
         *   end.
         * @throws ArgumentException `argument.negative` for a negative [startingAfterUnixMillis].
         */
        fun build(): Snowflake {
            val afterMillis = afterUnixMillis?.let { requireNonNegative(it, "startingAfterUnixMillis") }
            val ffi =
                core {
                    FfiSnowflake(
                        layout.ffi,
                        worker.toULong(),
                        rollback?.toFfi(),
                        sequence?.toFfi(),
                        afterId?.toULong(),
                        afterMillis,
                        clock?.ffi,
                    )
                }
            return Snowflake(ffi, layout, clock)
        }
    }

    /** Factories and the text forms of IDs. */
    companion object {
        /**
         * Options for a generator of IDs in [layout] for [worker] (the whole worker field; see
         * [SnowflakeLayout.workerId] for a datacenter split).
         */
        @JvmStatic
        fun builder(
            layout: SnowflakeLayout,
            worker: Long,
        ): Builder = Builder(layout, worker)

        /**
         * Reads an ID written in decimal digits.
         *
         * @throws SnowflakeException `snowflake.invalid_text` or `snowflake.id_out_of_range`.
         */
        @JvmStatic
        fun fromDecimal(text: String): Long = core { snowflakeIdFromDecimal(text) }.toLong()

        /**
         * Reads an ID written as 13 Crockford base32 digits.
         *
         * @throws SnowflakeException `snowflake.invalid_text` or `snowflake.id_out_of_range`.
         */
        @JvmStatic
        fun fromBase32(text: String): Long = core { snowflakeIdFromBase32(text) }.toLong()

        /**
         * Writes [id] as 13 Crockford base32 digits.
         *
         * @throws SnowflakeException `snowflake.id_out_of_range` for a negative [id].
         */
        @JvmStatic
        fun toBase32(id: Long): String = core { snowflakeIdToBase32(id.toULong()) }
    }
}
