package example.orders;

import io.mintid.Fingerprint;
import io.mintid.IdempotencyKey;
import io.mintid.spring.TransactionalIdempotency;
import io.mintid.store.RunResult;
import io.mintid.store.StoreRequest;
import io.mintid.store.StoredResponse;
import java.nio.charset.StandardCharsets;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The orders table, written in Spring transactions. */
@Service
public class OrderService {
    private final JdbcTemplate jdbc;
    private final TransactionalIdempotency idempotency;

    OrderService(JdbcTemplate jdbc, TransactionalIdempotency idempotency) {
        this.jdbc = jdbc;
        this.idempotency = idempotency;
    }

    /** Inserts an order and returns how many there are now. */
    @Transactional
    public long place(String sku) {
        jdbc.update("INSERT INTO orders (sku) VALUES (?)", sku);
        return count();
    }

    /**
     * Places an order once for {@code key}, the record in the order's transaction: if the
     * transaction rolls back ({@code fail}), neither the order nor the record stays.
     */
    @Transactional
    public RunResult placeOnce(IdempotencyKey key, String sku, boolean fail) {
        StoreRequest request = new StoreRequest(Fingerprint.ofJson("{\"sku\":\"" + sku + "\"}"));
        return idempotency.run(key, request, connection -> {
            jdbc.update("INSERT INTO orders (sku) VALUES (?)", sku);
            if (fail) {
                throw new IllegalStateException("the payment was declined");
            }
            return new StoredResponse("application/json", ("{\"order\":" + count() + "}").getBytes(StandardCharsets.UTF_8));
        });
    }

    /** How many orders there are. */
    public long count() {
        Long count = jdbc.queryForObject("SELECT COUNT(*) FROM orders", Long.class);
        return count == null ? 0 : count;
    }
}
