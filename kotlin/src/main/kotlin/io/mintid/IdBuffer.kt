package io.mintid

import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.nio.ByteBuffer

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
 * batches of one, judged by that clock.
 *
 * Each ID is `wordsPerId` longs of [Batch.words]. A caller loops: take [current], [claim] a
 * slot, read it, or [refill] and try again. [bulk] serves callers that want many IDs at once.
 */
internal abstract class IdBuffer(
    private val wordsPerId: Int,
    private val maxBatch: Int,
    private val testClock: ManualClock?,
) {
    /** `count` new IDs from the core, `wordsPerId` longs each. */
    protected abstract fun fetch(count: Int): LongArray

    /** The last Unix millisecond at which the ID at `offset` of `words` may be handed out. */
    protected abstract fun deadlineOf(
        words: LongArray,
        offset: Int,
    ): Long

    /** One bulk answer of the core. */
    class Batch(
        /** The IDs, `wordsPerId` longs each. */
        @JvmField val words: LongArray,
        @JvmField val count: Int,
    ) {
        @Volatile
        @JvmField
        var cursor: Int = 0
    }

    /** The batch to claim from now; replaced only by a batch of later IDs. */
    @Volatile
    @JvmField
    var current = EMPTY

    private val lock = Any()
    private var nextSize = 1 // guarded by lock

    /**
     * Claims the next slot of [batch]: its offset in [Batch.words], or [USED_UP] when the batch
     * is exhausted, or [STALE] when the claimed ID is past its deadline (it is dropped).
     */
    fun claim(batch: Batch): Int {
        val slot = CURSOR.getAndAdd(batch, 1) as Int
        if (slot >= batch.count) return USED_UP
        val offset = slot * wordsPerId
        val now = testClock?.nowMillis() ?: System.currentTimeMillis()
        return if (now <= deadlineOf(batch.words, offset)) offset else STALE
    }

    /**
     * Replaces [seen] (whose claim answered [outcome], [USED_UP] or [STALE]) by a new batch,
     * unless another thread already did. The core's errors propagate; the next call tries again.
     */
    fun refill(
        seen: Batch,
        outcome: Int,
    ) {
        synchronized(lock) {
            if (current !== seen) return
            nextSize =
                when {
                    testClock != null -> 1
                    outcome == STALE -> maxOf(1, nextSize / 2)
                    else -> minOf(maxBatch, nextSize * 2)
                }
            val words = fetch(nextSize)
            current = Batch(words, words.size / wordsPerId)
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
            current = EMPTY
            return words
        }
    }

    companion object {
        /** [claim]: the batch has no slot left. */
        const val USED_UP = -1

        /** [claim]: the claimed ID was too old to hand out. */
        const val STALE = -2

        private val EMPTY = Batch(LongArray(0), 0)

        private val CURSOR: VarHandle =
            MethodHandles.lookup().findVarHandle(Batch::class.java, "cursor", Int::class.javaPrimitiveType)
    }
}

/** The core's bulk answer (8 bytes per word, most significant first) as words. */
internal fun bigEndianLongs(bytes: ByteArray): LongArray {
    val words = LongArray(bytes.size / 8)
    ByteBuffer.wrap(bytes).asLongBuffer().get(words)
    return words
}
