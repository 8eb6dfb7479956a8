package io.mintid.metrics

import io.mintid.http.HttpRequestView

/** A `POST /orders` with [headers] (lower-case names), as the metrics tests send it to the HTTP wrapper. */
internal class PostView(
    private val headers: Map<String, String>,
) : HttpRequestView<Unit> {
    override val method = "POST"
    override val path = "/orders"

    override fun header(name: String) = headers[name.lowercase()]

    override val raw = Unit
}
