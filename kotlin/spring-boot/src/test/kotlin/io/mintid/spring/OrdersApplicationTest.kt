package io.mintid.spring

import example.orders.OrderService
import example.orders.OrdersApplication
import io.micrometer.core.instrument.MeterRegistry
import io.mintid.Fingerprint
import io.mintid.Grant
import io.mintid.IdempotencyKey
import io.mintid.Problem
import io.mintid.RequestId
import io.mintid.Uuid7
import io.mintid.http.HttpRules
import io.mintid.store.Dialect
import io.mintid.store.Executed
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import io.mintid.store.Replayed
import io.mintid.store.StoreRequest
import io.mintid.store.skipReason
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.context.ConfigurableApplicationContext
import org.springframework.jdbc.core.JdbcTemplate
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.util.Base64
import java.util.UUID
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch

/**
 * The Java application of `example.orders` on a real port, one start per database: its schema
 * by Flyway from the starter's migrations, a double submit that places one order, the
 * same-transaction way inside `@Transactional`, the grant endpoint and signed request IDs, and
 * the store's metrics in the application's registry.
 */
class OrdersApplicationTest {
    private val client = HttpClient.newHttpClient()

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `the Java application places each order once`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val url = if (dialect == Dialect.SQLITE) "${db.url}?journal_mode=WAL&busy_timeout=30000" else db.url
            val secret = Base64.getEncoder().encodeToString(ByteArray(32) { it.toByte() })
            val app =
                SpringApplicationBuilder(OrdersApplication::class.java)
                    .properties(
                        "server.port=0",
                        "spring.datasource.url=$url",
                        "spring.flyway.locations=classpath:db/migration/mintid/${dialect.directory}",
                        // Liquibase is on the test class path for its own test; this application uses Flyway.
                        "spring.liquibase.enabled=false",
                        "mintid.record.max-wait=20s",
                        "mintid.request-ids.secret=$secret",
                        "mintid.http.accept-idempotency-key=true",
                        "mintid.http.grant-path=/grant",
                    ).run()
            app.use { check(it, dialect) }
        }
    }

    private fun check(
        app: ConfigurableApplicationContext,
        dialect: Dialect,
    ) {
        val port = app.environment.getProperty("local.server.port")
        val base = "http://127.0.0.1:$port"
        val jdbc = app.getBean(JdbcTemplate::class.java)
        val store = app.getBean(IdempotencyStore::class.java)
        assertEquals(dialect, store.dialect, "the dialect read from the connection")
        // Flyway applied the schema's migrations, recorded in both histories.
        assertEquals(schemaVersions(store.dialect), Migrations.applied(store.dataSource, store.dialect))
        assertEquals(
            schemaVersions(store.dialect).size,
            jdbc.queryForObject("SELECT COUNT(*) FROM flyway_schema_history WHERE success = true", Int::class.java),
        )
        jdbc.execute("CREATE TABLE orders (sku VARCHAR(64) NOT NULL)")

        // A double submit: both get the one order's answer, one of them replayed.
        val key = UUID.randomUUID().toString()
        val start = CountDownLatch(1)
        val both =
            List(2) {
                CompletableFuture.supplyAsync {
                    start.await()
                    post("$base/orders", """{"sku":"a"}""", "Idempotency-Key" to key)
                }
            }
        start.countDown()
        val (first, second) = both.map { it.join() }
        assertEquals(listOf(201, 201), listOf(first.statusCode(), second.statusCode()), first.body().decodeToString())
        assertArrayEquals(first.body(), second.body())
        assertEquals(listOf("true"), listOf(first, second).mapNotNull { it.headers().firstValue("idempotent-replayed").orElse(null) })
        assertEquals(1L, jdbc.queryForObject("SELECT COUNT(*) FROM orders", Long::class.java))

        // No key: the core's problem document.
        val missing = post("$base/orders", """{"sku":"a"}""")
        assertEquals(400, missing.statusCode())
        assertEquals("application/problem+json", missing.headers().firstValue("content-type").orElse(null))
        assertTrue(missing.body().decodeToString().contains("problems/missing-key"), missing.body().decodeToString())

        // A grant, then signed request IDs minted from it.
        val grant = post("$base/grant", "")
        assertEquals(200, grant.statusCode(), grant.body().decodeToString())
        val grantText = Regex(""""grant"\s*:\s*"([^"]+)"""").find(grant.body().decodeToString())!!.groupValues[1]
        val id = RequestId.mint(Grant.parse(grantText), Uuid7.next()).text
        val signed = post("$base/orders", """{"sku":"s"}""", "Mintid-Request-Id" to id)
        assertEquals(201, signed.statusCode(), signed.body().decodeToString())
        val again = post("$base/orders", """{"sku":"s"}""", "Mintid-Request-Id" to id)
        assertEquals("true", again.headers().firstValue("idempotent-replayed").orElse(null))
        assertEquals(2L, jdbc.queryForObject("SELECT COUNT(*) FROM orders", Long::class.java))

        // The same-transaction way: a rollback takes the record with the order.
        val orders = app.getBean(OrderService::class.java)
        val txKey = IdempotencyKey.of("order.place", "user:alice", UUID.randomUUID().toString())
        assertThrows(IllegalStateException::class.java) { orders.placeOnce(txKey, "b", true) }
        assertEquals(2L, orders.count())
        assertNull(store.load(txKey))
        assertInstanceOf(Executed::class.java, orders.placeOnce(txKey, "b", false))
        assertInstanceOf(Replayed::class.java, orders.placeOnce(txKey, "b", false))
        assertEquals(3L, orders.count())
        // Outside a transaction the way refuses: its record would commit on its own.
        val outside = app.getBean(TransactionalIdempotency::class.java)
        assertThrows(IllegalStateException::class.java) { outside.run(txKey, StoreRequest(Fingerprint.ofJson("{}"))) { error("not run") } }

        // A refusal the application answers itself: Spring's ProblemDetail with the core's fields.
        val orderKey = UUID.randomUUID().toString()
        assertEquals(201, post("$base/orders/once", """{"sku":"c"}""", "Order-Key" to orderKey).statusCode())
        val mismatch = post("$base/orders/once", """{"sku":"d"}""", "Order-Key" to orderKey)
        assertEquals(422, mismatch.statusCode())
        assertEquals("application/problem+json", mismatch.headers().firstValue("content-type").orElse(null))
        val core = HttpRules.problemDocument(Problem.FINGERPRINT_MISMATCH)
        for (field in listOf("type", "title", "status")) {
            assertEquals(field(core, field), field(mismatch.body().decodeToString(), field), "$field of ${mismatch.body().decodeToString()}")
        }
        assertEquals(4L, orders.count())

        // The metrics, in the application's registry.
        val registry = app.getBean(MeterRegistry::class.java)

        fun decisions(vararg tags: String) = registry.find("mintid.record.decisions").tags(*tags).counters().sumOf { it.count() }
        assertEquals(2.0, decisions("decision", "execute", "way", "lease"))
        assertEquals(2.0, decisions("decision", "replay", "way", "lease"))
        assertEquals(3.0, decisions("decision", "execute", "way", "same_transaction"))
        assertEquals(1.0, decisions("decision", "replay", "way", "same_transaction"))
        assertEquals(1.0, decisions("decision", "fingerprint_mismatch", "way", "same_transaction"))
    }

    /** The JSON value of [name] in the flat document [json], as written (a string with its quotes). */
    private fun field(
        json: String,
        name: String,
    ): String? = Regex(""""$name"\s*:\s*("[^"]*"|\d+)""").find(json)?.groupValues?.get(1)

    private fun post(
        url: String,
        body: String,
        vararg headers: Pair<String, String>,
    ): HttpResponse<ByteArray> {
        val request =
            HttpRequest
                .newBuilder(URI.create(url))
                .header("content-type", "application/json")
                .header("x-user", "alice")
                .POST(HttpRequest.BodyPublishers.ofString(body))
        headers.forEach { (name, value) -> request.header(name, value) }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray())
    }
}
