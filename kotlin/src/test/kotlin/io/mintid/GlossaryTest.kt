package io.mintid

import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Paths
import kotlin.io.path.readText

/** The Kotlin names of `docs/spec.md`'s glossary table of fingerprints, grants, policies and errors exist. */
class GlossaryTest {
    private val names: List<String> by lazy {
        val spec = Paths.get("../docs/spec.md").readText()
        val table = spec.substringAfter("Fingerprints, grants, policies and errors").split("\n\n")[1]
        table.lines().drop(2).flatMap { row ->
            Regex("`([^`]+)`").findAll(row.split("|")[3]).map { it.groupValues[1].substringBefore("(").trim() }
        }.filter { Regex("[A-Za-z_][\\w.]*").matches(it) && !it.startsWith("uniffi.") }
    }

    private fun methods(type: Class<*>) = type.methods.map { it.name }.toSet()

    @Test
    fun `every Kotlin name of the glossary exists`() {
        assertTrue("fingerprintJson" in names, names.toString())
        val facade = methods(Class.forName("io.mintid.Mintid"))
        for (name in names) {
            val owner = name.substringBefore('.', "")
            val member = name.substringAfter('.')
            val found =
                when {
                    owner.isNotEmpty() -> member in methods(Class.forName("io.mintid.$owner"))
                    member.first().isUpperCase() -> runCatching { Class.forName("io.mintid.$member") }.isSuccess
                    else -> member in facade
                }
            assertTrue(found, "$name is not in the Kotlin API")
        }
    }
}
