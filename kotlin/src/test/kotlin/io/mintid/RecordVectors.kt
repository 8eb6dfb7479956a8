package io.mintid

import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** `tests/vectors/record.json`. */
internal object RecordVectors {
    val ops: VectorOps =
        mapOf(
            "sequence" to ::sequence,
            "status" to ::status,
            "policy" to ::policy,
            "problem" to ::problem,
            "retry_after_secs" to ::retryAfterSecs,
            "http_constants" to ::httpConstants,
        )

    private fun policyOf(spec: JsonObject) =
        RecordPolicy(
            spec.u64("lease_millis"),
            spec.u64("retention_millis"),
            spec.bool("store_errors"),
            spec.u64("retry_after_millis"),
            spec.u64("max_wait_millis"),
            spec.u64("poll_millis"),
        )

    private fun fingerprint(hex: String) = Fingerprint.ofDigest(hexToBytes(hex))

    private fun recordOf(spec: JsonObject) =
        Record(
            RecordStatus.parse(spec.string("status")),
            fingerprint(spec.string("fingerprint")),
            spec.u64("token"),
            spec.u64("lease_deadline"),
            spec.u64("created"),
            spec.u64("expires"),
        )

    private fun status(case: JsonObject) =
        case.expect({ RecordStatus.parse(case.string("text")) }) { assertEquals(case.string("expect"), it.text) }

    private fun policy(case: JsonObject) =
        case.expect({ policyOf(case.obj("policy")).check() }) { assertEquals("ok", case.string("expect")) }

    private fun problem(case: JsonObject) {
        val problem = Problem.entries.firstOrNull { it.problemName == case.string("problem") } ?: fail("no problem ${case.string("problem")}")
        assertEquals(case.int("status"), problem.status)
        assertEquals(case.string("type"), problem.typeUri)
        assertEquals(case.string("title"), problem.title)
    }

    private fun retryAfterSecs(case: JsonObject) = assertEquals(case.u64("expect"), IdempotencyHttp.retryAfterSecs(case.u64("millis")))

    private fun httpConstants(case: JsonObject) {
        assertEquals(case.string("problem_content_type"), IdempotencyHttp.problemContentType)
        assertEquals(case.string("replayed_header"), IdempotencyHttp.replayedHeader)
        assertEquals(case.string("replayed_value"), IdempotencyHttp.replayedValue)
        assertEquals(case.string("retry_after_header"), IdempotencyHttp.retryAfterHeader)
    }

    /** One key's store and the workers' claims and fences, driven step by step. */
    private class Store(
        val policy: RecordPolicy,
    ) {
        var record: Record? = null
        val claims = mutableMapOf<String, Claim>()
        val fences = mutableMapOf<String, Fence>()
    }

    private fun sequence(case: JsonObject) {
        val store = Store(policyOf(case.obj("policy")))
        for (element in case.array("steps")) {
            val step = element.jsonObject
            when (val action = step.string("do")) {
                "decide" -> decide(store, step)
                "claim" -> end(step) {
                    val worker = step.string("worker")
                    val claim = store.claims[worker] ?: fail("worker $worker holds no claim")
                    store.record = claim.apply(store.record, step.u64("now"))
                    store.fences[worker] = claim.fence
                }
                "complete" -> end(step) { store.record = current(store).complete(fence(store, step)) }
                "fail" -> end(step) {
                    val failure = Failure.valueOf(step.string("failure").uppercase())
                    store.record = current(store).fail(fence(store, step), failure, store.policy)
                }
                "check" -> {
                    val expect = step["expect"]
                    if (expect is JsonNull) assertNull(store.record) else assertEquals(recordOf(step.obj("expect")), store.record)
                }
                "store" -> store.record = recordOf(step.obj("record"))
                "cleanup" -> {
                    val removable = current(store).isRemovable(step.u64("now"))
                    assertEquals(step.string("expect"), if (removable) "removed" else "kept")
                    if (removable) store.record = null
                }
                else -> fail("unknown step $action")
            }
        }
    }

    private fun current(store: Store) = store.record ?: fail("the store holds no record")

    private fun fence(
        store: Store,
        step: JsonObject,
    ) = store.fences[step.string("worker")] ?: fail("worker ${step.string("worker")} holds no fence")

    /** A step whose `expect` is `"ok"` or `{"error": code}`; a failing step leaves the store as it was. */
    private fun end(
        step: JsonObject,
        action: () -> Unit,
    ) {
        val expect = step["expect"]
        if (expect is JsonPrimitive) {
            assertEquals("ok", expect.content)
            action()
        } else {
            val code = step.obj("expect").string("error")
            assertEquals(code, assertThrows<RecordException> { action() }.code)
        }
    }

    private fun decide(
        store: Store,
        step: JsonObject,
    ) {
        val incoming =
            Incoming(
                fingerprint(step.string("fingerprint")),
                if (step.has("key_created")) step.u64("key_created") else null,
                if (step.has("waited")) step.u64("waited") else 0,
            )
        val expect = step.obj("expect")
        expect.expect({ Decision.decide(store.record, incoming, step.u64("now"), store.policy) }) { decision ->
            assertEquals(expect.string("decision"), decision.name)
            assertEquals(expect.stringOrNull("problem"), decision.problem?.problemName)
            when (decision) {
                is Decision.Execute -> {
                    val record = decision.claim.record
                    assertEquals(RecordStatus.PENDING, record.status)
                    assertEquals(incoming.fingerprint, record.fingerprint)
                    assertEquals(expect.u64("token"), record.token)
                    assertEquals(expect.u64("lease_deadline"), record.leaseDeadlineMillis)
                    assertEquals(expect.u64("created"), record.createdMillis)
                    assertEquals(expect.u64("expires"), record.expiresMillis)
                    val replaces = expect["replaces"]
                    if (replaces is JsonNull) {
                        assertNull(decision.claim.expected)
                    } else {
                        val spec = expect.obj("replaces")
                        val expected = Expected(Fence(spec.u64("token"), spec.u64("created")), RecordStatus.parse(spec.string("status")))
                        assertEquals(expected, decision.claim.expected)
                    }
                    store.claims[step.string("worker")] = decision.claim
                }
                is Decision.Replay -> assertEquals(expect.string("outcome"), decision.outcome.name.lowercase())
                is Decision.InProgress -> {
                    assertEquals(expect.u64("retry_after_millis"), decision.retryAfterMillis)
                    assertEquals(expect.u64("retry_after_secs"), decision.retryAfterSecs)
                }
                is Decision.Wait -> assertEquals(expect.u64("poll_millis"), decision.pollMillis)
                is Decision.FingerprintMismatch, is Decision.KeyTooOld -> assertTrue(decision.problem != null)
            }
        }
    }
}
