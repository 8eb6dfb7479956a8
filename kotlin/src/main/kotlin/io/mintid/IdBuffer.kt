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
 * - fresh, by the core's ID buffer rule (`docs/spec.md`, "The ID buffer rule"): each batch
 *   comes with the last Unix millisecond at which its IDs may be handed out ([Batch.freshUntil]:
 *   its first ID's tick plus one tick), and an ID is handed out only if the clock, read after its
 *   slot is claimed, reads at most that; past it the rest of the batch is dropped, never issued.
 *
 * The clock read is the one cost of a hand-out that cannot be saved: the bound needs an upper
 * bound on the time at some moment of the call, and only a clock read taken during the call
 * gives one. Everything around it is one atomic add and a few plain reads.
 *
 * The size of each batch is the core's too: a refill tells it how many IDs the previous batch
 * handed out. A generator on a test clock gets batches of one, judged by that clock.
 *
 * Each ID is `wordsPerId` longs of [Batch.bytes], after the batch's 8-byte little-endian header:
 * a 64-bit ID little-endian, as every packed format of the library; a UUID's 16 bytes in RFC
 * 9562 order ([rfcOrder]: two big-endian longs, most significant first).
 * A caller loops: take [current], [claim] a slot, read it, or [refill] and try again. [bulk]
 * serves callers that want many IDs at once.
 */
internal abstract class IdBuffer(
    private val wordsPerId: Int,
    private val rfcOrder: Boolean,
    private val testClock: ManualClock?,
) {
    /**
     * The core's next batch after one that handed out [handedOut] IDs: an 8-byte header (the
     * last Unix millisecond at which its IDs may be handed out), then the IDs.
     */
    protected abstract fun fetchBatch(handedOut: Int): ByteArray

    /** `count` new IDs from the core, `8 * wordsPerId` bytes each. */
    protected abstract fun fetch(count: Int): ByteArray

    /** One bulk answer of the core, read in place with [word]. */
    class Batch(
        /** The header and the IDs, `8 * wordsPerId` bytes each. */
        @JvmField val bytes: ByteArray,
        @JvmField val count: Int,
        /** The last Unix millisecond at which the batch's IDs may be handed out. */
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

    /**
     * Claims the next slot of [batch]: the index of its first word (read it with [word]), or
     * [USED_UP] when the batch is exhausted, or [STALE] when the clock read past the batch's
     * bound (the ID is dropped with the rest of the batch).
     */
    fun claim(batch: Batch): Int {
        val slot = CURSOR.getAndAdd(batch, 1) as Int
        if (slot >= batch.count) return USED_UP
        val now = testClock?.nowMillis() ?: System.currentTimeMillis()
        return if (now <= batch.freshUntil) 1 + slot * wordsPerId else STALE
    }

    /** Word [index] of [batch]. */
    fun word(
        batch: Batch,
        index: Int,
    ): Long = if (rfcOrder) BIG.get(batch.bytes, index * 8) as Long else LITTLE.get(batch.bytes, index * 8) as Long

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
            current =
                if (testClock != null) {
                    Batch(ByteArray(8) + fetch(1), 1, Long.MAX_VALUE)
                } else {
                    // How many went out: the claims below the count, less the stale one.
                    val claimed = minOf(seen.cursor, seen.count)
                    val bytes = fetchBatch(if (outcome == STALE) maxOf(0, claimed - 1) else claimed)
                    Batch(bytes, (bytes.size - 8) / (8 * wordsPerId), LITTLE.get(bytes, 0) as Long)
                }
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
        ByteBuffer.wrap(bytes).order(if (rfcOrder) ByteOrder.BIG_ENDIAN else ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(words)
        return words
    }

    companion object {
        /** [claim]: the batch has no slot left. */
        const val USED_UP = -1

        /** [claim]: the claimed ID was too old to hand out. */
        const val STALE = -2

        private val EMPTY = Batch(ByteArray(8), 0, Long.MIN_VALUE)

        private val CURSOR: VarHandle =
            MethodHandles.lookup().findVarHandle(Batch::class.java, "cursor", Int::class.javaPrimitiveType)

        private val LITTLE: VarHandle = MethodHandles.byteArrayViewVarHandle(LongArray::class.java, ByteOrder.LITTLE_ENDIAN)

        private val BIG: VarHandle = MethodHandles.byteArrayViewVarHandle(LongArray::class.java, ByteOrder.BIG_ENDIAN)
    }
}
