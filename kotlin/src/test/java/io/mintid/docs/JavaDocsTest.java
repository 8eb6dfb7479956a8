package io.mintid.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mintid.*;
import io.mintid.http.*;
import io.mintid.store.*;
import io.mintid.store.Outbox;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.postgresql.ds.PGSimpleDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The Java blocks of kotlin/README.md, line for line (scripts/docs/blocks.py checks that every
 * line of each block is here, in order), with what they leave out around them.
 */
class JavaDocsTest {
    @TempDir Path directory;

    private final String body = "{\"sku\":\"tea\",\"qty\":2}";
    private final List<Object> sent = new ArrayList<>();

    private byte[] placeOrder() {
        return "{\"placed\":1}".getBytes(StandardCharsets.UTF_8);
    }

    private String placeOrder(byte[] order) {
        return "{\"placed\":" + new String(order, StandardCharsets.UTF_8) + "}";
    }

    /** A fresh, migrated PostgreSQL schema of the with-db.sh server (skipped without one, except under CI). */
    private static void postgres(Consumer<DataSource> test) {
        String host = System.getenv("MINTID_PG_HOST");
        if (host == null && "true".equals(System.getenv("CI"))) throw new IllegalStateException("MINTID_PG_HOST must be set under CI=true");
        Assumptions.assumeTrue(host != null, "MINTID_PG_HOST not set (run under scripts/db/with-db.sh)");
        String url = "jdbc:postgresql://" + host + ":" + System.getenv("MINTID_PG_PORT") + "/" + System.getenv("MINTID_PG_DATABASE")
                + "?user=" + System.getenv("MINTID_PG_USER") + "&password=" + System.getenv("MINTID_PG_PASSWORD");
        String schema = "mintid_docs_java_" + ProcessHandle.current().pid() + "_" + System.nanoTime() % 1_000_000;
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(url + "&currentSchema=" + schema);
        try (Connection admin = java.sql.DriverManager.getConnection(url)) {
            admin.createStatement().execute("CREATE SCHEMA " + schema);
            try {
                Migrations.migrate(dataSource, Dialect.POSTGRES);
                test.accept(dataSource);
            } finally {
                admin.createStatement().execute("DROP SCHEMA " + schema + " CASCADE");
            }
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An order row, written with JDBC (whose calls throw the checked SQLException). */
    private static void insertOrder(Connection connection) throws java.sql.SQLException {
        connection.createStatement().execute("INSERT INTO orders (sku) VALUES ('tea')");
    }

    private void send(StoredResponse response) {
        sent.add(response);
    }

    @Test
    void javaBlock() {
        String headerValue = "8e03978e-40d5-43e8-bc93-6894a57f9324";
        String text = "not a uuid";
        String code = null;
        Snowflake ids = Snowflake.builder(SnowflakeLayout.preset("classic"), 7)
                .rollback(RollbackPolicy.waitUpTo(5))
                .sequencePolicy(SequencePolicy.waitForNextTick())
                .build();
        long orderId = ids.nextId();
        String json = Long.toString(orderId);              // IDs travel as decimal strings in JSON
        long parsed = Snowflake.fromDecimal(json);         // and back, checked (SnowflakeException)
        UUID id = Mintid.uuid7();
        Fingerprint payload = Mintid.fingerprintJson(body);
        IdempotencyKey key = IdempotencyKey.fromHeader("order.create", "tenant-7", headerValue);
        Decision decision = Decision.decide(null, new Incoming(payload), System.currentTimeMillis(), RecordPolicy.DEFAULT);
        try {
            Uuid7.parse(text);
        } catch (MintidException e) {
            e.getCode();    // "uuid7.invalid_text": the same code in every language
            code = e.getCode();
        }
        assertEquals(7, SnowflakeLayout.classic().decode(orderId).getWorker());
        assertEquals(orderId, parsed);
        assertEquals(7, id.version());
        assertEquals("order.create", key.getKind());
        assertEquals(Decision.Execute.class, decision.getClass());
        assertEquals("uuid7.invalid_text", code);
    }

    @Test
    void storageBlock() {
        postgres(dataSource -> {
            IdempotencyStore store = new IdempotencyStore(dataSource, Dialect.POSTGRES, RecordPolicy.DEFAULT);
            IdempotencyKey key = IdempotencyKey.of("order.create", "tenant-7", "order-1001");
            IdempotencyKey key2 = IdempotencyKey.of("order.create", "tenant-7", "order-1002");
            StoreRequest request = new StoreRequest(Fingerprint.ofJson(body));
            store.transaction(connection -> connection.createStatement().execute("CREATE TABLE orders (sku TEXT NOT NULL)"));
            RunResult result = store.runOnce(key, request, held -> {
                try (Connection connection = dataSource.getConnection()) {
                    insertOrder(connection);                   // throws SQLException: no try/catch needed
                }
                return new StoredResponse("application/json", placeOrder());
            });
            if (result instanceof Executed executed) { send(executed.getResponse()); }
            RunResult same = store.transaction(connection -> store.inTransaction(connection, key2, request, c -> {
                insertOrder(c);                                // the record commits with this row
                return new StoredResponse("application/json", placeOrder());
            }));
            assertEquals(List.of(new StoredResponse("application/json", placeOrder())), sent);
            assertEquals(Executed.class, same.getClass());
            long orders = store.transaction(connection -> {
                java.sql.ResultSet rows = connection.createStatement().executeQuery("SELECT COUNT(*) FROM orders");
                rows.next();
                return rows.getLong(1);
            });
            assertEquals(2L, orders);
        });
    }

    /** Where the outbox relay publishes. */
    private static final class Broker {
        final List<String> published = new ArrayList<>();

        void publish(String kind, byte[] payload) {
            published.add(kind + ":" + new String(payload, StandardCharsets.UTF_8));
        }
    }

    @Test
    void leasesSegmentsOutboxBlock() {
        postgres(dataSource -> {
            byte[] payload = "{\"order\":42}".getBytes(StandardCharsets.UTF_8);
            Broker broker = new Broker();
            try (Connection connection = dataSource.getConnection()) {
                WorkerLeases leases = new WorkerLeases(dataSource, Dialect.POSTGRES, new LeasePolicy(SnowflakeLayout.classic()));
                long id;
                try (LeasedSnowflake ids = LeasedSnowflake.acquire(leases, "api-7f9c:4242")) {
                    id = ids.nextId();
                }
                try (SegmentIds orderIds = new SegmentIds(dataSource, Dialect.POSTGRES, "orders", SegmentPolicy.of(1_000, 100, 1_000_000))) {
                    long orderId = orderIds.nextId();
                }
                Outbox outbox = new Outbox(dataSource, Dialect.POSTGRES, RelayPolicy.of(100, 60_000));
                Enqueued enqueued = outbox.enqueue(connection, new OutboxMessage(id, "order.created", "order-42", payload));
                RelayReport report = outbox.relay(message -> broker.publish(message.getKind(), message.getPayload()));
                assertEquals(Enqueued.NEW, enqueued);
                assertEquals(1, report.getSent());
                assertEquals(List.of("order.created:{\"order\":42}"), broker.published);
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** A JDK server exchange as the wrapper's request view. */
    private record ExchangeView(HttpExchange exchange) implements HttpRequestView<HttpExchange> {
        @Override
        public String getMethod() {
            return exchange.getRequestMethod();
        }

        @Override
        public String getPath() {
            return exchange.getRequestURI().getPath();
        }

        @Override
        public String header(String name) {
            return exchange.getRequestHeaders().getFirst(name);
        }

        @Override
        public HttpExchange getRaw() {
            return exchange;
        }
    }

    @Test
    void httpIdempotencyBlock() throws Exception {
        SQLiteDataSource dataSource = new SQLiteDataSource();
        dataSource.setUrl("jdbc:sqlite:" + directory.resolve("http.sqlite"));
        Migrations.migrate(dataSource, Dialect.SQLITE);
        IdempotencyStore store = new IdempotencyStore(dataSource, Dialect.SQLITE, RecordPolicy.DEFAULT);
        KeyRing ring = new KeyRing(1, new byte[32]);
        String loggedInScopeOrNull = "user:alice";
        CompletableFuture<List<Integer>> answered = new CompletableFuture<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/orders", exchange -> {
            HttpRequestView<HttpExchange> view = new ExchangeView(exchange);
            // The JDK's com.sun.net.httpserver here; a servlet's HttpServletRequest works alike.
            HttpIdempotency<HttpExchange> idempotency = HttpIdempotency
                    .<HttpExchange>builder(store, request -> request.getRaw().getPrincipal() == null ? null : "user:" + request.getRaw().getPrincipal().getUsername())
                    .keyRing(ring)
                    .build();
            HttpHandler<HttpExchange> orders = idempotency.wrap((request, body) ->
                    HttpAnswer.of(201, "application/json", placeOrder(body.readAllBytes())));
            HttpAnswer answer = orders.handle(view, exchange.getRequestBody());   // view: your HttpRequestView
            HttpAnswer grant = new GrantEndpoint(ring).answer(loggedInScopeOrNull);       // 200 JSON or 401
            // Or let the wrapper serve it, never covered: builder.grant("/api/grant", new GrantEndpoint(ring), scopeOrNull)
            answered.complete(List.of(answer.getStatus(), grant.getStatus()));
            exchange.sendResponseHeaders(answer.getStatus(), -1);
            exchange.close();
        }).setAuthenticator(new BasicAuthenticator("shop") {
            @Override
            public boolean checkCredentials(String user, String password) {
                return user.equals("alice");
            }
        });
        server.start();
        try {
            String requestId = RequestId.mint(ring.issueGrant("user:alice", System.currentTimeMillis() + 60_000)).getText();
            HttpRequest order = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/orders"))
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("alice:pw".getBytes(StandardCharsets.UTF_8)))
                    .header("Mintid-Request-Id", requestId)
                    .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"tea\"}"))
                    .build();
            HttpResponse<Void> response = HttpClient.newHttpClient().send(order, HttpResponse.BodyHandlers.discarding());
            assertEquals(201, response.statusCode());
            assertEquals(List.of(201, 200), answered.get());
        } finally {
            server.stop(0);
        }
    }
}
