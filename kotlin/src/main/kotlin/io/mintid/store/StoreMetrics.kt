package io.mintid.store

/**
 * What the stores report to an application's metrics and traces: one hook, called where the
 * core's driver has already decided (nothing here decides anything). The names, units and
 * attributes the calls map to are the core's registry (`docs/spec.md`, "Metrics and traces");
 * [io.mintid.metrics.MicrometerMetrics] records the metrics with Micrometer,
 * [io.mintid.metrics.OpenTelemetryMetrics] the metrics and the spans with OpenTelemetry. Every
 * method does nothing by default. Calls come from request threads and the renewal threads at
 * once.
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

    /**
     * Opens the span [name] of the core's registry (`mintid.claim`, `mintid.operation`,
     * `mintid.complete`) for a request on [way], current on this thread until the store ends it
     * ([StoreSpan.end], once, on the same thread).
     */
    fun startSpan(
        name: String,
        way: String,
    ): StoreSpan = StoreSpan.NONE

    /** The hook that records nothing. */
    companion object {
        /** Records nothing: the default of every store. */
        @JvmField
        val NONE: StoreMetrics = object : StoreMetrics {}
    }
}

/** A span the store opened ([StoreMetrics.startSpan]). */
interface StoreSpan {
    /**
     * Ends the span: [decision] is how the claim or completion ended (`execute`, `replay`, …;
     * null for the operation's span or a step that threw), [failed] whether the step threw
     * (the error's text never goes into the span).
     */
    fun end(
        decision: String?,
        failed: Boolean,
    ) = Unit

    /** The span that records nothing. */
    companion object {
        /** Records nothing. */
        @JvmField
        val NONE: StoreSpan = object : StoreSpan {}
    }
}

/** The names of the core's spans (`spans()`), as the stores open them. */
internal object Spans {
    const val CLAIM = "mintid.claim"
    const val OPERATION = "mintid.operation"
    const val COMPLETE = "mintid.complete"
}

/** Runs [action] inside the span [name] of [way]; [decision] names what it came to (null: none). */
internal inline fun <T> StoreMetrics.traced(
    name: String,
    way: String,
    decision: (T) -> String?,
    action: () -> T,
): T {
    val span = startSpan(name, way)
    val result =
        try {
            action()
        } catch (error: Throwable) {
            span.end(null, true)
            throw error
        }
    span.end(decision(result), false)
    return result
}

/** The registry's name of [way]. */
internal fun wayName(way: Wire.Way): String = way.name.lowercase()
