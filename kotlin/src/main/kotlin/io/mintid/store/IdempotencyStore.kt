package io.mintid.store

import io.mintid.IdempotencyHttp
import io.mintid.IdempotencyKey
import io.mintid.MintidException
import io.mintid.Outcome
import io.mintid.Record
import io.mintid.RecordLostException
import io.mintid.RecordPolicy
import io.mintid.core
import io.mintid.requireNonNegative
import io.mintid.storeException
import uniffi.mintid_ffi.CleanupStep
import uniffi.mintid_ffi.Finished
import uniffi.mintid_ffi.Held
import uniffi.mintid_ffi.OperationOutcome
import uniffi.mintid_ffi.RecordCleanup
import uniffi.mintid_ffi.RecordDrivers
import uniffi.mintid_ffi.RecordRenewal
import uniffi.mintid_ffi.RecordStep
import uniffi.mintid_ffi.RenewalStep
import uniffi.mintid_ffi.Way
import uniffi.mintid_ffi.storeLoadQuery
import uniffi.mintid_ffi.storeReadRecord
import java.sql.Connection
import java.util.concurrent.Future
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import javax.sql.DataSource
import uniffi.mintid_ffi.IdempotencyKey as FfiKey
import uniffi.mintid_ffi.Outcome as FfiOutcome

/**
 * The claim a [runOnce] operation holds while it runs: the store renews its lease in the
 * background (every [IdempotencyStore.policy]'s lease / 3, on another connection), and a renewal
 * that finds the key taken over or completed marks it [lost].
 */
class HeldRecord internal constructor(
    /** The fencing token of this claim. */
    val token: Long,
    leaseDeadlineMillis: Long,
) {
    /** When the lease ends (Unix ms), as last renewed. */
    @Volatile
    var leaseDeadlineMillis: Long = leaseDeadlineMillis
        private set

    /** Why the record was lost (`store.record_lost`), or null while it is held. */
    @Volatile
    var lostError: RecordLostException? = null
        private set

    /** Whether a renewal found the key taken over or completed: the operation's result will not be stored. */
    val lost: Boolean get() = lostError != null

    /**
     * Throws [RecordLostException] (`store.record_lost`) once the record was lost: call it
     * before a side effect that must not happen twice.
     */
    fun checkHeld() {
        lostError?.let { throw it }
    }

    internal fun renewed(deadline: Long) {
        leaseDeadlineMillis = deadline
    }

    internal fun lose(error: RecordLostException) {
        lostError = error
    }
}

/**
 * A claim written with a lease ("lease and fence"): the caller runs the operation, [renew]s the
 * lease while it runs long, and calls [complete] or [fail]; once the lease ends another request
 * may take the key over, and a late write is refused (`record.stale_token`).
 */
class RecordLease internal constructor(
    private val store: IdempotencyStore,
    private val driver: LaneDriver,
    private val key: FfiKey,
    private val held: Held,
) : LeaseResult {
    override val decision: String get() = "execute"

    private val renewal by lazy { store.renewal(key, held) }

    /** The fencing token of this claim. */
    val token: Long get() = held.token.toLong()

    /** When the lease ends (Unix ms), as last renewed. */
    @Volatile
    var leaseDeadlineMillis: Long = held.leaseDeadlineMillis.toLong()
        private set

    /** How often the core suggests to [renew] while the operation runs (ms). */
    val renewEveryMillis: Long? get() = held.renewEveryMillis?.toLong()

    /**
     * Moves the lease deadline forward (now + the policy's lease) and returns it.
     *
     * @throws RecordLostException `store.record_lost`: the key was taken over or completed.
     * @throws io.mintid.StoreUnavailableException `store.unavailable` (try again while the lease runs).
     */
    fun renew(): Long = store.renew(renewal).also { leaseDeadlineMillis = it }

    /**
     * Stores the response.
     *
     * @throws io.mintid.RecordException `record.stale_token` (taken over) or `record.not_pending`.
     * @throws io.mintid.ResponseTooLargeException `store.response_too_large`,
     *   [io.mintid.ResponseNotStorableException] `store.response_not_storable` (the claim is
     *   failed for good with that code).
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     */
    fun complete(response: StoredResponse) {
        store.finishHeld(driver, OperationOutcome.Succeeded(response.toFfi()))
    }

    /**
     * Stores a failure: final (replayed, or released when the policy stores no errors) or
     * retryable (released), with an optional [response] kept with a final one.
     *
     * @throws io.mintid.RecordException `record.stale_token` or `record.not_pending`.
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     */
    @JvmOverloads
    fun fail(
        error: String,
        retryable: Boolean = false,
        response: StoredResponse? = null,
    ) {
        store.finishHeld(driver, OperationOutcome.Failed(error, retryable, response?.toFfi()))
    }
}

