package example.orders;

import io.mintid.spring.Idempotent;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Orders over HTTP. */
@RestController
class OrdersController {
    private final OrderService orders;

    OrdersController(OrderService orders) {
        this.orders = orders;
    }

    /** Places an order: a retry with the same key gets this answer again, and no second order. */
    @Idempotent
    @PostMapping("/orders")
    ResponseEntity<Map<String, Object>> place(@RequestBody Map<String, Object> order) {
        long id = orders.place(String.valueOf(order.get("sku")));
        return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("order", id));
    }
}
