package io.mintid.store

import io.mintid.MintidException
import io.mintid.SegmentPolicy
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.RejectedExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.locks.ReentrantLock
import javax.sql.DataSource
import kotlin.concurrent.withLock

/**
 * IDs of one [tag] (Leaf's segment mode), unique across every process sharing the tag and
 * increasing for each thread of this one: segments of the tag's counter in the `id_segment`
 * table are fetched one round trip each and handed out from memory. Every rule is the core's
 * segment driver: it hands out runs of IDs (counted out here lock-free, no crossing per ID),
 * says when the next segment's fetch is due (double buffer, the step adapted to the rate), and
 * names the fetch's every step (the tag created on first use, retries, typed errors); this
 * class runs the steps, on a daemon thread once the policy's share of a segment is used, so
 * [nextId] waits on the database only when both segments run out. A failed fetch loses
 * nothing: the IDs in memory are still handed out and the next run asks for the fetch again.
 *
 * A restart loses the unused rest of what was fetched, fewer than `2 × maxStep` IDs, and never
 * reissues an ID. Thread-safe. [close] stops the background thread.
 *
 * ```kotlin
 * SegmentIds(dataSource, Dialect.POSTGRES, "orders", SegmentPolicy.of(1000, 100, 1_000_000)).use { ids ->
 *     val id: Long = ids.nextId()
 * }
 * ```
 *
 * @property dataSource where connections come from (the background fetch takes one too).
 * @property dialect the database's SQL dialect.
 * @property tag the counter's name: 1 to 64 ASCII characters, created on first use.
 * @property policy how segments are sized and fetched.
 * @property clock the time the step adapts to (the system clock by default).
 * @param background fetch the next segment on a daemon thread (true) or inline in the
 *   [nextId] call that makes it due (false).
 * @property metrics where the database errors of its fetches are reported ([StoreMetrics.NONE] by default).
 * @throws io.mintid.SegmentException `segment.invalid_policy`, `segment.invalid_tag`.
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
        val metrics: StoreMetrics = StoreMetrics.NONE,
    ) : AutoCloseable {
        private val wire =
            WireDriver(Wire.Kind.SEGMENT, Wire.segmentSpec(dialect, tag, policy)).also { wire ->
                // Nothing is due yet: a wire idle at once, or the tag's or policy's refusal.
                (wire.call(Wire.Input.ABANDON, clock.nowMillis()) as? Wire.Step.Fail)?.let { throw it.toMintid() }
            }
        private val fetcher: ExecutorService? =
            if (background) {
                Executors.newSingleThreadExecutor { task -> Thread(task, "mintid-segment-$tag").apply { isDaemon = true } }
            } else {
                null
            }

        /** Guards taking a new run from the driver. */
        private val refill = Any()

        /** Signalled when a fetch ends (installed or failed). */
        private val fetchLock = ReentrantLock()
        private val fetchEnded = fetchLock.newCondition()

        @Volatile private var run = Run(0, 0)

        @Volatile private var closed = false

        private val waits = AtomicLong()

        /** A run of IDs `cursor ..< end`, handed out by an atomic cursor. */
        private class Run(
            first: Long,
            val end: Long,
        ) {
            val cursor = AtomicLong(first)
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
            var waited = false
            while (true) {
                val current = run
                val id = current.cursor.getAndIncrement()
                if (id < current.end) return id
                synchronized(refill) {
                    if (run === current) {
                        take()?.let { return it }
                        if (!waited) waits.incrementAndGet().also { waited = true }
                    }
                }
            }
        }

        /**
         * How many times a caller had to wait for the database because the segments in memory
         * ran out (the first ID included); 1 in the steady state of a well-sized policy.
         */
        val databaseWaits: Long get() = waits.get()

        /** Takes the next run from the driver and does what it says; its first ID, or null to try again. */
        private fun take(): Long? {
            check(!closed) { "the segment IDs of \"$tag\" are closed" }
            val taken = wire.call(Wire.Input.TAKE, clock.nowMillis()) as Wire.Step.Taken
            when (taken.action) {
                FETCH_BESIDE -> prefetch()
                FETCH_NOW -> fetch()
                WAIT -> fetchLock.withLock { fetchEnded.await(taken.waitMillis, TimeUnit.MILLISECONDS) }
            }
            if (taken.count == 0L) return null
            run = Run(taken.first + 1, taken.first + taken.count)
            return taken.first
        }

        /**
         * Runs the due fetch beside the caller (it has its IDs): a failure is not the caller's,
         * the driver recorded it and the next run asks again.
         */
        private fun prefetch() {
            val quietly = {
                try {
                    fetch()
                } catch (_: Exception) {
                    // Recorded by the driver.
                }
            }
            val background = fetcher ?: return quietly()
            try {
                background.execute(quietly)
            } catch (_: RejectedExecutionException) {
                quietly() // closed meanwhile: end the fetch here
            }
        }

        /** Runs the due fetch's steps ([DriverRun]); its failure is thrown as the core's typed error. */
        private fun fetch() {
            try {
                DriverRun.pooled(dataSource, dialect, clock, metrics).drive(wire, Wire.input(Wire.Input.FETCH, clock.nowMillis()).done())
            } catch (error: MintidException) {
                throw error // the driver ended the fetch itself
            } catch (error: Throwable) {
                wire.call(Wire.Input.ABANDON, clock.nowMillis()) // interrupted: the next take asks for the fetch again
                throw error
            } finally {
                fetchLock.withLock { fetchEnded.signalAll() }
            }
        }

        /**
         * Stops the background fetch thread (a fetch under way finishes); later calls to [nextId]
         * throw once the run in memory is used up. What was fetched and not handed out is lost.
         */
        override fun close() {
            closed = true
            fetcher?.let {
                it.shutdown()
                it.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)
            }
        }

        private companion object {
            // The actions of a `taken` step (hand out is 0: nothing more to do).
            const val FETCH_BESIDE = 1
            const val FETCH_NOW = 2
            const val WAIT = 3
            const val CLOSE_WAIT_SECONDS = 10L
        }
    }
