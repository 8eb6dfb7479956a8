package io.mintid.http

import io.ktor.client.request.request
import io.ktor.client.request.setBody
import io.ktor.client.statement.bodyAsBytes
import io.ktor.http.HttpMethod
import io.ktor.server.application.ApplicationCall
import io.ktor.server.application.install
import io.ktor.server.request.httpMethod
import io.ktor.server.request.path
import io.ktor.server.request.receive
import io.ktor.server.routing.Route
import io.ktor.server.routing.route
import io.ktor.server.routing.routing
import io.ktor.server.testing.TestApplication
import io.mintid.KeyRing
import io.mintid.http.ktor.MintidIdempotency
import io.mintid.http.ktor.grantEndpoint
import io.mintid.http.ktor.handlerTransaction
import io.mintid.http.ktor.respondAnswer
import io.mintid.store.IdempotencyStore
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import java.sql.Connection
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/** The headers the runner uses to pass the user and the handler directive out of band. */
internal const val USER_HEADER = "x-test-user"
internal const val DIRECTIVE_HEADER = "x-test-handler"

/** A request as a scenario step sends it. */
internal class TestRequest(
    val method: String,
    val path: String,
    val headers: List<Pair<String, String>>,
    val body: ByteArray,
)

/** What came back. */
internal class TestResponse(
    val status: Int,
    val headers: List<Pair<String, String>>,
    val body: ByteArray,
) {
    fun header(name: String): String? = headers.firstOrNull { it.first.equals(name, ignoreCase = true) }?.second
}

/** How a scenario's middleware is configured (`scenarios.json` "config"). */
internal class ScenarioConfig(
    val keyRing: KeyRing?,
    val bodyLimit: Int,
    /** The prefixes the test app (with the middleware inside) is mounted at; none: at the root. */
    val mounts: List<String>,
    /** The path of the grant endpoint the middleware serves, if any. */
    val grant: String?,
    /** Whether the middleware runs in the same-transaction mode. */
    val sameTransaction: Boolean,
)

/** The test table of the handler's `write` directive (`tests/http/README.md`), beside the migrated schema. */
internal const val TEST_TABLE = "CREATE TABLE mintid_test_orders (n integer)"

/** The `write` directive's row. */
internal const val INSERT_ROW = "INSERT INTO mintid_test_orders (n) VALUES (1)"

/** The committed rows of the test table. */
internal const val COUNT_ROWS = "SELECT COUNT(*) FROM mintid_test_orders"

/** Runs [sql] (no result) on [connection]. */
internal fun execute(
    connection: Connection,
    sql: String,
) {
    connection.createStatement().use { it.executeUpdate(sql) }
}

/**
 * The test app of `tests/http/README.md`: the handler logic, its call count and its gates,
 * shared by the neutral wrapper and the Ktor app.
 */
internal class TestHandler {
    val calls = AtomicInteger()
    private val gates = ConcurrentHashMap<String, CountDownLatch>()

    fun gate(name: String): CountDownLatch = gates.computeIfAbsent(name) { CountDownLatch(1) }

    /** Counts a handler call: `n` of the README's test app. */
    fun call(): Int = calls.incrementAndGet()

    /** Whether a directive writes the test table's row first. */
    fun writes(directive: JsonObject?): Boolean = directive?.get("write")?.jsonPrimitive?.boolean == true

    /** The gate a directive waits on, if any. */
    fun gateOf(directive: JsonObject?): CountDownLatch? = directive?.get("gate")?.let { gate(it.jsonPrimitive.content) }

    /** The answer of call [n] (after its gate opened), or an exception for `throw`. */
    fun answer(
        n: Int,
        method: String,
        path: String,
        directive: JsonObject?,
        received: JsonElement,
    ): HttpAnswer {
        directive?.keys?.forEach { require(it in setOf("status", "throw", "gate", "contentType", "write")) { "unknown handler directive $it" } }
        val contentType = directive?.get("contentType")?.jsonPrimitive?.content ?: "application/json"
        if (directive?.get("throw")?.jsonPrimitive?.content == "true") throw IllegalStateException("the handler throws, as told")
        directive?.get("status")?.let {
            val status = it.jsonPrimitive.int
            return json(status, buildJsonObject { put("error", JsonPrimitive("status $status")) })
        }
        check(path.endsWith("/orders")) { "no route $method $path" }
        return when (method) {
            "POST" ->
                json(201, buildJsonObject { put("order", JsonPrimitive(n)); put("received", received) }, contentType)
                    .withHeader("location", "/orders/$n")
            "PATCH" -> json(200, buildJsonObject { put("order", JsonPrimitive(n)); put("received", received) }, contentType)
            "GET" -> json(200, buildJsonObject { put("orders", JsonPrimitive(n)) }, contentType)
            else -> error("no route $method $path")
        }
    }

    private fun json(
        status: Int,
        body: JsonObject,
        contentType: String = "application/json",
    ) = HttpAnswer.of(status, contentType, body.toString())

    companion object {
        fun received(
            contentType: String?,
            body: ByteArray,
        ): JsonElement =
            if (HttpRules.isJsonContentType(contentType) && body.isNotEmpty()) Json.parseToJsonElement(body.decodeToString()) else JsonNull

        fun directive(header: String?): JsonObject? = header?.let { Json.parseToJsonElement(it).jsonObject }

        fun await(latch: CountDownLatch) = check(latch.await(10, TimeUnit.SECONDS)) { "the gate was never opened" }
    }
}

