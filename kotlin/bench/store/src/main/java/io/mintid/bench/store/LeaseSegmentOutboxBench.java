package io.mintid.bench.store;

import io.mintid.LeaseGuard;
import io.mintid.LeasePolicy;
import io.mintid.RelayPolicy;
import io.mintid.SegmentPolicy;
import io.mintid.Snowflake;
import io.mintid.SnowflakeLayout;
import io.mintid.store.Dialect;
import io.mintid.store.Migrations;
import io.mintid.store.OutboxMessage;
import io.mintid.store.Outbox;
import io.mintid.store.RelayReport;
import io.mintid.store.SegmentIds;
import io.mintid.store.WorkerLeases;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.sqlite.SQLiteConfig;

/**
 * Leases, segments and the outbox of {@code io.mintid.store}, timed on SQLite and (when
 * {@code MINTID_PG_*} are set, e.g. under {@code scripts/db/with-db.sh}) PostgreSQL; prints
 * Markdown rows for {@code docs/benchmarks.md}:
 *
 * <ul>
 *   <li>segment IDs per call in the steady state, beside {@code Snowflake.nextId()} from the same
 *       jar in the same run, with the number of times a caller waited for the database;
 *   <li>one lease acquisition (find, take, commit), median and 90th percentile, each followed by
 *       a release, as a restarting process does;
 *   <li>outbox relay throughput, 1 and 4 relays, each with its own connection.
 * </ul>
 */
public final class LeaseSegmentOutboxBench {
    private static final int ROUNDS = 5;
    private static final int IDS_PER_ROUND = 2_000_000;
    private static final int LEASE_ROUNDS = 50;
    private static final int MESSAGES = 2_000;

    private LeaseSegmentOutboxBench() {}

    public static void main(String[] args) throws Exception {
        System.out.println("load before: " + loadAverage());
        List<String> rows = new ArrayList<>();
        Path directory = Files.createTempDirectory("mintid-store-bench-");
        try {
            rows.addAll(run("SQLite", Dialect.SQLITE, () -> sqlite(directory.resolve("bench.sqlite"))));
            String pg = System.getenv("MINTID_PG_HOST");
            if (pg != null) {
                String schema = "mintid_bench_" + ProcessHandle.current().pid();
                String base = "jdbc:postgresql://" + pg + ":" + env("MINTID_PG_PORT") + "/" + env("MINTID_PG_DATABASE")
                        + "?user=" + env("MINTID_PG_USER") + "&password=" + env("MINTID_PG_PASSWORD");
                execute(base, "CREATE SCHEMA " + schema);
                try {
                    rows.addAll(run("PostgreSQL", Dialect.POSTGRES, () -> DriverManager.getConnection(base + "&currentSchema=" + schema)));
                } finally {
                    execute(base, "DROP SCHEMA " + schema + " CASCADE");
                }
            } else {
                System.out.println("MINTID_PG_HOST is not set: PostgreSQL skipped (run under scripts/db/with-db.sh)");
            }
        } finally {
            try (var files = Files.walk(directory)) {
                files.sorted((a, b) -> b.compareTo(a)).forEach(path -> path.toFile().delete());
            }
        }
        System.out.println("load after: " + loadAverage());
        System.out.println();
        System.out.println("| database | measure | figure |");
        System.out.println("|---|---|---:|");
        rows.forEach(System.out::println);
    }

    /** Opens a new connection to the database under test. */
    private interface Connect {
        Connection open() throws SQLException;
    }

    private static List<String> run(String name, Dialect dialect, Connect connect) throws Exception {
        Migrations.migrate(new OneConnection(connect), dialect);
        List<String> rows = new ArrayList<>(segments(name, dialect, connect));
        rows.add(leases(name, dialect, connect));
        for (int relays : new int[] {1, 4}) rows.add(outbox(name, dialect, connect, relays));
        return rows;
    }

    /** Takes {@link #IDS_PER_ROUND} IDs: the JIT compiles the loop, a segment step grows. */
    private static void warmUp(LongSupplier next) {
        timeOne(next);
    }

    /** ns per ID of one loop of {@link #IDS_PER_ROUND}. */
    private static double timeOne(LongSupplier next) {
        long sink = 0;
        long started = System.nanoTime();
        for (int i = 0; i < IDS_PER_ROUND; i++) sink ^= next.getAsLong();
        double perId = (System.nanoTime() - started) / (double) IDS_PER_ROUND;
        if (sink == 42) System.out.print("");
        return perId;
    }

    private static String figures(double[] rounds) {
        double[] sorted = rounds.clone();
        Arrays.sort(sorted);
        return String.format("%.1f ns per ID (median of %d; %.1f to %.1f)", sorted[sorted.length / 2], sorted.length, sorted[0], sorted[sorted.length - 1]);
    }

