package io.mintid

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.assertThrows
import java.util.UUID

/** `tests/vectors/uuid7.json`. */
internal object Uuid7Vectors {
    val ops: VectorOps =
        mapOf(
            "from_fields" to ::fromFields,
            "parse" to ::parse,
            "parse_uuid" to ::parseUuid,
            "from_bytes" to ::fromBytes,
            "new_v8" to ::newV8,
            "generate" to ::generate,
        )

    private fun fromFields(case: JsonObject) =
        case.expect({ Uuid7.fromFields(case.u64("unix_millis"), case.int("rand_a"), case.u64("rand_b")) }) { uuid ->
            assertEquals(case.string("bytes"), Uuids.toBytes(uuid).toHex())
            for (form in UuidTextForm.entries) {
                val text = case.string(form.name.lowercase())
                assertEquals(text, Uuids.format(uuid, form), form.name)
                assertEquals(uuid, Uuid7.parse(text), "parse back $text")
                assertEquals(uuid, Uuids.parse(text), "parse back $text as any UUID")
            }
            assertEquals(case.int("counter"), Uuid7.fields(uuid).counter)
        }

    private fun parse(case: JsonObject) = case.expect({ Uuid7.parse(case.string("text")) }) { checkFields(case, it) }

    private fun fromBytes(case: JsonObject) =
        case.expect({ Uuid7.fromBytes(case.hex("bytes")) }) { uuid ->
            checkFields(case, uuid)
            assertEquals(case.string("hyphenated"), uuid.toString())
        }

    private fun checkFields(
        case: JsonObject,
        uuid: UUID,
    ) {
        val fields = Uuid7.fields(uuid)
        assertEquals(case.string("bytes"), Uuids.toBytes(uuid).toHex())
        assertEquals(case.u64("unix_millis"), fields.unixMillis)
        assertEquals(case.u64("unix_millis"), Uuid7.timestampMillis(uuid))
        assertEquals(case.int("rand_a"), fields.randA)
        assertEquals(case.u64("rand_b"), fields.randB)
        assertEquals(case.int("counter"), fields.counter)
    }

    private fun parseUuid(case: JsonObject) =
        case.expect({ Uuids.parse(case.string("text")) }) { uuid ->
            assertEquals(case.string("bytes"), Uuids.toBytes(uuid).toHex())
            assertEquals(case.int("version"), uuid.version())
            val variant = mapOf(0 to "ncs", 2 to "rfc9562", 6 to "microsoft", 7 to "future")[uuid.variant()]
            assertEquals(case.string("variant"), variant)
        }

    private fun newV8(case: JsonObject) =
        case.expect({ Uuids.newV8(case.hex("custom")) }) { uuid ->
            assertEquals(case.string("bytes"), Uuids.toBytes(uuid).toHex())
            assertEquals(case.string("hyphenated"), uuid.toString())
            assertEquals(8, uuid.version())
        }

    private fun generate(case: JsonObject) {
        val clock = ManualClock(0)
        val generator = Uuid7Generator.forTesting(clock, case.hex("entropy"), policy(case.obj("policy")))
        var last: UUID? = null
        for (element in case.array("steps")) {
            val step = element.jsonObject
            clock.setMillis(step.u64("clock_millis"))
            val code = step.stringOrNull("error")
            if (code != null) {
                assertEquals(code, assertThrows<Uuid7Exception> { generator.next() }.code)
                continue
            }
            val skip = if (step.has("skip")) step.int("skip") else 0
            val made = List(skip) { generator.next() } + step.strings("expect").map { generator.next() }
            for (uuid in made) {
                last?.let { assertTrue(uuid > it, "$uuid after $it") }
                last = uuid
            }
            assertEquals(step.strings("expect"), made.drop(skip).map { it.toString() })
        }
    }

    private fun policy(policy: JsonObject): RollbackPolicy =
        when (val kind = policy.string("kind")) {
            "fail" -> RollbackPolicy.fail()
            "wait" -> RollbackPolicy.waitUpTo(policy.u64("max_millis"))
            "logical" -> RollbackPolicy.logical(policy.u64("max_millis"))
            else -> error("unknown policy kind $kind")
        }
}
