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
        RelayReport report = outbox.relay(message -> { });
        assertEquals(1L, report.getSent());
        RelayReport none = outbox.relay(message -> { throw new IllegalStateException("nothing is due"); });
        assertEquals(0L, none.getSent());
        assertEquals(1L, outbox.cleanup(Long.MAX_VALUE));
        assertTrue(Files.exists(directory.resolve("db.sqlite")));
    }
}
