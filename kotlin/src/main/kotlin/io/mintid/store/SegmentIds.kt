package io.mintid.store

import io.mintid.SegmentAllocator
import io.mintid.SegmentPolicy
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.ReentrantLock
import kotlin.concurrent.withLock
import javax.sql.DataSource

/**
 * IDs of one [tag] (Leaf's segment mode), unique across every process sharing the tag and
 * increasing for each thread of this one: segments of the tag's counter in the `id_segment`
 * table are fetched one round trip each and handed out from memory. Once the policy's share of
 * a segment is used, the next one is fetched on a daemon thread (double buffer), so [nextId]
 * waits on the database only when both segments run out (the first ID, or a burst that
 * outruns them). The step adapts to the rate, as the core's [SegmentAllocator] says.
 *
 * IDs cross from the core up to [batch] at a time (and never more than the current step) and
 * are handed out lock-free. A restart loses the unused rest of what was fetched and of the batch
 * in memory, fewer than `2 × maxStep + batch` IDs, and never reissues an ID. Thread-safe.
 * [close] stops the background thread.
 *
 * ```kotlin
 * SegmentIds(dataSource, Dialect.POSTGRES, "orders", SegmentPolicy.of(1000, 100, 1_000_000)).use { ids ->
 *     val id: Long = ids.nextId()
 * }
 * ```
 *
 * @property dataSource where connections come from (the background fetch takes one too).
 * @property dialect the database's SQL dialect.
 * @property tag the counter's name: 1 to 64 ASCII bytes, created on first use.
 * @property policy how segments are sized and fetched.
 * @property clock the time the step adapts to (the system clock by default).
 * @param background fetch the next segment on a daemon thread (true) or inline in the
 *   [nextId] call that makes it due (false).
 * @param batch how many IDs cross from the core at once (1 to 65536); the fetch threshold is
 *   checked after each batch, so 1 checks it after every ID.
 * @throws io.mintid.SegmentException `segment.invalid_policy`.
 * @throws IllegalArgumentException for a tag or batch out of range.
 */
