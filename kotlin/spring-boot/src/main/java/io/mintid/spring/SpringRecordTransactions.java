package io.mintid.spring;

import io.mintid.http.RecordTransactions;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.RunResult;
import io.mintid.store.TransactionAction;
import java.lang.reflect.UndeclaredThrowableException;
import java.sql.Connection;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The record transactions of {@code mintid.http.same-transaction}: each a Spring-managed
 * transaction on the store's data source, its connection bound to it the way Spring binds
 * one, so that an {@link Idempotent} controller's {@code JdbcTemplate} (on that data source) and
 * its {@code @Transactional} methods (propagation {@code REQUIRED}, a JDBC transaction manager
 * of that data source) join the record's transaction: their writes, the claim and the
 * completed record commit or roll back together.
 */
public final class SpringRecordTransactions implements RecordTransactions {
    private final DataSource dataSource;
    private final TransactionTemplate template;

    /** The transactions of {@code store}'s data source. */
    public SpringRecordTransactions(IdempotencyStore store) {
        this.dataSource = store.getDataSource();
        this.template = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /**
     * Runs {@code action} on the connection of a new Spring transaction: committed when it
     * returns, rolled back when it throws (a checked exception comes back in an
     * {@link UndeclaredThrowableException}).
     */
    @Override
    public RunResult transaction(TransactionAction<RunResult> action) {
        return template.execute(status -> {
            Connection connection = DataSourceUtils.getConnection(dataSource);
            try {
                return action.run(connection);
            } catch (RuntimeException | Error unchecked) {
                throw unchecked;
            } catch (Exception checked) {
                throw new UndeclaredThrowableException(checked);
            } finally {
                DataSourceUtils.releaseConnection(connection, dataSource);
            }
        });
    }
}
