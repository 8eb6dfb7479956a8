package io.mintid.store

import io.mintid.Problem
import io.mintid.StoreUnavailableException
import org.sqlite.SQLiteException
import uniffi.mintid_ffi.DbErrorClass
import uniffi.mintid_ffi.Manifest
import uniffi.mintid_ffi.ParamType
import uniffi.mintid_ffi.Placeholder
import uniffi.mintid_ffi.ResultKind
import uniffi.mintid_ffi.Statement
import uniffi.mintid_ffi.classifyDbError
import uniffi.mintid_ffi.storeStatements
import java.sql.Connection
import java.sql.PreparedStatement
import java.sql.ResultSet
import java.sql.SQLException
import java.sql.SQLNonTransientConnectionException
import java.sql.SQLRecoverableException
import java.sql.SQLTransientConnectionException
import java.sql.Types
import javax.sql.DataSource

/**
 * The named queries of one dialect as the core renders them for JDBC (`?` placeholders, the
 * parameter names in binding order), looked up by name.
 */
internal class Statements private constructor(
    dialect: Dialect,
) {
    /** The manifest every driver of this dialect is made with. */
    val manifest = Manifest(dialect.ffi, Placeholder.QUESTION)

    private val byName = storeStatements(manifest).associateBy { it.name }

    operator fun get(name: String): Statement = byName[name] ?: error("the core has no named query $name")

    companion object {
        private val all = Dialect.entries.associateWith { lazy { Statements(it) } }

        /** The statements of [dialect], rendered once per process (no lock once rendered). */
        fun of(dialect: Dialect): Statements = all.getValue(dialect).value
    }
}

/**
 * The JDBC executor of the core's store drivers: runs a named query as a prepared statement
 * (values bound by position) and answers with its rows (columns in `SELECT` order), its
 * affected-row count, or the classified database error (counted in [metrics] by its class).
 * [lastError] keeps the driver's exception behind the last answer when it failed, for the cause
 * of the typed error that follows.
 */
internal class JdbcExecutor(
    private val dialect: Dialect,
    private val metrics: StoreMetrics,
) {
    private val statements = Statements.of(dialect)

    /** The driver's exception behind the last answer when it was [Answer.Failed], else null. */
    var lastError: Throwable? = null
        private set

    /** Runs the query [name] with [params] (a [Long], [String], [ByteArray] or null each) on [connection]. */
    fun run(
        connection: Connection,
        name: String,
        params: List<Any?>,
    ): Answer {
        val statement = statements[name]
        lastError = null
        return try {
            connection.prepareStatement(statement.sql).use { prepared ->
                params.forEachIndexed { index, value -> prepared.bind(index + 1, value, statement.paramTypes[index]) }
                when (statement.kind) {
                    ResultKind.ONE, ResultKind.MANY ->
                        Answer.Rows(if (prepared.execute()) prepared.resultSet.use { it.values() } else emptyList())
                    ResultKind.EXEC_ROWS, ResultKind.EXEC -> Answer.Affected(prepared.executeLargeUpdate())
                }
            }
        } catch (error: SQLException) {
            failed(classify(dialect, error), error)
        } catch (error: RuntimeException) {
            // The host's own failure while it ran the step: an answer like any other.
            failed(DbErrorClass.OTHER, error)
        }
    }

    /** Runs [action] on [connection] (a transaction step, a migration's statement): `Affected(0)`, or the classified error. */
    fun control(
        connection: Connection,
        action: (Connection) -> Unit,
    ): Answer =
        try {
            lastError = null
            action(connection)
            Answer.Affected(0)
        } catch (error: SQLException) {
            failed(classify(dialect, error), error)
        }

    /** The answer for a connection that could not be had at all. */
    fun notConnected(error: Exception): Answer = failed(DbErrorClass.CONNECTION_LOST, error)

    private fun failed(
        dbClass: DbErrorClass,
        error: Exception,
    ): Answer {
        lastError = error
        metrics.storeError(dbClass.name.lowercase())
        return Answer.Failed(dbClass, error.message ?: error.toString())
    }
}

