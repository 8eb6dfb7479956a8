package io.mintid.http

import io.mintid.store.IdempotencyStore
import io.mintid.store.RunResult
import io.mintid.store.TransactionAction
import java.sql.Connection

/**
 * How the same-transaction mode ([HttpIdempotency.Builder.sameTransaction]) opens the record's
 * transaction: [transaction] runs its action in one transaction of the store's database, handing it
 * that transaction's connection (autocommit off), committed when the action returns and rolled
 * back when it throws (rethrowing what it threw). The store's own ([of]) by default; a framework
 * puts its transaction management here (the Spring starter's binds the connection to Spring's
 * transaction, so that `JdbcTemplate` and `@Transactional` methods join it).
 */
fun interface RecordTransactions {
    /** Runs [action] in one transaction and returns what it returned. */
    fun transaction(action: TransactionAction<RunResult>): RunResult

    /** The store's transactions. */
    companion object {
        /** [IdempotencyStore.transaction] of [store]. */
        @JvmStatic
        fun of(store: IdempotencyStore): RecordTransactions = RecordTransactions { action -> store.transaction(action) }
    }
}

/**
 * The connection of the record's transaction a covered request's handler runs in, under an
 * [HttpIdempotency] in the same-transaction mode: the handler's writes on it, the claim and the
 * completed record commit together or roll back together.
 */
object HandlerTransaction {
    private val current = ThreadLocal<Connection>()

    /**
     * The connection of the record's transaction the handler on this thread runs in.
     *
     * @throws IllegalStateException anywhere else (no covered request's handler in the
     *   same-transaction mode runs on this thread).
     */
    @JvmStatic
    fun connection(): Connection =
        current.get() ?: throw IllegalStateException(
            "no record transaction here: only a covered request's handler under HttpIdempotency's sameTransaction runs in one",
        )

    /** Runs [block] with [connection] as this thread's handler transaction. */
    internal fun <T> within(
        connection: Connection,
        block: () -> T,
    ): T {
        val previous = current.get()
        current.set(connection)
        try {
            return block()
        } finally {
            if (previous == null) current.remove() else current.set(previous)
        }
    }
}