/** An integration under test. */
internal interface ScenarioApp : AutoCloseable {
    val handler: TestHandler

    fun send(request: TestRequest): TestResponse
}

private class RequestView(
    val request: TestRequest,
) : HttpRequestView<TestRequest> {
    override val method: String get() = request.method
    override val path: String get() = request.path.substringBefore('?')
    override val query: String get() = request.path.substringAfter('?', "")

    override fun header(name: String): String? =
        request.headers.filter { it.first.equals(name, ignoreCase = true) }.map { it.second }.takeIf { it.isNotEmpty() }?.joinToString(", ")

    override val raw: TestRequest get() = request
}

/** `user:<the test header>`, or null without it (no authenticated caller). */
private fun scopeOf(header: String?) = header?.let { "user:$it" }

/** The framework-neutral wrapper, called in process. */
internal class NeutralApp(
    store: IdempotencyStore,
    config: ScenarioConfig,
) : ScenarioApp {
    override val handler = TestHandler()
    private val wrapped: HttpHandler<TestRequest>

    init {
        val idempotency =
            HttpIdempotency
                .builder<TestRequest>(store) { scopeOf(it.header(USER_HEADER)) }
                .keyRing(config.keyRing)
                .bodyLimit(config.bodyLimit)
                .handlerErrors { }
                .apply {
                    val ring = config.keyRing
                    if (config.grant != null && ring != null) grant(config.grant, GrantEndpoint(ring)) { scopeOf(it.header(USER_HEADER)) }
                    if (config.sameTransaction) sameTransaction()
                }.build()
        wrapped =
            idempotency.wrap { request, body ->
                val bytes = body.readAllBytes()
                val directive = TestHandler.directive(request.header(DIRECTIVE_HEADER))
                val n = handler.call()
                if (handler.writes(directive)) {
                    // The record's transaction, else a connection of its own that commits at once.
                    if (config.sameTransaction) {
                        execute(HandlerTransaction.connection(), INSERT_ROW)
                    } else {
                        store.dataSource.connection.use { execute(it, INSERT_ROW) }
                    }
                }
                handler.gateOf(directive)?.let(TestHandler::await)
                handler.answer(n, request.method, request.path.substringBefore('?'), directive, TestHandler.received(request.header("content-type"), bytes))
            }
    }

    override fun send(request: TestRequest): TestResponse {
        val answer = wrapped.handle(RequestView(request), request.body.inputStream())
        return TestResponse(answer.status, answer.headers, answer.body)
    }

    override fun close() = Unit
}

/** The Ktor plugin, through Ktor's test engine and client. */
internal class KtorApp(
    store: IdempotencyStore,
    config: ScenarioConfig,
) : ScenarioApp {
    override val handler = TestHandler()

    private val app =
        TestApplication {
            application {
                routing {
                    val orders: Route.() -> Unit = {
                        install(MintidIdempotency) {
                            this.store = store
                            scope = { call -> scopeOf(call.request.headers[USER_HEADER]) }
                            keyRing = config.keyRing
                            bodyLimit = config.bodyLimit
                            sameTransaction = config.sameTransaction
                        }
                        route("/orders") {
                            handle { respondOrders(call, store, config.sameTransaction) }
                        }
                        val ring = config.keyRing
                        if (config.grant != null && ring != null) {
                            grantEndpoint(config.grant, GrantEndpoint(ring)) { call -> scopeOf(call.request.headers[USER_HEADER]) }
                        }
                    }
                    if (config.mounts.isEmpty()) orders()
                    config.mounts.forEach { prefix -> route(prefix, orders) }
                }
            }
        }
    private val client = app.client

    private suspend fun respondOrders(
        call: ApplicationCall,
        store: IdempotencyStore,
        sameTransaction: Boolean,
    ) {
        val body = call.receive<ByteArray>()
        val directive = TestHandler.directive(call.request.headers[DIRECTIVE_HEADER])
        val received = TestHandler.received(call.request.headers["content-type"], body)
        val n = handler.call()
        if (handler.writes(directive)) {
            // The record's transaction, else a connection of its own that commits at once.
            withContext(Dispatchers.IO) {
                if (sameTransaction) execute(call.handlerTransaction(), INSERT_ROW) else store.dataSource.connection.use { execute(it, INSERT_ROW) }
            }
        }
        // A gate waits off the engine's threads.
        handler.gateOf(directive)?.let { gate -> withContext(Dispatchers.IO) { TestHandler.await(gate) } }
        call.respondAnswer(handler.answer(n, call.request.httpMethod.value, call.request.path(), directive, received))
    }

    init {
        runBlocking { app.start() }
    }

    override fun send(request: TestRequest): TestResponse =
        runBlocking {
            val response =
                client.request(request.path) {
                    method = HttpMethod.parse(request.method)
                    request.headers.forEach { (name, value) -> headers.append(name, value) }
                    if (request.body.isNotEmpty() || request.method != "GET") setBody(request.body)
                }
            TestResponse(
                response.status.value,
                response.headers.entries().flatMap { (name, values) -> values.map { name.lowercase() to it } },
                response.bodyAsBytes(),
            )
        }

    override fun close() = runBlocking { app.stop() }
}
