package io.mintid.store

import org.sqlite.SQLiteConfig
import java.io.PrintWriter
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.nio.file.Files
import java.nio.file.Path
import java.sql.Connection
import java.sql.DriverManager
import java.sql.SQLFeatureNotSupportedException
import java.util.logging.Logger
import javax.sql.DataSource

// Fresh, empty databases for the store tests: a SQLite file, a PostgreSQL schema or a MariaDB
// database per case. PostgreSQL and MariaDB come from MINTID_PG_* / MINTID_MYSQL_*
// (scripts/db/with-db.sh); without them their tests are skipped, except under CI=true where that
// is a failure.

/** A loopback port where nothing listens: "the database is down". */
private const val DEAD_PORT = 9

private val runId = "${ProcessHandle.current().pid()}_${System.currentTimeMillis() % 1_000_000}"
private val serial = java.util.concurrent.atomic.AtomicInteger()

/** Why [dialect] cannot be tested here, or null when it can. */
internal fun skipReason(dialect: Dialect): String? {
    val variable =
        when (dialect) {
            Dialect.SQLITE -> return null
            Dialect.POSTGRES -> "MINTID_PG_HOST"
            Dialect.MYSQL -> "MINTID_MYSQL_HOST"
        }
    if (System.getenv(variable) != null) return null
    check(System.getenv("CI") != "true") { "$variable must be set under CI=true (run under scripts/db/with-db.sh)" }
    return "$variable not set (run under scripts/db/with-db.sh)"
}

private fun env(name: String): String = System.getenv(name) ?: error("$name is not set")

/**
 * One fresh database: [open] gives a small pool of its own (a "worker"; [foundRows] on
 * MySQL/MariaDB: the connections report found rows instead of affected rows), [unavailable] one
 * whose server is down; [close] drops everything.
 */
internal class FreshDatabase(
    val dialect: Dialect,
) : AutoCloseable {
    private val name = "mintid_kt${runId}_${serial.incrementAndGet()}"
    private val opened = mutableListOf<WorkerDataSource>()
    private val proxied = mutableListOf<Int>()

    /** The server session of every connection the workers opened (PostgreSQL and MariaDB). */
    private val sessions = java.util.concurrent.ConcurrentLinkedQueue<Long>()
    private var directory: Path? = null
    val url: String

    init {
        url =
            when (dialect) {
                Dialect.SQLITE -> {
                    val dir = Files.createTempDirectory("mintid-kt-store-")
                    directory = dir
                    "jdbc:sqlite:${dir.resolve("db.sqlite")}"
                }
                Dialect.POSTGRES -> {
                    admin { it.createStatement().use { s -> s.execute("CREATE SCHEMA $name") } }
                    "${pgUrl(env("MINTID_PG_PORT"))}&currentSchema=$name"
                }
                Dialect.MYSQL -> {
                    admin { it.createStatement().use { s -> s.execute("CREATE DATABASE $name") } }
                    mysqlUrl(env("MINTID_MYSQL_PORT"), name)
                }
            }
    }

    /** The SQL of the business table that counts side effects. */
    val sideEffectTable: String =
        when (dialect) {
            Dialect.SQLITE -> "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope TEXT NOT NULL, kind TEXT NOT NULL, key_id TEXT NOT NULL, worker TEXT NOT NULL)"
            Dialect.POSTGRES -> "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope text NOT NULL, kind text NOT NULL, key_id text NOT NULL, worker text NOT NULL)"
            Dialect.MYSQL -> "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope VARBINARY(64) NOT NULL, kind VARBINARY(32) NOT NULL, key_id VARBINARY(64) NOT NULL, worker VARCHAR(64) NOT NULL)"
        }

    fun open(foundRows: Boolean = false): WorkerDataSource =
        WorkerDataSource { connect(if (foundRows) url.replace("useAffectedRows=true", "useAffectedRows=false") else url) }
            .also { synchronized(opened) { opened += it } }

    /**
     * A worker's pool whose connections go through a fault proxy listener of their own
     * (PostgreSQL and MariaDB, see [FaultProxy]): the pool and the listener's port.
     */
    fun openThroughProxy(): Pair<WorkerDataSource, Int> {
        val port =
            when (dialect) {
                Dialect.POSTGRES -> FaultProxy.open(env("MINTID_PG_HOST"), env("MINTID_PG_PORT").toInt())
                Dialect.MYSQL -> FaultProxy.open(env("MINTID_MYSQL_HOST"), env("MINTID_MYSQL_PORT").toInt())
                Dialect.SQLITE -> error("SQLite has no network to cut")
            }
        val through = if (dialect == Dialect.POSTGRES) "${pgUrl(port.toString())}&currentSchema=$name" else mysqlUrl(port.toString(), name)
        proxied += port
        return WorkerDataSource { connect(through) }.also { synchronized(opened) { opened += it } } to port
    }

    fun unavailable(): WorkerDataSource =
        WorkerDataSource {
            when (dialect) {
                Dialect.SQLITE -> connect("jdbc:sqlite:${directory!!.resolve("missing").resolve("db.sqlite")}")
                Dialect.POSTGRES -> connect(pgUrl(DEAD_PORT.toString()))
                Dialect.MYSQL -> connect(mysqlUrl(DEAD_PORT.toString(), name))
            }
        }.also { synchronized(opened) { opened += it } }

    override fun close() {
        synchronized(opened) { opened.forEach { it.closeConnection() } }
        proxied.forEach { FaultProxy.close(it) }
        when (dialect) {
            Dialect.SQLITE -> directory?.toFile()?.deleteRecursively()
            Dialect.POSTGRES -> admin { it.createStatement().use { s -> s.execute("DROP SCHEMA $name CASCADE") } }
            Dialect.MYSQL -> admin { it.createStatement().use { s -> s.execute("DROP DATABASE $name") } }
        }
    }

    /**
     * Terminates the server session of every connection the workers opened, from an admin
     * connection (PostgreSQL `pg_terminate_backend`, MariaDB `KILL`); SQLite has none.
     */
    fun killConnections() {
        if (dialect == Dialect.SQLITE) return
        admin { connection ->
            for (session in sessions) {
                if (dialect == Dialect.POSTGRES) {
                    connection.prepareStatement("SELECT pg_terminate_backend(?)").use {
                        it.setInt(1, session.toInt())
                        it.executeQuery().close()
                    }
                } else {
                    // A session that already ended is "unknown thread id": nothing to kill.
                    runCatching { connection.createStatement().use { it.execute("KILL $session") } }
                }
            }
        }
    }

    private fun admin(action: (Connection) -> Unit) =
        DriverManager.getConnection(if (dialect == Dialect.POSTGRES) pgUrl(env("MINTID_PG_PORT")) else mysqlUrl(env("MINTID_MYSQL_PORT"), "")).use(action)

    private fun connect(url: String): Connection {
        if (dialect != Dialect.SQLITE) {
            val connection = DriverManager.getConnection(url)
            val query = if (dialect == Dialect.POSTGRES) "SELECT pg_backend_pid()" else "SELECT CONNECTION_ID()"
            connection.createStatement().use { statement ->
                statement.executeQuery(query).use {
                    it.next()
                    sessions += it.getLong(1)
                }
            }
            return connection
        }
        // Concurrent workers on one file: WAL, transactions that take the write lock at BEGIN,
        // and waiting for that lock instead of failing at once.
        val config = SQLiteConfig()
        config.setBusyTimeout(60_000)
        config.setJournalMode(SQLiteConfig.JournalMode.WAL)
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE)
        return config.createConnection(url)
    }

    private fun pgUrl(port: String): String =
        "jdbc:postgresql://${env("MINTID_PG_HOST")}:$port/${env("MINTID_PG_DATABASE")}" +
            "?user=${env("MINTID_PG_USER")}&password=${env("MINTID_PG_PASSWORD")}&connectTimeout=2"

    private fun mysqlUrl(
        port: String,
        database: String,
    ): String =
        "jdbc:mariadb://${env("MINTID_MYSQL_HOST")}:$port/$database" +
            "?user=${env("MINTID_MYSQL_USER")}&password=${env("MINTID_MYSQL_PASSWORD")}" +
            "&useAffectedRows=true&useServerPrepStmts=true&connectTimeout=2000"
}

