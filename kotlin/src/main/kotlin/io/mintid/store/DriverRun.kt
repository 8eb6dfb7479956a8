package io.mintid.store

import io.mintid.coreStore
import uniffi.mintid_ffi.StoreAnswer
import uniffi.mintid_ffi.StoreQuery
import java.sql.Connection
import java.sql.SQLException
import javax.sql.DataSource

/** What a core driver's step asks of its host, whatever the driver: [Done] carries its end. */
internal sealed interface HostStep<out Y> {
    /** Run the query and push the answer. */
    data class Run(
        val query: StoreQuery,
    ) : HostStep<Nothing>

    /** Sleep, then resume. */
    data class Pause(
        val millis: Long,
    ) : HostStep<Nothing>

    /** Begin a transaction (`write`: the write lock at once). */
    data class Begin(
        val write: Boolean,
    ) : HostStep<Nothing>

    /** Commit the transaction. */
    data object Commit : HostStep<Nothing>

    /** Roll the transaction back. */
    data object Rollback : HostStep<Nothing>

    /** The driver's end. */
    data class Done<Y>(
        val value: Y,
    ) : HostStep<Y>
}

/**
 * Runs one core driver on a connection of [dataSource]: each step the driver asks for is
 * executed ([JdbcExecutor]) and its answer pushed back, pauses sleep on [clock] (the connection
 * goes back to the pool first unless a transaction is open), until the driver is done. Every
 * loop, retry and error code is the driver's; its errors carry the JDBC exception as cause, and
 * the database's errors are counted in [metrics].
 */
internal class DriverRun(
    private val dataSource: DataSource,
    dialect: Dialect,
    private val clock: StoreClock,
    metrics: StoreMetrics,
) {
    private val executor = JdbcExecutor(dialect, metrics)
    private var connection: Connection? = null
    private var inTransaction = false

    /**
     * Drives from [first] until [view] says done: [push] takes each answer, [resume] follows a
     * pause (both read the clock themselves).
     */
    fun <S, Y> drive(
        first: () -> S,
        view: (S) -> HostStep<Y>,
        push: (StoreAnswer) -> S,
        resume: () -> S,
    ): Y {
        try {
            var step = core(first)
            while (true) {
                step =
                    when (val next = view(step)) {
                        is HostStep.Done -> return next.value
                        is HostStep.Pause -> {
                            if (!inTransaction) close()
                            clock.pause(next.millis)
                            core(resume)
                        }
                        else -> {
                            val answer = answer(next)
                            core { push(answer) }
                        }
                    }
            }
        } finally {
            close()
        }
    }

    private fun <S> core(call: () -> S): S = coreStore({ executor.lastError }, call)

    private fun answer(step: HostStep<*>): StoreAnswer {
        val open =
            connection ?: try {
                dataSource.connection.also { connection = it }
            } catch (error: SQLException) {
                return executor.notConnected(error)
            }
        return when (step) {
            is HostStep.Run -> executor.run(open, step.query)
            is HostStep.Begin -> executor.control(open) { it.autoCommit = false }.also { inTransaction = it is StoreAnswer.Affected }
            // A failed commit stays in the transaction: the driver rolls it back.
            HostStep.Commit -> executor.control(open) { it.commit() }.also { if (it is StoreAnswer.Affected) end(open) }
            HostStep.Rollback -> {
                executor.control(open) { it.rollback() }
                end(open)
                StoreAnswer.Affected(0uL)
            }
            is HostStep.Pause, is HostStep.Done -> error("not a database step: $step")
        }
    }

    /** Back to autocommit after a transaction; a connection that cannot is closed. */
    private fun end(open: Connection) {
        inTransaction = false
        try {
            open.autoCommit = true
        } catch (_: SQLException) {
            close()
        }
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
}
