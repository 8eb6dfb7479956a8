package example.forms;

import io.mintid.spring.IdempotencyScopeResolver;
import io.mintid.spring.Idempotent;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application whose {@code @Idempotent} PATCH takes a form body, which Spring Boot's
 * {@code FormContentFilter} (on by default, ordered before every application filter) reads
 * before mintid's filter: the body consumed first of issue 25, item 6.
 */
@SpringBootApplication
public class FormsApplication {
    /** How often the handler ran. */
    public static final AtomicInteger RAN = new AtomicInteger();

    /** Every caller is one user here. */
    @Bean
    IdempotencyScopeResolver scope() {
        return request -> "user:ann";
    }

    /** An account's limit, changed once per key. */
    @RestController
    static class Accounts {
        @Idempotent
        @PatchMapping("/accounts/{id}")
        Map<String, Object> limit(@PathVariable String id, @RequestParam(required = false) String amount) {
            RAN.incrementAndGet();
            return Map.of("account", id, "limit", String.valueOf(amount));
        }
    }
}
