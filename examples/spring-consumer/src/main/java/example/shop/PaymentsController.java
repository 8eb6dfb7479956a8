package example.shop;

import io.mintid.spring.Idempotent;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** Payments over HTTP: a retry with the same key gets the first answer, and no second payment. */
@RestController
class PaymentsController {
    /** How many payments were taken (the test reads it). */
    final AtomicLong taken = new AtomicLong();

    @Idempotent
    @PostMapping("/payments")
    ResponseEntity<Map<String, Object>> pay(@RequestBody Map<String, Object> payment) {
        long number = taken.incrementAndGet();
        return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("payment", number, "amount", payment.get("amount")));
    }
}
