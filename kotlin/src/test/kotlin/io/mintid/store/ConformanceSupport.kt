package io.mintid.store

import io.mintid.MintidException
import io.mintid.string
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.DynamicContainer.dynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest.dynamicTest
import org.junit.jupiter.api.fail
import java.nio.file.Files
import java.nio.file.Paths

// What the conformance runners share: the files of tests/conformance/, one dynamic test per case
// and database (each on a fresh database), and the vocabulary's small pieces.

/** The cases of `tests/conformance/<file>`. */
internal fun conformanceCases(file: String): List<JsonObject> {
    val dir = Paths.get(System.getProperty("mintid.conformance") ?: "../tests/conformance").toAbsolutePath().normalize()
    val cases = Json.parseToJsonElement(Files.readString(dir.resolve(file))).jsonObject["cases"]!!.jsonArray.map { it.jsonObject }
    assertTrue(cases.isNotEmpty(), "$file has no cases")
    return cases
}

/**
 * Every case of [file] on every dialect, each on a fresh database: skipped where the database is
 * not configured (a failure under `CI=true`, see [skipReason]). Each case must be an `op:
 * "scenario"` with a `manual` or `system` clock.
 */
internal fun scenarioTests(
    file: String,
    run: (JsonObject, FreshDatabase) -> Unit,
): List<DynamicNode> {
    val cases = conformanceCases(file)
    return Dialect.entries.map { dialect ->
        val skip = skipReason(dialect)
        dynamicContainer(
            "$file on ${dialect.directory}",
            cases.map { case ->
                dynamicTest(case.string("name")) {
                    assumeTrue(skip == null, skip)
                    assertEquals("scenario", case.string("op"), "unknown op")
                    FreshDatabase(dialect).use { db -> run(case, db) }
                }
            },
        )
    }
}

/** A manual clock that advances on pause, set to each step's `now`. */
internal class StepClock : StoreClock {
    @Volatile var current = 0L

    override fun nowMillis(): Long = current

    override fun pause(millis: Long) {
        current += millis
    }
}

/** The case's clock: a [StepClock] for `manual`, the system clock for `system`. */
internal fun clockOf(case: JsonObject): StoreClock =
    when (val kind = case.string("clock")) {
        "manual" -> StepClock()
        "system" -> StoreClock.SYSTEM
        else -> fail("unknown clock $kind")
    }

/** Fails when [step] has a field outside `do`, `expect` and [allowed]. */
internal fun checkFields(
    step: JsonObject,
    allowed: Set<String>,
    where: String,
) = step.keys.forEach { assertTrue(it == "do" || it == "expect" || it in allowed, "$where: unknown field $it") }

/** A decimal-string field. */
internal fun JsonObject.long(field: String): Long = string(field).toLong()

/** A decimal string, as the files write every integer. */
internal fun str(value: Any): JsonPrimitive = JsonPrimitive(value.toString())

/** A JSON object of [pairs]. */
internal fun json(vararg pairs: Pair<String, JsonElement>): JsonObject = JsonObject(mapOf(*pairs))

/** `{"error": code}` for a mintid error, or the value [action] gives. */
internal fun outcome(action: () -> JsonElement): JsonElement =
    try {
        action()
    } catch (error: MintidException) {
        json("error" to JsonPrimitive(error.code))
    }
