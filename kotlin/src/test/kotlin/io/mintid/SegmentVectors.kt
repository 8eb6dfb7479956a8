package io.mintid

import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.fail

/** `tests/vectors/segment.json`. */
internal object SegmentVectors {
    val ops: VectorOps =
        mapOf(
            "policy" to ::policy,
            "adapt" to ::adapt,
            "allocator" to ::allocator,
        )

    private fun policyOf(spec: JsonObject) =
        SegmentPolicy(
            spec.u64("initial_step"),
            spec.u64("min_step"),
            spec.u64("max_step"),
            spec.int("fetch_at_percent"),
            spec.u64("grow_below_millis"),
            spec.u64("shrink_above_millis"),
        )

    private fun policy(case: JsonObject) = case.expect({ policyOf(case.obj("policy")).check() }) { assertEquals("ok", case.string("expect")) }

    private fun adapt(case: JsonObject) =
        case.expect({ policyOf(case.obj("policy")).adapt(case.u64("step"), case.u64("lasted")) }) { assertEquals(case.u64("expect"), it) }

    private fun ids(values: List<Long?>) = values.map { it?.let(java.lang.Long::toUnsignedString) }

    private fun allocator(case: JsonObject) {
        val allocator = SegmentAllocator(policyOf(case.obj("policy")))
        for (element in case.array("steps")) {
            val step = element.jsonObject
            when (val action = step.string("do")) {
                "next" -> {
                    val expected = step.array("expect").map { if (it is JsonNull) null else it.jsonPrimitive.content }
                    assertEquals(expected, ids(expected.map { allocator.nextId() }))
                }
                "fill" -> assertEquals(step.strings("expect"), ids(allocator.fill(step.int("count")).toList()))
                "fetch_due" -> {
                    val expected = step["expect"].let { if (it is JsonNull) null else step.u64("expect") }
                    assertEquals(expected, allocator.fetchDue(step.u64("now")))
                }
                "fetched" -> outcome(step) { allocator.fetched(step.u64("max_id"), step.u64("step"), step.u64("now")) }
                "fetch_failed" -> allocator.fetchFailed()
                "state" -> {
                    val expect = step.obj("expect")
                    assertEquals(expect.u64("remaining"), allocator.remaining)
                    assertEquals(expect.u64("step"), allocator.step)
                    assertEquals(expect.bool("in_flight"), allocator.fetchInFlight)
                }
                else -> fail("unknown allocator step $action")
            }
        }
    }
}
