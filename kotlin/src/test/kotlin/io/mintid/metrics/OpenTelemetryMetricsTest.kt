package io.mintid.metrics

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordPolicy
import io.mintid.http.HttpAnswer
import io.mintid.http.HttpIdempotency
import io.mintid.store.Dialect
import io.mintid.store.Executed
import io.mintid.store.FingerprintMismatch
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import io.mintid.store.OperationException
import io.mintid.store.RecordLease
import io.mintid.store.Replayed
import io.mintid.store.StoreRequest
import io.mintid.store.StoredResponse
import io.mintid.store.skipReason
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.metrics.SdkMeterProvider
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import uniffi.mintid_ffi.metrics as registryMetrics
import uniffi.mintid_ffi.spans as registrySpans

/**
 * The store's spans and metrics through OpenTelemetry's SDK (in-memory exporter and reader), on
 * every database: the core's span names with `way` and `decision`, `mintid.operation` only where
 * mintid runs the operation, nesting, and nothing of a key, payload, response or error.
 */
class OpenTelemetryMetricsTest {
    private val payload = """{"sku":"secret-sku-7"}"""
    private val request = StoreRequest(Fingerprint.ofJson(payload))
    private val other = StoreRequest(Fingerprint.ofJson("""{"sku":"other-sku-8"}"""))

    private fun response(text: String) = StoredResponse("application/json", text.toByteArray())

