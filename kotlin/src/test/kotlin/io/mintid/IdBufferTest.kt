package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import java.nio.ByteBuffer

/**
 * The freshness rule of [IdBuffer] on a test clock, with batches of several IDs (the
 * generators on a test clock fetch one ID per call, so they cannot show it): an ID is handed
 * out only while the clock reads at most its deadline, whatever the rest of its batch holds.
 */
class IdBufferTest {
    /** IDs that are their own Unix millisecond, so an ID's deadline is the ID + 1. */
    private class Buffer(
        clock: ManualClock,
        vararg batches: LongArray,
    ) : IdBuffer(1, 64, clock) {
        private val pending = ArrayDeque(batches.toList())
        var fetches = 0

        override fun fetch(count: Int): ByteArray {
            fetches++
            val ids = pending.removeFirst()
            return ByteBuffer.allocate(8 * ids.size).apply { ids.forEach(::putLong) }.array()
        }

        override fun deadlineOf(firstWord: Long) = firstWord + 1

        fun next(): Long {
            while (true) {
                val batch = current
                val offset = claim(batch)
                if (offset >= 0) return word(batch, offset)
                refill(batch, offset)
            }
        }
    }

    @Test
    fun `an ID is handed out up to 1 ms after its millisecond`() {
        val clock = ManualClock(100)
        val buffer = Buffer(clock, longArrayOf(100, 100, 101, 103))
        assertEquals(100, buffer.next())
        clock.setMillis(101)
        assertEquals(100, buffer.next())
        // Past the first ID's deadline: each later ID is judged by its own.
        clock.setMillis(102)
        assertEquals(101, buffer.next())
        clock.setMillis(104)
        assertEquals(103, buffer.next())
        assertEquals(1, buffer.fetches)
    }

    @Test
    fun `a stale ID is dropped with the rest of its batch, never handed out`() {
        val clock = ManualClock(100)
        val buffer = Buffer(clock, longArrayOf(100, 100, 100, 105), longArrayOf(102, 102))
        assertEquals(100, buffer.next())
        clock.setMillis(102)
        // The next 100 is 2 ms behind: dropped, and the batch with it (its 105 too).
        assertEquals(102, buffer.next())
        assertEquals(102, buffer.next())
        assertEquals(2, buffer.fetches)
    }
}