    /**
     * Segment IDs and two Snowflake generators, each warmed up, then timed in {@link #ROUNDS}
     * interleaved rounds so that they share the machine's load.
     */
    private static List<String> segments(String name, Dialect dialect, Connect connect) {
        List<String> rows = new ArrayList<>();
        Snowflake classic = Snowflake.builder(SnowflakeLayout.classic(), 7).build();
        Snowflake wide = Snowflake.builder(SnowflakeLayout.of(41, 6, 16, 1_735_689_600_000L, 1), 7).build();
        try (SegmentIds ids = new SegmentIds(new OneConnection(connect), dialect, "bench-" + System.nanoTime(), SegmentPolicy.of(1_000, 1_000, 1_000_000))) {
            LongSupplier[] contenders = {ids::nextId, classic::nextId, wide::nextId};
            for (LongSupplier contender : contenders) warmUp(contender);
            long waitsBefore = ids.getDatabaseWaits();
            double[][] rounds = new double[contenders.length][ROUNDS];
            for (int round = 0; round < ROUNDS; round++) {
                for (int c = 0; c < contenders.length; c++) rounds[c][round] = timeOne(contenders[c]);
            }
            long waits = ids.getDatabaseWaits() - waitsBefore;
            rows.add(row(name, "`SegmentIds.nextId()`, steady state (`SegmentPolicy.of(1000, 1000, 1000000)`)", figures(rounds[0])));
            rows.add(row(name, "`Snowflake.nextId()`, classic (4096 IDs/ms cap), same rounds", figures(rounds[1])));
            rows.add(row(name, "`Snowflake.nextId()`, 16 sequence bits (below capacity), same rounds", figures(rounds[2])));
            rows.add(row(name, "segment ID callers that waited for the database in those rounds (" + ROUNDS * IDS_PER_ROUND + " IDs)", Long.toString(waits)));
        }
        return rows;
    }

    private static String leases(String name, Dialect dialect, Connect connect) {
        WorkerLeases leases = new WorkerLeases(new OneConnection(connect), dialect, new LeasePolicy(SnowflakeLayout.classic()));
        leases.release(leases.acquire("bench-warm-up"), 0);
        long[] times = new long[LEASE_ROUNDS];
        for (int n = 0; n < LEASE_ROUNDS; n++) {
            long started = System.nanoTime();
            LeaseGuard guard = leases.acquire("bench-" + n);
            times[n] = System.nanoTime() - started;
            leases.release(guard, guard.getStartAfterMillis());
        }
        Arrays.sort(times);
        return row(name, "`WorkerLeases.acquire()`, " + LEASE_ROUNDS + " rounds (each released)",
                String.format("median %.2f ms, p90 %.2f ms", times[LEASE_ROUNDS / 2] / 1e6, times[LEASE_ROUNDS * 9 / 10] / 1e6));
    }

    private static String outbox(String name, Dialect dialect, Connect connect, int relays) throws Exception {
        RelayPolicy policy = RelayPolicy.of(100, 60_000);
        OneConnection enqueuer = new OneConnection(connect);
        Outbox store = new Outbox(enqueuer, dialect, policy);
        long run = System.nanoTime();
        try (Connection connection = enqueuer.getConnection()) {
            connection.setAutoCommit(false);
            for (int n = 0; n < MESSAGES; n++) {
                store.enqueue(connection, new OutboxMessage(run + n, "bench", run + "-" + n, "{}".getBytes(StandardCharsets.UTF_8)));
            }
            connection.commit();
            connection.setAutoCommit(true);
        }
        ExecutorService pool = Executors.newFixedThreadPool(relays);
        long sent = 0;
        long started = System.nanoTime();
        try {
            List<Future<RelayReport>> reports = new ArrayList<>();
            for (int r = 0; r < relays; r++) {
                Outbox own = new Outbox(new OneConnection(connect), dialect, policy);
                reports.add(pool.submit((Callable<RelayReport>) () -> own.relay(message -> { })));
            }
            for (Future<RelayReport> report : reports) sent += report.get().getSent();
        } finally {
            pool.shutdownNow();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        if (sent != MESSAGES) throw new IllegalStateException("sent " + sent + " of " + MESSAGES);
        return row(name, "`Outbox.relay()`, " + relays + (relays == 1 ? " relay" : " relays") + ", " + MESSAGES + " messages, batches of 100",
                String.format("%,.0f messages/s", MESSAGES / seconds));
    }

    private static String row(String database, String measure, String figure) {
        String line = "| " + database + " | " + measure + " | " + figure + " |";
        System.out.println(line);
        return line;
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException error) {
            return "unknown";
        }
    }

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null) throw new IllegalStateException(name + " is not set");
        return value;
    }

    private static void execute(String url, String sql) throws SQLException {
        try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static Connection sqlite(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(60_000);
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        return config.createConnection("jdbc:sqlite:" + file);
    }

    /**
     * A data source over one connection of its own, opened at first use; {@code close()} on what
     * it hands out does nothing. One user at a time (a relay, a lease holder, a segment fetcher).
     */
    private static final class OneConnection implements DataSource {
        private final Connect connect;
        private Connection connection;

        OneConnection(Connect connect) {
            this.connect = connect;
        }

        @Override
        public synchronized Connection getConnection() throws SQLException {
            if (connection == null) connection = connect.open();
            Connection real = connection;
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, arguments) -> {
                if (method.getName().equals("close") && method.getParameterCount() == 0) return null;
                try {
                    return method.invoke(real, arguments);
                } catch (InvocationTargetException error) {
                    throw error.getTargetException();
                }
            });
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
