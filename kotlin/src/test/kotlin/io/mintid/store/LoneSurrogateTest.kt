package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordPolicy
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.fail
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

// Issue 25, item 2 where a Java String can hold what no JSON scenario can: a lone surrogate in
// an operation's error, through runOnce and a held lease's fail (both on the wire). The
// stored and replayed text has U+FFFD in its place (the core's storable-text rule); the key is
// never left pending.
class LoneSurrogateTest {
    private val policy = RecordPolicy(1_000, 100_000, true, 1000, 0, 50)
    private val request = StoreRequest(Fingerprint.ofJson("{}"))

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a lone surrogate in an operation's error is stored as U+FFFD`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val store = IdempotencyStore(db.open(), dialect, policy)
            Migrations.migrate(store.dataSource, dialect)
            val run = IdempotencyKey.of("order.create", "tenant-1", "run")
            assertThrows(OperationException::class.java) {
                store.runOnce(run, request) { throw OperationException("declined \uD800 ref=7") }
            }
            val replayed = store.runOnce(run, request) { fail("ran twice") }
            assertEquals("declined \uFFFD ref=7", assertInstanceOf(Replayed::class.java, replayed).error)

            val leased = IdempotencyKey.of("order.create", "tenant-1", "lease")
            val lease = assertInstanceOf(RecordLease::class.java, store.claimLease(leased, request))
            lease.fail("timeout \uDC00", retryable = false)
            assertEquals("timeout \uFFFD", store.load(leased)!!.error)
        }
    }
}
