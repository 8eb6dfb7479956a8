package io.mintid.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.mintid.KeyRing;
import io.mintid.RecordPolicy;
import io.mintid.store.Dialect;
import io.mintid.store.IdempotencyStore;
import io.mintid.store.Migrations;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/** The framework-neutral wrapper and the grant endpoint from plain Java. */
class JavaHttpTest {
    @TempDir Path directory;

    /** A request view over a method, a path and a map of headers. */
    private record View(String method, String path, Map<String, String> headers) implements HttpRequestView<Map<String, String>> {
        @Override
        public String getMethod() {
            return method;
        }

        @Override
        public String getPath() {
            return path;
        }

        @Override
        public String header(String name) {
            return headers.get(name.toLowerCase());
        }

        @Override
        public Map<String, String> getRaw() {
            return headers;
        }
    }

    @Test
    void wrapperAndGrantsFromJava() throws Exception {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(10_000);
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        SQLiteDataSource pool = new SQLiteDataSource(config);
        pool.setUrl("jdbc:sqlite:" + directory.resolve("db.sqlite"));
        Migrations.migrate(pool, Dialect.SQLITE);
        IdempotencyStore store = new IdempotencyStore(pool, Dialect.SQLITE, RecordPolicy.DEFAULT);
        AtomicInteger calls = new AtomicInteger();
        HttpHandler<Map<String, String>> orders = HttpIdempotency
                .<Map<String, String>>builder(store, request -> "user:" + request.getRaw().get("x-user"))
                .bodyLimit(1024)
                .build()
                .wrap((request, body) -> HttpAnswer.of(201, "text/plain", "order " + calls.incrementAndGet()));
        View view = new View("POST", "/orders", Map.of("x-user", "ann", "idempotency-key", "k1"));
        HttpAnswer first = orders.handle(view, new ByteArrayInputStream("tea".getBytes(StandardCharsets.UTF_8)));
        HttpAnswer again = orders.handle(view, new ByteArrayInputStream("tea".getBytes(StandardCharsets.UTF_8)));
        assertEquals(201, first.getStatus());
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertEquals("order 1", new String(again.getBody(), StandardCharsets.UTF_8));
        assertEquals(1, calls.get());
        HttpAnswer missing = orders.handle(new View("POST", "/orders", Map.of("x-user", "ann")), new ByteArrayInputStream(new byte[0]));
        assertEquals(400, missing.getStatus());

        byte[] secret = new byte[32];
        new SecureRandom().nextBytes(secret);
        GrantEndpoint grants = new GrantEndpoint(new KeyRing(1, secret));
        assertEquals(200, grants.answer("user:ann").getStatus());
        assertEquals(401, grants.answer(null).getStatus());
        assertEquals("http.post.fc7d055239", HttpRules.defaultKind("POST", "/orders"));
    }
}
