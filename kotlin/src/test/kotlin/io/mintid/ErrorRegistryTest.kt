package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import uniffi.mintid_ffi.errorCodes
import java.nio.file.Files
import java.nio.file.Paths
import kotlin.io.path.extension
import kotlin.io.path.readText
import kotlin.reflect.KClass

/** The Kotlin side of the core's error-code registry: one typed exception per code, no code of its own. */
class ErrorRegistryTest {
    /** Kotlin's exception of each concern (a `store.*` code has a class of its own: [storeException]). */
    private val byConcern: Map<String, KClass<out MintidException>> =
        mapOf(
            "argument" to ArgumentException::class,
            "internal" to InternalException::class,
            "snowflake" to SnowflakeException::class,
            "uuid" to UuidException::class,
            "uuid7" to Uuid7Exception::class,
            "key" to IdempotencyKeyException::class,
            "fingerprint" to FingerprintException::class,
            "request_id" to RequestIdException::class,
            "record" to RecordException::class,
            "lease" to LeaseException::class,
            "segment" to SegmentException::class,
            "outbox" to OutboxException::class,
            "http" to HttpException::class,
        )

    private val registry = errorCodes().filter { it.host }

    @Test
    fun `every registry code maps to exactly one typed exception`() {
        val concerns = registry.map { it.concern }.toSet()
        assertEquals(concerns - "store", byConcern.keys, "Kotlin's concerns and the registry's")
        val storeClasses =
            registry.filter { it.concern == "store" }.map { entry ->
                val made = storeException(entry.code, "detail", null, null, null)
                assertEquals(entry.code, made.code)
                made::class
            }
        assertEquals(storeClasses.size, storeClasses.toSet().size, "one class per store code")
        assertTrue(storeClasses.none { it in byConcern.values })
    }

    @Test
    fun `Kotlin makes no code outside the registry`() {
        val registered = registry.map { it.code }.toSet()
        val concerns = registry.map { it.concern }.toSet()
        val literal = Regex("\"([a-z0-9_]+\\.[a-z][a-z0-9_]*)\"")
        val sources = Paths.get("src/main/kotlin")
        Files.walk(sources).use { paths ->
            paths.filter { it.extension == "kt" }.forEach { path ->
                for (match in literal.findAll(path.readText())) {
                    val code = match.groupValues[1]
                    if (code.substringBefore('.') in concerns && code !in NOT_CODES) {
                        assertTrue(code in registered, "$path: $code is not in the core's registry")
                    }
                }
            }
        }
    }

    @Test
    fun `every code has a message template of named fields`() {
        for (entry in errorCodes()) {
            assertTrue(Regex("(?:[^{}]|\\{[a-z_]+\\})+").matches(entry.template), entry.code)
        }
    }

    @Test
    fun `a message is its code's template filled`() {
        // The same errors as in Python's and JS's registry tests.
        val templates = errorCodes().associate { it.code to it.template }
        val cases: List<Pair<String, () -> Any>> =
            listOf(
                "key.empty" to { IdempotencyKey.of("", "s", "i") },
                "key.invalid_text" to { IdempotencyKey.parse("nope") },
                "fingerprint.invalid_json" to { fingerprintJson("[1,]") },
                "argument.negative" to { Uuid7Generator().nextUuids(-1) },
            )
        for ((code, call) in cases) {
            val error = assertThrows<MintidException> { call() }
            assertEquals(code, error.code)
            val template = templates.getValue(code)
            assertTrue(templatePattern(template).matches(error.detail), "${error.detail} ~ $template")
        }
    }

    private companion object {
        /** A pattern a message matches when it is [template] filled (a field matches anything). */
        fun templatePattern(template: String): Regex =
            Regex(template.split(Regex("\\{[a-z_]+\\}")).joinToString(".+?") { Regex.escape(it) }, RegexOption.DOT_MATCHES_ALL)

        /** Dotted literals that are no error codes: a limit's name in the core's table of limits. */
        val NOT_CODES = setOf("record.response_body")
    }
}
