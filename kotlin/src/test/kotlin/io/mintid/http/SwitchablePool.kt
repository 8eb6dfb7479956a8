package io.mintid.http

import io.mintid.store.FreshDatabase
import io.mintid.store.TestDataSource
import io.mintid.store.keepOpen
import java.sql.Connection
import java.util.concurrent.ConcurrentLinkedQueue

/**
 * A small pool over a fresh database for the HTTP tests: each connection handed out is one
 * thread's at a time and goes back to the pool on `close()`. While [down], every connection
 * comes from a server that is not there (the scenario step `{"storage": "down"}`).
 */
internal class SwitchablePool(
    private val database: FreshDatabase,
) : TestDataSource(),
    AutoCloseable {
    @Volatile
    var down = false

    private val idle = ConcurrentLinkedQueue<Connection>()
    private val all = ConcurrentLinkedQueue<Connection>()

    override fun getConnection(): Connection {
        if (down) return database.unavailable().connection
        val real = idle.poll() ?: database.open().connection.also { all += it }
        return keepOpen(real) { idle += real }
    }

    /** The connections themselves are closed by the database's `close()`. */
    override fun close() {
        idle.clear()
        all.clear()
    }
}
