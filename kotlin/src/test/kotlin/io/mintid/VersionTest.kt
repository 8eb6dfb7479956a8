package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class VersionTest {
    @Test
    fun `the package and its core report one version`() {
        assertTrue(Regex("""\d+\.\d+\.\d+.*""").matches(version()), version())
        assertEquals(version(), coreVersion())
    }

    @Test
    fun `the jar's class path carries this platform's native library`() {
        assertTrue(NativeLibrary.carried().isNotEmpty())
    }
}
