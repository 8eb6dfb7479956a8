package io.mintid

import uniffi.mintid_ffi.snowflakePresetNames
import uniffi.mintid_ffi.SnowflakeLayout as FfiLayout

/**
 * How a Snowflake ID's bits are split: `time | worker | sequence` (most significant first),
 * counted in ticks of [tickMillis] from [epochMillis]. The widths add up to at most 63, so every
 * ID is a non-negative `Long`; a layout of 53 bits or fewer gives IDs that are exact in a
 * JavaScript `Number` ([isJsSafe]).
 *
 * Java: `SnowflakeLayout.preset("classic")`, `SnowflakeLayout.of(41, 10, 12, epoch, 1)`.
 */
class SnowflakeLayout private constructor(internal val ffi: FfiLayout) {
    /** Width of the time field, in bits. */
    val timeBits: Int = ffi.timeBits().toInt()

    /** Width of the whole worker field (datacenter bits included), in bits. */
    val workerBits: Int = ffi.workerBits().toInt()

    /** Width of the sequence field, in bits. */
    val sequenceBits: Int = ffi.sequenceBits().toInt()

    /** How many of the top worker bits name a datacenter. */
    val datacenterBits: Int = ffi.datacenterBits().toInt()

    /** The epoch, in Unix milliseconds. */
    val epochMillis: Long = ffi.epochMillis().toLong()

    /** The length of a tick, in milliseconds. */
    val tickMillis: Long = ffi.tickMillis().toLong()

    /** The largest whole worker id. */
    val maxWorker: Long get() = ffi.maxWorker().toLong()

    /** The largest sequence number within a tick. */
    val maxSequence: Long get() = ffi.maxSequence().toLong()

    /** The largest ID the layout can hold (below 2^63). */
    val maxId: Long get() = ffi.maxId().toLong()

    /** Whether every ID is below 2^53, exact in a JavaScript `Number`. */
    val isJsSafe: Boolean get() = ffi.isJsSafe()

    /** How long the time field lasts from the epoch, in milliseconds (saturated at `Long.MAX_VALUE`). */
    val lifetimeMillis: Long get() = ffi.lifetimeMillis().saturatedToLong()

    /** The Unix millisecond at which the time field runs out (saturated at `Long.MAX_VALUE`). */
    val expiresAtUnixMillis: Long get() = ffi.expiresAtUnixMillis().saturatedToLong()

    /**
     * Milliseconds left at [nowUnixMillis] before the time field runs out (0 once it has).
     *
     * @throws ArgumentException `argument.negative` for a negative time.
     */
    fun remainingMillis(nowUnixMillis: Long): Long =
        ffi.remainingMillis(requireNonNegative(nowUnixMillis, "the time")).saturatedToLong()

    /**
     * The same layout with the top [datacenterBits] of the worker field read as a datacenter id.
     *
     * @throws SnowflakeException `snowflake.invalid_layout`.
     */
    fun withDatacenterBits(datacenterBits: Int): SnowflakeLayout =
        SnowflakeLayout(core { ffi.withDatacenterBits(requireUByte(datacenterBits, "datacenter_bits")) })

    /**
     * The same layout with another epoch, in Unix milliseconds (read as unsigned).
     *
     * @throws SnowflakeException `snowflake.invalid_layout`.
     */
    fun withEpochMillis(epochMillis: Long): SnowflakeLayout = SnowflakeLayout(core { ffi.withEpochMillis(epochMillis.toULong()) })

    /**
     * The whole worker field for [worker] within [datacenter] (0 when the layout has no
     * datacenter bits). Arguments are read as unsigned.
     *
     * @throws SnowflakeException `snowflake.worker_out_of_range`.
     */
    fun workerId(
        datacenter: Long,
        worker: Long,
    ): Long = core { ffi.workerId(datacenter.toULong(), worker.toULong()) }.toLong()

    /** Splits a whole worker field (read as unsigned) into its datacenter and worker parts. */
    fun splitWorkerId(workerId: Long): SnowflakeWorkerSplit {
        val split = ffi.splitWorkerId(workerId.toULong())
        return SnowflakeWorkerSplit(split.datacenter.toLong(), split.worker.toLong())
    }