class SegmentIds
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val tag: String,
        val policy: SegmentPolicy,
        val clock: StoreClock = StoreClock.SYSTEM,
        background: Boolean = true,
        private val batch: Int = DEFAULT_BATCH,
    ) : AutoCloseable {
        private val queries = Statements.of(dialect)
        private val allocator = SegmentAllocator(policy)
        private val fetcher: ExecutorService? =
            if (background) {
                Executors.newSingleThreadExecutor { task -> Thread(task, "mintid-segment-$tag").apply { isDaemon = true } }
            } else {
                null
            }

        /** Guards taking a new batch from the allocator. */
        private val refill = Any()

        /** Signalled when a fetch ends (installed or failed). */
        private val fetchLock = ReentrantLock()
        private val fetchEnded = fetchLock.newCondition()

        @Volatile private var ready = Batch(LongArray(0))

        @Volatile private var closed = false

        /** The step of the latest segment installed: no batch is larger. */
        @Volatile private var latestStep = 0L

        private val waits = AtomicLong()

        init {
            require(tag.isNotEmpty() && tag.length <= MAX_TAG_BYTES && tag.all { it.code < 0x80 }) {
                "the tag must be 1 to $MAX_TAG_BYTES ASCII characters: \"$tag\""
            }
            require(batch in 1..MAX_BATCH) { "the batch must be 1 to $MAX_BATCH, not $batch" }
        }

        /** A batch of IDs in increasing order, handed out by an atomic cursor. */
        private class Batch(
            val ids: LongArray,
        ) {
            val cursor = AtomicInteger()
        }

        /**
         * The next ID: from memory in the steady state; it waits for the database only when the
         * segments in memory ran out.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable` when a needed segment
         *   cannot be fetched.
         * @throws io.mintid.SegmentException `segment.went_back` when the tag's row was reset or
         *   restored below IDs already handed out.
         * @throws IllegalStateException after [close].
         */
        fun nextId(): Long {
            while (true) {
                val batch = ready
                val slot = batch.cursor.getAndIncrement()
                if (slot < batch.ids.size) return batch.ids[slot]
                synchronized(refill) {
                    if (ready === batch) ready = Batch(take())
                }
            }
        }

        /**
         * How many times a caller had to wait for the database because the segments in memory
         * ran out (the first ID included); 1 in the steady state of a well-sized policy.
         */
        val databaseWaits: Long get() = waits.get()

        /** Takes a batch from the allocator, fetching when it ran out; starts the next fetch when due. */
        private fun take(): LongArray {
            check(!closed) { "the segment IDs of \"$tag\" are closed" }
            var waited = false
            while (true) {
                // At most one step at a time: what a restart loses stays within two segments
                // and a batch.
                val ids = allocator.fill(minOf(batch.toLong(), latestStep).toInt())
                if (ids.isNotEmpty()) {
                    startFetchIfDue()
                    return ids
                }
                if (!waited) {
                    waits.incrementAndGet()
                    waited = true
                }
                val step = allocator.fetchDue(clock.nowMillis())
                if (step != null) fetch(step) else awaitFetch()
            }
        }

        /**
         * Starts the fetch the core asks for, if any. A failure is not the caller's (it has its
         * IDs): the allocator was told, and the next batch asks again.
         */
        private fun startFetchIfDue() {
            val step = allocator.fetchDue(clock.nowMillis()) ?: return
            val prefetch = {
                try {
                    fetch(step)
                } catch (_: Exception) {
                    // Reported to the allocator by fetch().
                }
            }
            val background = fetcher ?: return prefetch()
            try {
                background.execute(prefetch)
            } catch (_: RejectedExecutionException) {
                allocator.fetchFailed() // closed meanwhile
            }
        }

        private fun awaitFetch() {
            fetchLock.withLock {
                while (allocator.remaining == 0L && allocator.fetchInFlight) fetchEnded.await(AWAIT_SLICE_MILLIS, TimeUnit.MILLISECONDS)
            }
        }

        /** Takes the next [step] IDs of the tag (creating it on first use) and installs them. */
        private fun fetch(step: Long) {
            try {
                while (true) {
                    val now = clock.nowMillis()
                    val values = mapOf("tag" to tag, "step" to step, "now_millis" to now)
                    val row =
                        dataSource.inTransaction { connection ->
                            if (connection.execRows(queries["segment_fetch"], values) == 1L) {
                                connection.rows(queries["segment_load"], mapOf("tag" to tag)).firstOrNull()
                            } else {
                                null
                            }
                        }
                    if (row != null) {
                        allocator.fetched(row.long("max_id"), row.long("step"), now)
                        latestStep = row.long("step")
                        return
                    }
                    // No row yet: create the tag outside any transaction, then fetch again.
                    dataSource.withConnection { it.execRows(queries["segment_create"], values) }
                }
            } catch (error: Throwable) {
                allocator.fetchFailed()
                throw error
            } finally {
                fetchLock.withLock { fetchEnded.signalAll() }
            }
        }

        /**
         * Stops the background fetch thread (a fetch under way finishes); later calls to [nextId]
         * throw once the batch in memory is used up. What was fetched and not handed out is lost.
         */
        override fun close() {
            closed = true
            fetcher?.let {
                it.shutdown()
                it.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)
            }
        }

        private companion object {
            /** As many as a Snowflake generator takes per crossing: a call into the core costs microseconds. */
            const val DEFAULT_BATCH = 4096
            const val MAX_BATCH = 65_536

            /** `id_segment.tag` holds 1 to 64 bytes of ASCII (`docs/spec.md`). */
            const val MAX_TAG_BYTES = 64
            const val AWAIT_SLICE_MILLIS = 100L
            const val CLOSE_WAIT_SECONDS = 10L
        }
    }
