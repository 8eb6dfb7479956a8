package io.mintid.store

import io.mintid.ArgumentException
import io.mintid.Enqueued
import io.mintid.LeaseException
import io.mintid.LeasePolicy
import io.mintid.OutboxException
import io.mintid.OutboxStatus
import io.mintid.RelayPolicy
import io.mintid.SegmentException
import io.mintid.SegmentPolicy
import io.mintid.SnowflakeLayout
import io.mintid.StoreUnavailableException
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.DynamicContainer.dynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest.dynamicTest
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail
import java.sql.Connection
import java.sql.SQLNonTransientConnectionException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import javax.sql.DataSource

/**
 * The host side beyond the shared scenarios, on every database: the heartbeat of
 * [LeasedSnowflake] (renewing, stopping on a lost or unrenewable lease, releasing), [SegmentIds]
 * from several threads with background fetches and through a database outage, the
 * [Outbox.relay] loop, typed errors for bad input and a database that is down.
 */
class LeaseSegmentOutboxApiTest {
    @TestFactory
    fun onEveryDatabase(): List<DynamicNode> =
        Dialect.entries.map { dialect ->
            val skip = skipReason(dialect)
            dynamicContainer(
                dialect.directory,
                TESTS.map { (name, test) ->
                    dynamicTest(name) {
                        assumeTrue(skip == null, skip)
                        FreshDatabase(dialect).use { db ->
                            Migrations.migrate(db.open(), dialect)
                            test(db)
                        }
                    }
                },
            )
        }

