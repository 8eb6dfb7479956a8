package io.mintid.http

import io.mintid.Fingerprint
import io.mintid.MintidException
import io.mintid.Problem
import io.mintid.core
import io.mintid.requireUShort
import io.mintid.store.StoredResponse
import uniffi.mintid_ffi.KeyAdmission
import uniffi.mintid_ffi.httpAdmitKey
import uniffi.mintid_ffi.httpCheckBodyRead
import uniffi.mintid_ffi.httpDecodeEnvelope
import uniffi.mintid_ffi.httpDefaultKind
import uniffi.mintid_ffi.httpDefaults
import uniffi.mintid_ffi.httpEncodeEnvelope
import uniffi.mintid_ffi.httpFingerprintBody
import uniffi.mintid_ffi.httpFingerprintRequest
import uniffi.mintid_ffi.httpGrantDocument
import uniffi.mintid_ffi.httpIsJsonContentType
import uniffi.mintid_ffi.httpKeyRefusal
import uniffi.mintid_ffi.httpProblemDocument
import uniffi.mintid_ffi.httpStatusDocument
import uniffi.mintid_ffi.HttpHeader as FfiHeader
import uniffi.mintid_ffi.HttpResponse as FfiResponse

/**
 * The rules every mintid HTTP integration shares, from the core (`mintid::http`, see
 * `docs/spec.md`, "HTTP integrations"): the default key kind, which bodies are fingerprinted as
 * JSON, the problem and grant documents, the stored response envelope and the defaults. The
 * [HttpIdempotency] wrapper and the Ktor plugin build on these and compute none of them again.
 */
object HttpRules {
    private val defaults = httpDefaults()

    /**
     * The problem refusing a request whose key failed to read with [error], from a signed
     * request ID ([signed]) or an `Idempotency-Key`; null: the server's failure (a kind or scope
     * it computed, a key ring that cannot verify), to be rethrown. The core's rule.
     */
    internal fun keyRefusal(
        error: MintidException,
        signed: Boolean,
    ): Problem? = httpKeyRefusal(signed, error.code, error.part)?.let { Problem.of(it) }

    /**
     * Where a covered request's key is read from, or the refusal the core wrote in full (401
     * without a [caller], 400 `missing_key` naming the header(s) the route accepts). The core's
     * rule (`mintid::http::admit_key`).
     */
    internal fun admitKey(
        requestIdHeader: String?,
        acceptsIdempotencyKey: Boolean,
        caller: Boolean,
        requestIdSent: Boolean,
        idempotencyKeySent: Boolean,
    ): KeyAdmission = httpAdmitKey(requestIdHeader, acceptsIdempotencyKey, caller, requestIdSent, idempotencyKeySent)

    /** The IETF draft's header of a plain idempotency key: `Idempotency-Key`. */
    @JvmField
    val IDEMPOTENCY_KEY_HEADER: String = defaults.idempotencyKeyHeader

    /** The header of a signed request ID unless configured otherwise: `Mintid-Request-Id`. */
    @JvmField
    val REQUEST_ID_HEADER: String = defaults.requestIdHeader

    /** The largest body read by default, in bytes (1 MiB); above it the answer is 413. */
    @JvmField
    val DEFAULT_BODY_LIMIT: Long = defaults.bodyLimit.toLong()

    /** The methods covered by default: POST and PATCH. */
    @JvmField
    val DEFAULT_METHODS: List<String> = defaults.methods

    /** The response headers stored and replayed by default besides content-type (never `set-cookie`). */
    @JvmField
    val DEFAULT_STORED_HEADERS: List<String> = defaults.storedHeaders

    /** How long a grant from a grant endpoint lasts by default: one hour, in milliseconds. */
    @JvmField
    val DEFAULT_GRANT_TTL_MILLIS: Long = defaults.grantTtlMillis.toLong()

    /** The content type of a grant endpoint's answer. */
    @JvmField
    val GRANT_CONTENT_TYPE: String = defaults.grantContentType

    /**
     * The default key kind of a request: `http.<method in lower case>.<first 10 hex digits of
     * SHA-256 of the path>`, so that a key reused on another route is another key. [path] is the
     * full path as the application sees it, mount prefix included; the core cuts off a query and
     * decodes `%XX` escapes.
     *
     * @throws io.mintid.HttpException `http.invalid_method` for a method no kind can hold.
     */
    @JvmStatic
    fun defaultKind(
        method: String,
        path: String,
    ): String = core { httpDefaultKind(method, path) }

