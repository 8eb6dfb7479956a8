package example.orders;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.mintid.spring.IdempotencyScopeResolver;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A small Java application on the starter: {@code POST /orders} places an order once per
 * {@code Idempotency-Key} ({@link OrdersController}), {@link OrderService#placeOnce} records the
 * key in the order's own transaction, and the store's metrics go to the application's registry.
 */
@SpringBootApplication
public class OrdersApplication {
    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }

    /** Whose keys: this application's users name themselves in a header (a real one authenticates them). */
    @Bean
    IdempotencyScopeResolver scope() {
        return request -> {
            String user = request.getHeader("X-User");
            return user == null ? null : "user:" + user;
        };
    }

    /** The application's metrics (Spring Boot's actuator makes one; this application has none). */
    @Bean
    MeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
