package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.UUID
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * Many threads on one generator: no duplicate, increasing for each thread, and never handed out
 * more than 1 ms behind the wall clock (checked against a clock reading taken before the call).
 */
class ConcurrencyTest {
    private val threads = 8
    private val perThread = 100_000

    /** What each thread saw: its IDs in call order, and how many were stale. */
    private class Seen<T>(
        val ids: List<T>,
        val stale: Int,
    )

    private fun <T> hammer(
        next: () -> T,
        deadlineOf: (T) -> Long,
    ): List<Seen<T>> {
        val pool = Executors.newFixedThreadPool(threads)
        try {
            val tasks =
                List(threads) {
                    Callable {
                        var stale = 0
                        val ids =
                            List(perThread) {
                                val before = System.currentTimeMillis()
                                val id = next()
                                if (deadlineOf(id) < before) stale++
                                id
                            }
                        Seen(ids, stale)
                    }
                }
            return pool.invokeAll(tasks).map { it.get() }
        } finally {
            pool.shutdown()
            pool.awaitTermination(10, TimeUnit.SECONDS)
        }
    }

    private fun <T : Comparable<T>> check(seen: List<Seen<T>>) {
        for (thread in seen) {
            assertEquals(0, thread.stale, "IDs handed out more than 1 ms behind the clock")
            assertTrue(thread.ids.zipWithNext().all { (a, b) -> a < b }, "IDs of one thread must increase")
        }
        val all = seen.flatMap { it.ids }
        assertEquals(threads * perThread, all.toSet().size, "duplicate IDs")
    }

    @Test
    fun `8 threads share one Snowflake generator`() {
        val layout = SnowflakeLayout.classic()
        val generator = Snowflake.builder(layout, 3).build()
        check(hammer(generator::nextId) { id -> layout.epochMillis + (id ushr 22) + 1 })
    }

    @Test
    fun `8 threads share one Snowflake generator that borrows ahead`() {
        val layout = SnowflakeLayout.of(41, 10, 10, 1_735_689_600_000, 1)
        val generator = Snowflake.builder(layout, 3).sequencePolicy(SequencePolicy.borrowAhead(50)).build()
        check(hammer(generator::nextId) { id -> layout.epochMillis + (id ushr 20) + 1 })
    }

    @Test
    fun `8 threads share one UUIDv7 generator`() {
        val generator = Uuid7Generator()
        val seen = hammer(generator::next) { uuid: UUID -> (uuid.mostSignificantBits ushr 16) + 1 }
        check(seen)
        assertTrue(seen.all { thread -> thread.ids.all { it.version() == 7 && it.variant() == 2 } })
    }

    @Test
    fun `bulk calls and single calls on one thread stay increasing`() {
        val generator = Uuid7Generator()
        val ids = mutableListOf<UUID>()
        repeat(50) {
            ids += generator.next()
            ids += generator.nextUuids(7)
            ids += generator.next()
        }
        assertTrue(ids.zipWithNext().all { (a, b) -> a < b })
        val snowflake = Snowflake.builder(SnowflakeLayout.classic(), 1).build()
        val longs = mutableListOf<Long>()
        repeat(50) {
            longs += snowflake.nextId()
            longs += snowflake.nextIds(7).toList()
            longs += snowflake.nextId()
        }
        assertTrue(longs.zipWithNext().all { (a, b) -> a < b })
    }
}
