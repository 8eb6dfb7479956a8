package io.mintid.metrics

import io.micrometer.core.instrument.Counter
import io.micrometer.core.instrument.DistributionSummary
import io.micrometer.core.instrument.MeterRegistry
import io.micrometer.core.instrument.Timer
import io.mintid.core
import io.mintid.store.StoreMetrics
import uniffi.mintid_ffi.MetricInfo
import java.util.concurrent.TimeUnit
import uniffi.mintid_ffi.metrics as registryMetrics

/**
 * The stores' metrics in a Micrometer [registry], under the core's names, descriptions and
 * attributes (`docs/spec.md`, "Metrics and traces"): pass it as the `metrics` of an
 * [io.mintid.store.IdempotencyStore] or [io.mintid.store.Outbox]. Micrometer is an optional
 * dependency of mintid: only this class needs it. Prometheus shows the counters with `_total`
 * and the times in seconds (`mintid_record_decisions_total`,
 * `mintid_record_claim_duration_seconds`).
 */
class MicrometerMetrics(
    private val registry: MeterRegistry,
) : StoreMetrics {
    private val entries: Map<String, MetricInfo> = core { registryMetrics() }.associateBy { it.name }

    init {
        // Every name used below is the registry's, and every registry metric is used.
        check(entries.keys == NAMES) { "the core's metrics ${entries.keys} are not this host's $NAMES" }
    }

    private fun entry(name: String): MetricInfo = entries.getValue(name)

    private fun counter(
        name: String,
        vararg tags: String,
    ): Counter {
        // No base unit: Prometheus would put a count's `{request}` into the name.
        return Counter
            .builder(name)
            .description(entry(name).description)
            .tags(*tags)
            .register(registry)
    }

    private fun timer(
        name: String,
        way: String,
        nanos: Long,
    ) = Timer
        .builder(name)
        .description(entry(name).description)
        .tags("way", way)
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS)

    override fun claimed(
        way: String,
        decision: String,
        nanos: Long,
    ) {
        counter(DECISIONS, "decision", decision, "way", way).increment()
        timer(CLAIM, way, nanos)
    }

    override fun completed(
        way: String,
        nanos: Long,
        responseBytes: Int?,
    ) {
        timer(COMPLETE, way, nanos)
        if (responseBytes != null) {
            DistributionSummary
                .builder(RESPONSE_SIZE)
                .description(entry(RESPONSE_SIZE).description)
                .baseUnit("bytes")
                .tags("way", way)
                .register(registry)
                .record(responseBytes.toDouble())
        }
    }

    override fun storeError(errorClass: String) = counter(STORE_ERRORS, "class", errorClass).increment()

    override fun recordLost() = counter(RECORD_LOST).increment()

    override fun relayed(
        sent: Long,
        retried: Long,
        dead: Long,
    ) {
        for ((result, count) in listOf("sent" to sent, "retried" to retried, "dead" to dead)) {
            if (count > 0) counter(DELIVERIES, "result", result).increment(count.toDouble())
        }
    }

    override fun requestIdRejected(code: String) = counter(REJECTED, "code", code).increment()

    override fun fastPathLookup(verdict: String) = counter(FAST_LOOKUPS, "verdict", verdict).increment()

    override fun fastPathWriteFailed() = counter(FAST_WRITE_FAILURES).increment()

    private companion object {
        const val DECISIONS = "mintid.record.decisions"
        const val CLAIM = "mintid.record.claim.duration"
        const val COMPLETE = "mintid.record.complete.duration"
        const val RESPONSE_SIZE = "mintid.record.response.size"
        const val STORE_ERRORS = "mintid.store.errors"
        const val RECORD_LOST = "mintid.record.lost"
        const val DELIVERIES = "mintid.outbox.deliveries"
        const val REJECTED = "mintid.request_id.rejected"
        const val FAST_LOOKUPS = "mintid.fast_path.lookups"
        const val FAST_WRITE_FAILURES = "mintid.fast_path.write_failures"
        val NAMES =
            setOf(DECISIONS, CLAIM, COMPLETE, RESPONSE_SIZE, STORE_ERRORS, RECORD_LOST, DELIVERIES, REJECTED, FAST_LOOKUPS, FAST_WRITE_FAILURES)
    }
}
