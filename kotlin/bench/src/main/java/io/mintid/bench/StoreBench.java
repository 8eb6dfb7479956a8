package io.mintid.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mintid.Fingerprint;
import io.mintid.IdempotencyKey;
import io.mintid.store.Dialect;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.LeaseResult;
import io.mintid.store.Migrations;
import io.mintid.store.RecordLease;
import io.mintid.store.RunResult;
import io.mintid.store.StoreRequest;
import io.mintid.store.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * Idempotency storage from the JVM: {@code io.mintid.store.IdempotencyStore} on PostgreSQL and
 * SQLite, measured like {@code python/bench/bench_store.py} and {@code js/bench/store.mjs}.
 *
 * <p>One operation is a fresh key, claimed and completed: {@code runOnce} (claim, a trivial
 * operation, store its response) and the lease-and-fence path ({@code claimLease}, then
 * {@code RecordLease.complete}), beside the floor: the same two statements from plain JDBC on a
 * connection of its own. With 1 and 8 threads sharing one store over a HikariCP pool of as many
 * connections. Rounds interleave the rows; each row is the round with the median throughput:
 * operations per second, p50 and p99 latency. Run by {@code make bench-kotlin} inside
 * {@code scripts/db/with-db.sh} (the {@code MINTID_PG_*} variables); arguments
 * {@code --seconds S --rounds N}.
 */
public final class StoreBench {
    private static final StoredResponse RESPONSE =
            new StoredResponse("application/json", "{\"ok\":true}".getBytes(StandardCharsets.UTF_8));
    private static final StoreRequest REQUEST =
            new StoreRequest(Fingerprint.ofJson("{\"order\":\"A-1001\",\"amount\":12.5}"));
    static final String SCHEMA = "mintid_bench_kt";
    private static final String NOSYNC = "PostgreSQL, synchronous_commit off";
    private static final AtomicLong SERIAL = new AtomicLong();
    private static final String RUN = Long.toHexString(System.nanoTime());

    // The floor, as in the Python bench: the claim and the fenced completion, nothing else.
    private static final String RAW_CLAIM =
            "INSERT INTO idempotency_record (scope, kind, key_id, fingerprint, status, fencing_token, "
                    + "lease_deadline_millis, created_millis, updated_millis, expires_millis) "
                    + "VALUES ('raw', 'bench.op', ?, ?, 'pending', 1, ?, ?, ?, ?) "
                    + "ON CONFLICT (scope, kind, key_id) DO NOTHING RETURNING fencing_token";
    private static final String RAW_COMPLETE =
            "UPDATE idempotency_record SET status = 'succeeded', response_body = ?, "
                    + "response_content_type = ?, updated_millis = ? "
                    + "WHERE scope = 'raw' AND kind = 'bench.op' AND key_id = ? AND fencing_token = 1";

    private StoreBench() {}

    /** One measured row. */
    record Row(String what, String where, int threads, double perSecond, double p50, double p99) {}

    /** What one thread does once: an operation on a fresh key, claim and completion. */
    interface Step {
        void run(Connection own) throws Exception;
    }

    /** A database to measure: a pool for the store and connections of their own for the floor. */
    record Target(String where, Dialect dialect, HikariDataSource pool, ConnectionFactory connect) {}

    interface ConnectionFactory {
        Connection open() throws SQLException;
    }

    private static IdempotencyKey freshKey() {
        return IdempotencyKey.of("bench.op", "tenant-1", RUN + "-" + SERIAL.incrementAndGet());
    }

    static Row measure(
            String what, Target target, int threads, double seconds, boolean ownConnection, Step step)
            throws Exception {
        List<long[]> latencies = new ArrayList<>();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        Exception[] failure = new Exception[1];
        for (int t = 0; t < threads; t++) {
            long[] mine = new long[1 << 18];
            latencies.add(mine);
            Thread worker = new Thread(() -> {
                int n = 0;
                try (Connection own = ownConnection ? target.connect.open() : null) {
                    start.await();
                    while (System.nanoTime() < deadline[0] && n < mine.length - 1) {
                        long started = System.nanoTime();
                        step.run(own);
                        mine[++n] = System.nanoTime() - started;
                    }
                } catch (Exception error) {
                    synchronized (failure) {
                        failure[0] = error;
                    }
                }
                mine[0] = n;
            });
            workers.add(worker);
            worker.start();
        }
        long began = System.nanoTime();
        deadline[0] = began + (long) (seconds * 1e9);
        start.await();
        for (Thread worker : workers) {
            worker.join();
        }
        double elapsed = (System.nanoTime() - began) / 1e9;
        if (failure[0] != null) {
            throw failure[0];
        }
        long[] all = latencies.stream()
                .flatMapToLong(mine -> Arrays.stream(mine, 1, (int) mine[0] + 1))
                .sorted()
                .toArray();
        double p50 = all[all.length / 2] / 1e6;
        double p99 = all[Math.min(all.length - 1, all.length * 99 / 100)] / 1e6;
        return new Row(what, target.where, threads, all.length / elapsed, p50, p99);
    }

    private static void runOnce(IdempotencyStore store) {
        RunResult result = store.runOnce(freshKey(), REQUEST, held -> RESPONSE);
        if (!result.getDecision().equals("execute")) {
            throw new IllegalStateException("a fresh key was not executed: " + result.getDecision());
        }
    }

    private static void leaseAndFence(IdempotencyStore store) {
        LeaseResult claimed = store.claimLease(freshKey(), REQUEST);
        if (!(claimed instanceof RecordLease lease)) {
            throw new IllegalStateException("a fresh key was not claimed: " + claimed.getDecision());
        }
        lease.complete(RESPONSE);
    }

