package io.mintid

import uniffi.mintid_ffi.SequencePolicy as FfiSequencePolicy

/**
 * What a [Snowflake] generator does when a tick's sequence numbers are used up.
 *
 * Java: `SequencePolicy.waitForNextTick()`, `SequencePolicy.borrowAhead(10)`.
 */
sealed class SequencePolicy {
    /** Wait for the clock to reach the next tick (the default): IDs never run ahead of the clock. */
    object WaitForNextTick : SequencePolicy() {
        override fun toString() = "SequencePolicy.WaitForNextTick"
    }

    /**
     * Go on issuing from the following ticks, before the clock reaches them, while at most
     * [maxTicks] ahead of the clock; beyond that, wait as [WaitForNextTick] does.
     *
     * @throws ArgumentException `argument.negative` for a negative [maxTicks].
     */
    data class BorrowAhead(
        /** How many ticks IDs may run ahead of the clock. */
        val maxTicks: Long,
    ) : SequencePolicy() {
        init {
            requireNonNegative(maxTicks, "max_ticks")
        }
    }

    internal fun toFfi(): FfiSequencePolicy =
        when (this) {
            WaitForNextTick -> FfiSequencePolicy.Wait
            is BorrowAhead -> FfiSequencePolicy.BorrowAhead(maxTicks.toULong())
        }

    /** Factories for Java callers. */
    companion object {
        /** [WaitForNextTick]. */
        @JvmStatic
        fun waitForNextTick(): SequencePolicy = WaitForNextTick

        /** [BorrowAhead] at most [maxTicks] ticks. */
        @JvmStatic
        fun borrowAhead(maxTicks: Long): SequencePolicy = BorrowAhead(maxTicks)

        internal fun fromFfi(policy: FfiSequencePolicy): SequencePolicy =
            when (policy) {
                FfiSequencePolicy.Wait -> WaitForNextTick
                is FfiSequencePolicy.BorrowAhead -> BorrowAhead(policy.maxTicks.saturatedToLong())
            }
    }
}
