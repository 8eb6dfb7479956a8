package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyHttp
import io.mintid.IdempotencyKey
import io.mintid.MintidException
import io.mintid.Outcome
import io.mintid.Record
import io.mintid.RecordLostException
import io.mintid.RecordPolicy
import io.mintid.RecordStatus
import io.mintid.requireNonNegative
import io.mintid.storeException
import java.sql.Connection
import java.util.concurrent.Future
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit
import javax.sql.DataSource

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
    private val wire: WireDriver,
    key: Wire.Key,
    private val held: Wire.Held,
) : LeaseResult {
    override val decision: String get() = held.decision

    private val renewal by lazy { store.renewal(key, held) }

    /** The fencing token of this claim. */
    val token: Long get() = held.token

    /** When the lease ends (Unix ms), as last renewed. */
    @Volatile
    var leaseDeadlineMillis: Long = held.leaseDeadlineMillis
        private set

    /** How often the core suggests to [renew] while the operation runs (ms). */
    val renewEveryMillis: Long? get() = held.renewEveryMillis

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
        store.finishHeld(wire, Wire.Finish.Succeeded(response))
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
        store.finishHeld(wire, Wire.Finish.Failed(retryable, error, response))
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
        init {
            policy.check()
        }

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
        ): RunResult = driver(Wire.Way.RUN_ONCE, key, request).use { wire -> runOnce(wire, key, operation) }

        private fun runOnce(
            wire: WireDriver,
            key: IdempotencyKey,
            operation: Operation,
        ): RunResult {
            val step = claim(Wire.Way.RUN_ONCE) { advance(pooledRun(), wire, start()) }
            val held = (step as? Wire.Step.Yield)?.value as? Wire.Held ?: return result(step, null)
            val record = HeldRecord(held.token, held.leaseDeadlineMillis)
            val heartbeat = held.renewEveryMillis?.let { Heartbeat(Wire.heartbeatSpec(dialect, policy, key.wire(), held.claim(), it), record) }
            val ran =
                try {
                    operation(Wire.Way.RUN_ONCE) { operation.run(record) }
                } finally {
                    heartbeat?.stop()
                }
            return finish(Wire.Way.RUN_ONCE, wire, ran, ::pooledRun)
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
        ): RunResult = driver(Wire.Way.SAME_TRANSACTION, key, request).use { wire -> inTransaction(wire, connection, operation) }

        private fun inTransaction(
            wire: WireDriver,
            connection: Connection,
            operation: TransactionalOperation,
        ): RunResult {
            val run = { DriverRun.on(connection, dialect, clock, metrics, fastPath) }
            val step = claim(Wire.Way.SAME_TRANSACTION) { advance(run(), wire, start()) }
            if (step !is Wire.Step.Yield) return result(step, null)
            return finish(Wire.Way.SAME_TRANSACTION, wire, operation(Wire.Way.SAME_TRANSACTION) { operation.run(connection) }, run)
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
            val wire = driver(Wire.Way.LEASE, key, request)
            val step = claim(Wire.Way.LEASE) { advance(pooledRun(), wire, start()) }
            val held = (step as? Wire.Step.Yield)?.value as? Wire.Held ?: return wire.use { result(step, null) as NotExecuted }
            return RecordLease(this, wire, key.wire(), held)
        }

        /**
         * The stored record of [key], or null.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`, and the other
         *   [io.mintid.StoreException]s of a query.
         */
        fun load(key: IdempotencyKey): StoredRecord? {
            val done = pooledRun().once(Wire.Kind.RECORD_LOAD, Wire.recordLoadSpec(dialect, key.wire())) as Wire.Step.Done
            val loaded = done.value as Wire.LoadedRecord? ?: return null
            val record =
                Record(
                    RecordStatus.valueOf(loaded.status.uppercase()),
                    Fingerprint.ofDigest(loaded.fingerprint),
                    loaded.token,
                    loaded.leaseDeadlineMillis,
                    loaded.createdMillis,
                    loaded.expiresMillis,
                )
            return StoredRecord(record, loaded.response, loaded.error)
        }

        /**
         * Deletes expired records (a pending one only once its lease passed too), [batchSize] per
         * statement until a batch comes back short; returns the total deleted.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        @JvmOverloads
        fun cleanup(batchSize: Int = 1000): Long {
            val spec = Wire.spec(Wire.Kind.RECORD_CLEANUP, dialect).u64(requireNonNegative(batchSize.toLong(), "the batch size").toLong()).done()
            return (pooledRun().once(Wire.Kind.RECORD_CLEANUP, spec) as Wire.Step.Done).value as Long
        }

        /** The renewal of [held]'s lease: one driver, started again for each renewal. */
        internal fun renewal(
            key: Wire.Key,
            held: Wire.Held,
        ) = WireDriver(Wire.Kind.RECORD_RENEWAL, Wire.renewalSpec(dialect, policy, key, held.claim()))

        /** One renewal of a held lease, on a connection of its own: the new deadline. */
        internal fun renew(renewal: WireDriver): Long =
            try {
                (pooledRun().drive(renewal, start()) as Wire.Step.Done).value as Long
            } catch (lost: RecordLostException) {
                metrics.recordLost()
                throw lost
            }

        /** A lease's completion or failure: the driver's remaining steps. */
        internal fun finishHeld(
            wire: WireDriver,
            outcome: Wire.Finish,
        ) {
            val step = recording { pause -> complete(Wire.Way.LEASE, outcome) { advance(pooledRun(), wire, finishing(outcome), pause) } }
            check(step is Wire.Step.Done) { "the driver stopped at $step" }
        }

        private fun now(): Long = clock.nowMillis()

        private fun start(): ByteArray = Wire.input(Wire.Input.START, now()).done()

        private fun finishing(outcome: Wire.Finish): ByteArray = Wire.input(Wire.Input.FINISH, now()).finish(outcome).done()

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
            way: Wire.Way,
            key: IdempotencyKey,
            request: StoreRequest,
        ): WireDriver {
            // The key's creation time, if known.
            val created = request.keyCreatedMillis?.let { requireNonNegative(it, "keyCreatedMillis").toLong() }
            val spec = Wire.recordSpec(dialect, policy, way, fastPath != null, fastPath?.ttl, key.wire(), request.fingerprint.digest(), created)
            return WireDriver(Wire.Kind.RECORD, spec)
        }

        /** Pushes what the operation came to and reads how the protocol ended. */
        private fun finish(
            way: Wire.Way,
            wire: WireDriver,
            ran: Ran,
            run: () -> DriverRun,
        ): RunResult {
            val outcome = ran.outcome()
            return result(recording { pause -> complete(way, outcome) { advance(run(), wire, finishing(outcome), pause) } }, ran)
        }

        /** The result a record driver's end ([step], `done`) says, the operation having come to [ran]. */
        private fun result(
            step: Wire.Step,
            ran: Ran?,
        ): RunResult =
            when (val end = ((step as Wire.Step.Done).value as Wire.RecordEnd).end) {
                Wire.RecordEnd.End.Executed -> Executed(ran!!.response!!)
                is Wire.RecordEnd.End.OperationFailed -> throw ran!!.thrown!!.unchecked()
                is Wire.RecordEnd.End.OperationFailedUnrecorded -> throw unrecorded(ran!!, end)
                is Wire.RecordEnd.End.Replay -> Replayed(if (end.succeeded) Outcome.SUCCEEDED else Outcome.FAILED, end.response, end.error)
                is Wire.RecordEnd.End.InProgress -> InProgress(end.retryAfterMillis, IdempotencyHttp.retryAfterSecs(end.retryAfterMillis))
                Wire.RecordEnd.End.FingerprintMismatch -> FingerprintMismatch()
                Wire.RecordEnd.End.KeyTooOld -> KeyTooOld()
            }

        /**
         * The operation's own error, its failure not recorded (the core's decision, docs/spec.md
         * "Which error the caller sees"): the store error [finished] names goes with it as a
         * suppressed exception and to the log (warning, with its code).
         */
        private fun unrecorded(
            ran: Ran,
            finished: Wire.RecordEnd.End.OperationFailedUnrecorded,
        ): Throwable {
            val storeError = storeException(finished.code, finished.message, null, null, null)
            LOGGER.log(System.Logger.Level.WARNING, "mintid: the operation's failure was not recorded (${finished.code}): ${finished.message}")
            return ran.thrown!!.unchecked().apply { addSuppressed(storeError) }
        }

        // The metrics hook: the driver has decided; these only time, trace and name what it did.

        /** Runs the claim [action] of [way] in its span and reports its decision and time to [metrics]. */
        private inline fun claim(
            way: Wire.Way,
            action: () -> Wire.Step,
        ): Wire.Step {
            val started = System.nanoTime()
            return metrics.traced(Spans.CLAIM, wayName(way), ::decisionOf, action).also { step ->
                if (metrics === StoreMetrics.NONE) return@also
                metrics.claimed(wayName(way), decisionOf(step), System.nanoTime() - started)
            }
        }

        /** Runs the application's [operation] of [way] in its span: what it came to. */
        private inline fun operation(
            way: Wire.Way,
            crossinline operation: () -> Any?,
        ): Ran {
            val span = metrics.startSpan(Spans.OPERATION, wayName(way))
            return Ran.of { operation() }.also { span.end(null, it.thrown != null) }
        }

        /** Runs the completion [action] of [way] storing [outcome] in its span and reports its time and response size. */
        private inline fun complete(
            way: Wire.Way,
            outcome: Wire.Finish,
            action: () -> Wire.Step,
        ): Wire.Step {
            val started = System.nanoTime()
            return metrics.traced(Spans.COMPLETE, wayName(way), ::decisionOf, action).also {
                if (metrics === StoreMetrics.NONE) return@also
                val response =
                    when (outcome) {
                        is Wire.Finish.Succeeded -> outcome.response
                        is Wire.Finish.Failed -> outcome.response
                        else -> null
                    }
                metrics.completed(wayName(way), System.nanoTime() - started, response?.bodyBytes()?.size)
            }
        }

        /** The decision a claim or completion [step] names, by the core's name (`execute` for a claim to run). */
        private fun decisionOf(step: Wire.Step): String =
            when (step) {
                is Wire.Step.Yield -> (step.value as Wire.Held).decision
                else -> ((step as Wire.Step.Done).value as Wire.RecordEnd).decision
            }

        private fun pooledRun() = DriverRun.pooled(dataSource, dialect, clock, metrics, fastPath)

        /**
         * Pushes [input] to the record driver [wire] and runs its steps on [run] until it asks to
         * execute or is done, pauses slept by [pause]. What the fast path came to is counted
         * whenever the driver hands back (done, execute, failed).
         */
        private fun advance(
            run: DriverRun,
            wire: WireDriver,
            input: ByteArray,
            pause: (Long) -> Unit = clock::pause,
        ): Wire.Step =
            try {
                run.drive(wire, input, pause = pause)
            } finally {
                fastPath?.count(wire.call(Wire.Input.REPORT, now()), metrics)
            }

        /**
         * The heartbeat of a [runOnce] claim (`docs/spec.md`, "The heartbeat"): the core's
         * heartbeat driver (its schedule, retries and stop rule), whose pauses wait on the shared
         * scheduler and whose renewals run there on a connection of their own, until [stop]
         * (the operation returned) or the driver ends; a lost claim marks [record] lost.
         */
        private inner class Heartbeat(
            spec: ByteArray,
            private val record: HeldRecord,
        ) {
            private val wire = WireDriver(Wire.Kind.HEARTBEAT, spec)
            private var next: Future<*>? = null
            private var beating = false
            private var stopped = false
            private var ended = false

            init {
                step(wire.call(Wire.Input.START, now()))
            }

            /** The operation returned: ends the driver now, or after a renewal in flight. */
            @Synchronized
            fun stop() {
                stopped = true
                next?.cancel(false)
                if (!beating && !ended) step(wire.call(Wire.Input.STOP, now()))
            }

            /** Follows [step]: takes the deadline a pause carries and waits it out, or ends. */
            @Synchronized
            private fun step(step: Wire.Step) {
                if (ended) return
                val pause = (step as? Wire.Step.Yield)?.value as? Wire.Beat
                pause?.let { record.renewed(it.leaseDeadlineMillis) }
                when {
                    pause != null && !stopped -> next = heartbeats.schedule(::beat, pause.millis, TimeUnit.MILLISECONDS)
                    pause != null -> step(wire.call(Wire.Input.STOP, now()))
                    else -> {
                        ended = true
                        (step as? Wire.Step.Done)?.let { record.renewed(it.value as Long) }
                        wire.close()
                    }
                }
            }

            private fun beat() {
                synchronized(this) {
                    if (stopped) return
                    beating = true
                }
                val step =
                    try {
                        pooledRun().drive(wire, Wire.input(Wire.Input.RESUME, now()).done())
                    } catch (error: MintidException) {
                        if (error is RecordLostException) {
                            record.lose(error)
                            metrics.recordLost()
                        }
                        null
                    }
                synchronized(this) {
                    beating = false
                    if (step == null) ended = true.also { wire.close() } else step(step)
                }
            }
        }

        private companion object {
            /** Where a failure that could not be recorded is logged. */
            val LOGGER: System.Logger = System.getLogger("io.mintid.store")

            /**
             * The heartbeats of every store: two daemon threads. A cancelled pause (its operation
             * ended, most often before the first renewal) leaves the queue at once.
             */
            val heartbeats: ScheduledExecutorService =
                ScheduledThreadPoolExecutor(2) { runnable ->
                    Thread(runnable, "mintid-record-heartbeat").apply { isDaemon = true }
                }.apply { removeOnCancelPolicy = true }
        }
    }

/** What the operation came to: its response (or what a Java caller returned instead) or its exception. */
internal class Ran private constructor(
    val returned: Any?,
    val thrown: Throwable?,
) {
    val response: StoredResponse? get() = returned as? StoredResponse

    /** The outcome pushed to the record driver; an exception's stored text is the core's. */
    fun outcome(): Wire.Finish {
        thrown?.let { error ->
            val failure = error as? OperationException ?: return Wire.Finish.Raised(error.javaClass.simpleName, error.message.orEmpty())
            return Wire.Finish.Failed(failure.retryable, failure.message.orEmpty(), failure.response)
        }
        return when (returned) {
            is StoredResponse -> Wire.Finish.Succeeded(returned)
            else -> Wire.Finish.NotAResponse(returned?.javaClass?.name ?: "null")
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

/** The key's three parts, as a spec carries them. */
internal fun IdempotencyKey.wire() = Wire.Key(kind, scope, id)

/** The claim a renewal or heartbeat renews. */
internal fun Wire.Held.claim() = Wire.Claim(token, createdMillis, leaseDeadlineMillis)
