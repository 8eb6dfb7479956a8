package io.mintid

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** Reading the fields of a vector case (see `tests/vectors/README.md`). */
internal fun JsonObject.has(field: String): Boolean = containsKey(field)

internal fun JsonObject.string(field: String): String =
    (this[field] as? JsonPrimitive)?.takeIf { it.isString }?.content ?: fail("no string \"$field\" in $this")

internal fun JsonObject.stringOrNull(field: String): String? = if (has(field)) string(field) else null

/** A 64-bit integer written as a decimal string; values above `Long.MAX_VALUE` keep their bits. */
internal fun JsonObject.u64(field: String): Long = java.lang.Long.parseUnsignedLong(string(field))

internal fun JsonObject.int(field: String): Int = this[field]?.jsonPrimitive?.int ?: fail("no number \"$field\" in $this")

internal fun JsonObject.bool(field: String): Boolean =
    this[field]?.jsonPrimitive?.content?.toBooleanStrictOrNull() ?: fail("no boolean \"$field\" in $this")

internal fun JsonObject.obj(field: String): JsonObject = this[field]?.jsonObject ?: fail("no object \"$field\" in $this")

internal fun JsonObject.array(field: String): JsonArray = this[field]?.jsonArray ?: fail("no array \"$field\" in $this")

internal fun JsonObject.strings(field: String): List<String> = array(field).map { it.jsonPrimitive.content }

internal fun JsonObject.hex(field: String): ByteArray = hexToBytes(string(field))

internal fun hexToBytes(hex: String): ByteArray = ByteArray(hex.length / 2) { hex.substring(2 * it, 2 * it + 2).toInt(16).toByte() }

internal fun ByteArray.toHex(): String = joinToString("") { "%02x".format(it) }

/**
 * Runs [call] and checks the case's outcome: when it names an `error`, the call must throw a
 * [MintidException] with that code; otherwise [check] receives the result.
 */
internal fun <T> JsonObject.expect(
    call: () -> T,
    check: (T) -> Unit,
) {
    val code = stringOrNull("error")
    if (code != null) {
        val error = assertThrows<MintidException>("expected $code") { call() }
        assertEquals(code, error.code, error.message)
        stringOrNull("part")?.let { assertEquals(it, error.part, "part") }
        if (has("position")) assertEquals(int("position").toLong(), error.position, "position")
    } else {
        check(call())
    }
}
