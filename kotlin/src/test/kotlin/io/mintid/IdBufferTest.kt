package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The freshness rule of [IdBuffer] with batches of several IDs on the system clock (the
 * generators on a test clock fetch one ID per call, so they cannot show it): an ID is handed
 * out only while the clock reads at most the bound the core gave its batch; past it the rest of
 * the batch is dropped, and the next batch is asked for with how many went out. Batches are
 * little-endian, as the core packs them.
 */
class IdBufferTest {
    /** Batches with a bound relative to now, each ID its own number. */
    private class Buffer(
        vararg batches: Pair<Long, LongArray>,
    ) : IdBuffer(1, rfcOrder = false, null) {
        private val pending = ArrayDeque(batches.toList())
        val handedOut = mutableListOf<Int>()

        override fun fetchBatch(handedOut: Int): ByteArray {
            this.handedOut += handedOut
            val (freshFor, ids) = pending.removeFirst()
            val bound = System.currentTimeMillis() + freshFor
            return ByteBuffer.allocate(8 + 8 * ids.size).order(ByteOrder.LITTLE_ENDIAN).apply {
                putLong(bound)
                ids.forEach(::putLong)
            }.array()
        }

        override fun fetch(count: Int): ByteArray = error("no bulk calls here")

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
    fun `a used-up batch reports all its IDs handed out`() {
        val buffer = Buffer(60_000L to longArrayOf(1, 2), 60_000L to longArrayOf(3))
        assertEquals(listOf(1L, 2L, 3L), List(3) { buffer.next() })
        assertEquals(listOf(0, 2), buffer.handedOut)
    }

    @Test
    fun `a stale batch is dropped with the rest of its IDs, never handed out`() {
        // The first batch's bound has passed: none of its IDs goes out.
        val buffer = Buffer(-10L to longArrayOf(1, 2, 3), 60_000L to longArrayOf(4, 5))
        assertEquals(4, buffer.next())
        assertEquals(5, buffer.next())
        assertEquals(listOf(0, 0), buffer.handedOut)
    }
}
