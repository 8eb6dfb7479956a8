package io.mintid

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals

/** `tests/vectors/outbox.json`. */
internal object OutboxVectors {
    val ops: VectorOps =
        mapOf(
            "status" to ::status,
            "policy" to ::policy,
            "backoff" to ::backoff,
            "claim" to ::claim,
            "delivery" to ::delivery,
            "after_failure" to ::afterFailure,
            "enqueued" to ::enqueued,
            "marked" to ::marked,
            "message" to ::message,
        )

    private fun policyOf(case: JsonObject): RelayPolicy {
        val spec = case.obj("policy")
        return RelayPolicy(
            spec.u64("batch_size"),
            spec.u64("claim_millis"),
            spec.u64("base_backoff_millis"),
            spec.u64("max_backoff_millis"),
            spec.int("jitter_percent"),
            spec.u64("max_attempts"),
        )
    }

    private fun status(case: JsonObject) = case.expect({ OutboxStatus.parse(case.string("text")) }) { assertEquals(case.string("expect"), it.text) }

    private fun policy(case: JsonObject) = case.expect({ policyOf(case).check() }) { assertEquals("ok", case.string("expect")) }

    private fun backoff(case: JsonObject) =
        case.expect({ policyOf(case).backoffMillis(case.u64("attempts"), case.u64("draw")) }) { assertEquals(case.u64("expect"), it) }

    private fun claim(case: JsonObject) =
        case.expect({ policyOf(case).claim(case.u64("now"), case.u64("draw")) }) { claim ->
            val expect = case.obj("expect")
            assertEquals(expect.u64("claim_token"), claim.claimToken)
            assertEquals(expect.u64("claimed_until"), claim.claimedUntilMillis)
            assertEquals(expect.u64("batch_size"), claim.batchSize)
            assertEquals(case.u64("now"), claim.nowMillis)
        }

    private fun delivery(case: JsonObject) =
        case.expect({ policyOf(case).delivery(case.u64("attempts")) }) { assertEquals(case.string("expect"), it.name.lowercase()) }

    private fun afterFailure(case: JsonObject) =
        case.expect({ policyOf(case).afterFailure(case.u64("attempts"), case.u64("now"), case.u64("draw")) }) { after ->
            val expect = case["expect"]
            when (after) {
                AfterFailure.Dead -> assertEquals("dead", (expect as JsonPrimitive).content)
                is AfterFailure.Retry -> assertEquals(case.obj("expect").u64("retry"), after.nextAttemptMillis)
            }
        }

    private fun enqueued(case: JsonObject) =
        case.expect({ OutboxRules.enqueued(case.u64("rows")) }) { assertEquals(case.string("expect"), it.name.lowercase()) }

    private fun marked(case: JsonObject) =
        case.expect({ OutboxRules.checkMarked(case.u64("rows"), case.u64("message_id"), case.u64("claim_token")) }) {
            assertEquals("ok", case.string("expect"))
        }

    private fun message(case: JsonObject) =
        case.expect({ OutboxRules.checkMessage(case.string("kind"), case.string("business_key"), case.u64("payload_len")) }) {
            assertEquals("ok", case.string("expect"))
        }
}
