package example.shop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** The application on a free port and a SQLite file: one payment sent twice is taken once. */
class ShopApplicationTest {
    @Test
    void aRetriedPaymentIsTakenOnce(@TempDir Path dir) throws Exception {
        String[] args = {"--server.port=0", "--spring.datasource.url=jdbc:sqlite:" + dir.resolve("shop.db")};
        try (ConfigurableApplicationContext app = SpringApplication.run(ShopApplication.class, args)) {
            String url = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + "/payments";
            String key = UUID.randomUUID().toString();
            HttpResponse<byte[]> first = pay(url, key);
            HttpResponse<byte[]> second = pay(url, key);

            assertEquals(201, first.statusCode(), new String(first.body()));
            assertEquals(201, second.statusCode(), new String(second.body()));
            assertArrayEquals(first.body(), second.body());
            assertFalse(first.headers().firstValue("Idempotent-Replayed").isPresent());
            assertEquals("true", second.headers().firstValue("Idempotent-Replayed").orElse(null));
            assertEquals(1, app.getBean(PaymentsController.class).taken.get());
        }
    }

    private static HttpResponse<byte[]> pay(String url, String key) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", key)
                .header("X-Shop", "7")
                .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1250}"))
                .build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofByteArray());
    }
}