/**
 * Idempotency records in one database (any JDBC driver), under one [RecordPolicy]. The record
 * protocol is the core's driver (`RecordDriver`: every claim, wait, retry, limit, renewal and
 * error code); this class is its JDBC executor: it runs the statements the driver names,
 * sleeps the pauses it asks for, runs the operation when told, and renews the lease meanwhile.
 *
 * Three ways in, named alike in every mintid language:
 * - [runOnce]: claim, run, store, replay to duplicates (the lease renewed while it runs);
 * - [inTransaction]: the same inside the caller's transaction, so that the record commits or
 *   rolls back with the business writes;
 * - [claimLease]: a claim with a lease and a fencing token, renewed, completed or failed later
 *   (long external calls).
 *
 * Apply the schema first ([Migrations.migrate]). Each call takes its connections from
 * [dataSource] (a pool, typically) and returns them. Thread-safe.
 *
 * @property dataSource where connections come from.
 * @property dialect the database's SQL dialect.
 * @property policy the record policy.
 * @property clock the time every decision and statement uses (the system clock by default).
 * @property metrics where decisions, latencies and errors are reported ([StoreMetrics.NONE] by default).
 * @property fastPath the Redis fast path in front of [runOnce] and [claimLease], or null (none).
 */
class IdempotencyStore
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: RecordPolicy = RecordPolicy.DEFAULT,
        val clock: StoreClock = StoreClock.SYSTEM,
        val metrics: StoreMetrics = StoreMetrics.NONE,
        val fastPath: RedisFastPath? = null,
    ) {
        private val manifest = Statements.of(dialect).manifest

        /** The manifest, the checked policy and the fast path, lowered into the core once (the lane's handle). */
        private val lane = Lane(RecordDrivers(manifest, policy.checked), fastPath)

        /**
         * Runs [operation] once for [key]: the first request claims the key, runs it and stores its
         * response; a duplicate replays what was stored, waits for a request in flight (the
         * policy's `maxWaitMillis`) or is answered [InProgress]. While [operation] runs, its
         * record's lease is renewed in the background; a renewal that finds the key taken over
         * marks the [HeldRecord] passed to it [HeldRecord.lost]. An operation that throws is
         * failed (see [OperationException]) and its exception rethrown (a checked one in a
         * [CheckedOperationException]).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`: before the claim was
         *   written nothing ran; when the database fails after the operation ran, the record
         *   stays pending until its lease passes, then the key may be taken over.
         * @throws io.mintid.ResponseTooLargeException `store.response_too_large`,
         *   [io.mintid.ResponseNotStorableException] `store.response_not_storable` (the
         *   operation ran; its key replays this error).
         * @throws io.mintid.NotAResponseException `store.not_a_response` (from Java: the
         *   operation returned null; the claim was released).
         * @throws io.mintid.RecordException `record.stale_token` when the lease passed and
         *   another request took the key over before completion.
         * @throws io.mintid.StoreException any other `store.*` failure (a serialization
         *   conflict, a query that failed): the database's exception is its cause.
         *
         * With a [fastPath], a duplicate may be answered from Redis (a replay of what the
         * database committed, or [InProgress]) without the database.
         */
        fun runOnce(
            key: IdempotencyKey,
            request: StoreRequest,
            operation: Operation,
        ): RunResult = driver(Way.RUN_ONCE, key, request).use { driver -> runOnce(driver, key, operation) }

        private fun runOnce(
            driver: LaneDriver,
            key: IdempotencyKey,
            operation: Operation,
        ): RunResult {
            val held =
                when (val step = claim(Way.RUN_ONCE) { advance(pooledRun(), driver) { driver.start(now()) } }) {
                    is RecordStep.Execute -> step.held
                    is RecordStep.Done -> return result(step.finished, null)
                    else -> error("the driver stopped at $step")
                }
            val record = HeldRecord(held.token.toLong(), held.leaseDeadlineMillis.toLong())
            // The renewal is made at the first beat: most operations end before it.
            val renewal = lazy { renewal(key.toFfi(), held) }
            val ran =
                try {
                    val heartbeat = held.renewEveryMillis?.let { heartbeat(renewal, record, it.toLong()) }
                    try {
                        operation(Way.RUN_ONCE) { operation.run(record) }
                    } finally {
                        heartbeat?.cancel(false)
                    }
                } finally {
                    if (renewal.isInitialized()) renewal.value.close()
                }
            return finish(Way.RUN_ONCE, driver, ran, ::pooledRun)
        }

        /**
         * [runOnce] inside the caller's transaction on [connection] (autocommit off): the claim,
         * [operation]'s writes on the same connection and the completion commit or roll back
         * together. An operation that throws leaves the failure to the caller's rollback:
         * nothing is stored.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws io.mintid.ResponseTooLargeException `store.response_too_large` (roll back:
         *   nothing happened), and the other [io.mintid.StoreException]s of [runOnce].
         * @throws io.mintid.StaleSnapshotException `store.stale_snapshot`: the transaction reads
         *   an old snapshot (claim before reading, or use `READ COMMITTED`).
         */
        fun inTransaction(
            connection: Connection,
            key: IdempotencyKey,
            request: StoreRequest,
            operation: TransactionalOperation,
        ): RunResult = driver(Way.SAME_TRANSACTION, key, request).use { driver -> inTransaction(driver, connection, operation) }

        private fun inTransaction(
            driver: LaneDriver,
            connection: Connection,
            operation: TransactionalOperation,
        ): RunResult {
            val run = { DriverRun.on(connection, dialect, clock, metrics) }
            when (val step = claim(Way.SAME_TRANSACTION) { advance(run(), driver) { driver.start(now()) } }) {
                is RecordStep.Execute -> Unit
                is RecordStep.Done -> return result(step.finished, null)
                else -> error("the driver stopped at $step")
            }
            return finish(Way.SAME_TRANSACTION, driver, operation(Way.SAME_TRANSACTION) { operation.run(connection) }, run)
        }

        /**
         * Runs [action] in one transaction on a connection of [dataSource]: committed when it
         * returns, rolled back when it throws. With [inTransaction] inside, the record and the
         * business writes go together.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable` when no connection
         *   can be had or it breaks.
         * @throws CheckedOperationException around a checked exception [action] threw (other
         *   exceptions are rethrown unchanged).
         */
        fun <T> transaction(action: TransactionAction<T>): T =
            try {
                dataSource.inTransaction { action.run(it) }
            } catch (error: Exception) {
                throw error.unchecked()
            }

        /**
         * Claims [key] with a lease: a [RecordLease] to renew, complete or fail, or the replay or
         * refusal a duplicate gets (with a [fastPath], maybe from Redis).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`, and the other
         *   [io.mintid.StoreException]s of a claim.
         */
        fun claimLease(
            key: IdempotencyKey,
            request: StoreRequest,
        ): LeaseResult {
            val driver = driver(Way.LEASE, key, request)
            return when (val step = claim(Way.LEASE) { advance(pooledRun(), driver) { driver.start(now()) } }) {
                is RecordStep.Execute -> RecordLease(this, driver, key.toFfi(), step.held)
                is RecordStep.Done -> result(step.finished, null) as NotExecuted
                else -> error("the driver stopped at $step")
            }
        }

        /**
         * The stored record of [key], or null.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`, and the other
         *   [io.mintid.StoreException]s of a query.
         */
        fun load(key: IdempotencyKey): StoredRecord? {
            val query = core { storeLoadQuery(manifest, key.toFfi()) }
            return pooledRun().once(query, ::storeReadRecord)?.let { StoredRecord(Record.of(it.record), it.response?.let(StoredResponse::of), it.error) }
        }

        /**
         * Deletes expired records (a pending one only once its lease passed too), [batchSize] per
         * statement until a batch comes back short; returns the total deleted.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        @JvmOverloads
        fun cleanup(batchSize: Int = 1000): Long {
            val cleanup = RecordCleanup(manifest, requireNonNegative(batchSize.toLong(), "the batch size"))
            return pooledRun().drive({ CleanupStep.Run(cleanup.start(now())) }, ::cleanupStep, { cleanup.push(it, now()) })
        }

        internal fun renewal(
            key: FfiKey,
            held: Held,
        ): RecordRenewal = core { RecordRenewal(manifest, policy.checked, key, held) }

        /** One renewal of a held lease, on a connection of its own: the new deadline. */
        internal fun renew(renewal: RecordRenewal): Long {
            val renewed =
                try {
                    pooledRun().drive(
                        { RenewalStep.Run(renewal.start(now())) },
                        { step -> if (step is RenewalStep.Run) HostStep.Run(step.query) else HostStep.Done(step) },
                        renewal::push,
                    )
                } catch (lost: RecordLostException) {
                    metrics.recordLost()
                    throw lost
                }
            return (renewed as RenewalStep.Renewed).leaseDeadlineMillis.toLong()
        }

        /** A lease's completion or failure: the driver's remaining steps. */
        internal fun finishHeld(
            driver: LaneDriver,
            outcome: OperationOutcome,
        ) {
            val step = recording { pause -> complete(Way.LEASE, outcome) { advance(pooledRun(), driver, pause) { driver.finish(outcome, now()) } } }
            check(step is RecordStep.Done) { "the driver stopped at $step" }
        }

        private fun now(): ULong = clock.nowMillis().toULong()

        /**
         * Runs a completion, whose operation has an outcome, to its end even when the thread is
         * interrupted (its caller gave up: `Future.cancel(true)`, an executor's shutdown): the
         * outcome is recorded before anything else happens (the rule of docs/spec.md, "Store
         * drivers"), then the interrupt is set again for the caller to see. An interrupt already
         * set or arriving meanwhile leaves the [clock]'s pauses and the pool's connection
         * requests alone; [action] sleeps each pause through it.
         */
        private inline fun <T> recording(action: (pause: (Long) -> Unit) -> T): T {
            var interrupted = Thread.interrupted()
            try {
                return action { millis -> if (pauseThrough(millis)) interrupted = true }
            } finally {
                if (Thread.interrupted() || interrupted) Thread.currentThread().interrupt()
            }
        }

        /** The [clock]'s pause of [millis], slept to its end through interrupts: whether one came. */
        private fun pauseThrough(millis: Long): Boolean {
            val end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis)
            var interrupted = false
            var left = millis
            while (true) {
                try {
                    clock.pause(left)
                    return interrupted
                } catch (_: InterruptedException) {
                    interrupted = true
                    left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()).coerceAtLeast(0)
                }
            }
        }

        private fun driver(
            way: Way,
            key: IdempotencyKey,
            request: StoreRequest,
        ): LaneDriver = core { lane.driver(way, key.text, request.fingerprint.digest(), created(request)) }

        /** The key's creation time; the core reads a negative one as "not known". */
        private fun created(request: StoreRequest): Long = request.keyCreatedMillis?.let { requireNonNegative(it, "keyCreatedMillis").toLong() } ?: -1

        /** Pushes what the operation came to and reads how the protocol ended. */
        private fun finish(
            way: Way,
            driver: LaneDriver,
            ran: Ran,
            run: () -> DriverRun,
        ): RunResult {
            val outcome = ran.outcome()
            val step = recording { pause -> complete(way, outcome) { advance(run(), driver, pause) { driver.finish(outcome, now()) } } }
            return when (step) {
                is RecordStep.Done -> result(step.finished, ran)
                else -> error("the driver stopped at $step")
            }
        }

        private fun result(
            finished: Finished,
            ran: Ran?,
        ): RunResult =
            when (finished) {
                is Finished.Executed -> Executed(ran!!.response!!)
                is Finished.OperationFailed -> throw ran!!.thrown!!.unchecked()
                is Finished.OperationFailedUnrecorded -> throw unrecorded(ran!!, finished)
                is Finished.Replay ->
                    Replayed(
                        if (finished.outcome == FfiOutcome.SUCCEEDED) Outcome.SUCCEEDED else Outcome.FAILED,
                        finished.response?.let(StoredResponse::of),
                        finished.error,
                    )
                is Finished.InProgress -> {
                    val millis = finished.retryAfterMillis.toLong()
                    InProgress(millis, IdempotencyHttp.retryAfterSecs(millis))
                }
                is Finished.FingerprintMismatch -> FingerprintMismatch()
                is Finished.KeyTooOld -> KeyTooOld()
            }

        /**
         * The operation's own error, its failure not recorded (the core's decision, docs/spec.md
         * "Which error the caller sees"): the store error [finished] names goes with it as a
         * suppressed exception and to the log (warning, with its code).
         */
        private fun unrecorded(
            ran: Ran,
            finished: Finished.OperationFailedUnrecorded,
        ): Throwable {
            val storeError = storeException(finished.code, finished.message, null, null, null)
            LOGGER.log(System.Logger.Level.WARNING, "mintid: the operation's failure was not recorded (${finished.code}): ${finished.message}")
            return ran.thrown!!.unchecked().apply { addSuppressed(storeError) }
        }

        // The metrics hook: the driver has decided; these only time, trace and name what it did.

        /** Runs the claim [action] of [way] in its span and reports its decision and time to [metrics]. */
        private inline fun claim(
            way: Way,
            action: () -> RecordStep,
        ): RecordStep {
            val started = System.nanoTime()
            return metrics.traced(Spans.CLAIM, wayName(way), ::decisionOf, action).also { step ->
                if (metrics === StoreMetrics.NONE) return@also
                metrics.claimed(wayName(way), decisionOf(step), System.nanoTime() - started)
            }
        }

        /** Runs the application's [operation] of [way] in its span: what it came to. */
        private inline fun operation(
            way: Way,
            crossinline operation: () -> Any?,
        ): Ran {
            val span = metrics.startSpan(Spans.OPERATION, wayName(way))
            return Ran.of { operation() }.also { span.end(null, it.thrown != null) }
        }

        /** Runs the completion [action] of [way] storing [outcome] in its span and reports its time and response size. */
        private inline fun complete(
            way: Way,
            outcome: OperationOutcome,
            action: () -> RecordStep,
        ): RecordStep {
            val started = System.nanoTime()
            return metrics.traced(Spans.COMPLETE, wayName(way), ::decisionOf, action).also {
                if (metrics === StoreMetrics.NONE) return@also
                val response =
                    when (outcome) {
                        is OperationOutcome.Succeeded -> outcome.response
                        is OperationOutcome.Failed -> outcome.response
                        else -> null
                    }
                metrics.completed(wayName(way), System.nanoTime() - started, response?.body?.size)
            }
        }

        /** The decision a claim or completion [step] names: `execute` to run (or once run), else the refusal's or replay's. */
        private fun decisionOf(step: RecordStep): String =
            when (val finished = (step as? RecordStep.Done)?.finished) {
                null, is Finished.Executed, is Finished.OperationFailed, is Finished.OperationFailedUnrecorded -> "execute"
                else -> result(finished, null).decision
            }

        /** Runs [renewal] every [everyMillis] on the shared scheduler until cancelled or lost. */
        private fun heartbeat(
            renewal: Lazy<RecordRenewal>,
            record: HeldRecord,
            everyMillis: Long,
        ): Future<*> {
            val beat = {
                try {
                    record.renewed(renew(renewal.value))
                } catch (lost: RecordLostException) {
                    record.lose(lost)
                    // A periodic task that throws runs no more.
                    throw lost
                } catch (_: MintidException) {
                    // store.unavailable and the like: the next beat tries again while the lease runs.
                }
            }
            return heartbeats.scheduleWithFixedDelay(beat, everyMillis, everyMillis, TimeUnit.MILLISECONDS)
        }

        private fun pooledRun() = DriverRun.pooled(dataSource, dialect, clock, metrics)

        /**
         * Runs the driver's steps from [first] on [run] until it asks to execute or is done:
         * queries on the database, pauses on [pause], scripts on the [fastPath]'s Redis. What
         * the fast path came to is counted whenever the driver hands back (done, execute, failed).
         */
        private fun advance(
            run: DriverRun,
            driver: LaneDriver,
            pause: (Long) -> Unit = clock::pause,
            first: () -> LaneStep,
        ): RecordStep =
            try {
                run.drive(first, { step -> hostStep(driver, step) }, { driver.push(it, now()) }, driver::resume, pause)
            } finally {
                fastPath?.count(driver.takeFastReport(), metrics)
            }

        private fun hostStep(
            driver: LaneDriver,
            step: LaneStep,
        ): HostStep<LaneStep, RecordStep> =
            when (step) {
                is LaneStep.Redis -> {
                    val fastPath = checkNotNull(fastPath) { "a Redis step without a fast path" }
                    HostStep.Hand(keep = false) { driver.pushRedis(fastPath.send(step.call), now()) }
                }
                is LaneStep.Record ->
                    when (val record = step.step) {
                        is RecordStep.Run -> HostStep.Run(record.query)
                        is RecordStep.Pause -> HostStep.Pause(record.millis.toLong())
                        is RecordStep.Execute, is RecordStep.Done -> HostStep.Done(record)
                    }
            }

        private companion object {
            /** Where a failure that could not be recorded is logged. */
            val LOGGER: System.Logger = System.getLogger("io.mintid.store")

            /**
             * The record renewals of every store: two daemon threads, one beat at a time each. A
             * cancelled beat (its operation ended, most often before the first) leaves the queue
             * at once instead of waiting there until its time.
             */
            val heartbeats: ScheduledExecutorService =
                ScheduledThreadPoolExecutor(2) { runnable ->
                    Thread(runnable, "mintid-record-renewal").apply { isDaemon = true }
                }.apply { removeOnCancelPolicy = true }
        }
    }

/** What the operation came to: its response (or what a Java caller returned instead) or its exception. */
internal class Ran private constructor(
    val returned: Any?,
    val thrown: Throwable?,
) {
    val response: StoredResponse? get() = returned as? StoredResponse

    fun outcome(): OperationOutcome {
        thrown?.let { error ->
            val failure = error as? OperationException ?: return OperationOutcome.Raised(error.message ?: error.toString())
            return OperationOutcome.Failed(error.message ?: error.toString(), failure.retryable, failure.response?.toFfi())
        }
        return when (returned) {
            is StoredResponse -> OperationOutcome.Succeeded(returned.toFfi())
            else -> OperationOutcome.NotAResponse(returned?.javaClass?.name ?: "null")
        }
    }

    companion object {
        fun of(operation: () -> Any?): Ran =
            try {
                Ran(operation(), null)
            } catch (error: Throwable) {
                Ran(null, error)
            }
    }
}

internal fun IdempotencyKey.toFfi() = FfiKey(kind, scope, id, text)
