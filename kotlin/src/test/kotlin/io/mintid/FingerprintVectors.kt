package io.mintid

import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals

/** `tests/vectors/fingerprint.json`. */
internal object FingerprintVectors {
    val ops: VectorOps =
        mapOf(
            "fingerprint_json" to ::fingerprintJson,
            "fingerprint_bytes" to ::fingerprintBytes,
            "parse_fingerprint" to ::parseFingerprint,
        )

    private fun fingerprintJson(case: JsonObject) {
        val include = if (case.has("include")) case.strings("include") else emptyList()
        val exclude = if (case.has("exclude")) case.strings("exclude") else emptyList()
        val input = if (case.has("input_hex")) case.hex("input_hex") else case.string("input").toByteArray(Charsets.UTF_8)
        case.expect({ Fingerprint.canonicalJson(input, include, exclude) }) { canonical ->
            assertEquals(case.string("canonical"), canonical)
        }
        case.expect({ Fingerprint.ofJson(input, include, exclude) }) { fingerprint ->
            assertEquals(case.string("fingerprint"), fingerprint.text)
            if (!case.has("input_hex") && include.isEmpty() && exclude.isEmpty()) {
                assertEquals(fingerprint, fingerprintJson(case.string("input")))
                assertEquals(fingerprint, fingerprintJson(input))
            }
        }
    }

    private fun fingerprintBytes(case: JsonObject) =
        assertEquals(case.string("fingerprint"), Fingerprint.ofBytes(case.hex("input_hex")).toString())

    private fun parseFingerprint(case: JsonObject) =
        case.expect({ Fingerprint.parse(case.string("text")) }) { fingerprint ->
            assertArrayEquals(case.hex("digest_hex"), fingerprint.digest())
            assertEquals(case.string("text"), Fingerprint.ofDigest(fingerprint.digest()).text)
        }
}
