package io.mintid.http

import io.ktor.client.request.get
import io.ktor.client.request.header
import io.ktor.client.request.post
import io.ktor.client.request.setBody
import io.ktor.client.statement.HttpResponse
import io.ktor.client.statement.bodyAsText
import io.ktor.server.application.install
import io.ktor.server.auth.Authentication
import io.ktor.server.auth.UserIdPrincipal
import io.ktor.server.auth.authenticate
import io.ktor.server.auth.basic
import io.ktor.server.auth.principal
import io.ktor.server.request.receiveText
import io.ktor.server.routing.get
import io.ktor.server.routing.post
import io.ktor.server.routing.routing
import io.ktor.server.testing.ApplicationTestBuilder
import io.ktor.server.testing.testApplication
import io.mintid.ArgumentException
import io.mintid.Grant
import io.mintid.HttpException
import io.mintid.IdempotencyKey
import io.mintid.KeyRing
import io.mintid.RecordPolicy
import io.mintid.RequestId
import io.mintid.http.ktor.MintidIdempotency
import io.mintid.http.ktor.MintidIdempotencyConfig
import io.mintid.http.ktor.grantEndpoint
import io.mintid.http.ktor.respondAnswer
import io.mintid.store.Dialect
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import io.mintid.store.StoreRequest
import io.mintid.store.StoredResponse
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.UUID
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** Every status of the Ktor plugin through Ktor's test client, the grant route and bad settings. */
class KtorPluginTest {
    private val database = FreshDatabase(Dialect.SQLITE)
    private val pool = SwitchablePool(database).also { Migrations.migrate(it, Dialect.SQLITE) }
    private val store = IdempotencyStore(pool, Dialect.SQLITE, RecordPolicy.DEFAULT)
    private val ring = KeyRing(1, ByteArray(32) { it.toByte() })
    private val gate = CountDownLatch(1)
    private val entered = CountDownLatch(1)

    @AfterEach
    fun close() {
        pool.close()
        database.close()
    }

    private fun ApplicationTestBuilder.orders(configure: MintidIdempotencyConfig.() -> Unit = {}) {
        application {
            routing {
                install(MintidIdempotency) {
                    store = this@KtorPluginTest.store
                    scope = { call -> "user:${call.request.headers["x-user"] ?: "anon"}" }
                    bodyLimit = 32
                    configure()
                }
                post("/orders") {
                    val body = call.receiveText()
                    call.response.headers.append("location", "/orders/1")
                    call.response.headers.append("set-cookie", "session=1")
                    call.respondAnswer(HttpAnswer.of(201, "application/json", """{"received":$body}"""))
                }
                post("/slow") {
                    entered.countDown()
                    withContext(Dispatchers.IO) { gate.await(10, TimeUnit.SECONDS) }
                    call.respondAnswer(HttpAnswer.of(200, "text/plain", "done"))
                }
                get("/orders") { call.respondAnswer(HttpAnswer.of(200, "text/plain", "list")) }
                grantEndpoint("/grant", GrantEndpoint(ring)) { call -> call.request.headers["x-user"]?.let { "user:$it" } }
            }
        }
    }

    private fun problemType(response: HttpResponse): String = response.headers["content-type"] ?: ""

    private suspend fun title(response: HttpResponse): String = Json.parseToJsonElement(response.bodyAsText()).jsonObject["title"]!!.jsonPrimitive.content

    @Test
    fun `201 then a replay, and GET passes through`() =
        testApplication {
            orders()
            val key = UUID.randomUUID().toString()
            val first = client.post("/orders") { header("Idempotency-Key", key); header("content-type", "application/json"); setBody("""{"a":1}""") }
            assertEquals(201, first.status.value)
            assertEquals("""{"received":{"a":1}}""", first.bodyAsText())
            assertNull(first.headers["idempotent-replayed"])
            val again = client.post("/orders") { header("Idempotency-Key", "\"$key\""); header("content-type", "application/json"); setBody("""{ "a" : 1 }""") }
            assertEquals(201, again.status.value)
            assertEquals("true", again.headers["idempotent-replayed"])
            assertEquals("/orders/1", again.headers["location"])
            assertNull(again.headers["set-cookie"], "set-cookie is not stored")
            assertEquals(first.bodyAsText(), again.bodyAsText())
            assertEquals(200, client.get("/orders").status.value)
        }

    @Test
    fun `400 missing and malformed keys`() =
        testApplication {
            orders()
            val missing = client.post("/orders") { setBody("{}") }
            assertEquals(400, missing.status.value)
            assertEquals("application/problem+json", problemType(missing))
            assertEquals("Idempotency key missing", title(missing))
            val malformed = client.post("/orders") { header("Idempotency-Key", "\"has space\""); setBody("{}") }
            assertEquals(400, malformed.status.value)
            assertEquals("Idempotency key malformed", title(malformed))
        }

    @Test
    fun `400 for a forged request ID, 201 for a genuine one`() =
        testApplication {
            orders { keyRing = ring }
            val grant = ring.issueGrant("user:ann", System.currentTimeMillis() + 60_000)
            val id = RequestId.mint(Grant.parse(grant.text)).text
            val ok = client.post("/orders") { header("x-user", "ann"); header("Mintid-Request-Id", id); setBody("1") }
            assertEquals(201, ok.status.value)
            val foreign = client.post("/orders") { header("x-user", "bob"); header("Mintid-Request-Id", id); setBody("1") }
            assertEquals(400, foreign.status.value)
            assertEquals("Request ID not valid", title(foreign))
            val plain = client.post("/orders") { header("x-user", "ann"); header("Idempotency-Key", "k"); setBody("1") }
            assertEquals("Idempotency key missing", title(plain), "a plain key is not enough with a key ring")
        }

