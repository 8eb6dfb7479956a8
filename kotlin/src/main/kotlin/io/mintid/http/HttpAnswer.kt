package io.mintid.http

import io.mintid.IdempotencyHttp
import io.mintid.Problem

/**
 * A complete HTTP response: what a handler answers and what the integrations send.
 *
 * @property status the status code.
 * @property headers header names and values, in order (a name may repeat).
 */
class HttpAnswer(
    val status: Int,
    val headers: List<Pair<String, String>>,
    body: ByteArray,
) {
    private val bytes = body.copyOf()

    /** A copy of the body bytes. */
    val body: ByteArray get() = bytes.copyOf()

    internal fun bodyBytes(): ByteArray = bytes

    /** The first value of header [name] (case-insensitive), or null. */
    fun header(name: String): String? = headers.firstOrNull { it.first.equals(name, ignoreCase = true) }?.second

    /** The same answer with one more header. */
    fun withHeader(
        name: String,
        value: String,
    ): HttpAnswer = HttpAnswer(status, headers + (name to value), bytes)

    override fun equals(other: Any?): Boolean =
        other is HttpAnswer && status == other.status && headers == other.headers && bytes.contentEquals(other.bytes)

    override fun hashCode(): Int = (31 * status + headers.hashCode()) * 31 + bytes.contentHashCode()

    override fun toString(): String = "HttpAnswer($status, $headers, ${bytes.size} bytes)"

    /** Answers built from the core's documents. */
    companion object {
        /** An answer with a text body of [contentType]. */
        @JvmStatic
        fun of(
            status: Int,
            contentType: String,
            body: String,
        ): HttpAnswer = HttpAnswer(status, listOf("content-type" to contentType), body.toByteArray(Charsets.UTF_8))

        /** The `application/problem+json` answer for the core's [problem], with an optional [detail] and extra headers. */
        @JvmStatic
        @JvmOverloads
        fun problem(
            problem: Problem,
            detail: String? = null,
            extraHeaders: List<Pair<String, String>> = emptyList(),
        ): HttpAnswer =
            HttpAnswer(
                problem.status,
                listOf("content-type" to IdempotencyHttp.problemContentType) + extraHeaders,
                HttpRules.problemDocument(problem, detail).toByteArray(Charsets.UTF_8),
            )

        /** A refusal the core wrote in full: its [status] and problem [document]. */
        internal fun refusal(
            status: Int,
            document: String,
        ): HttpAnswer =
            HttpAnswer(status, listOf("content-type" to IdempotencyHttp.problemContentType), document.toByteArray(Charsets.UTF_8))

        /**
         * A plain HTTP status as a problem (RFC 9457 §4.2.1: type `about:blank`), for the answers
         * outside the idempotency rules: 401 (no user for a grant), 413 (a body over the limit),
         * 500 (a handler that threw, or a failure replayed without a stored response).
         */
        @JvmStatic
        @JvmOverloads
        fun status(
            status: Int,
            detail: String? = null,
        ): HttpAnswer =
            HttpAnswer(
                status,
                listOf("content-type" to IdempotencyHttp.problemContentType),
                HttpRules.statusDocument(status, detail).toByteArray(Charsets.UTF_8),
            )
    }
}