    /** Whether a content type is JSON (`application/json` or `application/…+json`). */
    @JvmStatic
    fun isJsonContentType(contentType: String?): Boolean = httpIsJsonContentType(contentType)

    /**
     * A request body's fingerprint: a non-empty JSON body (by its content type) through the
     * canonicaliser, so whitespace and member order do not count; any other body as raw bytes.
     *
     * @throws io.mintid.HttpException `http.malformed_body` (problem `malformed_body`) for a JSON
     *   content type whose body is not JSON.
     */
    @JvmStatic
    fun fingerprintBody(
        contentType: String?,
        body: ByteArray,
    ): Fingerprint = Fingerprint.ofDigest(core { httpFingerprintBody(contentType, body) })

    /**
     * Whether a body a middleware read is the request's (the core's `http::check_body_read`): a
     * request that declares a body ([declaredLength] above 0, or [transferCoded]) whose stream had
     * ended before the middleware read it ([endedBeforeRead]) or gave fewer than [declaredLength]
     * bytes ([read], within the body limit) was consumed by another reader: never fingerprint it
     * as empty.
     *
     * @throws io.mintid.HttpException `http.body_consumed`, whose message ends with [fix].
     */
    @JvmStatic
    fun checkBodyRead(
        declaredLength: Long?,
        transferCoded: Boolean,
        endedBeforeRead: Boolean,
        read: Int,
        fix: String,
    ) {
        core { httpCheckBodyRead(declaredLength?.toULong(), transferCoded, endedBeforeRead, read.toULong(), fix) }
    }

    /**
     * A request's fingerprint, compared when its key comes again: its body's ([fingerprintBody])
     * and its raw [query] string (without `?`), so that another query under the same key is a
     * mismatch.
     *
     * @throws io.mintid.HttpException `http.malformed_body`, as [fingerprintBody].
     */
    @JvmStatic
    fun fingerprintRequest(
        contentType: String?,
        query: String,
        body: ByteArray,
    ): Fingerprint = Fingerprint.ofDigest(core { httpFingerprintRequest(contentType, query, body) })

    /** The `application/problem+json` body of the core's [problem], with an optional [detail]. */
    @JvmStatic
    @JvmOverloads
    fun problemDocument(
        problem: Problem,
        detail: String? = null,
    ): String = httpProblemDocument(problem.ffi, detail)

    /**
     * The `about:blank` problem body of a plain status: 401, 413 or 500.
     *
     * @throws io.mintid.HttpException `http.invalid_status` for any other status.
     */
    @JvmStatic
    @JvmOverloads
    fun statusDocument(
        status: Int,
        detail: String? = null,
    ): String = core { httpStatusDocument(requireUShort(status, "the status"), detail) }

    /**
     * The body of a grant endpoint's answer: `{"grant":…,"expiresMillis":…}`, the expiry written
     * as the unsigned value of its bits (as [io.mintid.KeyRing.issueGrant] reads it).
     */
    @JvmStatic
    fun grantDocument(
        grant: String,
        expiresMillis: Long,
    ): String = httpGrantDocument(grant, expiresMillis.toULong())

    /**
     * The stored form of [answer]: its content type and, as the body, the envelope holding its status, the
     * headers named in [storedHeaders] (case-insensitive, written in lower case) and its body.
     *
     * @throws io.mintid.HttpException `http.invalid_status` (outside 100–599) or
     *   `http.invalid_header` (a stored header that is no token, or whose value holds CR, LF or NUL).
     */
    @JvmStatic
    fun encodeEnvelope(
        answer: HttpAnswer,
        storedHeaders: List<String>,
    ): StoredResponse {
        val response =
            FfiResponse(
                requireUShort(answer.status, "the status"),
                answer.headers.map { (name, value) -> FfiHeader(name, value) },
                answer.bodyBytes(),
            )
        val stored = core { httpEncodeEnvelope(response, storedHeaders) }
        return StoredResponse(stored.contentType, stored.bytes)
    }

    /**
     * The answer a stored envelope replays: `content-type` first (when not empty), then the
     * stored headers, and the body.
     *
     * @throws io.mintid.HttpException `http.bad_stored_response` (with its byte position) when
     *   the bytes are not an envelope (a record written by something else, or corrupted).
     */
    @JvmStatic
    fun decodeEnvelope(
        contentType: String,
        bytes: ByteArray,
    ): HttpAnswer {
        val response = core { httpDecodeEnvelope(contentType, bytes) }
        return HttpAnswer(response.status.toInt(), response.headers.map { it.name to it.value }, response.body)
    }
}
