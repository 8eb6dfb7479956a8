package example.shop;

import io.mintid.spring.IdempotencyScopeResolver;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A payment service on the starter, without Spring Security: {@link PaymentsController} takes
 * each payment once per {@code Idempotency-Key}, and the scope of a key is the shop that sent it.
 */
@SpringBootApplication
public class ShopApplication {
    public static void main(String[] args) {
        SpringApplication.run(ShopApplication.class, args);
    }

    /** Whose keys: the shop named by the gateway in front of this service (null: 401). */
    @Bean
    IdempotencyScopeResolver scope() {
        return request -> {
            String shop = request.getHeader("X-Shop");
            return shop == null ? null : "shop:" + shop;
        };
    }
}
