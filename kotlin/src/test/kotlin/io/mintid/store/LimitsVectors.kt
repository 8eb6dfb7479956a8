package io.mintid.store

import io.mintid.LeasePolicy
import io.mintid.OutboxException
import io.mintid.RelayPolicy
import io.mintid.VectorOps
import io.mintid.string
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.double
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail
import uniffi.mintid_ffi.metrics
import uniffi.mintid_ffi.shutdownWaitMillis

/**
 * `tests/vectors/limits.json`: each argument as the JVM passes it, through the API (a lease's
 * owner as stored, a message id as enqueued, on SQLite) or the driver on the wire (a cleanup's
 * first statement: its batch size is the last parameter); the shutdown bound and the histograms'
 * buckets as the core gives them (uniffi `shutdownWaitMillis`, `MetricInfo.buckets`).
 */
internal object LimitsVectors {
    val ops: VectorOps = mapOf("argument" to ::argument, "bound" to ::bound, "histogram" to ::histogram)

    private fun argument(case: JsonObject) {
        val value = case.string("value")
        when (val argument = case.string("argument")) {
            "lease.owner" ->
                onSqlite { db ->
                    val leases = WorkerLeases(db.open(), db.dialect, LeasePolicy())
                    val guard = leases.acquire(value)
                    assertEquals(case.string("expect"), leases.load(guard.workerId)?.owner)
                }
            "outbox.message_id" ->
                onSqlite { db ->
                    val outbox = Outbox(db.open(), db.dialect, RelayPolicy.of(10, 60_000))
                    // A u64 beyond Long.MAX_VALUE reaches the core as the negative Long of its bits.
                    val message = OutboxMessage(value.toULong().toLong(), "order.created", "order-7", "{}".toByteArray())
                    val enqueue = { db.open().connection.use { outbox.enqueue(it, message) } }
                    if ("error" in case) {
                        assertEquals(case.string("error"), assertThrows<OutboxException> { enqueue() }.code)
                    } else {
                        enqueue()
                        assertEquals(case.string("expect"), outbox.load("order.created", "order-7")!!.messageId.toULong().toString())
                    }
                }
            "record_cleanup.batch_size" -> assertLastParam(case, Wire.Kind.RECORD_CLEANUP, value.toULong().toLong())
            "outbox_cleanup.batch_size" -> assertLastParam(case, Wire.Kind.OUTBOX_CLEANUP, 0, value.toULong().toLong())
            else -> fail("no runner for argument $argument")
        }
    }

    private fun bound(case: JsonObject) {
        when (val bound = case.string("bound")) {
            "shutdown_wait_millis" -> assertEquals(case.string("value"), shutdownWaitMillis().toString())
            else -> fail("no runner for bound $bound")
        }
    }

    private fun histogram(case: JsonObject) {
        val metric = metrics().single { it.name == case.string("metric") }
        assertEquals(case["buckets"]!!.jsonArray.map { it.jsonPrimitive.double }, metric.buckets)
    }

    /** The first statement of a cleanup of [kind] made from [fields]: its batch size is the last parameter. */
    private fun assertLastParam(
        case: JsonObject,
        kind: Wire.Kind,
        vararg fields: Long,
    ) {
        val spec = fields.fold(Wire.spec(kind, Dialect.SQLITE)) { spec, field -> spec.u64(field) }.done()
        val run = WireDriver(kind, spec).use { it.call(Wire.Input.START, 0) } as Wire.Step.Run
        assertEquals(case.string("expect"), run.params.last().toString())
    }

    private fun onSqlite(action: (FreshDatabase) -> Unit) =
        FreshDatabase(Dialect.SQLITE).use { db ->
            Migrations.migrate(db.open(), db.dialect)
            action(db)
        }
}
