package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordPolicy
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.fail
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

// Issue 25, item 5 on the JVM's blocking API: the caller gives up (its thread is interrupted:
// Future.cancel(true), an executor's shutdownNow) just as the operation returns, and the
// completion meets a database fault it must pause over. The outcome is recorded all the same,
// then the interrupt is set again; a duplicate replays, the operation ran once.
class CompletionInterruptTest {
    private val key = IdempotencyKey.of("order.create", "tenant-1", "interrupted")
    private val request = StoreRequest(Fingerprint.ofJson("{}"))
    private val policy = RecordPolicy(1_000, 100_000, true, 1000, 0, 50)

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `an interrupt after the operation returned does not stop its completion`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val admin = db.open()
            Migrations.migrate(admin, dialect)
            admin.connection.use { c -> c.createStatement().use { it.execute(db.sideEffectTable) } }
            // The worker's connections go through the fault proxy (SQLite: its write lock is held).
            val (pool, port) = if (dialect == Dialect.SQLITE) db.open() to null else db.openThroughProxy()
            val store = IdempotencyStore(pool, dialect, policy, StoreClock.SYSTEM)
            val result =
                store.runOnce(key, request) {
                    admin.connection.use { c ->
                        c.createStatement().use { it.executeUpdate("INSERT INTO conformance_side_effect VALUES ('tenant-1', 'order.create', 'interrupted', 'a')") }
                    }
                    // The completion's connection breaks (a short outage) and its retry pauses.
                    if (port != null) FaultProxy.cut(port, 20) else holdExclusiveLock(db, 20)
                    // The caller's cancel arrives as the operation returns.
                    Thread.currentThread().interrupt()
                    StoredResponse("text/plain", "placed".toByteArray())
                }
            assertTrue(Thread.interrupted(), "the interrupt is set again once the outcome is recorded")
            assertEquals("placed", String(assertInstanceOf(Executed::class.java, result).response.body))
            assertEquals("succeeded", IdempotencyStore(admin, dialect, policy).load(key)!!.record.status.text)
            val duplicate = IdempotencyStore(db.open(), dialect, policy).runOnce(key, request) { fail("the operation ran twice") }
            assertEquals("placed", String(assertInstanceOf(Replayed::class.java, duplicate).response!!.body))
            admin.connection.use { c ->
                c.createStatement().use { s ->
                    s.executeQuery("SELECT COUNT(*) FROM conformance_side_effect").use {
                        it.next()
                        assertEquals(1, it.getInt(1), "one side effect")
                    }
                }
            }
        }
    }
}
