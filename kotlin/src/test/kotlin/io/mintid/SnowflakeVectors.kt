package io.mintid

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** `tests/vectors/snowflake.json`. */
internal object SnowflakeVectors {
    val ops: VectorOps =
        mapOf(
            "layout" to ::layout,
            "layout_invalid" to ::layoutInvalid,
            "compose" to ::compose,
            "decode" to ::decode,
            "worker_id" to ::workerId,
            "parse_decimal" to ::parseDecimal,
            "parse_base32" to ::parseBase32,
            "generate" to ::generate,
        )

    fun layoutOf(case: JsonObject): SnowflakeLayout {
        val spec = case["layout"] ?: fail("no layout in $case")
        if (spec is JsonPrimitive) return SnowflakeLayout.preset(spec.content)
        val fields = spec.jsonObject
        val layout =
            SnowflakeLayout.of(
                fields.int("time_bits"),
                fields.int("worker_bits"),
                fields.int("sequence_bits"),
                fields.u64("epoch_millis"),
                fields.u64("tick_millis"),
            )
        return if (fields.has("datacenter_bits")) layout.withDatacenterBits(fields.int("datacenter_bits")) else layout
    }

    private fun layout(case: JsonObject) {
        val layout = layoutOf(case)
        val expect = case.obj("expect")
        val actual: Map<String, (String) -> Any> =
            mapOf(
                "time_bits" to { _ -> layout.timeBits },
                "worker_bits" to { _ -> layout.workerBits },
                "sequence_bits" to { _ -> layout.sequenceBits },
                "datacenter_bits" to { _ -> layout.datacenterBits },
                "epoch_millis" to { _ -> layout.epochMillis },
                "tick_millis" to { _ -> layout.tickMillis },
                "max_worker" to { _ -> layout.maxWorker },
                "max_sequence" to { _ -> layout.maxSequence },
                "max_id" to { _ -> layout.maxId },
                "js_safe" to { _ -> layout.isJsSafe },
                "lifetime_millis" to { _ -> layout.lifetimeMillis },
                "expires_at_unix_millis" to { _ -> layout.expiresAtUnixMillis },
                "remaining_millis" to { _ -> layout.remainingMillis(case.u64("now_unix_millis")) },
            )
        for ((field, value) in expect) {
            val read = actual[field] ?: fail("unknown layout field $field")
            val primitive = value as JsonPrimitive
            val expected: Any =
                when {
                    !primitive.isString && primitive.content in setOf("true", "false") -> primitive.content.toBoolean()
                    !primitive.isString -> primitive.content.toInt()
                    else -> java.lang.Long.parseUnsignedLong(primitive.content)
                }
            assertEquals(expected, read(field), field)
        }
    }

    private fun layoutInvalid(case: JsonObject) = case.expect({ layoutOf(case) }) { fail("built $it") }

    private fun compose(case: JsonObject) {
        val layout = layoutOf(case)
        val worker = case.u64("worker")
        val sequence = case.u64("sequence")
        case.expect({
            if (case.has("tick")) {
                layout.composeTick(case.u64("tick"), worker, sequence)
            } else {
                layout.compose(case.u64("unix_millis"), worker, sequence)
            }
        }) { id ->
            assertEquals(case.u64("id"), id)
            assertEquals(case.string("base32"), Snowflake.toBase32(id))
        }
    }

    private fun decode(case: JsonObject) =
        case.expect({ layoutOf(case).decode(case.u64("id")) }) { parts ->
            assertEquals(
                SnowflakeParts(case.u64("unix_millis"), case.u64("tick"), case.u64("worker"), case.u64("sequence")),
                parts,
            )
        }

    private fun workerId(case: JsonObject) {
        val layout = layoutOf(case)
        case.expect({ layout.workerId(case.u64("datacenter"), case.u64("worker")) }) { id ->
            assertEquals(case.u64("worker_id"), id)
            assertEquals(SnowflakeWorkerSplit(case.u64("datacenter"), case.u64("worker")), layout.splitWorkerId(id))
        }
    }

    private fun parseDecimal(case: JsonObject) =
        case.expect({ Snowflake.fromDecimal(case.string("text")) }) { id ->
            assertEquals(case.u64("id"), id)
            assertEquals(case.string("id"), id.toString())
            assertEquals(case.string("base32"), Snowflake.toBase32(id))
        }

    private fun parseBase32(case: JsonObject) =
        case.expect({ Snowflake.fromBase32(case.string("text")) }) { id ->
            assertEquals(case.u64("id"), id)
            assertEquals(case.string("base32"), Snowflake.toBase32(id))
        }

    private fun generate(case: JsonObject) {
        val clockSpec = case.obj("clock")
        val clock = ManualClock(clockSpec.u64("start_millis"), clockSpec.bool("advance_on_pause"))
        val builder = Snowflake.builder(layoutOf(case), case.u64("worker")).clock(clock)
        if (case.has("rollback")) builder.rollback(rollback(case.obj("rollback")))
        if (case.has("sequence_policy")) builder.sequencePolicy(sequencePolicy(case.obj("sequence_policy")))
        if (case.has("starting_after_id")) builder.startingAfterId(case.u64("starting_after_id"))
        if (case.has("starting_after_unix_millis")) builder.startingAfterUnixMillis(case.u64("starting_after_unix_millis"))
        val code = case.stringOrNull("error")
        if (code != null) {
            assertEquals(code, assertThrows<SnowflakeException> { builder.build() }.code)
            assertTrue(case.array("steps").isEmpty())
            return
        }
        val generator = builder.build()
        for (element in case.array("steps")) {
            val step = element.jsonObject
            if (step.has("clock_millis")) clock.setMillis(step.u64("clock_millis"))
            val count = step.int("count")
            val call: () -> List<Long> =
                when (val kind = step.string("call")) {
                    "next" -> { -> List(count) { generator.nextId() } }
                    "batch" -> { -> generator.nextIds(count).toList() }
                    else -> fail("unknown call $kind")
                }
            step.expect(call) { ids ->
                assertEquals(step.strings("ids").map { java.lang.Long.parseUnsignedLong(it) }, ids)
                assertEquals(step.strings("base32"), ids.map { Snowflake.toBase32(it) })
            }
            if (step.has("clock_after_millis")) assertEquals(step.u64("clock_after_millis"), clock.nowMillis(), "clock after")
            if (step.has("high_water")) assertEquals(step.u64("high_water"), generator.highWater, "high water")
        }
    }

    private fun rollback(spec: JsonObject): RollbackPolicy =
        when (val policy = spec.string("policy")) {
            "fail" -> RollbackPolicy.fail()
            "wait" -> RollbackPolicy.waitUpTo(spec.u64("max_millis"))
            "logical" -> RollbackPolicy.logical(spec.u64("max_millis"))
            else -> fail("unknown rollback policy $policy")
        }

    private fun sequencePolicy(spec: JsonObject): SequencePolicy =
        when (val policy = spec.string("policy")) {
            "wait" -> SequencePolicy.waitForNextTick()
            "borrow_ahead" -> SequencePolicy.borrowAhead(spec.u64("max_ticks"))
            else -> fail("unknown sequence policy $policy")
        }
}
