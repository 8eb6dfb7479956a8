package io.mintid;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Proves that Java callers reach the public API without Kotlin-specific syntax. */
class JavaApiTest {
    @Test
    void base32FromJava() {
        assertEquals("FZZZZZZZZZZZZ", Base32.encode(-1L));
    }
}
