package example.orders;

import io.mintid.IdempotencyKey;
import io.mintid.spring.Idempotent;
import io.mintid.spring.MintidProblems;
import io.mintid.store.Executed;
import io.mintid.store.NotExecuted;
import io.mintid.store.Replayed;
import io.mintid.store.RunResult;
import io.mintid.store.StoredResponse;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
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

    /**
     * Places an order once for the client's {@code Order-Key}, the record in the order's
     * transaction ({@link OrderService#placeOnce}); a refusal answers with the core's problem as
     * Spring's {@code ProblemDetail}.
     */
    @PostMapping("/orders/once")
    ResponseEntity<?> placeOnce(@RequestHeader("Order-Key") String key, @RequestBody Map<String, Object> order) {
        RunResult result = orders.placeOnce(IdempotencyKey.of("order.place", "user:alice", key), String.valueOf(order.get("sku")), false);
        StoredResponse response;
        if (result instanceof Executed executed) {
            response = executed.getResponse();
        } else if (result instanceof Replayed replayed && replayed.getResponse() != null) {
            response = replayed.getResponse();
        } else {
            return MintidProblems.refusal((NotExecuted) result);
        }
        return ResponseEntity.status(HttpStatus.CREATED)
                .contentType(MediaType.parseMediaType(response.getContentType()))
                .body(response.getBody());
    }
}
