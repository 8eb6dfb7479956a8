package io.mintid.http

import io.mintid.store.FreshDatabase
import java.io.PrintWriter
import java.lang.reflect.InvocationTargetException
import java.lang.reflect.Proxy
import java.sql.Connection
import java.sql.SQLFeatureNotSupportedException
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.logging.Logger
import javax.sql.DataSource

/**
 * A small pool over a fresh database for the HTTP tests: each connection handed out is one
 * thread's at a time and goes back to the pool on `close()`. While [down], every connection
 * comes from a server that is not there (the scenario step `{"storage": "down"}`).
 */
internal class SwitchablePool(
    private val database: FreshDatabase,
) : DataSource,
    AutoCloseable {
    @Volatile
    var down = false

    private val idle = ConcurrentLinkedQueue<Connection>()
    private val all = ConcurrentLinkedQueue<Connection>()

    override fun getConnection(): Connection {
        if (down) return database.unavailable().connection
        val real = idle.poll() ?: database.open().connection.also { all += it }
        return Proxy.newProxyInstance(Connection::class.java.classLoader, arrayOf(Connection::class.java)) { _, method, args ->
            if (method.name == "close" && method.parameterCount == 0) {
                idle += real
                null
            } else {
                try {
                    method.invoke(real, *(args ?: emptyArray()))
                } catch (error: InvocationTargetException) {
                    throw error.targetException
                }
            }
        } as Connection
    }

    /** The connections themselves are closed by the database's `close()`. */
    override fun close() {
        idle.clear()
        all.clear()
    }

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