/**
 * A worker's small pool: a connection handed out goes back on `close()` (unless it broke),
 * and one is opened when none is idle (the store renews a lease on a second connection while
 * the operation uses the first).
 */
internal class WorkerDataSource(
    private val connect: () -> Connection,
) : TestDataSource() {
    private val idle = ArrayDeque<Connection>()
    private val all = mutableListOf<Connection>()

    /** Closes every connection this pool opened. */
    fun closeConnection() =
        synchronized(this) {
            all.forEach { runCatching { it.close() } }
            all.clear()
            idle.clear()
        }

    override fun getConnection(): Connection {
        val real = synchronized(this) { idle.removeFirstOrNull() } ?: connect().also { synchronized(this) { all += it } }
        // A connection whose server session ended (killed, the server restarted) is dropped.
        return keepOpen(real) { if (real.isValid(2)) synchronized(this) { idle.addFirst(real) } }
    }
}

/** [real] behind a proxy whose `close()` runs [onClose] instead of closing it. */
internal fun keepOpen(
    real: Connection,
    onClose: () -> Unit,
): Connection =
    Proxy.newProxyInstance(Connection::class.java.classLoader, arrayOf(Connection::class.java)) { _, method, args ->
        if (method.name == "close" && method.parameterCount == 0) {
            onClose()
            null
        } else {
            try {
                method.invoke(real, *(args ?: emptyArray()))
            } catch (error: InvocationTargetException) {
                throw error.targetException
            }
        }
    } as Connection

/** What the tests' data sources leave out: credentials, log writers, wrapping. */
internal abstract class TestDataSource : DataSource {
    override fun getConnection(
        username: String?,
        password: String?,
    ): Connection = throw SQLFeatureNotSupportedException()

    override fun getLogWriter(): PrintWriter? = null

    override fun setLogWriter(out: PrintWriter?) = Unit

    override fun setLoginTimeout(seconds: Int) = Unit

    override fun getLoginTimeout(): Int = 0

    override fun getParentLogger(): Logger = throw SQLFeatureNotSupportedException()

    override fun <T : Any?> unwrap(iface: Class<T>?): T = throw SQLFeatureNotSupportedException()

    override fun isWrapperFor(iface: Class<*>?): Boolean = false
}
