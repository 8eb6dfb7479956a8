package io.mintid

import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Assertions.assertEquals

/** `tests/vectors/keys.json`. */
internal object KeyVectors {
    val ops: VectorOps =
        mapOf(
            "new_key" to ::newKey,
            "id_from_fields" to ::idFromFields,
            "derived_key" to ::derivedKey,
            "parse_header" to ::parseHeader,
            "parse_key_text" to ::parseKeyText,
        )

    private fun checkKey(
        case: JsonObject,
        key: IdempotencyKey,
    ) {
        assertEquals(case.string("text"), key.text)
        assertEquals(case.string("text"), key.toString())
        assertEquals(key, IdempotencyKey.parse(key.text), "read back")
    }

    private fun newKey(case: JsonObject) =
        case.expect({ IdempotencyKey.of(case.string("kind"), case.string("scope"), case.string("id")) }) { key ->
            checkKey(case, key)
            assertEquals(case.string("id"), key.id)
        }

    private fun idFromFields(case: JsonObject) =
        case.expect({ IdempotencyKey.fromFields(case.string("kind"), case.string("scope"), case.strings("fields")) }) { key ->
            checkKey(case, key)
            assertEquals(case.string("id"), key.id)
            assertEquals(case.string("id"), IdempotencyKey.idFromFields(case.strings("fields")))
        }

    private fun derivedKey(case: JsonObject) =
        case.expect({
            IdempotencyKey.derived(case.string("kind"), case.string("scope"), Fingerprint.parse(case.string("fingerprint")))
        }) { key ->
            checkKey(case, key)
            assertEquals(case.string("id"), key.id)
        }

    private fun parseHeader(case: JsonObject) {
        val header = if (case.has("header_hex")) case.hex("header_hex") else case.string("header").toByteArray(Charsets.UTF_8)
        case.expect({ IdempotencyKey.parseHeader(header) }) { id ->
            assertEquals(case.string("id"), id)
            assertEquals(id, IdempotencyKey.fromHeader("k", "s", header).id)
        }
    }

    private fun parseKeyText(case: JsonObject) =
        case.expect({ IdempotencyKey.parse(case.string("text")) }) { key ->
            assertEquals(case.string("kind"), key.kind)
            assertEquals(case.string("scope"), key.scope)
            assertEquals(case.string("id"), key.id)
            assertEquals(case.string("text"), IdempotencyKey.of(key.kind, key.scope, key.id).text)
        }
}
