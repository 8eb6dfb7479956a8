package io.mintid

import java.lang.invoke.MethodHandles
import java.lang.invoke.VarHandle
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * Hands out IDs that crossed from the core in bulk, from any number of threads, with the
 * guarantees of the generator behind it plus one of its own:
 *
 * - unique: each slot of a batch is claimed by exactly one caller (an atomic cursor), and the
 *   core never issues an ID twice, so batches never overlap;
 * - increasing for each thread: a thread claims slots of one batch in cursor order and moves
 *   only to later batches, which hold greater IDs;
 * - fresh: an ID is handed out only if the clock, read after its slot is claimed, reads at
 *   most its *deadline*, 1 ms past the last millisecond its timestamp covers; a stale ID is
 *   dropped, never issued.
 *
 * The clock read is the one cost of a hand-out that cannot be saved: the bound needs an upper
 * bound on the time at some moment of the call, and only a clock read taken during the call
 * gives one (a value another thread published is a lower bound; that thread may have been
 * descheduled for any time since). Everything around it is kept to one atomic add and a few
 * plain reads: IDs in a batch only get later, so each batch carries the deadline of its first
 * ID ([Batch.freshUntil]), which holds for every ID in it; only past it is the claimed ID's own
 * deadline computed.
 *
 * A batch that is used up doubles the next request (up to `maxBatch`); one that went stale
 * halves it, so the batch size follows the caller's rate. A generator on a test clock gets
 * batches of one, judged by that clock.
 *
 * Each ID is `wordsPerId` big-endian longs of [Batch.bytes]. A caller loops: take [current], [claim] a
 * slot, read it, or [refill] and try again. [bulk] serves callers that want many IDs at once.
 */
internal abstract class IdBuffer(
    private val wordsPerId: Int,
    private val maxBatch: Int,
    private val testClock: ManualClock?,
) {
    /** `count` new IDs from the core, `8 * wordsPerId` bytes each, most significant first. */
    protected abstract fun fetch(count: Int): ByteArray

    /** The last Unix millisecond at which the ID whose first word is [firstWord] may be handed out. */
    protected abstract fun deadlineOf(firstWord: Long): Long

    /** One bulk answer of the core, read in place as big-endian words with [word]. */
    class Batch(
        /** The IDs, `8 * wordsPerId` bytes each. */
        @JvmField val bytes: ByteArray,
        @JvmField val count: Int,
        /** The deadline of the first ID, and so a deadline every ID of the batch meets. */
        @JvmField val freshUntil: Long,
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
     * Claims the next slot of [batch]: the index of its first word (read it with [word]), or
     * [USED_UP] when the batch is exhausted, or [STALE] when the claimed ID is past its deadline
     * (it is dropped).
     */
    fun claim(batch: Batch): Int {
        val slot = CURSOR.getAndAdd(batch, 1) as Int
        if (slot >= batch.count) return USED_UP
        val first = slot * wordsPerId
        val now = testClock?.nowMillis() ?: System.currentTimeMillis()
        return if (now <= batch.freshUntil || now <= deadlineOf(word(batch, first))) first else STALE
    }

    /** Word [index] of [batch]. */
    fun word(
        batch: Batch,
        index: Int,
    ): Long = WORD.get(batch.bytes, index * 8) as Long

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
            val bytes = fetch(nextSize)
            val count = bytes.size / (8 * wordsPerId)
            current = Batch(bytes, count, if (count > 0) deadlineOf(WORD.get(bytes, 0) as Long) else Long.MIN_VALUE)
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
        val bytes =
            synchronized(lock) {
                current = EMPTY
                fetch(count)
            }
        val words = LongArray(bytes.size / 8)
        ByteBuffer.wrap(bytes).asLongBuffer().get(words)
        return words
    }

    companion object {
        /** [claim]: the batch has no slot left. */
        const val USED_UP = -1

        /** [claim]: the claimed ID was too old to hand out. */
        const val STALE = -2

        private val EMPTY = Batch(ByteArray(0), 0, Long.MIN_VALUE)

        private val CURSOR: VarHandle =
            MethodHandles.lookup().findVarHandle(Batch::class.java, "cursor", Int::class.javaPrimitiveType)

        private val WORD: VarHandle = MethodHandles.byteArrayViewVarHandle(LongArray::class.java, ByteOrder.BIG_ENDIAN)
    }
}
