package io.mintid.http

import io.mintid.ArgumentException
import io.mintid.IdempotencyKey
import io.mintid.IdempotencyKeyException
import io.mintid.KeyRing
import io.mintid.RecordPolicy
import io.mintid.store.Dialect
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The HTTP options refuse a bad value with the core's argument codes, as Python and JS do; a key
 * text with a lone surrogate is refused by the core, as in JS and Python.
 */
class OptionErrorsTest {
    private val ring = KeyRing(1, ByteArray(32))

    @Test
    fun `a grant TTL of zero or below is an argument error`() {
        assertEquals("argument.out_of_range", assertThrows<ArgumentException> { GrantEndpoint(ring, 0) }.code)
        assertEquals("argument.negative", assertThrows<ArgumentException> { GrantEndpoint(ring, -1) }.code)
        assertEquals(1L, GrantEndpoint(ring, 1).ttlMillis)
    }

    @Test
    fun `a negative or unreadable body limit is an argument error`() {
        FreshDatabase(Dialect.SQLITE).use { database ->
            val builder = HttpIdempotency.builder<Unit>(IdempotencyStore(database.open(), Dialect.SQLITE, RecordPolicy.DEFAULT)) { "s" }
            assertEquals("argument.negative", assertThrows<ArgumentException> { builder.bodyLimit(-1) }.code)
            assertEquals("argument.out_of_range", assertThrows<ArgumentException> { builder.bodyLimit(Int.MAX_VALUE) }.code)
            builder.bodyLimit(0)
        }
    }

    @Test
    fun `a key part with a lone surrogate is refused, never sent as another text`() {
        for (id in listOf("a\uD800b", "\uDC00", "tail\uD83D")) {
            val error = assertThrows<IdempotencyKeyException> { IdempotencyKey.of("order.create", "user:1", id) }
            assertEquals("key.invalid_character", error.code, id)
            assertEquals("id", error.part)
        }
        val scope = assertThrows<IdempotencyKeyException> { IdempotencyKey.of("order.create", "user:\uD800", "x") }
        assertEquals("key.invalid_character", scope.code)
        assertEquals("scope", scope.part)
    }
}
