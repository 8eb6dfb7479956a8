package io.mintid

import io.mintid.store.utf8
import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import uniffi.mintid_ffi.raisedText
import uniffi.mintid_ffi.storableTextFromBytes

/**
 * `tests/vectors/storable_text.json`: a Kotlin string reaches the core as the bytes [utf8]
 * makes of it (a lone surrogate in three bytes, `ED A0 80` for U+D800), then the core's rule for
 * bytes; each op checks that this crossing gives what the core's rule gives. `raised_text`: the
 * type's name and the message cross as those bytes too, and the core composes the text.
 */
internal object StorableTextVectors {
    val ops: VectorOps =
        mapOf(
            "storable_text" to { case -> check(case, utf8(case.string("text"))) },
            "storable_utf8" to { case -> check(case, hexBytes(case.string("hex"))) },
            // The string as the JVM holds it: the code units, lone surrogates included.
            "storable_utf16" to { case -> check(case, utf8(utf16(case.string("units")))) },
            "raised_text" to { case ->
                assertEquals(case.string("expect"), raisedText(utf8(case.string("type_name")), utf8(case.string("message"))))
            },
        )

    private fun check(
        case: JsonObject,
        bytes: ByteArray,
    ) = assertEquals(case.string("expect"), storableTextFromBytes(bytes, case.string("max_bytes").toULong()))

    private fun hexBytes(hex: String): ByteArray = ByteArray(hex.length / 2) { hex.substring(2 * it, 2 * it + 2).toInt(16).toByte() }

    private fun utf16(units: String): String = String(CharArray(units.length / 4) { units.substring(4 * it, 4 * it + 4).toInt(16).toChar() })
}
