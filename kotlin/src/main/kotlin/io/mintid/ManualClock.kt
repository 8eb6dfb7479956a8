package io.mintid

import uniffi.mintid_ffi.ManualClock as FfiManualClock

/**
 * A clock that moves only when told to, for tests: give it to a generator's `forTesting`
 * factory to make its IDs deterministic.
 *
 * A generator on a manual clock fetches one ID per call (no buffering), so every call sees the
 * time the test has set.
 *
 * @param startMillis the time it reads until set or moved, in Unix milliseconds.
 * @param advanceOnPause when true, each pause a generator asks for (waiting out a rollback or a
 *   used-up sequence) moves the clock forward by that long; when false the clock stands still
 *   and such waits give up.
 * @throws ArgumentException if [startMillis] is negative.
 */
class ManualClock
    @JvmOverloads
    constructor(
        startMillis: Long,
        advanceOnPause: Boolean = false,
    ) {
        internal val ffi = FfiManualClock(requireNonNegative(startMillis, "the start time"), advanceOnPause)

        /** The time, in Unix milliseconds. */
        fun nowMillis(): Long = ffi.nowMillis().toLong()

        /**
         * Sets the time to [unixMillis], forwards or backwards.
         *
         * @throws ArgumentException if [unixMillis] is negative.
         */
        fun setMillis(unixMillis: Long) = ffi.setMillis(requireNonNegative(unixMillis, "the time"))

        /**
         * Moves the time forward by [millis].
         *
         * @throws ArgumentException if [millis] is negative.
         */
        fun advanceMillis(millis: Long) = ffi.advanceMillis(requireNonNegative(millis, "the advance"))

        /**
         * Moves the time back by [millis] (a clock rollback), stopping at zero.
         *
         * @throws ArgumentException if [millis] is negative.
         */
        fun rewindMillis(millis: Long) = ffi.rewindMillis(requireNonNegative(millis, "the rewind"))
    }
