package io.mintid.store

import io.mintid.coreStore
import uniffi.mintid_ffi.CleanupStep
import uniffi.mintid_ffi.StoreAnswer
import uniffi.mintid_ffi.StoreQuery
import java.sql.Connection
import java.sql.SQLException
import javax.sql.DataSource

/** What a core driver's step asks of its host, whatever the driver: [Done] carries its end. */
internal sealed interface HostStep<out S, out Y> {
    /** Run the query and push the answer. */
    data class Run(
        val query: StoreQuery,
    ) : HostStep<Nothing, Nothing>

    /** Sleep, then resume. */
    data class Pause(
        val millis: Long,
    ) : HostStep<Nothing, Nothing>

    /** Begin a transaction (`write`: the write lock at once). */
    data class Begin(
        val write: Boolean,
    ) : HostStep<Nothing, Nothing>

    /** Commit the transaction. */
    data object Commit : HostStep<Nothing, Nothing>

    /** Roll the transaction back. */
    data object Rollback : HostStep<Nothing, Nothing>

    /**
     * Work outside the database (a Redis script, a relay's send) whose result [next] pushes to
     * the driver: the connection goes back to the pool first, unless [keep] (the relay holds one
     * from send to send).
     */
    class Hand<out S>(
        val keep: Boolean,
        val next: () -> S,
    ) : HostStep<S, Nothing>

    /** The driver's end, or its hand-over to the caller. */
    data class Done<out Y>(
        val value: Y,
    ) : HostStep<Nothing, Y>
}

/**
 * The one loop of the JDBC host: runs a core driver's steps on connections from [connect],
 * each step executed ([JdbcExecutor]) and its answer pushed back, until the driver is done or
 * hands over. [pooled] connections are the run's own: given back during a pause or a hand-off
 * (unless a transaction is open) and at the end; else [connect] gives the caller's, left open.
 * Every loop, retry and error code is the driver's; its errors carry the JDBC exception behind
 * the answer last pushed as cause, and the database's errors are counted in [metrics].
 */
internal class DriverRun(
    dialect: Dialect,
    metrics: StoreMetrics,
    private val clock: StoreClock,
    private val pooled: Boolean,
    private val connect: () -> Connection,
) {
    private val executor = JdbcExecutor(dialect, metrics)
    private var connection: Connection? = null
    private var inTransaction = false

    /**
     * Drives from [first] until [view] says done: [push] takes each answer, [resume] follows a
     * pause slept by [pause] (both read the clock themselves).
     */
    fun <S, Y> drive(
        first: () -> S,
        view: (S) -> HostStep<S, Y>,
        push: (StoreAnswer) -> S,
        resume: () -> S = { error("this driver never pauses") },
        pause: (Long) -> Unit = clock::pause,
    ): Y {
        try {
            var step = core(first)
            while (true) {
                step =
                    when (val next = view(step)) {
                        is HostStep.Done -> return next.value
                        is HostStep.Pause -> {
                            release()
                            pause(next.millis)
                            core(resume)
                        }
                        is HostStep.Hand -> {
                            if (!next.keep) release()
                            core(next.next)
                        }
                        else -> {
                            val answer = answer(next)
                            core { push(answer) }
                        }
                    }
            }
        } finally {
            end()
        }
    }

    /** Runs the one [query] of a read and gives its answer to [read] (the core's reader). */
    fun <T> once(
        query: StoreQuery,
        read: (StoreAnswer) -> T,
    ): T =
        try {
            val answer = answer(HostStep.Run(query))
            core { read(answer) }
        } finally {
            end()
        }

    private fun <S> core(call: () -> S): S = coreStore({ executor.lastError }, call)

    private fun answer(step: HostStep<*, *>): StoreAnswer {
        val open =
            connection ?: try {
                connect().also { connection = it }
            } catch (error: SQLException) {
                return executor.notConnected(error)
            }
        return when (step) {
            is HostStep.Run -> executor.run(open, step.query)
            is HostStep.Begin -> executor.control(open) { it.autoCommit = false }.also { inTransaction = it is StoreAnswer.Affected }
            // A failed commit stays in the transaction: the driver rolls it back.
            HostStep.Commit -> executor.control(open) { it.commit() }.also { if (it is StoreAnswer.Affected) endTransaction(open) }
            HostStep.Rollback -> {
                executor.control(open) { it.rollback() }
                endTransaction(open)
                StoreAnswer.Affected(0uL)
            }
            else -> error("not a database step: $step")
        }
    }

    /** Back to autocommit after a transaction; a connection that cannot is closed. */
    private fun endTransaction(open: Connection) {
        inTransaction = false
        try {
            open.autoCommit = true
        } catch (_: SQLException) {
            end()
        }
    }

    /** Gives a pooled connection back between statements, unless a transaction is open. */
    private fun release() {
        if (!inTransaction) end()
    }

    private fun end() {
        if (pooled) close() else connection = null
    }

    private fun close() {
        val open = connection ?: return
        connection = null
        if (inTransaction) {
            inTransaction = false
            try {
                open.rollback()
                open.autoCommit = true
            } catch (_: SQLException) {
                // The connection broke: closing it is all that is left.
            }
        }
        try {
            open.close()
        } catch (_: SQLException) {
            // As above.
        }
    }

    companion object {
        /** A run on connections of [dataSource], each given back when not needed. */
        fun pooled(
            dataSource: DataSource,
            dialect: Dialect,
            clock: StoreClock,
            metrics: StoreMetrics,
        ) = DriverRun(dialect, metrics, clock, pooled = true) { dataSource.connection }

        /** A run on the caller's [connection] (its transaction is the caller's). */
        fun on(
            connection: Connection,
            dialect: Dialect,
            clock: StoreClock,
            metrics: StoreMetrics,
        ) = DriverRun(dialect, metrics, clock, pooled = false) { connection }
    }
}

/** What a record or outbox cleanup's step asks: a batch to delete, or the total deleted. */
internal fun cleanupStep(step: CleanupStep): HostStep<CleanupStep, Long> =
    when (step) {
        is CleanupStep.Run -> HostStep.Run(step.query)
        is CleanupStep.Done -> HostStep.Done(step.deleted.toLong())
    }
