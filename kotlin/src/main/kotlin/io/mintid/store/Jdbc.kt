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

// What the lease, segment and outbox stores share (their protocols are still the host's): a
// statement bound by parameter name, rows by column name, connection errors as
// store.unavailable.

/** A typed SQL NULL: JDBC needs the column's type even for a null. */
internal enum class SqlNull(
    val type: Int,
) {
    BYTES(Types.VARBINARY),
    TEXT(Types.VARCHAR),
}

/** One result row, by column name (lower case). */
internal class Row(
    private val values: Map<String, Any?>,
) {
    fun long(column: String): Long = (values[column] as? Number)?.toLong() ?: error("column $column is not a number: ${values[column]}")

    fun bytes(column: String): ByteArray? =
        when (val value = values[column]) {
            null -> null
            is ByteArray -> value
            is String -> value.toByteArray(Charsets.UTF_8)
            else -> error("column $column is not bytes: $value")
        }

    fun text(column: String): String? =
        when (val value = values[column]) {
            null -> null
            is ByteArray -> String(value, Charsets.UTF_8)
            else -> value.toString()
        }
}

/** Whether [error] means the database cannot be reached or the connection broke. */
internal fun isConnectionError(error: SQLException): Boolean =
    error is SQLNonTransientConnectionException ||
        error is SQLTransientConnectionException ||
        error is SQLRecoverableException ||
        error.sqlState?.startsWith("08") == true

internal fun unavailable(error: Throwable): StoreUnavailableException =
    StoreUnavailableException("the database is unavailable", DbErrorClass.CONNECTION_LOST.name.lowercase(), Problem.STORAGE_UNAVAILABLE, error)

/** Rethrows a connection failure as `store.unavailable`, any other error unchanged. */
internal inline fun <T> translated(action: () -> T): T =
    try {
        action()
    } catch (error: SQLException) {
        throw if (isConnectionError(error)) unavailable(error) else error
    }

/** Runs [action] on a connection of [dataSource] (autocommit), closed afterwards. */
internal inline fun <T> DataSource.withConnection(action: (Connection) -> T): T {
    val connection =
        try {
            this.connection
        } catch (error: SQLException) {
            // No connection at all: whatever the driver says, the database is unreachable.
            throw unavailable(error)
        }
    return connection.use { translated { action(it) } }
}

/**
 * Runs [action] in one transaction on a connection of this data source: committed when it
 * returns, rolled back when it throws (SQLite: the write lock is taken at `BEGIN` when the
 * connection is configured so, see [Dialect.SQLITE]).
 */
internal inline fun <T> DataSource.inTransaction(action: (Connection) -> T): T =
    withConnection { connection ->
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

private fun PreparedStatement.bind(
    query: Statement,
    values: Map<String, Any?>,
) {
    query.params.forEachIndexed { index, name ->
        require(values.containsKey(name)) { "no value for :$name of query ${query.name}" }
        when (val value = values[name]) {
            is Long -> setLong(index + 1, value)
            is Int -> setLong(index + 1, value.toLong())
            is ByteArray -> setBytes(index + 1, value)
            is String -> setString(index + 1, value)
            is SqlNull -> setNull(index + 1, value.type)
            else -> throw IllegalArgumentException("unsupported value for :$name: $value")
        }
    }
}

private fun ResultSet.rows(): List<Row> {
    val meta = metaData
    val result = mutableListOf<Row>()
    while (next()) {
        result += Row((1..meta.columnCount).associate { meta.getColumnLabel(it).lowercase() to getObject(it) })
    }
    return result
}

/** Runs [query] and returns its rows (`:one` and `:many`). */
internal fun Connection.rows(
    query: Statement,
    values: Map<String, Any?>,
): List<Row> =
    translated {
        prepareStatement(query.sql).use { statement ->
            statement.bind(query, values)
            if (statement.execute()) statement.resultSet.use { it.rows() } else emptyList()
        }
    }

/** Runs [query] and returns the affected-row count (`:execrows`). */
internal fun Connection.execRows(
    query: Statement,
    values: Map<String, Any?>,
): Long =
    translated {
        prepareStatement(query.sql).use { statement ->
            statement.bind(query, values)
            statement.executeLargeUpdate()
        }
    }
