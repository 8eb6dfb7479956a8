package io.mintid.docs

import io.mintid.*
import io.mintid.store.*
import io.mintid.store.Outbox
import java.io.IOException
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import java.sql.Connection

/**
 * The Kotlin blocks of README.md and kotlin/README.md, line for line (scripts/docs/blocks.py
 * checks that every line of each block is here, in order), with what they leave out around
 * them: the values a caller has, and the checks that they did what they say.
 */
class KotlinDocsTest {
    private val serverSecret = ByteArray(32) { 7 }
    private val body = """{"sku":"tea","qty":2}"""
    private var placed = 0

    private fun placeOrder(): ByteArray = """{"placed":${++placed}}""".toByteArray()

    private fun insertOrder(connection: Connection) = connection.createStatement().use { it.execute("CREATE TABLE IF NOT EXISTS orders (id integer)") }

    private fun callProvider(): StoredResponse = StoredResponse("application/json", """{"paid":true}""".toByteArray())

    private fun postgres(test: (javax.sql.DataSource) -> Unit) = DocsDatabases.postgres(test)

    @Test
    fun `README's taste`() {
        val keyRing = KeyRing(keyId = 1, secret = serverSecret)
        val header = RequestId.mint(keyRing.issueGrant("user:42", System.currentTimeMillis() + 60_000)).text
        val id: java.util.UUID = uuid7()
        val orderId: Long = Snowflake.builder(SnowflakeLayout.classic(), worker = 7).build().nextId()
        val verified = RequestId.verify(keyRing, header, scope = "user:42")   // typed MintidException on failure
        // On a Ktor server: install(MintidIdempotency) { store = idempotencyStore; scope = { call -> "user:…" } }
        assertEquals(7, id.version())
        assertEquals(7, SnowflakeLayout.classic().decode(orderId).worker.toInt())
        assertEquals(7, verified.version())
    }

    @Test
    fun `kotlin README's Kotlin block`() {
        val headerValue = "8e03978e-40d5-43e8-bc93-6894a57f9324"
        val storedRecord: Record? = null
        // 64-bit IDs: a Long, never negative (every layout has at most 63 bits).
        val ids = Snowflake.builder(SnowflakeLayout.classic(), worker = 7).build()
        val orderId: Long = ids.nextId()
        val parts = ids.layout.decode(orderId)          // unixMillis, tick, worker, sequence
        val text = Snowflake.toBase32(orderId)          // 13 Crockford base32 digits

        // UUIDv7 as java.util.UUID, monotonic within a millisecond.
        val id: java.util.UUID = uuid7()
        val sortable: String = Uuid7.nextString()
        val compact = Uuids.format(id, UuidTextForm.BASE32)

        // Exactly-once requests: key, fingerprint, decision.
        val key = IdempotencyKey.fromHeader("order.create", "tenant-7", headerValue)
        val payload = fingerprintJson(body)             // JSON text; fingerprint(map) for a parsed value
        val first = Decision.decide(storedRecord, Incoming(payload), System.currentTimeMillis(), RecordPolicy.DEFAULT)
        when (val decision = Decision.decide(storedRecord, Incoming(payload), System.currentTimeMillis(), RecordPolicy.DEFAULT)) {
            is Decision.Execute -> { /* write decision.claim, run, then record.complete(claim.fence) */ }
            is Decision.Replay -> { /* return the stored result (decision.outcome) */ }
            is Decision.InProgress -> { /* 409, Retry-After: decision.retryAfterSecs */ }
            is Decision.Wait -> { /* sleep decision.pollMillis, reload, decide again */ }
            is Decision.FingerprintMismatch, is Decision.KeyTooOld -> { /* 422: decision.problem */ }
        }

        // Request IDs a client mints from a grant and the server verifies.
        val ring = KeyRing(keyId = 1, secret = serverSecret)             // at least 32 random bytes
        val grant = ring.issueGrant("user:42", expiresMillis = System.currentTimeMillis() + 3_600_000)
        val requestId = RequestId.mint(Grant.parse(grant.text))         // on the client
        val verified: java.util.UUID = RequestId.verify(ring, requestId.text, scope = "user:42")

        assertEquals(7, parts.worker.toInt())
        assertEquals(13, text.length)
        assertEquals(36, sortable.length)
        assertEquals(26, compact.length)
        assertEquals("order.create:tenant-7:$headerValue", key.toString())
        assertTrue(first is Decision.Execute)
        assertEquals(7, verified.version())
    }

