package io.mintid

import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicInteger

/**
 * Hands out IDs that crossed from the core in bulk, from any number of threads, with the
 * guarantees of the generator behind it plus one of its own:
 *
 * - unique: each slot of a batch is claimed by exactly one caller (an atomic cursor), and the
 *   core never issues an ID twice, so batches never overlap;
 * - increasing for each thread: a thread claims slots of one batch in cursor order and moves
 *   only to later batches, which hold greater IDs;
 * - fresh: an ID is handed out only while the clock reads at most its *deadline*, 1 ms past
 *   the last millisecond its timestamp covers; a stale ID is dropped, never issued.
 *
 * A batch that is used up doubles the next request (up to `maxBatch`); one that went stale
 * halves it, so the batch size follows the caller's rate. A generator on a test clock gets
 * batches of one.
 *
 * Each ID is `wordsPerId` longs of [Batch.words]. A caller loops: take [current], [Batch.claim]
 * a slot, read it, or [refill] and try again. [bulk] serves callers that want many IDs at once.
 */
internal class IdBuffer(
    private val wordsPerId: Int,
    private val maxBatch: Int,
    private val clock: MillisClock,
    private val fetch: (count: Int) -> LongArray,
    private val deadlineOf: (words: LongArray, offset: Int) -> Long,
) {
    /** One bulk answer of the core, with each ID's deadline. */
    inner class Batch(
        /** The IDs, `wordsPerId` longs each. */
        val words: LongArray,
        private val deadlines: LongArray,
    ) {
        private val cursor = AtomicInteger()

        /**
         * Claims the next slot: its offset in [words], or [USED_UP] when the batch is
         * exhausted, or [STALE] when the claimed ID is past its deadline (it is dropped).
         */
        fun claim(): Int {
            val slot = cursor.getAndIncrement()
            if (slot >= deadlines.size) return USED_UP
            return if (clock.nowMillis() <= deadlines[slot]) slot * wordsPerId else STALE
        }
    }

    /** The batch to claim from now; replaced only by a batch of later IDs. */
    private val empty = Batch(LongArray(0), LongArray(0))

    @Volatile
    var current = empty
        private set

    private val lock = Any()
    private var nextSize = 1 // guarded by lock

    /**
     * Replaces [seen] (whose claim answered [outcome], [USED_UP] or [STALE]) by a new batch,
     * unless another thread already did. The core's errors propagate; the next call tries again.
     */
    fun refill(seen: Batch, outcome: Int) {
        synchronized(lock) {
            if (current !== seen) return
            nextSize =
                when {
                    clock !== MillisClock.SYSTEM -> 1
                    outcome == STALE -> maxOf(1, nextSize / 2)
                    else -> minOf(maxBatch, nextSize * 2)
                }
            val words = fetch(nextSize)
            current = Batch(words, LongArray(words.size / wordsPerId) { deadlineOf(words, it * wordsPerId) })
        }
    }

    /**
     * [count] IDs straight from the core, as one batch. Buffered IDs (older than these) are
     * dropped, so the calling thread's next claim still sees greater IDs.
     *
     * @throws ArgumentException `argument.negative` for a negative [count].
     */
    fun bulk(count: Int): LongArray {
        requireNonNegative(count.toLong(), "the count")
        synchronized(lock) {
            val words = fetch(count)
            current = empty
            return words
        }
    }

    companion object {
        /** [Batch.claim]: the batch has no slot left. */
        const val USED_UP = -1

        /** [Batch.claim]: the claimed ID was too old to hand out. */
        const val STALE = -2
    }
}

/** The clock a buffer judges freshness by, in Unix milliseconds. */
internal fun interface MillisClock {
    /** Now, in Unix milliseconds. */
    fun nowMillis(): Long

    companion object {
        /** The system's wall clock, the one the core's system clock reads too. */
        val SYSTEM = MillisClock { System.currentTimeMillis() }
    }
}

/** The core's bulk answer (8 bytes per word, most significant first) as words. */
internal fun bigEndianLongs(bytes: ByteArray): LongArray {
    val words = LongArray(bytes.size / 8)
    ByteBuffer.wrap(bytes).asLongBuffer().get(words)
    return words
}
