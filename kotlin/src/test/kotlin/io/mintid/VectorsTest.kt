package io.mintid

import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.nio.file.Path
import java.nio.file.Paths
import kotlin.io.path.isDirectory
import kotlin.io.path.listDirectoryEntries
import kotlin.io.path.name
import kotlin.io.path.readText

/**
 * Runs every case of every file in `tests/vectors/` against the Kotlin API.
 *
 * Dispatch is on each case's `op`; an `op` no runner knows fails its case, so a new vector
 * file cannot be skipped silently.
 */
class VectorsTest {
    private val vectorDir: Path =
        Paths.get(System.getProperty("mintid.vectors") ?: "../tests/vectors").toAbsolutePath().normalize()

    @TestFactory
    fun `every vector file`(): List<DynamicNode> {
        assertTrue(vectorDir.isDirectory(), "no vector directory at $vectorDir")
        return vectorDir.listDirectoryEntries("*.json").sorted().map { file -> fileNode(file) }
    }

    private fun fileNode(file: Path): DynamicNode {
        val root = Json.parseToJsonElement(file.readText()).jsonObject
        val cases = root["cases"]?.jsonArray ?: fail("${file.name}: no \"cases\" array")
        if (cases.isEmpty()) fail("${file.name}: no cases")
        return DynamicContainer.dynamicContainer(
            file.name,
            file.toUri(),
            cases.map { element ->
                val case = element.jsonObject
                val name = case.string("name")
                DynamicTest.dynamicTest(name) { runCase(file.name, case) }
            }.stream(),
        )
    }

    private fun runCase(file: String, case: JsonObject) {
        val op = case.string("op")
        val runner = VectorOps.runners[op] ?: fail("$file: no Kotlin runner for op \"$op\"")
        runner(case)
    }
}

internal fun JsonObject.string(field: String): String =
    this[field]?.jsonPrimitive?.content ?: fail("case has no \"$field\": $this")

/** The runner of each vector `op`, filled in as the core's concerns land. */
internal object VectorOps {
    val runners: Map<String, (JsonObject) -> Unit> = mapOf()
}