    @Test
    fun `kotlin README's storage block, on PostgreSQL`() = postgres { dataSource ->
        Migrations.migrate(dataSource, Dialect.POSTGRES)            // numbered migrations, idempotent
        val store = IdempotencyStore(dataSource, Dialect.POSTGRES, RecordPolicy.DEFAULT)
        val key = IdempotencyKey.of("order.create", "tenant-7", "order-1001")   // or a verified request ID's UUID
        val request = StoreRequest(Fingerprint.ofJson(body))           // + keyCreatedMillis for request IDs
        val seen = mutableListOf<Any?>()

        // 1. run once: claim, run, store, replay to duplicates; the lease is renewed while it runs
        repeat(2) {
            seen +=
        when (val result = store.runOnce(key, request) { held -> held.checkHeld(); StoredResponse("application/json", placeOrder()) }) {
            is Executed -> result.response                                     // ran here
            is Replayed -> result.response ?: result.error                     // the first request's result
            is InProgress -> result.retryAfterSecs                             // 409 + Retry-After
            is FingerprintMismatch, is KeyTooOld -> result.problem             // 422, 400
        }
        }

        // 2. same transaction: record and business writes commit or roll back together
        store.transaction { connection ->
            store.inTransaction(connection, key, request) { c -> insertOrder(c); StoredResponse("application/json", placeOrder()) }
        }

        // 3. lease and fence: long external calls, renewed by the caller
        when (val claimed = store.claimLease(key, request)) {
            is RecordLease ->
                try {
                    val answer = callProvider()
                    claimed.renew()            // now and then in a long call: the new deadline, or RecordLostException
                    claimed.complete(answer)
                } catch (e: IOException) {
                    claimed.fail("provider down", retryable = true)
                }
            is NotExecuted -> claimed.decision
        }
        store.load(key)            // StoredRecord? (record, response, error)
        store.cleanup(1000)        // deletes expired records in bounded batches

        val first = StoredResponse("application/json", """{"placed":1}""".toByteArray())
        assertEquals(listOf(first, first), seen)
        assertEquals(1, placed, "the transaction and the lease replayed the same key")
        assertEquals("succeeded", store.load(key)!!.record.status.text)
    }

    private class Broker {
        val published = mutableListOf<String>()

        fun publish(
            kind: String,
            payload: ByteArray,
        ) {
            published += kind + ":" + payload.decodeToString()
        }
    }

    @Test
    fun `kotlin README's leases, segments and outbox block, on PostgreSQL`() = postgres { dataSource ->
        Migrations.migrate(dataSource, Dialect.POSTGRES)
        val payload = """{"order":42}""".toByteArray()
        val broker = Broker()
        // Worker-id leases: no hand-assigned worker ids. The generator starts after the previous
        // holder's high-water mark, renews from a daemon thread, and stops (LeaseException
        // lease.lost / lease.expired) when the lease is lost or was not renewed before its deadline.
        val leases = WorkerLeases(dataSource, Dialect.POSTGRES, LeasePolicy(SnowflakeLayout.classic()))
        val id: Long = LeasedSnowflake.acquire(leases, "api-7f9c:4242").use { ids ->   // close(): heartbeat stopped, lease released
            ids.nextId()
        }

        // Segment IDs (Leaf-style): one round trip per segment, the next fetched in the background.
        val orderIds = SegmentIds(dataSource, Dialect.POSTGRES, "orders", SegmentPolicy.of(1_000, 100, 1_000_000))
        val orderId: Long = orderIds.nextId()          // from memory in the steady state
        orderIds.close()                               // stops the background fetch thread

        // The outbox: enqueue inside the business transaction, relay elsewhere.
        val outbox = Outbox(dataSource, Dialect.POSTGRES, RelayPolicy.of(100, 60_000))
        dataSource.connection.use { connection ->
            connection.autoCommit = false
            insertOrder(connection)
            outbox.enqueue(connection, OutboxMessage(id, "order.created", "order-42", payload))  // NEW or ALREADY_ENQUEUED
            connection.commit()                        // the message commits with the order, or neither
        }
        val report: RelayReport = outbox.relay { message -> broker.publish(message.kind, message.payload) }

        assertNotNull(orderId)
        assertEquals(1, report.sent)
        assertEquals(listOf("order.created:{\"order\":42}"), broker.published)
    }
}

/** A fresh, migrated PostgreSQL database for the Java doc blocks (skipped without a server). */
object DocsDatabases {
    @JvmStatic
    fun postgres(test: java.util.function.Consumer<javax.sql.DataSource>) {
        val skip = skipReason(Dialect.POSTGRES)
        assumeTrue(skip == null, skip)
        FreshDatabase(Dialect.POSTGRES).use { db ->
            val dataSource = db.open()
            Migrations.migrate(dataSource, Dialect.POSTGRES)
            test.accept(dataSource)
        }
    }
}
