package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordException
import io.mintid.RecordLostException
import io.mintid.RecordPolicy
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

// runOnce's background renewal when the key is taken over while the operation runs: the
// operation is told through its HeldRecord, and its late completion is refused.
class RecordRenewalTest {
    private val key = IdempotencyKey.of("order.create", "tenant-1", "slow")
    private val request = StoreRequest(Fingerprint.ofJson("{}"))
    private val policy = RecordPolicy(300, 100_000, true, 1000, 0, 50)

    private fun text(value: String) = StoredResponse("text/plain", value.toByteArray())

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a takeover during the operation marks its record lost and its completion is refused`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            // Two hosts whose clocks disagree: the second one's is far ahead, so its request finds
            // the first one's lease passed however often the first renewed it.
            val clock = StepClock().apply { current = 1_000 }
            val first = IdempotencyStore(db.open(), dialect, policy, clock)
            val second = IdempotencyStore(db.open(), dialect, policy, StepClock().apply { current = 100_000 })
            Migrations.migrate(first.dataSource, dialect)
            var seen: HeldRecord? = null
            val refused =
                assertThrows(RecordException::class.java) {
                    first.runOnce(key, request) { held ->
                        seen = held
                        assertFalse(held.lost)
                        assertEquals("execute", second.runOnce(key, request) { text("second") }.decision)
                        // The next heartbeat finds the record no longer this claim's (bounded wait).
                        val until = System.nanoTime() + 60_000_000_000
                        while (!held.lost && System.nanoTime() < until) Thread.sleep(20)
                        text("first")
                    }
                }
            assertEquals("record.stale_token", refused.code)
            val held = seen!!
            assertTrue(held.lost)
            assertEquals("store.record_lost", assertThrows(RecordLostException::class.java) { held.checkHeld() }.code)
            assertEquals(StoredResponse("text/plain", "second".toByteArray()), first.load(key)!!.response)
        }
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `the held record's deadline moves with each beat of the heartbeat`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val clock = StepClock().apply { current = 1_000 }
            val store = IdempotencyStore(db.open(), dialect, policy, clock)
            Migrations.migrate(store.dataSource, dialect)
            store.runOnce(key, request) { held ->
                assertEquals(1_300L, held.leaseDeadlineMillis)
                for (now in listOf(1_200L, 1_450L)) {
                    clock.current = now
                    // The next beat renews from the clock's time (bounded wait).
                    val until = System.nanoTime() + 60_000_000_000
                    while (held.leaseDeadlineMillis != now + 300 && System.nanoTime() < until) Thread.sleep(20)
                    assertEquals(now + 300, held.leaseDeadlineMillis)
                }
                text("done")
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a held lease is renewed from its deadline on`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val clock = StepClock().apply { current = 1_000 }
            val store = IdempotencyStore(db.open(), dialect, policy, clock)
            Migrations.migrate(store.dataSource, dialect)
            val lease = store.claimLease(key, request) as RecordLease
            assertEquals(1_300L, lease.leaseDeadlineMillis)
            assertEquals(100L, lease.renewEveryMillis)
            clock.current = 1_100
            assertEquals(1_400L, lease.renew())
            assertEquals(1_400L, lease.leaseDeadlineMillis)
            assertEquals(1_400L, store.load(key)!!.record.leaseDeadlineMillis)
            lease.complete(text("done"))
            assertEquals("store.record_lost", assertThrows(RecordLostException::class.java) { lease.renew() }.code)
        }
    }
}
