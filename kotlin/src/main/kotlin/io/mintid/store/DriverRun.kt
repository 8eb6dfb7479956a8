package io.mintid.store

import uniffi.mintid_ffi.DbErrorClass
import java.sql.Connection
import java.sql.SQLException
import javax.sql.DataSource

/**
 * The one loop of the JDBC host: runs a wire driver's steps on connections from [connect], each
 * query executed ([JdbcExecutor]) and its answer pushed back, each pause slept, each Redis script
 * sent to [fastPath], until the driver yields or is done. [pooled] connections are the run's
 * own: given back at a pause or a Redis call (unless a transaction is open) and at the end of a
 * [drive] (unless it holds); else [connect] gives the caller's, left open. Every loop, retry
 * and error code is the driver's: a `FAIL` step is thrown as the core's typed error, the JDBC
 * exception behind the answer last pushed as its cause, and the database's errors are counted
 * in [metrics].
 */
internal class DriverRun(
    dialect: Dialect,
    metrics: StoreMetrics,
    private val clock: StoreClock,
    private val pooled: Boolean,
    private val fastPath: RedisFastPath? = null,
    private val connect: () -> Connection,
) : AutoCloseable {
    private val executor = JdbcExecutor(dialect, metrics)
    private var connection: Connection? = null
    private var inTransaction = false

    /**
     * Pushes [input] to [wire] and runs the steps that follow until a yield or done (returned),
     * pauses slept by [pause].
     * The connection is given back at the end unless [hold] (the caller's next drive uses it;
     * [close] gives it back) and the drive returned.
     */
    fun drive(
        wire: WireDriver,
        input: ByteArray,
        hold: Boolean = false,
        pause: (Long) -> Unit = clock::pause,
    ): Wire.Step {
        var yielded = false
        try {
            var step = wire.call(input)
            while (true) {
                step =
                    when (step) {
                        is Wire.Step.Yield, is Wire.Step.Done -> return step.also { yielded = true }
                        is Wire.Step.Fail -> throw step.toMintid(executor.lastError)
                        is Wire.Step.Pause -> {
                            release()
                            pause(step.millis)
                            wire.call(Wire.Input.RESUME, now())
                        }
                        is Wire.Step.Redis -> {
                            release()
                            val answer = checkNotNull(fastPath) { "a Redis step without a fast path" }.send(step)
                            wire.call(Wire.input(Wire.Input.REDIS, now()).redis(answer).done())
                        }
                        else -> wire.call(answer(step).input(now()))
                    }
            }
        } finally {
            if (!hold || !yielded) end()
        }
    }

    /** A new driver of [kind] made from [spec], run from its start to its end (returned). */
    fun once(
        kind: Wire.Kind,
        spec: ByteArray,
    ): Wire.Step = WireDriver(kind, spec).use { drive(it, Wire.input(Wire.Input.START, now()).done()) }

    private fun now() = clock.nowMillis()

    /** Executes [sql] as it is (a migration's statement; rows ignored): `Affected(0)`, or the failure. */
    fun execute(sql: String): Answer = connected { open -> executor.control(open) { it.createStatement().use { statement -> statement.execute(sql) } } }

    /** [action] on the run's connection, opened first if need be. */
    private inline fun connected(action: (Connection) -> Answer): Answer {
        val open =
            connection ?: try {
                connect().also { connection = it }
            } catch (error: Exception) {
                return executor.notConnected(error)
            }
        return action(open)
    }

    /** Executes a database step: a query, or a transaction's begin, commit or rollback. */
    private fun answer(step: Wire.Step): Answer = connected { open -> database(open, step) }

    private fun database(
        open: Connection,
        step: Wire.Step,
    ): Answer =
        when (step) {
            is Wire.Step.Run -> executor.run(open, step.name, step.params)
            is Wire.Step.Begin -> executor.control(open) { it.autoCommit = false }.also { inTransaction = it is Answer.Affected }
            // A failed commit stays in the transaction: the driver rolls it back.
            Wire.Step.Commit -> executor.control(open) { it.commit() }.also { if (it is Answer.Affected) endTransaction(open) }
            Wire.Step.Rollback -> {
                executor.control(open) { it.rollback() }
                endTransaction(open)
                Answer.Affected(0)
            }
            else -> error("not a database step: $step")
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

    private fun end() = close()

    /** Gives the connection back (a transaction still open is rolled back first). */
    override fun close() {
        val open = connection ?: return
        connection = null
        if (!pooled) return
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
            fastPath: RedisFastPath? = null,
        ) = DriverRun(dialect, metrics, clock, pooled = true, fastPath) { dataSource.connection }

        /** A run on the caller's [connection] (its transaction is the caller's). */
        fun on(
            connection: Connection,
            dialect: Dialect,
            clock: StoreClock,
            metrics: StoreMetrics,
            fastPath: RedisFastPath? = null,
        ) = DriverRun(dialect, metrics, clock, pooled = false, fastPath) { connection }
    }
}

/** What the database said to a step, pushed to the driver as the wire's input ([input]). */
internal sealed interface Answer {
    /** The rows of a query, columns in `SELECT` order (values as [Wire.Writer.value] takes them). */
    class Rows(
        val rows: List<List<Any?>>,
    ) : Answer

    /** The affected-row count (0 for a transaction step). */
    class Affected(
        val count: Long,
    ) : Answer

    /** The database's error, classified by the core's table. */
    class Failed(
        val dbClass: DbErrorClass,
        val message: String,
    ) : Answer

    /** This answer at [nowMillis], packed. */
    fun input(nowMillis: Long): ByteArray =
        when (this) {
            is Rows -> Wire.input(Wire.Input.ROWS, nowMillis).rows(rows)
            is Affected -> Wire.input(Wire.Input.AFFECTED, nowMillis).u64(count)
            is Failed -> Wire.input(Wire.Input.FAILED, nowMillis).u8(wireClass(dbClass)).text(message)
        }.done()
}

/** The wire's number of a database error class. */
private fun wireClass(dbClass: DbErrorClass): Int =
    when (dbClass) {
        DbErrorClass.UNIQUE_VIOLATION -> 0
        DbErrorClass.SERIALIZATION -> 1
        DbErrorClass.CONNECTION_LOST -> 2
        DbErrorClass.CONSTRAINT -> 3
        DbErrorClass.OTHER -> 4
        DbErrorClass.SCHEMA_MISSING -> 5
    }
