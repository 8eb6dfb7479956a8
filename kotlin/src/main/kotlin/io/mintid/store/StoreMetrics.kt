package io.mintid.store

/**
 * What the stores report to an application's metrics: one hook, called where the core's driver
 * has already decided (nothing here decides anything). The names, units and attributes the
 * calls map to are the core's registry (`docs/spec.md`, "Metrics and traces");
 * [io.mintid.metrics.MicrometerMetrics] records them with Micrometer. Every method does
 * nothing by default. Calls come from request threads and the renewal threads at once.
 */
interface StoreMetrics {
    /**
     * A request's claim ended with [decision] (`execute`, `replay`, `in_progress`,
     * `fingerprint_mismatch`, `key_too_old`) on [way] (`run_once`, `same_transaction`, `lease`),
     * [nanos] after its first step.
     */
    fun claimed(
        way: String,
        decision: String,
        nanos: Long,
    ) = Unit

    /** An executed request's outcome was stored in [nanos]; [responseBytes] is its response body's size, if it had one. */
    fun completed(
        way: String,
        nanos: Long,
        responseBytes: Int?,
    ) = Unit

    /** A statement failed with the database error class [errorClass] (`connection_lost`, …). */
    fun storeError(errorClass: String) = Unit

    /** A renewal found a running operation's record taken over or completed. */
    fun recordLost() = Unit

    /** A relay run ended: its messages [sent], [retried] and [dead]. */
    fun relayed(
        sent: Long,
        retried: Long,
        dead: Long,
    ) = Unit

    /** A request ID was refused with the error [code] (`request_id.bad_tag`, …). */
    fun requestIdRejected(code: String) = Unit

    /**
     * The Redis fast path looked a request up before the database: the core's [verdict] is
     * `hit` (answered from Redis), `miss` (sent on to the database) or `fallback` (sent on
     * because Redis failed).
     */
    fun fastPathLookup(verdict: String) = Unit

    /** A write to Redis after the database path failed (the database still holds the truth). */
    fun fastPathWriteFailed() = Unit

    /** The hook that records nothing. */
    companion object {
        /** Records nothing: the default of every store. */
        @JvmField
        val NONE: StoreMetrics = object : StoreMetrics {}
    }
}

/** The registry's name of [way]. */
internal fun wayName(way: uniffi.mintid_ffi.Way): String =
    when (way) {
        uniffi.mintid_ffi.Way.RUN_ONCE -> "run_once"
        uniffi.mintid_ffi.Way.SAME_TRANSACTION -> "same_transaction"
        uniffi.mintid_ffi.Way.LEASE -> "lease"
    }
