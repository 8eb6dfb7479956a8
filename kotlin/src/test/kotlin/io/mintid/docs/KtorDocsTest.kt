package io.mintid.docs

import io.ktor.client.request.basicAuth
import io.ktor.client.request.header
import io.ktor.client.request.post
import io.ktor.client.request.setBody
import io.ktor.client.statement.bodyAsText
import io.ktor.http.HttpStatusCode
import io.ktor.server.application.Application
import io.ktor.server.application.install
import io.ktor.server.auth.Authentication
import io.ktor.server.auth.UserIdPrincipal
import io.ktor.server.auth.UserPasswordCredential
import io.ktor.server.auth.authenticate
import io.ktor.server.auth.basic
import io.ktor.server.auth.principal
import io.ktor.server.request.receiveText
import io.ktor.server.response.respond
import io.ktor.server.routing.post
import io.ktor.server.routing.routing
import io.ktor.server.testing.testApplication
import io.mintid.KeyRing
import io.mintid.RequestId
import io.mintid.http.GrantEndpoint
import io.mintid.http.HttpAnswer
import io.mintid.http.HttpHandler
import io.mintid.http.HttpIdempotency
import io.mintid.http.HttpRequestView
import io.mintid.http.ktor.*
import io.mintid.store.Dialect
import io.mintid.store.IdempotencyStore
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import javax.sql.DataSource

// The Ktor blocks of kotlin/README.md and docs/guide.md, line for line (scripts/docs/blocks.py
// checks that every line of each block is here, in order), with what they leave out around them.

private lateinit var dataSource: DataSource
private val ring = KeyRing(keyId = 1, secret = ByteArray(32) { 3 })

private fun userOf(credentials: UserPasswordCredential): UserIdPrincipal? = if (credentials.password == "pw") UserIdPrincipal(credentials.name) else null

private fun placeOrder(order: String): String = "placed $order"

private fun placeOrder(order: ByteArray): String = placeOrder(order.decodeToString())

fun Application.module() {
    install(Authentication) { basic { validate { credentials -> userOf(credentials) } } }
    routing {
        authenticate {
            install(MintidIdempotency) {                                  // runs after authentication
                store = IdempotencyStore(dataSource, Dialect.POSTGRES)    // its policy: waiting, storeErrors
                scope = { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } } // null: 401
                keyRing = ring                                            // signed request IDs (optional)
                // methods, routes, bodyLimit, storedHeaders, requestIdHeader, acceptIdempotencyKey, freshness, kind
            }
            post("/orders") { call.respond(HttpStatusCode.Created, placeOrder(call.receiveText())) }
            // Never covered by the plugin, wherever it is installed.
            grantEndpoint("/api/grant", GrantEndpoint(ring)) { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } }
        }
    }
}

/** A request of "any other framework". */
class MyRequest(
    val userId: String,
)

fun Application.guide(): HttpHandler<MyRequest> {
    install(Authentication) { basic { validate { credentials -> userOf(credentials) } } }
    // Ktor: every covered route runs once per key; installed where authentication has run.
    routing {
        authenticate {
            install(MintidIdempotency) {
                store = IdempotencyStore(dataSource, Dialect.POSTGRES)
                scope = { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } } // null: 401
                keyRing = ring
            }
            post("/orders") { call.respond(HttpStatusCode.Created, placeOrder(call.receiveText())) }
            // The grant route is never covered.
            grantEndpoint("/api/grant", GrantEndpoint(ring)) { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } }
        }
    }

    val store = IdempotencyStore(dataSource, Dialect.POSTGRES)
    // Any other framework (or Java): wrap a handler with the framework-neutral HttpIdempotency.
    val orders = HttpIdempotency.builder<MyRequest>(store) { "user:${it.raw.userId}" }.keyRing(ring).build()
        .wrap { _, body -> HttpAnswer.of(201, "application/json", placeOrder(body.readAllBytes())) }
    return orders
}

fun Application.sameTransaction() {
    install(Authentication) { basic { validate { credentials -> userOf(credentials) } } }
    routing {
        authenticate {
            install(MintidIdempotency) {
                store = IdempotencyStore(dataSource, Dialect.POSTGRES)
                scope = { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } }
                sameTransaction = true                                        // the route runs in the record's transaction
            }
            post("/orders") {
                val order = call.receiveText()
                withContext(Dispatchers.IO) {                                 // blocking JDBC, on that transaction
                    call.handlerTransaction().prepareStatement("INSERT INTO orders (item) VALUES (?)").use { it.setString(1, order); it.executeUpdate() }
                }
                call.respond(HttpStatusCode.Created, placeOrder(order))       // commits the order, the claim and the answer together
            }
        }
    }
}

class KtorDocsTest {
    private fun orderTwice(app: Application.() -> Unit) =
        DocsDatabases.postgres { source ->
            dataSource = source
            testApplication {
                application(app)
                val grant = client.post("/api/grant") { basicAuth("alice", "pw") }
                assertEquals(200, grant.status.value, grant.bodyAsText())
                val text = Regex("\"grant\":\"([^\"]+)\"").find(grant.bodyAsText())!!.groupValues[1]
                val requestId = RequestId.mint(io.mintid.Grant.parse(text)).text
                repeat(2) { n ->
                    val order = client.post("/orders") {
                        basicAuth("alice", "pw")
                        header("Mintid-Request-Id", requestId)
                        setBody("tea")
                    }
                    assertEquals(201, order.status.value)
                    assertEquals("placed tea", order.bodyAsText())
                    assertEquals(if (n == 0) null else "true", order.headers["Idempotent-Replayed"])
                }
            }
        }

    @Test
    fun `kotlin README's Ktor module serves grants and runs an order once, on PostgreSQL`() = orderTwice { module() }

    @Test
    fun `kotlin README's same-transaction route writes its order once with the record, on PostgreSQL`() =
        DocsDatabases.postgres { source ->
            dataSource = source
            source.connection.use { it.createStatement().execute("CREATE TABLE orders (item text)") }
            testApplication {
                application { sameTransaction() }
                repeat(2) { n ->
                    val order =
                        client.post("/orders") {
                            basicAuth("alice", "pw")
                            header("Idempotency-Key", "order-1")
                            setBody("tea")
                        }
                    assertEquals(201, order.status.value, order.bodyAsText())
                    assertEquals("placed tea", order.bodyAsText())
                    assertEquals(if (n == 0) null else "true", order.headers["Idempotent-Replayed"])
                }
            }
            val rows = source.connection.use { c -> c.createStatement().executeQuery("SELECT COUNT(*) FROM orders").use { it.next(); it.getLong(1) } }
            assertEquals(1, rows)
        }

    @Test
    fun `the guide's Ktor routing does the same, and its neutral wrapper asks for a key`() {
        var orders: HttpHandler<MyRequest>? = null
        orderTwice { orders = guide() }
        orders?.let { assertEquals(400, it.handle(MyView(MyRequest("alice")), "tea".byteInputStream()).status) }
    }
}

/** The guide's "any other framework" request view, for [MyRequest]. */
internal class MyView(
    override val raw: MyRequest,
) : HttpRequestView<MyRequest> {
    override val method = "POST"
    override val path = "/orders"

    override fun header(name: String): String? = null
}