private fun PreparedStatement.bind(
    index: Int,
    value: Any?,
    type: ParamType,
) = when (value) {
    null ->
        setNull(
            index,
            when (type) {
                ParamType.INT -> Types.BIGINT
                ParamType.TEXT -> Types.VARCHAR
                ParamType.BYTES -> Types.VARBINARY
            },
        )
    is Long -> setLong(index, value)
    is String -> setString(index, value)
    is ByteArray -> setBytes(index, value)
    else -> error("not a wire value: ${value.javaClass.name}")
}

private fun ResultSet.values(): List<List<Any?>> {
    val columns = metaData.columnCount
    val rows = mutableListOf<List<Any?>>()
    while (next()) rows += (1..columns).map { wireValue(getObject(it)) }
    return rows
}

private fun wireValue(value: Any?): Any? =
    when (value) {
        null, is ByteArray -> value
        is Number -> value.toLong()
        is Boolean -> if (value) 1L else 0L
        else -> value.toString()
    }

/**
 * The class of a database [error] on [dialect], by the core's table: the vendor code (a
 * MySQL/MariaDB error number; SQLite's extended result code, or the primary one JDBC gives)
 * and the SQLSTATE. JDBC's connection exception types say connection lost on their own.
 */
internal fun classify(
    dialect: Dialect,
    error: SQLException,
): DbErrorClass {
    if (error is SQLNonTransientConnectionException || error is SQLTransientConnectionException || error is SQLRecoverableException) {
        return DbErrorClass.CONNECTION_LOST
    }
    val code =
        when (dialect) {
            Dialect.SQLITE -> ((error as? SQLiteException)?.resultCode?.code ?: error.errorCode).toString()
            Dialect.MYSQL -> error.errorCode.toString()
            Dialect.POSTGRES -> null
        }
    return classifyDbError(dialect.ffi, code, error.sqlState, error.message)
}

internal fun unavailable(error: Throwable): StoreUnavailableException =
    StoreUnavailableException("the database is unavailable", DbErrorClass.CONNECTION_LOST.name.lowercase(), Problem.STORAGE_UNAVAILABLE, error)

/** Runs [action] on a connection of this data source of [dialect] (autocommit), closed afterwards; a lost connection (the core's class) is thrown as `store.unavailable`. */
internal inline fun <T> DataSource.withConnection(
    dialect: Dialect,
    action: (Connection) -> T,
): T {
    val connection =
        try {
            this.connection
        } catch (error: SQLException) {
            // No connection at all: whatever the driver says, the database is unreachable.
            throw unavailable(error)
        }
    return connection.use {
        try {
            action(it)
        } catch (error: SQLException) {
            throw if (classify(dialect, error) == DbErrorClass.CONNECTION_LOST) unavailable(error) else error
        }
    }
}

/**
 * Runs [action] in one transaction on a connection of this data source: committed when it
 * returns, rolled back when it throws (SQLite: the write lock is taken at `BEGIN` when the
 * connection is configured so, see [Dialect.SQLITE]).
 */
internal inline fun <T> DataSource.inTransaction(
    dialect: Dialect,
    action: (Connection) -> T,
): T =
    withConnection(dialect) { connection ->
        connection.autoCommit = false
        val result =
            try {
                action(connection).also { connection.commit() }
            } catch (error: Throwable) {
                try {
                    connection.rollback()
                    connection.autoCommit = true
                } catch (rollbackError: SQLException) {
                    error.addSuppressed(rollbackError)
                }
                throw error
            }
        connection.autoCommit = true
        result
    }

/**
 * The rows of the named query [name] with [params] (in binding order) on a connection of
 * [dataSource], outside any driver (a read for operators and tests): the database's failure is
 * thrown, as `store.unavailable` when the core's table calls it a lost connection.
 */
internal fun DataSource.query(
    dialect: Dialect,
    name: String,
    vararg params: Any?,
): List<List<Any?>> {
    val executor = JdbcExecutor(dialect, StoreMetrics.NONE)
    val answer = withConnection(dialect) { executor.run(it, name, params.asList()) }
    if (answer is Answer.Rows) return answer.rows
    val error = checkNotNull(executor.lastError) { "the query $name answered $answer" }
    throw if ((answer as Answer.Failed).dbClass == DbErrorClass.CONNECTION_LOST) unavailable(error) else error
}
