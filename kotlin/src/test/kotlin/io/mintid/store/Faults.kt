package io.mintid.store

import java.io.BufferedReader
import java.io.InputStreamReader
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.net.Socket
import java.sql.Connection
import java.sql.PreparedStatement
import java.sql.SQLException
import java.sql.SQLRecoverableException
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicReference

// The faults of tests/conformance/README.md (issue 25): the fault proxy's outages and a lost
// reply to a write.

/**
 * The fault proxy of `scripts/db/fault_proxy.py` (`MINTID_FAULT_PROXY`, its control port): one
 * request line per connection, one reply line.
 */
internal object FaultProxy {
    private fun control(line: String): String {
        val address = System.getenv("MINTID_FAULT_PROXY") ?: error("a case with an outage needs MINTID_FAULT_PROXY (scripts/db/with-db.sh sets it)")
        val (host, port) = address.split(":")
        Socket(host, port.toInt()).use { socket ->
            socket.getOutputStream().write("$line\n".toByteArray())
            val reply = BufferedReader(InputStreamReader(socket.getInputStream())).readLine()
            check(reply != null && !reply.startsWith("error")) { "fault proxy: $line -> $reply" }
            return reply
        }
    }

    /** A new listener forwarding to [host]:[port]: its port. */
    fun open(
        host: String,
        port: Int,
    ): Int = control("open $host $port").trim().toInt()

    /** Cuts every connection through [port] and refuses new ones for [millis]; returns once in force. */
    fun cut(
        port: Int,
        millis: Long,
    ) {
        control("cut $port $millis")
    }

    /** Closes the listener on [port]. */
    fun close(port: Int) {
        control("close $port")
    }
}

/**
 * Holds SQLite's write lock on another connection of [db] for [millis] (`BEGIN EXCLUSIVE`), from
 * a thread of its own; returns once the lock is held.
 */
internal fun holdExclusiveLock(
    db: FreshDatabase,
    millis: Long,
) {
    val held = CountDownLatch(1)
    val failure = AtomicReference<Throwable>()
    Thread {
        try {
            java.sql.DriverManager.getConnection(db.url).use { connection ->
                connection.createStatement().use { it.execute("BEGIN EXCLUSIVE") }
                held.countDown()
                Thread.sleep(millis)
                connection.createStatement().use { it.execute("ROLLBACK") }
            }
        } catch (error: Throwable) {
            failure.set(error)
            held.countDown()
        }
    }.apply { isDaemon = true }.start()
    held.await()
    failure.get()?.let { throw it }
}

/**
 * A worker's pool whose connections can lose one reply or fail one statement: once
 * [loseReplyTo] names a statement (`complete`, `fail`, `release`, an outbox mark), the first run
 * of that statement goes to its end on the database (committed: the store runs it in
 * autocommit), then its connection is closed and the executor gets a broken connection's
 * exception (JDBC's [SQLRecoverableException], SQLSTATE 08006, as PostgreSQL's driver reports a
 * lost socket). Once [failNext] names statements, the next run of any of them is refused unrun
 * with a database error of class `other` (a plain [SQLException] with no code).
 */
internal class LosingDataSource(
    val inner: WorkerDataSource,
    private val dialect: Dialect,
) : TestDataSource() {
    private val armed = AtomicReference<String?>()
    private val failing = AtomicReference<Set<String>?>()
    private val away = AtomicReference<Set<String>?>()

    /** Arms the fault for the first run of the statement named [name]. */
    fun loseReplyTo(name: String) {
        armed.set(Statements.of(dialect)[name].sql)
    }

    /** Whether an armed fault has fired (and disarms it). */
    fun disarm(): Boolean = armed.getAndSet(null) == null

    /** Fails the next run of any of the statements named [names], without running it. */
    fun failNext(names: Collection<String>) {
        failing.set(names.map { Statements.of(dialect)[it].sql }.toSet())
    }

    /** Whether a [failNext] has fired (and cancels it). */
    fun unfail(): Boolean = failing.getAndSet(null) == null

    /**
     * Until [reachable], every run of the completing writes and renewals (`complete`, `fail`,
     * `release`, `renew`) is refused unrun as a lost connection (`unavailable_after_operation`).
     */
    fun unreachable() {
        failing.set(null)
        away.set(AWAY.map { Statements.of(dialect)[it].sql }.toSet())
    }

    /** Ends [unreachable]: whether it was on. */
    fun reachable(): Boolean = away.getAndSet(null) != null

    override fun getConnection(): Connection {
        val connection = inner.connection
        return Proxy.newProxyInstance(Connection::class.java.classLoader, arrayOf(Connection::class.java)) { _, method, args ->
            val result = invoke(connection, method, args)
            val sql = args?.firstOrNull()
            if (method.name == "prepareStatement" && sql is String && (sql == armed.get() || failing.get()?.contains(sql) == true || away.get()?.contains(sql) == true)) {
                faulty(connection, result as PreparedStatement, sql)
            } else {
                result
            }
        } as Connection
    }

    private fun faulty(
        connection: Connection,
        statement: PreparedStatement,
        sql: String,
    ): PreparedStatement =
        Proxy.newProxyInstance(PreparedStatement::class.java.classLoader, arrayOf(PreparedStatement::class.java)) { _, method, args ->
            val executes = method.name.startsWith("execute")
            val refused = failing.get()
            if (executes && refused != null && sql in refused && failing.compareAndSet(refused, null)) {
                throw SQLException("a scripted failure of this statement (mark_fails)")
            }
            if (executes && away.get()?.contains(sql) == true) {
                throw SQLRecoverableException("the database is away since the operation's end (unavailable_after_operation)", "08006")
            }
            val result = invoke(statement, method, args)
            if (executes && armed.compareAndSet(sql, null)) {
                // The statement ran; its reply never arrives.
                connection.unwrap(Connection::class.java).close()
                throw SQLRecoverableException("the connection was lost after the statement ran (lose_reply)", "08006")
            }
            result
        } as PreparedStatement

    private companion object {
        /** The statements [unreachable] refuses. */
        val AWAY = listOf("complete", "fail", "release", "renew")
    }

    private fun invoke(
        target: Any,
        method: java.lang.reflect.Method,
        args: Array<Any?>?,
    ): Any? =
        try {
            method.invoke(target, *(args ?: emptyArray()))
        } catch (error: InvocationTargetException) {
            throw error.targetException
        }
}
