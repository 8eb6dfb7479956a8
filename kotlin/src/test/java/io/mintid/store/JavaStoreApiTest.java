package io.mintid.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.mintid.Enqueued;
import io.mintid.Fingerprint;
import io.mintid.IdempotencyKey;
import io.mintid.LeaseException;
import io.mintid.LeasePolicy;
import io.mintid.RelayPolicy;
import io.mintid.SegmentPolicy;
import io.mintid.SnowflakeLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/** Idempotency records, leases, segments and the outbox from plain Java, on an SQLite file. */
class JavaStoreApiTest {
    @TempDir Path directory;

    private SQLiteDataSource sqlite() {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(10_000);
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        SQLiteDataSource dataSource = new SQLiteDataSource(config);
        dataSource.setUrl("jdbc:sqlite:" + directory.resolve("db.sqlite"));
        return dataSource;
    }

    private byte[] placeOrder() {
        return "{\"placed\":1}".getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void runOnceFromJava() {
        SQLiteDataSource dataSource = sqlite();
        Migrations.migrate(dataSource, Dialect.SQLITE);
        IdempotencyStore store = new IdempotencyStore(dataSource, Dialect.SQLITE);
        IdempotencyKey key = IdempotencyKey.of("order.create", "tenant-1", "o-1");
        StoreRequest request = new StoreRequest(Fingerprint.ofJson("{}"));
        RunResult result = store.runOnce(key, request, held -> new StoredResponse("application/json", placeOrder()));
        assertTrue(result instanceof Executed);
        RunResult again = store.runOnce(key, request, held -> new StoredResponse("application/json", placeOrder()));
        assertTrue(again instanceof Replayed);
        assertEquals(new StoredResponse("application/json", placeOrder()), ((Replayed) again).getResponse());
    }

    /** How many orders there are, read with JDBC in the store's transaction. */
    private static long orders(IdempotencyStore store) {
        return store.transaction(connection -> {
            java.sql.ResultSet rows = connection.createStatement().executeQuery("SELECT COUNT(*) FROM orders");
            rows.next();
            return rows.getLong(1);
        });
    }

    /** The operations' JDBC calls, whose SQLException needs no try/catch. */
    @Test
    void operationsMayThrowCheckedExceptions() {
        SQLiteDataSource dataSource = sqlite();
        Migrations.migrate(dataSource, Dialect.SQLITE);
        IdempotencyStore store = new IdempotencyStore(dataSource, Dialect.SQLITE);
        StoreRequest request = new StoreRequest(Fingerprint.ofJson("{}"));
        store.transaction(connection -> connection.createStatement().execute("CREATE TABLE orders (sku TEXT NOT NULL)"));
        RunResult ran = store.runOnce(IdempotencyKey.of("order.create", "tenant-1", "jdbc-1"), request, held -> {
            try (Connection connection = dataSource.getConnection()) {
                connection.createStatement().execute("INSERT INTO orders (sku) VALUES ('tea')");
            }
            return new StoredResponse("application/json", placeOrder());
        });
        assertTrue(ran instanceof Executed);
        RunResult same = store.transaction(connection -> store.inTransaction(connection, IdempotencyKey.of("order.create", "tenant-1", "jdbc-2"), request, c -> {
            c.createStatement().execute("INSERT INTO orders (sku) VALUES ('tea')");
            return new StoredResponse("application/json", placeOrder());
        }));
        assertTrue(same instanceof Executed);
        assertEquals(2L, orders(store));

        // A checked exception comes back unchecked, the operation's exception its cause; the key is released.
        IdempotencyKey failing = IdempotencyKey.of("order.create", "tenant-1", "jdbc-3");
        CheckedOperationException thrown = assertThrows(CheckedOperationException.class, () -> store.runOnce(failing, request, held -> {
            try (Connection connection = dataSource.getConnection()) {
                connection.createStatement().execute("INSERT INTO no_such_table VALUES (1)");
            }
            return new StoredResponse("application/json", placeOrder());
        }));
        assertTrue(thrown.getCause() instanceof java.sql.SQLException, thrown.getCause().toString());
        assertEquals(thrown.getCause().getMessage(), thrown.getMessage());
        assertTrue(store.runOnce(failing, request, held -> new StoredResponse("application/json", placeOrder())) instanceof Executed);
        CheckedOperationException rolledBack = assertThrows(CheckedOperationException.class, () -> store.transaction(connection -> {
            connection.createStatement().execute("INSERT INTO orders (sku) VALUES ('rolled back')");
            throw new java.io.IOException("the provider is down");
        }));
        assertEquals("the provider is down", rolledBack.getMessage());
        assertEquals(2L, orders(store));
    }

    @Test
    void leasesFromJava() {
        SQLiteDataSource dataSource = sqlite();
        Migrations.migrate(dataSource, Dialect.SQLITE);
        WorkerLeases leases = new WorkerLeases(dataSource, Dialect.SQLITE, new LeasePolicy(SnowflakeLayout.classic()));
        long last;
        try (LeasedSnowflake ids = LeasedSnowflake.acquire(leases, "java:1")) {
            long first = ids.nextId();
            last = ids.nextIds(3)[2];
            assertTrue(last > first);
            assertEquals(0L, ids.getWorkerId());
        }
        WorkerLeaseRow row = leases.load(0);
        assertEquals(null, row.getOwner());
        assertTrue(row.getHighWaterMillis() >= SnowflakeLayout.classic().decode(last).getUnixMillis());
        LeaseException released = assertThrows(LeaseException.class, () -> {
            LeasedSnowflake ids = LeasedSnowflake.acquire(leases, "java:2");
            ids.close();
            ids.nextId();
        });
        assertEquals("lease.released", released.getCode());
    }

    @Test
    void segmentsFromJava() {
        SQLiteDataSource dataSource = sqlite();
        Migrations.migrate(dataSource, Dialect.SQLITE);
        try (SegmentIds ids = new SegmentIds(dataSource, Dialect.SQLITE, "orders", SegmentPolicy.of(100, 100, 1000))) {
            long previous = 0;
            for (int i = 0; i < 1000; i++) {
                long id = ids.nextId();
                assertTrue(id > previous);
                previous = id;
            }
        }
    }

    @Test
    void outboxFromJava() throws Exception {
        SQLiteDataSource dataSource = sqlite();
        Migrations.migrate(dataSource, Dialect.SQLITE);
        Outbox outbox = new Outbox(dataSource, Dialect.SQLITE, RelayPolicy.of(10, 60_000));
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            byte[] payload = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);
            assertEquals(Enqueued.NEW, outbox.enqueue(connection, new OutboxMessage(1, "order.created", "order-1", payload)));
            assertEquals(Enqueued.ALREADY_ENQUEUED, outbox.enqueue(connection, new OutboxMessage(2, "order.created", "order-1", payload)));
            connection.commit();
        }
        // A sender may throw a checked exception with no try/catch: the attempt fails, to be retried.
        RelayReport failed = outbox.relay(message -> { throw new java.io.IOException("the broker is down"); });
        assertEquals(1L, failed.getRetried());
        assertEquals("the broker is down", outbox.load("order.created", "order-1").getLastError());
        outbox = new Outbox(dataSource, Dialect.SQLITE, RelayPolicy.of(10, 60_000), new io.mintid.store.StoreClock() {
            @Override
            public long nowMillis() {
                return System.currentTimeMillis() + 3_600_000;
            }
        });
        RelayReport report = outbox.relay(message -> { });
        assertEquals(1L, report.getSent());
        RelayReport none = outbox.relay(message -> { throw new IllegalStateException("nothing is due"); });
        assertEquals(0L, none.getSent());
        assertEquals(1L, outbox.cleanup(Long.MAX_VALUE));
        assertTrue(Files.exists(directory.resolve("db.sqlite")));
    }
}
