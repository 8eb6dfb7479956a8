package io.mintid.store

import io.mintid.StoreUnavailableException
import java.sql.Connection
import java.sql.PreparedStatement
import java.sql.ResultSet
import java.sql.SQLException
import java.sql.SQLNonTransientConnectionException
import java.sql.SQLRecoverableException
import java.sql.SQLTransientConnectionException
import java.sql.Types
import javax.sql.DataSource

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
    StoreUnavailableException("the database is unavailable: ${error.message}", error)

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
    query: NamedQuery,
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
    query: NamedQuery,
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
    query: NamedQuery,
    values: Map<String, Any?>,
): Long =
    translated {
        prepareStatement(query.sql).use { statement ->
            statement.bind(query, values)
            statement.executeLargeUpdate()
        }
    }
