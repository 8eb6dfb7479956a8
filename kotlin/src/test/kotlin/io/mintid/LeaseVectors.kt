package io.mintid

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.fail

/** `tests/vectors/lease.json`. */
internal object LeaseVectors {
    val ops: VectorOps =
        mapOf(
            "policy" to ::policy,
            "acquire" to ::acquire,
            "none_found" to ::noneFound,
            "guard" to ::guard,
        )

    private fun policyOf(spec: JsonObject) =
        LeasePolicy(
            SnowflakeVectors.layoutOf(spec),
            spec.u64("lease_millis"),
            spec.u64("renew_interval_millis"),
            spec.u64("safety_margin_millis"),
            spec.u64("renew_retry_millis"),
            spec.u64("max_skew_millis"),
            spec.u64("max_start_wait_millis"),
        )

    private fun rowOf(spec: JsonObject) =
        WorkerLease(spec.u64("worker_id"), spec.u64("fencing_token"), spec.u64("lease_deadline"), spec.u64("high_water"), spec.bool("held"))

    private fun policy(case: JsonObject) =
        case.expect({ policyOf(case.obj("policy")) }) { assertEquals(case.obj("expect").u64("max_worker"), it.maxWorker) }

    private fun acquire(case: JsonObject) =
        case.expect({ Acquisition.acquire(rowOf(case.obj("row")), case.u64("now"), policyOf(case.obj("policy"))) }) { made ->
            val expect = case.obj("expect")
            assertEquals(rowOf(expect.obj("lease")), made.lease)
            assertEquals(expect.u64("expected_token"), made.expectedToken)
            assertEquals(expect.u64("start_after"), made.startAfterMillis)
            assertEquals(expect.u64("ready_at"), made.readyAtMillis)
        }

    private fun noneFound(case: JsonObject) =
        case.expect({ Acquisition.noneFound(case.u64("present"), case.u64("free"), policyOf(case.obj("policy"))) }) {
            assertEquals(case.string("expect"), it.name.lowercase())
        }

    private fun guard(case: JsonObject) {
        val policy = policyOf(case.obj("policy"))
        val guard = LeaseGuard(Acquisition.acquire(rowOf(case.obj("row")), case.u64("now"), policy), policy)
        var latest: Renewal? = null
        for (element in case.array("steps")) {
            val step = element.jsonObject
            when (val action = step.string("do")) {
                "check" -> outcome(step) { guard.check(step.u64("now")) }
                "admit" -> outcome(step) { guard.admit(step.u64("id")) }
                "admit_all" -> outcome(step) { guard.admitAll(step.strings("ids").map { java.lang.Long.parseUnsignedLong(it) }.toLongArray()) }
                "renew_due" -> assertEquals(step.bool("expect"), guard.renewDue(step.u64("now")))
                "renewal" -> {
                    val expect = step["expect"]?.jsonObject ?: fail("no expect")
                    expect.expect({ guard.renewal(step.u64("now"), step.u64("high_water")) }) { renewal ->
                        assertEquals(expect.u64("lease_deadline"), renewal.leaseDeadlineMillis)
                        assertEquals(expect.u64("high_water"), renewal.highWaterMillis)
                        assertEquals(guard.workerId, renewal.workerId)
                        assertEquals(guard.fencingToken, renewal.fencingToken)
                        assertEquals(step.u64("now"), renewal.nowMillis)
                        latest = renewal
                    }
                }
                "renewed" -> outcome(step) { guard.renewed(latest ?: fail("no renewal made"), step.u64("rows")) }
                "renewal_failed" -> guard.renewalFailed(step.u64("now"))
                "release" -> assertEquals(step.obj("expect").u64("high_water"), guard.release(step.u64("now"), step.u64("high_water")).highWaterMillis)
                "state" -> {
                    val expect = step.obj("expect")
                    assertEquals(expect.u64("lease_deadline"), guard.leaseDeadlineMillis)
                    assertEquals(expect.u64("stop_at"), guard.stopAtMillis)
                    assertEquals(expect.u64("next_renewal_at"), guard.nextRenewalAtMillis)
                    assertEquals(expect.bool("live"), guard.isLive)
                }
                else -> fail("unknown guard step $action")
            }
        }
    }
}

/** A step whose `expect` is `"ok"` or `{"error": code}`. */
internal fun outcome(
    step: JsonObject,
    action: () -> Unit,
) {
    val expect = step["expect"] ?: fail("no expect in $step")
    if (expect is JsonPrimitive) {
        assertEquals("ok", expect.jsonPrimitive.content)
        action()
    } else {
        expect.jsonObject.expect(action) {}
    }
}