    /**
     * The ID of [sequence] from [worker] in the tick containing [unixMillis]. Arguments are read
     * as unsigned.
     *
     * @throws SnowflakeException `snowflake.time_out_of_range`, `snowflake.worker_out_of_range`
     *   or `snowflake.sequence_out_of_range`.
     */
    fun compose(
        unixMillis: Long,
        worker: Long,
        sequence: Long,
    ): Long = core { ffi.compose(unixMillis.toULong(), worker.toULong(), sequence.toULong()) }.toLong()

    /**
     * The ID of [sequence] from [worker] in tick [tick] since the epoch; see [compose].
     *
     * @throws SnowflakeException as [compose] does.
     */
    fun composeTick(
        tick: Long,
        worker: Long,
        sequence: Long,
    ): Long = core { ffi.composeTick(tick.toULong(), worker.toULong(), sequence.toULong()) }.toLong()

    /**
     * The fields of [id].
     *
     * @throws SnowflakeException `snowflake.id_out_of_range` for a negative [id] (the sign bit is
     *   never part of an ID) or one beyond [maxId].
     */
    fun decode(id: Long): SnowflakeParts {
        val parts = core { ffi.decode(id.toULong()) }
        return SnowflakeParts(parts.unixMillis.toLong(), parts.tick.toLong(), parts.worker.toLong(), parts.sequence.toLong())
    }

    /** Two layouts are equal when every field is. */
    override fun equals(other: Any?): Boolean = other is SnowflakeLayout && fields() == other.fields()

    override fun hashCode(): Int = fields().hashCode()

    override fun toString(): String =
        "SnowflakeLayout(time=$timeBits, worker=$workerBits, sequence=$sequenceBits, " +
            "datacenter=$datacenterBits, epochMillis=$epochMillis, tickMillis=$tickMillis)"

    private fun fields() = listOf(timeBits, workerBits, sequenceBits, datacenterBits, epochMillis, tickMillis)

    /** Factories. */
    companion object {
        /**
         * A layout with these field widths (bits), epoch (Unix ms, read as unsigned) and tick
         * length (ms, read as unsigned).
         *
         * @throws SnowflakeException `snowflake.invalid_layout`.
         * @throws ArgumentException `argument.out_of_range` for a width outside 0..255.
         */
        @JvmStatic
        fun of(
            timeBits: Int,
            workerBits: Int,
            sequenceBits: Int,
            epochMillis: Long,
            tickMillis: Long,
        ): SnowflakeLayout =
            SnowflakeLayout(
                core {
                    FfiLayout(
                        requireUByte(timeBits, "time_bits"),
                        requireUByte(workerBits, "worker_bits"),
                        requireUByte(sequenceBits, "sequence_bits"),
                        epochMillis.toULong(),
                        tickMillis.toULong(),
                    )
                },
            )

        /**
         * The preset called [name] (see [presetNames]; ASCII case and `_` for `-` ignored).
         *
         * @throws SnowflakeException `snowflake.unknown_preset`.
         */
        @JvmStatic
        fun preset(name: String): SnowflakeLayout = SnowflakeLayout(core { FfiLayout.preset(name) })

        /**
         * The names of the preset layouts: `classic` (41 bits of 1 ms / 10 worker / 12
         * sequence, from 2025-01-01), `twitter`, `datacenter-worker`, `sonyflake-like`,
         * `js-safe`.
         */
        @JvmStatic
        fun presetNames(): List<String> = snowflakePresetNames()

        /** The `classic` preset: 41 bits of 1 ms, 10 worker bits, 12 sequence bits, from 2025-01-01. */
        @JvmStatic
        fun classic(): SnowflakeLayout = preset("classic")
    }
}

/**
 * The fields of a decoded Snowflake ID.
 *
 * @property unixMillis the start of the ID's tick, in Unix milliseconds.
 * @property tick ticks since the layout's epoch.
 * @property worker the whole worker field (datacenter and worker together, if split).
 * @property sequence the sequence number within the tick.
 */
data class SnowflakeParts(
    val unixMillis: Long,
    val tick: Long,
    val worker: Long,
    val sequence: Long,
)

/**
 * A whole worker field split into its datacenter and worker parts.
 *
 * @property datacenter the datacenter id (0 when the layout has no datacenter bits).
 * @property worker the worker id within the datacenter.
 */
data class SnowflakeWorkerSplit(
    val datacenter: Long,
    val worker: Long,
)