    private companion object {
        /** Short durations, so that renewals and stop points happen within a test. */
        val POLICY =
            LeasePolicy(
                SnowflakeLayout.classic(),
                leaseMillis = 2_000,
                renewIntervalMillis = 400,
                safetyMarginMillis = 600,
                renewRetryMillis = 100,
                maxSkewMillis = 200,
                maxStartWaitMillis = 10_000,
            )

        val TESTS: List<Pair<String, (FreshDatabase) -> Unit>> =
            listOf(
                "a leased generator renews, releases with its high-water mark, and the next holder continues above it" to ::renewsAndReleases,
                "a lease taken by another holder stops the generator (lease.lost)" to ::lostLeaseStops,
                "a lease that cannot be renewed stops the generator before its deadline (lease.expired)" to ::unrenewableLeaseStops,
                "leases: bad input and a database that is down" to ::leaseErrors,
                "segment IDs from 4 threads, fetched in the background, through a database outage" to ::segmentThreadsAndOutage,
                "segment IDs: bad input and a database that is down" to ::segmentErrors,
                "the relay loop reports what it did; enqueue replays are results" to ::relayLoop,
                "outbox: bad input and a database that is down" to ::outboxErrors,
            )

        fun <T> eventually(
            what: String,
            action: () -> T?,
        ): T {
            val end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
            while (System.nanoTime() < end) {
                action()?.let { return it }
                Thread.sleep(20)
            }
            fail("timed out waiting for $what")
        }

        fun leaseThreads(): List<String> = Thread.getAllStackTraces().keys.filter { it.isAlive && it.name.startsWith("mintid-lease-") }.map { it.name }

        fun renewsAndReleases(db: FreshDatabase) {
            val leases = WorkerLeases(db.open(), db.dialect, POLICY)
            val observer = WorkerLeases(db.open(), db.dialect, POLICY)
            val first = LeasedSnowflake.acquire(leases, "api-a")
            val ids = LongArray(1000) { first.nextId() }
            assertTrue((1 until ids.size).all { ids[it] > ids[it - 1] }, "increasing")
            assertEquals(0L, first.workerId)
            val acquiredDeadline = observer.load(0)!!.leaseDeadlineMillis
            eventually("a renewal") { observer.load(0)!!.takeIf { it.leaseDeadlineMillis > acquiredDeadline } }
            val last = first.nextIds(5).last()
            assertTrue(first.release())
            assertFalse(first.release(), "a second release does nothing")
            val row = observer.load(0)!!
            assertEquals(null, row.owner)
            assertTrue(row.highWaterMillis >= POLICY.layout.decode(last).unixMillis, "the high-water mark covers the last ID")
            assertEquals("lease.released", assertThrows<LeaseException> { first.nextId() }.code)
            LeasedSnowflake.acquire(WorkerLeases(db.open(), db.dialect, POLICY), "api-b").use { second ->
                assertEquals(0L, second.workerId)
                assertTrue(second.nextId() > last, "the next holder starts above the high-water mark")
            }
            assertEquals(emptyList<String>(), leaseThreads(), "heartbeat threads stopped")
        }

        fun lostLeaseStops(db: FreshDatabase) {
            val admin = db.open()
            LeasedSnowflake.acquire(WorkerLeases(db.open(), db.dialect, POLICY), "api-a").use { ids ->
                ids.nextId()
                // Another holder took the worker id over: the token moved on.
                admin.connection.use { connection ->
                    connection.prepareStatement("UPDATE worker_lease SET fencing_token = fencing_token + 1 WHERE worker_id = ?").use {
                        it.setLong(1, ids.workerId)
                        it.executeUpdate()
                    }
                }
                val stopped = eventually("the generator to stop") { refusal { ids.nextId() } }
                assertEquals("lease.lost", stopped.code)
                assertEquals("lease.lost", assertThrows<LeaseException> { ids.nextIds(3) }.code)
                assertFalse(ids.release(), "a lost lease is not released")
            }
        }

        fun unrenewableLeaseStops(db: FreshDatabase) {
            val source = SwitchableDataSource(db.open())
            LeasedSnowflake.acquire(WorkerLeases(source, db.dialect, POLICY), "api-a").use { ids ->
                ids.nextId()
                source.down = true
                val stopped = eventually("the generator to stop") { refusal { ids.nextId() } }
                assertEquals("lease.expired", stopped.code)
                assertTrue(System.currentTimeMillis() < ids.guard.leaseDeadlineMillis, "stopped before the deadline")
                source.down = false
            }
        }

        fun leaseErrors(db: FreshDatabase) {
            val leases = WorkerLeases(db.open(), db.dialect, POLICY)
            val down = assertThrows<StoreUnavailableException> { WorkerLeases(db.unavailable(), db.dialect, POLICY).acquire("api-a") }
            assertEquals("store.unavailable", down.code)
            val tiny = LeasePolicy(SnowflakeLayout.of(41, 1, 12, 0, 1))
            val few = WorkerLeases(db.open(), db.dialect, tiny)
            LeasedSnowflake.acquire(few, "a").use {
                LeasedSnowflake.acquire(few, "b").use {
                    assertEquals("lease.no_worker_free", assertThrows<LeaseException> { LeasedSnowflake.acquire(few, "c") }.code)
                }
            }
        }

        fun segmentThreadsAndOutage(db: FreshDatabase) {
            val source = SwitchableDataSource(db.open())
            SegmentIds(source, db.dialect, "api", SegmentPolicy.of(100, 100, 10_000)).use { ids ->
                val pool = Executors.newFixedThreadPool(4)
                val drawn =
                    try {
                        (0 until 4).map { pool.submit<LongArray> { LongArray(20_000) { ids.nextId() } } }.map { it.get(2, TimeUnit.MINUTES) }
                    } finally {
                        pool.shutdownNow()
                    }
                drawn.forEach { thread -> assertTrue((1 until thread.size).all { thread[it] > thread[it - 1] }, "increasing per thread") }
                assertEquals(80_000, drawn.flatMap { it.asList() }.toSet().size, "no duplicate")
                assertTrue(ids.databaseWaits >= 1, "the first ID waited")
                val before = ids.nextId()
                source.down = true
                val outage = eventually("the segments to run out") { storeRefusal { repeat(1000) { ids.nextId() } } }
                assertEquals("store.unavailable", outage.code)
                source.down = false
                assertTrue(ids.nextId() > before, "IDs continue, higher")
            }
            // The executor has terminated when close returns; its worker thread ends right after.
            eventually("the fetch thread to stop") { Thread.getAllStackTraces().keys.none { it.isAlive && it.name == "mintid-segment-api" }.takeIf { it } }
        }

        fun segmentErrors(db: FreshDatabase) {
            val policy = SegmentPolicy.of(10, 5, 40)
            for (tag in listOf("", "é", "x".repeat(65))) {
                assertEquals("segment.invalid_tag", assertThrows<SegmentException>(tag) { SegmentIds(db.open(), db.dialect, tag, policy) }.code)
            }
            val invalid = assertThrows<SegmentException> { SegmentIds(db.open(), db.dialect, "t", policy.copy(minStep = 50)) }
            assertEquals("segment.invalid_policy", invalid.code)
            SegmentIds(db.unavailable(), db.dialect, "t", policy).use { ids ->
                assertEquals("store.unavailable", assertThrows<StoreUnavailableException> { ids.nextId() }.code)
            }
            val closed = SegmentIds(db.open(), db.dialect, "t", policy)
            closed.close()
            assertThrows<IllegalStateException> { closed.nextId() }
        }

        fun relayLoop(db: FreshDatabase) {
            // A failed message is due again a minute later: after this relay run.
            val outbox = Outbox(db.open(), db.dialect, RelayPolicy.of(2, 60_000).copy(baseBackoffMillis = 60_000))
            val business = db.open()
            business.connection.use { connection ->
                connection.autoCommit = false
                for ((n, key) in listOf("a", "b", "c").withIndex()) {
                    assertEquals(Enqueued.NEW, outbox.enqueue(connection, OutboxMessage(n + 1L, "order.created", key, "{}".toByteArray())))
                }
                connection.commit()
                connection.autoCommit = true
                assertEquals(Enqueued.ALREADY_ENQUEUED, outbox.enqueue(connection, OutboxMessage(9, "order.created", "a", "{}".toByteArray())))
            }
            val sent = mutableListOf<String>()
            val report =
                outbox.relay { message ->
                    if (message.businessKey == "b") throw IllegalStateException("broker down")
                    sent += message.businessKey
                }
            assertEquals(RelayReport(sent = 2, retried = 1, dead = 0, givenUp = 0, claimLost = 0, released = 0, markFailed = 0), report)
            assertEquals(listOf("a", "c"), sent)
            val retried = outbox.load("order.created", "b")!!
            assertEquals(OutboxStatus.PENDING, retried.status)
            assertEquals(1L, retried.attempts)
            assertEquals("broker down", retried.lastError)
            assertEquals(OutboxStatus.SENT, outbox.load("order.created", "a")!!.status)
            assertEquals(null, outbox.load("order.created", "zzz"))
        }

        fun outboxErrors(db: FreshDatabase) {
            val outbox = Outbox(db.open(), db.dialect, RelayPolicy.of(10, 60_000))
            db.open().connection.use { connection ->
                for (message in listOf(OutboxMessage(-1, "k", "b", ByteArray(0)), OutboxMessage(1, "", "b", ByteArray(0)), OutboxMessage(1, "k", "", ByteArray(0)), OutboxMessage(1, "k", "b", ByteArray(1_048_577)))) {
                    assertEquals("outbox.invalid_message", assertThrows<OutboxException> { outbox.enqueue(connection, message) }.code)
                }
            }
            assertEquals("outbox.invalid_policy", assertThrows<OutboxException> { Outbox(db.open(), db.dialect, RelayPolicy.of(10, 60_000).copy(batchSize = 0)) }.code)
            assertThrows<ArgumentException> { outbox.cleanup(0, -1) }
            val down = Outbox(db.unavailable(), db.dialect, RelayPolicy.of(10, 60_000))
            assertEquals("store.unavailable", assertThrows<StoreUnavailableException> { down.relay { } }.code)
            assertEquals("store.unavailable", assertThrows<StoreUnavailableException> { down.load("k", "b") }.code)
        }

        fun refusal(action: () -> Unit): LeaseException? =
            try {
                action()
                null
            } catch (error: LeaseException) {
                error
            }

        fun storeRefusal(action: () -> Unit): StoreUnavailableException? =
            try {
                action()
                null
            } catch (error: StoreUnavailableException) {
                error
            }
    }
}

/** A data source that can be switched off: then every new connection fails as a server that is down. */
internal class SwitchableDataSource(
    private val up: DataSource,
) : DataSource by up {
    @Volatile var down = false

    override fun getConnection(): Connection = if (down) throw SQLNonTransientConnectionException("switched off", "08001") else up.connection
}
