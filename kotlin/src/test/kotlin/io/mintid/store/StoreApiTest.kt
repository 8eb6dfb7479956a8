package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordPolicy
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import org.sqlite.SQLiteConfig
import org.sqlite.SQLiteDataSource
import java.io.IOException
import java.nio.file.Path
import java.sql.Connection

// The README's storage example, as written there, on an SQLite file.
class StoreApiTest {
    @TempDir
    lateinit var directory: Path

    private val body = """{"order":1}"""
    private val key = IdempotencyKey.of("order.create", "tenant-1", "o-1")
    private var placed = 0

    private fun placeOrder(): ByteArray = """{"placed":${++placed}}""".toByteArray()

    private fun insertOrder(connection: Connection) = connection.createStatement().use { it.execute("CREATE TABLE IF NOT EXISTS orders (id INTEGER)") }

    private fun callProvider(): StoredResponse = throw IOException("provider down")

    private fun sqlite(): SQLiteDataSource {
        val config = SQLiteConfig()
        config.setBusyTimeout(10_000)
        config.setJournalMode(SQLiteConfig.JournalMode.WAL)
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE)
        return SQLiteDataSource(config).apply { url = "jdbc:sqlite:${directory.resolve("db.sqlite")}" }
    }

    @Test
    fun `the README's storage example runs`() {
        val dataSource = sqlite()
        val seen = mutableListOf<Any?>()

        Migrations.migrate(dataSource, Dialect.SQLITE)
        val store = IdempotencyStore(dataSource, Dialect.SQLITE, RecordPolicy.DEFAULT)
        val request = StoreRequest(Fingerprint.ofJson(body))

        repeat(2) {
            seen +=
                when (val result = store.runOnce(key, request) { held -> held.checkHeld(); StoredResponse("application/json", placeOrder()) }) {
                    is Executed -> result.response
                    is Replayed -> result.response ?: result.error
                    is InProgress -> result.retryAfterSecs
                    is FingerprintMismatch, is KeyTooOld -> result.problem
                }
        }
        val other = IdempotencyKey.of("order.create", "tenant-1", "o-2")
        store.transaction { connection ->
            store.inTransaction(connection, other, request) { c -> insertOrder(c); StoredResponse("application/json", placeOrder()) }
        }
        val leased = IdempotencyKey.of("order.create", "tenant-1", "o-3")
        when (val claimed = store.claimLease(leased, request)) {
            is RecordLease ->
                try {
                    val answer = callProvider()
                    claimed.renew()
                    claimed.complete(answer)
                } catch (e: IOException) {
                    claimed.fail("provider down", retryable = true)
                }
            is NotExecuted -> seen += claimed.decision
        }

        val first = StoredResponse("application/json", """{"placed":1}""".toByteArray())
        assertEquals(listOf(first, first), seen)
        assertEquals("succeeded", store.load(other)!!.record.status.text)
        assertEquals("failed_retryable", store.load(leased)!!.record.status.text)
        assertEquals(0L, store.cleanup(1000))
    }
}