    private fun key(id: String) = IdempotencyKey.of("order.create", "tenant-secret-scope", id)

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `spans and metrics carry the core's names and no secrets`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        val exporter = InMemorySpanExporter.create()
        val reader = InMemoryMetricReader.create()
        val sdk =
            OpenTelemetrySdk
                .builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build())
                .build()
        val metrics = OpenTelemetryMetrics(sdk)
        val tracer = sdk.getTracer("the-application")
        FreshDatabase(dialect).use { db ->
            val pool = db.open()
            Migrations.migrate(pool, dialect)
            val store = IdempotencyStore(pool, dialect, RecordPolicy(maxWaitMillis = 0), metrics = metrics)

            // runOnce: claim, operation (with the application's own span inside), complete.
            val executed = store.runOnce(key("key-id-a"), request) { tracer.spanBuilder("app.work").startSpan().end().let { response("""{"order":"resp-1"}""") } }
            assertInstanceOf(Executed::class.java, executed)
            assertEquals(listOf("mintid.claim", "app.work", "mintid.operation", "mintid.complete"), names(exporter))
            val (claim, work, operation, complete) = exporter.finishedSpanItems
            assertEquals(mapOf("way" to "run_once", "decision" to "execute"), attributes(claim))
            assertEquals(mapOf("way" to "run_once"), attributes(operation))
            assertEquals(mapOf("way" to "run_once", "decision" to "execute"), attributes(complete))
            assertEquals(operation.spanId, work.parentSpanId, "the operation's spans nest under mintid.operation")
            assertTrue(listOf(claim, operation, complete).all { it.kind == SpanKind.INTERNAL && it.status.statusCode == StatusCode.UNSET })
            check(exporter)

            // A replay and a mismatch: a claim span only.
            assertInstanceOf(Replayed::class.java, store.runOnce(key("key-id-a"), request) { error("not run") })
            assertInstanceOf(FingerprintMismatch::class.java, store.runOnce(key("key-id-a"), other) { error("not run") })
            assertEquals(listOf("mintid.claim", "mintid.claim"), names(exporter))
            assertEquals(listOf("replay", "fingerprint_mismatch"), exporter.finishedSpanItems.map { attributes(it)["decision"] })
            check(exporter)

            // An operation that fails: its span has the status ERROR, never the error's text.
            assertThrows(OperationException::class.java) {
                store.runOnce(key("key-id-b"), request) { throw OperationException("secret failure text", false) }
            }
            assertEquals(listOf("mintid.claim", "mintid.operation", "mintid.complete"), names(exporter))
            assertEquals(StatusCode.ERROR, exporter.finishedSpanItems[1].status.statusCode)
            assertEquals("", exporter.finishedSpanItems[1].status.description)
            check(exporter)

            // The same-transaction way runs the operation too.
            store.transaction { connection -> store.inTransaction(connection, key("key-id-c"), request) { response("""{"order":"resp-3"}""") } }
            assertEquals(listOf("mintid.claim", "mintid.operation", "mintid.complete"), names(exporter))
            assertTrue(exporter.finishedSpanItems.all { attributes(it)["way"] == "same_transaction" })
            check(exporter)

            // A lease the application holds: mintid does not run the operation, so no span for it.
            val lease = store.claimLease(key("key-id-d"), request) as RecordLease
            lease.complete(response("""{"order":"resp-4"}"""))
            assertEquals(listOf("mintid.claim", "mintid.complete"), names(exporter))
            assertTrue(exporter.finishedSpanItems.all { attributes(it)["way"] == "lease" })
            check(exporter)

            // The HTTP wrapper runs the handler: claim, operation, complete on the lease way.
            val http = HttpIdempotency.builder<Unit>(store) { "tenant-secret-scope" }.build()
            val view = PostView(mapOf("idempotency-key" to "key-id-e", "content-type" to "application/json"))
            val answer = http.handle(view, payload.byteInputStream()) { _, _ -> HttpAnswer.of(201, "application/json", """{"order":"resp-5"}""") }
            assertEquals(201, answer.status)
            assertEquals(listOf("mintid.claim", "mintid.operation", "mintid.complete"), names(exporter))
            assertEquals(listOf("execute", null, "execute"), exporter.finishedSpanItems.map { attributes(it)["decision"] })
            assertTrue(exporter.finishedSpanItems.all { attributes(it)["way"] == "lease" })
            check(exporter)
        }

        // The metrics, read by the SDK's reader: the core's names, units and counts.
        val read = reader.collectAllMetrics().associateBy { it.name }
        val registry = registryMetrics().associateBy { it.name }
        assertTrue(registry.keys.containsAll(read.keys), "${read.keys}")
        for ((name, data) in read) assertEquals(registry.getValue(name).unit, data.unit, name)
        val decisions = read.getValue("mintid.record.decisions").longSumData.points

        fun decided(
            decision: String,
            way: String,
        ) = decisions
            .filter { it.attributes.asMap().mapKeys { (k, _) -> k.key } == mapOf("decision" to decision, "way" to way) }
            .sumOf { it.value }
        assertEquals(2, decided("execute", "run_once"))
        assertEquals(1, decided("replay", "run_once"))
        assertEquals(1, decided("fingerprint_mismatch", "run_once"))
        assertEquals(1, decided("execute", "same_transaction"))
        assertEquals(2, decided("execute", "lease"))
        assertEquals(7L, read.getValue("mintid.record.claim.duration").histogramData.points.sumOf { it.count })
        assertEquals(5L, read.getValue("mintid.record.complete.duration").histogramData.points.sumOf { it.count })
        assertEquals("s", read.getValue("mintid.record.claim.duration").unit)
    }

    private fun names(exporter: InMemorySpanExporter) = exporter.finishedSpanItems.map { it.name }

    private fun attributes(span: SpanData): Map<String, Any> = span.attributes.asMap().entries.associate { (key, value) -> key.key to value }

    /** Every mintid span: a registry span, only `way` and `decision`, no events, nothing secret; then cleared. */
    private fun check(exporter: InMemorySpanExporter) {
        val registered = registrySpans().associateBy { it.name }
        val secrets = listOf("tenant-secret-scope", "key-id", "secret-sku", "resp-", "secret failure")
        for (span in exporter.finishedSpanItems.filter { it.name.startsWith("mintid.") }) {
            val entry = registered[span.name] ?: error("${span.name} is not in the core's registry")
            val allowed = entry.attributes.associate { it.name to it.values }
            for ((name, value) in attributes(span)) {
                assertTrue(allowed.getValue(name).contains(value), "${span.name}: $name=$value")
            }
            assertTrue(span.events.isEmpty(), "${span.name}: ${span.events}")
            val text = span.toString()
            for (secret in secrets) assertTrue(!text.contains(secret), "${span.name} carries $secret: $text")
        }
        exporter.reset()
    }
}
