package io.mintid.spring;

import io.mintid.IdempotencyKey;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.RunResult;
import io.mintid.store.StoreRequest;
import io.mintid.store.TransactionalOperation;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The same-transaction way inside Spring's transactions: {@link #run} claims the key on the
 * connection of the current {@code @Transactional} method (the one {@code JdbcTemplate} and
 * the like use), so that the record commits or rolls back with the business writes. Outside a
 * transaction it refuses: the record would commit on its own.
 */
public class TransactionalIdempotency {
    private final IdempotencyStore store;
    private final DataSource dataSource;

    /** The way over {@code store}, whose data source the transaction manager's must be. */
    public TransactionalIdempotency(IdempotencyStore store) {
        this.store = store;
        this.dataSource = store.getDataSource();
    }

    /**
     * {@link IdempotencyStore#inTransaction} on the current transaction's connection: the claim,
     * {@code operation}'s writes and the completion commit together. An operation that throws
     * rolls the whole transaction back (Spring's rules), so nothing is stored.
     *
     * @throws IllegalStateException outside a transaction.
     */
    public RunResult run(IdempotencyKey key, StoreRequest request, TransactionalOperation operation) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("TransactionalIdempotency.run needs a transaction: call it from a @Transactional method");
        }
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            return store.inTransaction(connection, key, request, operation);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
