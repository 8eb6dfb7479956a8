package io.mintid

import io.mintid.store.LimitsVectors
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
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

/** The runner of each `op` of one vector file. */
internal typealias VectorOps = Map<String, (JsonObject) -> Unit>

/**
 * Runs every case of every file in `tests/vectors/` against the Kotlin API.
 *
 * Dispatch is on the file, then on each case's `op`: a file or an `op` no runner knows fails,
 * so a new vector file cannot be skipped silently.
 */
class VectorsTest {
    private val vectorDir: Path =
        Paths.get(System.getProperty("mintid.vectors") ?: "../tests/vectors").toAbsolutePath().normalize()

    private val runners: Map<String, VectorOps> =
        mapOf(
            "api.json" to ApiVectors.ops,
            "db_error.json" to DbErrorVectors.ops,
            "fingerprint.json" to FingerprintVectors.ops,
            "http.json" to HttpVectors.ops,
            "id_buffer.json" to IdBufferVectors.ops,
            "keys.json" to KeyVectors.ops,
            "lease.json" to LeaseVectors.ops,
            "limits.json" to LimitsVectors.ops,
            "outbox.json" to OutboxVectors.ops,
            "record.json" to RecordVectors.ops,
            "request_id.json" to RequestIdVectors.ops,
            "segment.json" to SegmentVectors.ops,
            "snowflake.json" to SnowflakeVectors.ops,
            "storable_text.json" to StorableTextVectors.ops,
            "uuid7.json" to Uuid7Vectors.ops,
            "wire.json" to WireVectors.ops,
        )

    @TestFactory
    fun `every vector file`(): List<DynamicNode> {
        assertTrue(vectorDir.isDirectory(), "no vector directory at $vectorDir")
        val files = vectorDir.listDirectoryEntries("*.json").sorted()
        assertTrue(files.isNotEmpty(), "no vector file in $vectorDir")
        return files.map { file -> fileNode(file) }
    }

    private fun fileNode(file: Path): DynamicNode {
        val ops = runners[file.name]
        val cases = Json.parseToJsonElement(file.readText()).jsonObject["cases"]?.jsonArray
        if (ops == null || cases == null || cases.isEmpty()) {
            return DynamicTest.dynamicTest(file.name) {
                fail("${file.name}: ${if (ops == null) "no Kotlin runner for this file" else "no cases"}")
            }
        }
        return DynamicContainer.dynamicContainer(
            file.name,
            file.toUri(),
            cases.map { element ->
                val case = element.jsonObject
                DynamicTest.dynamicTest(case.string("name")) {
                    val op = case.string("op")
                    val run = ops[op] ?: fail("${file.name}: no Kotlin runner for op \"$op\"")
                    run(case)
                }
            }.stream(),
        )
    }
}
