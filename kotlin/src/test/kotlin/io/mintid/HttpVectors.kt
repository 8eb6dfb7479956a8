package io.mintid

import io.mintid.http.HttpAnswer
import io.mintid.http.HttpRules
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail

/** `tests/vectors/http.json`. */
internal object HttpVectors {
    val ops: VectorOps =
        mapOf(
            "default_kind" to ::defaultKind,
            "is_json_content_type" to ::isJsonContentType,
            "fingerprint_body" to ::fingerprintBody,
            "fingerprint_request" to ::fingerprintRequest,
            "problem_document" to ::problemDocument,
            "status_document" to ::statusDocument,
            "grant_document" to ::grantDocument,
            "encode_envelope" to ::encodeEnvelope,
            "decode_envelope" to ::decodeEnvelope,
            "defaults" to ::defaults,
        )

    /** Like [expect], and a failure must be an [HttpException]. */
    private fun <T> JsonObject.expectHttp(
        call: () -> T,
        check: (T) -> Unit,
    ) {
        if (has("error")) assertThrows<HttpException> { call() }
        expect(call, check)
    }

    private fun JsonObject.optionalString(field: String): String? = this[field]?.takeIf { it != JsonNull }?.jsonPrimitive?.content

    private fun JsonObject.pairs(field: String): List<Pair<String, String>> =
        array(field).map { pair ->
            val (name, value) = pair.jsonArray.map { it.jsonPrimitive.content }
            name to value
        }

    private fun defaultKind(case: JsonObject) =
        case.expectHttp({ HttpRules.defaultKind(case.string("method"), case.string("path")) }) { assertEquals(case.string("kind"), it) }

    private fun isJsonContentType(case: JsonObject) =
        assertEquals(case.bool("expect"), HttpRules.isJsonContentType(case.optionalString("content_type")))

    private fun fingerprintBody(case: JsonObject) =
        case.expectHttp({ HttpRules.fingerprintBody(case.optionalString("content_type"), case.hex("body")) }) {
            assertEquals(case.string("fingerprint"), it.text)
        }

    private fun fingerprintRequest(case: JsonObject) =
        case.expectHttp({ HttpRules.fingerprintRequest(case.optionalString("content_type"), case.string("query"), case.hex("body")) }) {
            assertEquals(case.string("fingerprint"), it.text)
        }

    private fun problemDocument(case: JsonObject) {
        val problem = Problem.entries.firstOrNull { it.problemName == case.string("problem") } ?: fail("no problem ${case.string("problem")}")
        assertEquals(case.string("body"), HttpRules.problemDocument(problem, case.stringOrNull("detail")))
    }

    private fun statusDocument(case: JsonObject) =
        case.expectHttp({ HttpRules.statusDocument(case.int("status"), case.stringOrNull("detail")) }) { assertEquals(case.string("body"), it) }

    private fun grantDocument(case: JsonObject) =
        assertEquals(case.string("body"), HttpRules.grantDocument(case.string("grant"), case.u64("expires")))

    private fun encodeEnvelope(case: JsonObject) {
        val answer = HttpAnswer(case.int("status"), case.pairs("headers"), case.hex("body"))
        case.expectHttp({ HttpRules.encodeEnvelope(answer, case.strings("stored_headers")) }) {
            assertEquals(case.string("content_type"), it.contentType)
            assertEquals(case.string("envelope"), it.body.toHex())
        }
    }

    private fun decodeEnvelope(case: JsonObject) =
        case.expectHttp({ HttpRules.decodeEnvelope(case.string("content_type"), case.hex("envelope")) }) {
            assertEquals(case.int("status"), it.status)
            assertEquals(case.pairs("headers"), it.headers)
            assertEquals(case.string("body"), it.body.toHex())
        }

    private fun defaults(case: JsonObject) {
        assertEquals(case.string("idempotency_key_header"), HttpRules.IDEMPOTENCY_KEY_HEADER)
        assertEquals(case.string("request_id_header"), HttpRules.REQUEST_ID_HEADER)
        assertEquals(case.u64("body_limit"), HttpRules.DEFAULT_BODY_LIMIT)
        assertEquals(case.strings("methods"), HttpRules.DEFAULT_METHODS)
        assertEquals(case.strings("stored_headers"), HttpRules.DEFAULT_STORED_HEADERS)
        assertEquals(case.u64("grant_ttl_millis"), HttpRules.DEFAULT_GRANT_TTL_MILLIS)
        assertEquals(case.string("grant_content_type"), HttpRules.GRANT_CONTENT_TYPE)
        val empty = HttpRules.encodeEnvelope(HttpAnswer(200, emptyList(), ByteArray(0)), emptyList())
        assertEquals("${case.string("envelope_magic")}200\r\n\r\n", empty.body.decodeToString())
        assertEquals(
            "\"type\":\"${case.string("about_blank")}\"",
            HttpRules.statusDocument(413).substringAfter('{').substringBefore(','),
        )
    }
}
