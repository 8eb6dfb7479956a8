package io.mintid.http

import io.ktor.client.request.header
import io.ktor.client.request.post
import io.ktor.client.request.setBody
import io.ktor.client.statement.bodyAsText
import io.ktor.server.application.createApplicationPlugin
import io.ktor.server.application.install
import io.ktor.server.plugins.doublereceive.DoubleReceive
import io.ktor.server.request.receiveText
import io.ktor.server.routing.post
import io.ktor.server.routing.routing
import io.ktor.server.testing.ApplicationTestBuilder
import io.ktor.server.testing.testApplication
import io.mintid.HttpException
import io.mintid.RecordPolicy
import io.mintid.http.ktor.MintidIdempotency
import io.mintid.http.ktor.respondAnswer
import io.mintid.store.Dialect
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.job
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger

/**
 * Issue 25 in the Ktor plugin: a body another plugin read first (item 6) and a call cancelled
 * after its route answered (item 5).
 */
class KtorBodyAndCancelTest {
    private val database = FreshDatabase(Dialect.SQLITE)
    private val pool = SwitchablePool(database).also { Migrations.migrate(it, Dialect.SQLITE) }
    private val store = IdempotencyStore(pool, Dialect.SQLITE, RecordPolicy.DEFAULT)
    private val ran = AtomicInteger()

    @AfterEach
    fun close() {
        pool.close()
        database.close()
    }

    /** A plugin of the application that reads every body before the routes (a signature check, a logger). */
    private val bodyReader = createApplicationPlugin("BodyReader") { onCall { call -> call.receiveText() } }

    private fun ApplicationTestBuilder.orders(doubleReceive: Boolean) {
        application {
            if (doubleReceive) install(DoubleReceive)
            install(bodyReader)
            routing {
                install(MintidIdempotency) {
                    store = this@KtorBodyAndCancelTest.store
                    scope = { "user:ann" }
                }
                post("/orders") {
                    ran.incrementAndGet()
                    call.respondAnswer(HttpAnswer.of(201, "application/json", """{"received":${call.receiveText()}}"""))
                }
            }
        }
    }

    private suspend fun ApplicationTestBuilder.order(
        key: String,
        body: String,
    ) = client.post("/orders") {
        header("Idempotency-Key", key)
        header("content-type", "application/json")
        setBody(body)
    }

    @Test
    fun `with DoubleReceive the plugin reads the kept bytes, and another body under the key is 422`() =
        testApplication {
            orders(doubleReceive = true)
            val key = UUID.randomUUID().toString()
            val first = order(key, """{"amount":1}""")
            assertEquals(201, first.status.value)
            assertEquals("""{"received":{"amount":1}}""", first.bodyAsText())
            assertEquals(422, order(key, """{"amount":9999}""").status.value)
            assertEquals("true", order(key, """{"amount":1}""").headers["idempotent-replayed"])
            assertEquals(1, ran.get())
        }

    @Test
    fun `without DoubleReceive a body read first is refused with http body_consumed, never fingerprinted as empty`() =
        testApplication {
            orders(doubleReceive = false)
            val key = UUID.randomUUID().toString()
            val refused = runCatching { order(key, """{"amount":1}""") }
            val error = refused.exceptionOrNull()
            if (error != null) {
                assertTrue(error is HttpException && error.code == "http.body_consumed", "$error")
                assertTrue(error.message!!.contains("DoubleReceive"), error.message)
            } else {
                assertEquals(500, refused.getOrThrow().status.value)
            }
            assertEquals(0, ran.get(), "the route never ran")
            assertEquals(null, store.load(io.mintid.IdempotencyKey.fromHeader(io.mintid.http.HttpRules.defaultKind("POST", "/orders"), "user:ann", key)))
        }

    @Test
    fun `a call cancelled after its route answered still stores the answer, and a duplicate replays it`() =
        testApplication {
            application {
                routing {
                    install(MintidIdempotency) {
                        store = this@KtorBodyAndCancelTest.store
                        scope = { "user:ann" }
                    }
                    post("/orders") {
                        ran.incrementAndGet()
                        // The client goes away just as the route answers.
                        currentCoroutineContext().job.cancel()
                        call.respondAnswer(HttpAnswer.of(201, "text/plain", "placed"))
                    }
                }
            }
            val key = UUID.randomUUID().toString()
            runCatching { order(key, "{}") }
            val again = order(key, "{}")
            assertEquals(201, again.status.value, again.bodyAsText())
            assertEquals("placed", again.bodyAsText())
            assertEquals("true", again.headers["idempotent-replayed"])
            assertEquals(1, ran.get())
        }
}
