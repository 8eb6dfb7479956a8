package io.mintid.store

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.sqlite.SQLiteConfig
import uniffi.mintid_ffi.DbErrorClass
import java.sql.Connection
import java.sql.SQLException
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

// The executor's classification of real driver errors on each database: what the core's driver
// decides from (a duplicate claim, a retry after a deadlock or a lost connection, a failure).
class ErrorClassTest {
    private fun classOf(
        dialect: Dialect,
        action: () -> Unit,
    ): DbErrorClass =
        try {
            action()
            error("no error")
        } catch (error: SQLException) {
            classify(dialect, error)
        }

    private fun Connection.exec(sql: String) = createStatement().use { it.execute(sql) }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `unique, constraint and other errors`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            db.open().connection.use { c ->
                c.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT CHECK (v > 0), s VARCHAR(3) NOT NULL)")
                c.exec("INSERT INTO t (id, v, s) VALUES (1, 1, 'a')")
                assertEquals(DbErrorClass.UNIQUE_VIOLATION, classOf(dialect) { c.exec("INSERT INTO t (id, v, s) VALUES (1, 1, 'b')") })
                assertEquals(DbErrorClass.CONSTRAINT, classOf(dialect) { c.exec("INSERT INTO t (id, v, s) VALUES (2, 0, 'b')") })
                assertEquals(DbErrorClass.CONSTRAINT, classOf(dialect) { c.exec("INSERT INTO t (id, v, s) VALUES (3, 1, NULL)") })
                if (dialect != Dialect.SQLITE) {
                    // SQLite keeps any length.
                    assertEquals(DbErrorClass.CONSTRAINT, classOf(dialect) { c.exec("INSERT INTO t (id, v, s) VALUES (4, 1, 'abcd')") })
                }
                assertEquals(DbErrorClass.SCHEMA_MISSING, classOf(dialect) { c.exec("SELECT * FROM missing_table") })
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a server that is not there and a killed session are connection_lost`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            assertEquals(DbErrorClass.CONNECTION_LOST, classOf(dialect) { db.unavailable().connection.close() })
            if (dialect != Dialect.SQLITE) {
                val pool = db.open()
                pool.connection.use { c ->
                    db.killConnections()
                    assertEquals(DbErrorClass.CONNECTION_LOST, classOf(dialect) { c.exec("SELECT 1") })
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a deadlock or a busy database is serialization`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val pool = db.open()
            pool.connection.use { it.exec("CREATE TABLE t (id INT PRIMARY KEY, v INT)") }
            pool.connection.use { it.exec("INSERT INTO t (id, v) VALUES (1, 0), (2, 0)") }
            if (dialect == Dialect.SQLITE) {
                sqliteBusy(db, pool)
            } else {
                deadlock(dialect, pool)
            }
        }
    }

    /** A write while another connection holds the write lock, without a busy timeout. */
    private fun sqliteBusy(
        db: FreshDatabase,
        pool: WorkerDataSource,
    ) {
        pool.connection.use { holder ->
            holder.exec("BEGIN IMMEDIATE")
            val config = SQLiteConfig()
            config.setBusyTimeout(0)
            config.createConnection(db.url).use { other ->
                assertEquals(DbErrorClass.SERIALIZATION, classOf(Dialect.SQLITE) { other.exec("UPDATE t SET v = 1 WHERE id = 1") })
            }
            holder.exec("ROLLBACK")
        }
    }

    /** Two transactions that each lock a row and then want the other's. */
    private fun deadlock(
        dialect: Dialect,
        pool: WorkerDataSource,
    ) {
        val first = pool.connection
        val second = pool.connection
        val threads = Executors.newFixedThreadPool(2)
        try {
            listOf(first, second).forEach { it.autoCommit = false }
            first.exec("UPDATE t SET v = 1 WHERE id = 1")
            second.exec("UPDATE t SET v = 1 WHERE id = 2")
            val attempts =
                listOf(first to 2, second to 1).map { (connection, id) ->
                    threads.submit<DbErrorClass?> {
                        try {
                            connection.exec("UPDATE t SET v = 2 WHERE id = $id")
                            null
                        } catch (error: SQLException) {
                            connection.rollback()
                            classify(dialect, error)
                        }
                    }
                }
            val classes = attempts.map { it.get(1, TimeUnit.MINUTES) }
            assertEquals(listOf(DbErrorClass.SERIALIZATION), classes.filterNotNull(), "one of the two is the deadlock's victim: $classes")
        } finally {
            threads.shutdownNow()
            listOf(first, second).forEach {
                it.rollback()
                it.autoCommit = true
                it.close()
            }
        }
    }
}