    private static void raw(Connection connection) throws SQLException {
        String key = RUN + "-raw-" + SERIAL.incrementAndGet();
        long now = System.currentTimeMillis();
        try (PreparedStatement claim = connection.prepareStatement(RAW_CLAIM)) {
            claim.setString(1, key);
            claim.setBytes(2, new byte[32]);
            claim.setLong(3, now + 60_000);
            claim.setLong(4, now);
            claim.setLong(5, now);
            claim.setLong(6, now + 1);
            try (ResultSet rows = claim.executeQuery()) {
                if (!rows.next()) {
                    throw new IllegalStateException("the raw claim inserted nothing");
                }
            }
        }
        try (PreparedStatement complete = connection.prepareStatement(RAW_COMPLETE)) {
            complete.setBytes(1, RESPONSE.getBody());
            complete.setString(2, RESPONSE.getContentType());
            complete.setLong(3, now);
            complete.setString(4, key);
            if (complete.executeUpdate() != 1) {
                throw new IllegalStateException("the raw completion updated nothing");
            }
        }
    }

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null) {
            throw new IllegalStateException(name + " is not set: run through scripts/db/with-db.sh");
        }
        return value;
    }

    static HikariDataSource pool(String name, int size, HikariConfig config) {
        config.setPoolName(name);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        return new HikariDataSource(config);
    }

    static String postgresUrl(String options) {
        return "jdbc:postgresql://" + env("MINTID_PG_HOST") + ":" + env("MINTID_PG_PORT") + "/"
                + env("MINTID_PG_DATABASE") + "?user=" + env("MINTID_PG_USER") + "&password="
                + env("MINTID_PG_PASSWORD") + "&currentSchema=" + SCHEMA + options;
    }

    static Target postgres(String where, String options) {
        String url = postgresUrl(options);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        return new Target(where, Dialect.POSTGRES, pool(where, 8, config), () -> DriverManager.getConnection(url));
    }

    private static Target sqlite(Path file) {
        SQLiteConfig config = new SQLiteConfig();
        // As the store's own tests: WAL, writers take the lock at BEGIN and wait for it, and
        // every commit is synced (FULL, SQLite's default, said explicitly).
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        config.setBusyTimeout(60_000);
        SQLiteDataSource source = new SQLiteDataSource(config);
        source.setUrl("jdbc:sqlite:" + file);
        HikariConfig hikari = new HikariConfig();
        hikari.setDataSource(source);
        return new Target("SQLite", Dialect.SQLITE, pool("SQLite", 8, hikari), source::getConnection);
    }

    /** Drops the bench's schema, and creates it again when [create]. */
    static void schema(boolean create) throws SQLException {
        try (Connection admin = DriverManager.getConnection(postgresUrl(""));
                Statement statement = admin.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
            if (create) {
                statement.execute("CREATE SCHEMA " + SCHEMA);
            }
        }
    }

    /** Prints the median round of each run as a table row. */
    static void table(List<List<Row>> results) {
        System.out.println("| operation | database | threads | ops/s | p50 ms | p99 ms |");
        System.out.println("|---|---|---:|---:|---:|---:|");
        for (List<Row> measured : results) {
            measured.sort(Comparator.comparingDouble(Row::perSecond));
            Row row = measured.get(measured.size() / 2);
            System.out.printf(
                    "| %s | %s | %d | %,.0f | %.2f | %.2f |%n",
                    row.what, row.where, row.threads, row.perSecond, row.p50, row.p99);
        }
    }

    /** Runs every run once per round, the runs interleaved; each run's rows. */
    static List<List<Row>> rounds(List<java.util.concurrent.Callable<Row>> runs, int rounds) throws Exception {
        List<List<Row>> results = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            results.add(new ArrayList<>());
        }
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < runs.size(); i++) {
                results.get(i).add(runs.get(i).call());
            }
        }
        return results;
    }

    /** The arguments {@code --seconds S --rounds N} (2 s and 3 rounds by default). */
    record Options(double seconds, int rounds) {
        static Options of(String[] args) {
            double seconds = 2;
            int rounds = 3;
            for (int i = 0; i + 1 < args.length; i += 2) {
                switch (args[i]) {
                    case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                    case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return new Options(seconds, rounds);
        }
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.of(args);
        double seconds = options.seconds();
        int rounds = options.rounds();
        schema(true);
        Path directory = Files.createTempDirectory("mintid-kt-bench-");
        List<Target> targets = List.of(
                postgres("PostgreSQL", ""),
                postgres(NOSYNC, "&options=-c%20synchronous_commit=off"),
                sqlite(directory.resolve("bench.sqlite3")));
        try {
            Migrations.migrate(targets.get(0).pool, Dialect.POSTGRES);
            Migrations.migrate(targets.get(2).pool, Dialect.SQLITE);
            List<java.util.concurrent.Callable<Row>> runs = new ArrayList<>();
            for (Target target : targets) {
                IdempotencyStore store = new IdempotencyStore(target.pool, target.dialect);
                // Warm-up: the JIT, the pool and the core's first calls.
                measure("warm-up", target, 1, 0.5, false, own -> runOnce(store));
                for (int threads : new int[] {1, 8}) {
                    double s = seconds;
                    runs.add(() -> measure("`runOnce`", target, threads, s, false, own -> runOnce(store)));
                    runs.add(() -> measure(
                            "`claimLease` + `RecordLease.complete`", target, threads, s, false, own -> leaseAndFence(store)));
                    runs.add(() -> measure("raw JDBC (floor)", target, threads, s, true, StoreBench::raw));
                }
            }
            table(rounds(runs, rounds));
        } finally {
            for (Target target : targets) {
                target.pool.close();
            }
            schema(false);
            try (var files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }
}
