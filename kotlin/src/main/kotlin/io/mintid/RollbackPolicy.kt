package io.mintid

import uniffi.mintid_ffi.RollbackPolicy as FfiRollbackPolicy

/**
 * What a generator does when the wall clock goes backwards.
 *
 * Java callers use the factories: `RollbackPolicy.fail()`, `RollbackPolicy.waitUpTo(5)`,
 * `RollbackPolicy.logical(5)`.
 */
sealed class RollbackPolicy {
    /** Fail at once with a `*.clock_rollback` / `*.clock_rolled_back` error. */
    object Fail : RollbackPolicy() {
        override fun toString() = "RollbackPolicy.Fail"
    }

    /**
     * Wait for the clock to catch up, for a rollback of at most [maxMillis]; fail beyond.
     *
     * @throws ArgumentException if [maxMillis] is negative.
     */
    data class Wait(
        /** The largest rollback waited out, in milliseconds. */
        val maxMillis: Long,
    ) : RollbackPolicy() {
        init {
            requireNonNegative(maxMillis, "the longest wait")
        }
    }

    /**
     * Keep issuing from the last timestamp while the clock is at most [maxMillis] behind it;
     * fail beyond.
     *
     * @throws ArgumentException if [maxMillis] is negative.
     */
    data class Logical(
        /** The largest gap between the logical and the wall clock, in milliseconds. */
        val maxMillis: Long,
    ) : RollbackPolicy() {
        init {
            requireNonNegative(maxMillis, "the largest gap")
        }
    }

    internal fun toFfi(): FfiRollbackPolicy =
        when (this) {
            Fail -> FfiRollbackPolicy.Fail
            is Wait -> FfiRollbackPolicy.Wait(maxMillis.toULong())
            is Logical -> FfiRollbackPolicy.Logical(maxMillis.toULong())
        }

    /** Factories for Java callers. */
    companion object {
        /** [Fail]. */
        @JvmStatic
        fun fail(): RollbackPolicy = Fail

        /** [Wait] for a rollback of at most [maxMillis]. */
        @JvmStatic
        fun waitUpTo(maxMillis: Long): RollbackPolicy = Wait(maxMillis)

        /** [Logical] while at most [maxMillis] behind. */
        @JvmStatic
        fun logical(maxMillis: Long): RollbackPolicy = Logical(maxMillis)

        internal fun fromFfi(policy: FfiRollbackPolicy): RollbackPolicy =
            when (policy) {
                FfiRollbackPolicy.Fail -> Fail
                is FfiRollbackPolicy.Wait -> Wait(policy.maxMillis.toLong())
                is FfiRollbackPolicy.Logical -> Logical(policy.maxMillis.toLong())
            }
    }
}
