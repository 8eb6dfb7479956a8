package io.mintid.metrics

import io.mintid.core
import io.mintid.store.StoreMetrics
import uniffi.mintid_ffi.MetricInfo
import uniffi.mintid_ffi.metrics as registryMetrics

/**
 * The [StoreMetrics] hooks mapped once onto the core's registry of metrics (`metrics()`,
 * `docs/spec.md`, "Metrics and traces"): each hook names its metric and attributes here, and a
 * backend ([MicrometerMetrics], [OpenTelemetryMetrics]) only adds to a counter or records a
 * value. At construction every metric named here is checked to be in the registry with its
 * kind, and every metric of the registry to be named here.
 */
sealed class RegistryMetrics : StoreMetrics {
    /** The core's registry, by name. */
    internal val entries: Map<String, MetricInfo> = core { registryMetrics() }.associateBy { it.name }

    private val named = HashSet<String>()

    /** The registry's entry [name] of [kind] (`counter`, `histogram`), noted as recorded. */
    private fun metric(
        name: String,
        kind: String,
    ): MetricInfo {
        val entry = entries[name] ?: error("the core's registry has no metric $name")
        check(entry.kind == kind) { "$name is a ${entry.kind} in the core's registry, not a $kind" }
        named += name
        return entry
    }

    private val decisions = metric("mintid.record.decisions", COUNTER)
    private val claim = metric("mintid.record.claim.duration", HISTOGRAM)
    private val complete = metric("mintid.record.complete.duration", HISTOGRAM)
    private val responseSize = metric("mintid.record.response.size", HISTOGRAM)
    private val storeErrors = metric("mintid.store.errors", COUNTER)
    private val recordLost = metric("mintid.record.lost", COUNTER)
    private val deliveries = metric("mintid.outbox.deliveries", COUNTER)
    private val rejected = metric("mintid.request_id.rejected", COUNTER)
    private val fastLookups = metric("mintid.fast_path.lookups", COUNTER)
    private val fastWriteFailures = metric("mintid.fast_path.write_failures", COUNTER)

    init {
        check(named == entries.keys) { "the core's metrics ${entries.keys - named} are not recorded by this host" }
    }

    /** Adds [amount] to the counter [metric] under [attributes] (name, value, name, value, …). */
    internal abstract fun count(
        metric: MetricInfo,
        amount: Long,
        vararg attributes: String,
    )

    /** Records [value] (in the registry's unit: seconds or bytes) in the histogram [metric] under [attributes]. */
    internal abstract fun record(
        metric: MetricInfo,
        value: Double,
        vararg attributes: String,
    )

    override fun claimed(
        way: String,
        decision: String,
        nanos: Long,
    ) {
        count(decisions, 1, "decision", decision, "way", way)
        record(claim, nanos / NANOS_PER_SECOND, "way", way)
    }

    override fun completed(
        way: String,
        nanos: Long,
        responseBytes: Int?,
    ) {
        record(complete, nanos / NANOS_PER_SECOND, "way", way)
        if (responseBytes != null) record(responseSize, responseBytes.toDouble(), "way", way)
    }

    override fun storeError(errorClass: String) = count(storeErrors, 1, "class", errorClass)

    override fun recordLost() = count(recordLost, 1)

    override fun relayed(
        sent: Long,
        retried: Long,
        dead: Long,
    ) {
        for ((result, amount) in listOf("sent" to sent, "retried" to retried, "dead" to dead)) {
            if (amount > 0) count(deliveries, amount, "result", result)
        }
    }

    override fun requestIdRejected(code: String) = count(rejected, 1, "code", code)

    override fun fastPathLookup(verdict: String) = count(fastLookups, 1, "verdict", verdict)

    override fun fastPathWriteFailed() = count(fastWriteFailures, 1)

    private companion object {
        const val COUNTER = "counter"
        const val HISTOGRAM = "histogram"
        const val NANOS_PER_SECOND = 1e9
    }
}