    @Test
    fun `409 while the first runs, with Retry-After`() =
        testApplication {
            orders()
            val key = UUID.randomUUID().toString()
            coroutineScope {
                val first = async { client.post("/slow") { header("Idempotency-Key", key); setBody("x") } }
                withContext(Dispatchers.IO) { entered.await(10, TimeUnit.SECONDS) }
                val second = client.post("/slow") { header("Idempotency-Key", key); setBody("x") }
                assertEquals(409, second.status.value)
                assertTrue(second.headers["retry-after"]!!.toLong() > 0)
                gate.countDown()
                assertEquals(200, first.await().status.value)
            }
        }

    @Test
    fun `413 over the body limit, 422 for another body`() =
        testApplication {
            orders()
            val key = UUID.randomUUID().toString()
            val large = client.post("/orders") { header("Idempotency-Key", key); setBody("x".repeat(33)) }
            assertEquals(413, large.status.value)
            assertEquals("Content Too Large", title(large))
            assertEquals(201, client.post("/orders") { header("Idempotency-Key", key); setBody("1") }.status.value)
            val other = client.post("/orders") { header("Idempotency-Key", key); setBody("2") }
            assertEquals(422, other.status.value)
            assertEquals("Idempotency key reused with a different payload", title(other))
        }

    @Test
    fun `503 when storage is down`() =
        testApplication {
            orders()
            pool.down = true
            val down = client.post("/orders") { header("Idempotency-Key", "k"); setBody("1") }
            assertEquals(503, down.status.value)
            assertEquals("Idempotency storage unavailable", title(down))
        }

    @Test
    fun `the grant route answers a grant or 401`() =
        testApplication {
            orders()
            val granted = client.post("/grant") { header("x-user", "ann") }
            assertEquals(200, granted.status.value)
            assertEquals("no-store", granted.headers["cache-control"])
            val grant = Json.parseToJsonElement(granted.bodyAsText()).jsonObject["grant"]!!.jsonPrimitive.content
            assertEquals(58, grant.length)
            assertEquals(401, client.post("/grant").status.value)
        }

    @Test
    fun `bad settings fail at install`() {
        assertThrows<IllegalArgumentException> {
            testApplication { application { routing { install(MintidIdempotency) { scope = { "s" } } } } }
        }
        assertThrows<IllegalArgumentException> {
            testApplication { application { routing { install(MintidIdempotency) { store = this@KtorPluginTest.store } } } }
        }
        // A bad body limit is an argument error with the core's code, as in Python and JS.
        val limit =
            assertThrows<ArgumentException> {
                testApplication {
                    application {
                        routing {
                            install(MintidIdempotency) {
                                store = this@KtorPluginTest.store
                                scope = { "s" }
                                bodyLimit = -1
                            }
                        }
                    }
                }
            }
        assertEquals("argument.negative", limit.code)
        // Outside a route the principal and the route are unknown: refused at install.
        assertThrows<IllegalArgumentException> {
            testApplication { application { install(MintidIdempotency) { store = this@KtorPluginTest.store; scope = { "s" } } } }
        }
    }

    @Test
    fun `the scope reads the principal where authenticate has run`() =
        testApplication {
            application {
                install(Authentication) {
                    basic("users") {
                        validate { credentials -> if (credentials.password == "secret") UserIdPrincipal(credentials.name) else null }
                    }
                }
                routing {
                    authenticate("users") {
                        install(MintidIdempotency) {
                            store = this@KtorPluginTest.store
                            scope = { call -> "user:${call.principal<UserIdPrincipal>()!!.name}" }
                            keyRing = ring
                        }
                        post("/orders") { call.respondAnswer(HttpAnswer.of(201, "text/plain", "placed")) }
                        grantEndpoint("/grant", GrantEndpoint(ring)) { call -> call.principal<UserIdPrincipal>()?.let { "user:${it.name}" } }
                    }
                }
            }
            val login = "Basic " + java.util.Base64.getEncoder().encodeToString("ann:secret".toByteArray())
            assertEquals(401, client.post("/orders").status.value)
            val granted = client.post("/grant") { header("Authorization", login) }
            assertEquals(200, granted.status.value)
            val grant = Json.parseToJsonElement(granted.bodyAsText()).jsonObject["grant"]!!.jsonPrimitive.content
            val requestId = RequestId.mint(Grant.parse(grant)).text
            val first = client.post("/orders") { header("Authorization", login); header("Mintid-Request-Id", requestId) }
            assertEquals(201, first.status.value)
            val again = client.post("/orders") { header("Authorization", login); header("Mintid-Request-Id", requestId) }
            assertEquals("true", again.headers["Idempotent-Replayed"])
            assertEquals(400, client.post("/orders") { header("Authorization", login) }.status.value)
        }

    @Test
    fun `a stored record that is not an envelope is a typed error`() {
        val key = IdempotencyKey.fromHeader(HttpRules.defaultKind("POST", "/orders"), "user:ann", "k")
        val request = StoreRequest(HttpRules.fingerprintBody(null, ByteArray(0)))
        store.runOnce(key, request) { StoredResponse("text/plain", "not an envelope".toByteArray()) }
        val wrapper = HttpIdempotency.builder<Unit>(store) { "user:ann" }.build()
        val view =
            object : HttpRequestView<Unit> {
                override val method = "POST"
                override val path = "/orders"
                override val raw = Unit

                override fun header(name: String) = if (name.equals("Idempotency-Key", true)) "k" else null
            }
        val error = assertThrows<HttpException> { wrapper.handle(view, ByteArray(0).inputStream()) { _, _ -> HttpAnswer.status(500) } }
        assertEquals("http.bad_stored_response", error.code)
        assertEquals(15L, error.position)
    }
}
