package io.mintid

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class Base32Test {
    @Test
    fun `encodes zero, small values and all 64 bits`() {
        assertEquals("0000000000000", Base32.encode(0))
        assertEquals("000000000000Z", Base32.encode(31))
        assertEquals("0000000000010", Base32.encode(32))
        assertEquals("FZZZZZZZZZZZZ", Base32.encode(-1))
        assertEquals("7ZZZZZZZZZZZZ", Base32.encode(Long.MAX_VALUE))
    }
}
