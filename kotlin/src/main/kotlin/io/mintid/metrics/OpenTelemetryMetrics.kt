package io.mintid.metrics

import io.mintid.core
import io.mintid.store.Spans
import io.mintid.store.StoreSpan
import io.mintid.version
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.common.AttributesBuilder
import io.opentelemetry.api.metrics.DoubleHistogram
import io.opentelemetry.api.metrics.LongCounter
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import uniffi.mintid_ffi.MetricInfo
import uniffi.mintid_ffi.SpanInfo
import uniffi.mintid_ffi.spans as registrySpans

/**
 * The stores' metrics and spans through the application's [openTelemetry], under the core's
 * names, units, descriptions and attributes (`docs/spec.md`, "Metrics and traces"): pass it as
 * the `metrics` of an [io.mintid.store.IdempotencyStore] or [io.mintid.store.Outbox]. Spans:
 * `mintid.claim` and `mintid.complete` around the store's steps (with `way` and `decision`),
 * `mintid.operation` around an operation mintid runs (`runOnce`, `inTransaction`, the HTTP
 * wrapper's handler), each current while it runs so that the database's and the operation's
 * own spans nest under it. No span carries a key's scope or id, a fingerprint, a payload, a
 * response or an error's text: a step that threw has the status `ERROR` only.
 *
 * The OpenTelemetry API (`io.opentelemetry:opentelemetry-api`) is an optional dependency of
 * mintid: only this class needs it.
 */
class OpenTelemetryMetrics(
    openTelemetry: OpenTelemetry,
) : RegistryMetrics() {
    private val tracer: Tracer = openTelemetry.getTracer(SCOPE, version())

    private val spans: Map<String, SpanInfo> = core { registrySpans() }.associateBy { it.name }

    private val meter = openTelemetry.meterBuilder(SCOPE).setInstrumentationVersion(version()).build()

    private val counters: Map<String, LongCounter> =
        instruments("counter") { meter.counterBuilder(it.name).setDescription(it.description).setUnit(it.unit).build() }

    private val histograms: Map<String, DoubleHistogram> =
        instruments("histogram") { meter.histogramBuilder(it.name).setDescription(it.description).setUnit(it.unit).setExplicitBucketBoundariesAdvice(it.buckets).build() }

    init {
        val opened = setOf(Spans.CLAIM, Spans.OPERATION, Spans.COMPLETE)
        check(spans.keys == opened) { "the core's spans ${spans.keys} are not the ones the stores open: $opened" }
    }

    override fun count(
        metric: MetricInfo,
        amount: Long,
        vararg attributes: String,
    ) = counters.getValue(metric.name).add(amount, attributes(attributes))

    override fun record(
        metric: MetricInfo,
        value: Double,
        vararg attributes: String,
    ) = histograms.getValue(metric.name).record(value, attributes(attributes))

    override fun startSpan(
        name: String,
        way: String,
    ): StoreSpan {
        val span =
            tracer
                .spanBuilder(spans.getValue(name).name)
                .setAttribute(WAY, way)
                .startSpan()
        val scope = span.makeCurrent()
        return object : StoreSpan {
            override fun end(
                decision: String?,
                failed: Boolean,
            ) {
                if (decision != null) span.setAttribute(DECISION, decision)
                if (failed) span.setStatus(StatusCode.ERROR)
                scope.close()
                span.end()
            }
        }
    }

    /** An instrument made by [build] for each registry metric of [kind], by name. */
    private fun <T> instruments(
        kind: String,
        build: (MetricInfo) -> T,
    ): Map<String, T> = entries.values.filter { it.kind == kind }.associate { it.name to build(it) }

    private fun attributes(pairs: Array<out String>): Attributes {
        val builder: AttributesBuilder = Attributes.builder()
        for (index in pairs.indices step 2) builder.put(pairs[index], pairs[index + 1])
        return builder.build()
    }

    private companion object {
        /** The instrumentation scope of mintid's tracer and meter. */
        const val SCOPE = "io.mintid"
        const val WAY = "way"
        const val DECISION = "decision"
    }
}
