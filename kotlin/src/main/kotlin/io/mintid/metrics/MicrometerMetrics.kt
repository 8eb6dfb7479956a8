package io.mintid.metrics

import io.micrometer.core.instrument.Counter
import io.micrometer.core.instrument.DistributionSummary
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Timer
import uniffi.mintid_ffi.MetricInfo
import java.time.Duration
import java.util.concurrent.TimeUnit

/**
 * The stores' metrics in a Micrometer [registry], under the core's names, descriptions and
 * attributes (`docs/spec.md`, "Metrics and traces"): pass it as the `metrics` of an
 * [io.mintid.store.IdempotencyStore] or [io.mintid.store.Outbox]. Micrometer is an optional
 * dependency of mintid: only this class needs it. Prometheus shows the counters with `_total`
 * and the times in seconds (`mintid_record_decisions_total`,
 * `mintid_record_claim_duration_seconds`), the histograms with the core's bucket bounds as
 * service-level objectives (`MetricInfo.buckets`).
 */
class MicrometerMetrics(
    private val registry: MeterRegistry,
) : RegistryMetrics() {
    override fun count(
        metric: MetricInfo,
        amount: Long,
        vararg attributes: String,
    ) {
        // No base unit: Prometheus would put a count's `{request}` into the name.
        Counter
            .builder(metric.name)
            .description(metric.description)
            .tags(*attributes)
            .register(registry)
            .increment(amount.toDouble())
    }

    override fun record(
        metric: MetricInfo,
        value: Double,
        vararg attributes: String,
    ) {
        if (metric.unit == SECONDS) {
            Timer
                .builder(metric.name)
                .description(metric.description)
                .serviceLevelObjectives(*metric.buckets.map { Duration.ofNanos((it * NANOS_PER_SECOND).toLong()) }.toTypedArray())
                .tags(*attributes)
                .register(registry)
                .record((value * NANOS_PER_SECOND).toLong(), TimeUnit.NANOSECONDS)
        } else {
            DistributionSummary
                .builder(metric.name)
                .description(metric.description)
                .baseUnit("bytes")
                // Micrometer takes positive bounds only: a bound of 0 bytes is the first one above it.
                .serviceLevelObjectives(*metric.buckets.filter { it > 0 }.toDoubleArray())
                .tags(*attributes)
                .register(registry)
                .record(value)
        }
    }

    private companion object {
        const val SECONDS = "s"
        const val NANOS_PER_SECOND = 1e9
    }
}
