package io.mintid.metrics

import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import io.micrometer.prometheusmetrics.PrometheusConfig
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry
import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.KeyRing
import io.mintid.LeasePolicy
import io.mintid.MintidException
import io.mintid.RecordPolicy
import io.mintid.RelayPolicy
import io.mintid.SchemaMissingException
import io.mintid.SegmentPolicy
import io.mintid.SnowflakeLayout
import io.mintid.http.Admission
import io.mintid.http.HttpIdempotency
import io.mintid.store.Dialect
import io.mintid.store.Executed
import io.mintid.store.FingerprintMismatch
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.InProgress
import io.mintid.store.Migrations
import io.mintid.store.Outbox
import io.mintid.store.OutboxMessage
import io.mintid.store.RecordLease
import io.mintid.store.Replayed
import io.mintid.store.SegmentIds
import io.mintid.store.StoreRequest
import io.mintid.store.StoredResponse
import io.mintid.store.WorkerLeases
import io.mintid.store.skipReason
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

/** The store's decisions, times, errors and relays as Micrometer reads them, on every database. */
class MicrometerMetricsTest {
    private val request = StoreRequest(Fingerprint.ofJson("""{"sku":"a"}"""))
    private val other = StoreRequest(Fingerprint.ofJson("""{"sku":"b"}"""))

    private fun response(text: String) = StoredResponse("application/json", text.toByteArray())

    private fun key(id: String) = IdempotencyKey.of("order.create", "tenant-1", id)

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `every decision, completion, error and relay is counted under the core's names`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        val registry = SimpleMeterRegistry()
        val metrics = MicrometerMetrics(registry)
        FreshDatabase(dialect).use { db ->
            val pool = db.open()
            // Never migrated: every store's first statement fails, classified `schema_missing`.
            assertThrows(SchemaMissingException::class.java) { IdempotencyStore(pool, dialect, RecordPolicy.DEFAULT, metrics = metrics).load(key("x")) }
            val broken = IdempotencyStore(pool, dialect, RecordPolicy.DEFAULT, metrics = metrics)
            assertThrows(SchemaMissingException::class.java) { broken.runOnce(key("x"), request) { response("{}") } }
            val leases = WorkerLeases(pool, dialect, LeasePolicy(SnowflakeLayout.classic()), metrics = metrics)
            assertThrows(MintidException::class.java) { leases.acquire("metrics") }
            SegmentIds(pool, dialect, "metrics", SegmentPolicy.of(10, 5, 40), background = false, metrics = metrics).use { ids ->
                assertThrows(MintidException::class.java) { ids.nextId() }
            }
            assertThrows(MintidException::class.java) { Outbox(pool, dialect, RelayPolicy(), metrics = metrics).relay { } }
            Migrations.migrate(pool, dialect)
            val store = IdempotencyStore(pool, dialect, RecordPolicy(maxWaitMillis = 0), metrics = metrics)

            assertInstanceOf(Executed::class.java, store.runOnce(key("a"), request) { response("""{"order":1}""") })
            assertInstanceOf(Replayed::class.java, store.runOnce(key("a"), request) { error("not run") })
            assertInstanceOf(FingerprintMismatch::class.java, store.runOnce(key("a"), other) { error("not run") })
            val lease = store.claimLease(key("b"), request) as RecordLease
            assertInstanceOf(InProgress::class.java, store.runOnce(key("b"), request) { error("not run") })
            lease.complete(response("""{"order":2}"""))
            store.transaction { connection -> store.inTransaction(connection, key("c"), request) { response("""{"order":3}""") } }

            val outbox = Outbox(pool, dialect, RelayPolicy(), metrics = metrics)
            store.transaction { connection -> outbox.enqueue(connection, OutboxMessage(1, "order.created", "order-1", "{}".toByteArray())) }
            assertEquals(1, outbox.relay { }.sent)

            val ring = KeyRing(1, ByteArray(32) { it.toByte() })
            val http = HttpIdempotency.builder<Unit>(store) { "tenant-1" }.keyRing(ring).build()
            val refused = http.admit(PostView(mapOf("mintid-request-id" to "not-an-id")))
            assertInstanceOf(Admission.Refused::class.java, refused)
        }

        fun count(
            name: String,
            vararg tags: String,
        ) = registry.find(name).tags(*tags).counters().sumOf { it.count() }
        assertEquals(1.0, count("mintid.record.decisions", "decision", "execute", "way", "run_once"))
        assertEquals(1.0, count("mintid.record.decisions", "decision", "replay"))
        assertEquals(1.0, count("mintid.record.decisions", "decision", "fingerprint_mismatch"))
        assertEquals(1.0, count("mintid.record.decisions", "decision", "in_progress"))
        assertEquals(1.0, count("mintid.record.decisions", "decision", "execute", "way", "lease"))
        assertEquals(1.0, count("mintid.record.decisions", "decision", "execute", "way", "same_transaction"))
        // The missing tables: the load, the claim, the lease, the segment and the relay.
        assertEquals(5.0, count("mintid.store.errors", "class", "schema_missing"))
        assertEquals(1.0, count("mintid.outbox.deliveries", "result", "sent"))
        assertEquals(1.0, count("mintid.request_id.rejected"))
        // A failed claim reached no decision: 6 claims timed, 3 completions, 3 responses sized.
        assertEquals(6L, registry.find("mintid.record.claim.duration").timers().sumOf { it.count() })
        assertEquals(3L, registry.find("mintid.record.complete.duration").timers().sumOf { it.count() })
        val sizes = registry.find("mintid.record.response.size").summaries()
        assertEquals(3L, sizes.sumOf { it.count() })
        assertEquals(33.0, sizes.sumOf { it.totalAmount() })
    }

    @Test
    fun `the Prometheus text names the core's metrics`() {
        val registry = PrometheusMeterRegistry(PrometheusConfig.DEFAULT)
        val metrics = MicrometerMetrics(registry)
        metrics.claimed("run_once", "replay", 1_000_000)
        metrics.completed("run_once", 2_000_000, 12)
        val text = registry.scrape()
        // The example: what a Prometheus scrape of the store's metrics shows.
        println(text)
        assertTrue(text.contains("""mintid_record_decisions_total{decision="replay",way="run_once"} 1.0"""), text)
        assertTrue(text.contains("mintid_record_claim_duration_seconds_count{way=\"run_once\"} 1"), text)
        assertTrue(text.contains("mintid_record_response_size_bytes_sum{way=\"run_once\"} 12.0"), text)
    }
}
