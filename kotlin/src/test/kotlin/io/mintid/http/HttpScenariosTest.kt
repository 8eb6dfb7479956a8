package io.mintid.http

import io.mintid.Grant
import io.mintid.KeyRing
import io.mintid.Problem
import io.mintid.RecordPolicy
import io.mintid.RequestId
import io.mintid.Uuid7
import io.mintid.store.Dialect
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import io.mintid.store.skipReason
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.int
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.long
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.DynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.nio.file.Paths
import java.security.SecureRandom
import java.util.UUID
import java.util.concurrent.Executors
import java.util.concurrent.Future
import java.util.concurrent.TimeUnit
import kotlin.io.path.readText

/**
 * Runs every scenario of `tests/http/scenarios.json` against the neutral wrapper and the Ktor
 * plugin, on SQLite and PostgreSQL. Anything the runner does not know (a config key, a step, a
 * request field, a header value object, a body kind, an expectation) fails the scenario.
 */
class HttpScenariosTest {
    @TestFactory
    fun `every HTTP scenario`(): List<DynamicNode> =
        httpScenarioTests(mapOf("neutral" to ::NeutralApp, "ktor" to ::KtorApp), listOf(Dialect.SQLITE, Dialect.POSTGRES))
}

/**
 * Every scenario for each of [integrations] on each of [dialects], a fresh database each (the
 * Spring Boot starter's tests run them on its filter too).
 */
internal fun httpScenarioTests(
    integrations: Map<String, (IdempotencyStore, ScenarioConfig) -> ScenarioApp>,
    dialects: List<Dialect>,
): List<DynamicNode> {
    val file = Paths.get(System.getProperty("mintid-tests.http") ?: "../tests/http").toAbsolutePath().normalize().resolve("scenarios.json")
    val scenarios = Json.parseToJsonElement(file.readText()).jsonObject.getValue("scenarios").jsonArray.map { it.jsonObject }
    assertTrue(scenarios.isNotEmpty(), "no scenarios in $file")
    return integrations.map { (name, make) ->
        DynamicContainer.dynamicContainer(
            name,
            dialects.map { dialect ->
                DynamicContainer.dynamicContainer(
                    dialect.name.lowercase(),
                    scenarios.map { scenario ->
                        DynamicTest.dynamicTest(scenario.text("name")) {
                            skipReason(dialect)?.let { assumeTrue(false, it) }
                            ScenarioRun(scenario, dialect, make).run()
                        }
                    },
                )
            },
        )
    }
}

private fun JsonObject.text(field: String): String = this[field]?.jsonPrimitive?.content ?: fail("no \"$field\" in $this")

private fun JsonObject.only(
    allowed: Set<String>,
    what: String,
) = keys.forEach { if (it !in allowed) fail("unknown $what \"$it\" in $this") }

/** One scenario on a fresh database. */
private class ScenarioRun(
    private val scenario: JsonObject,
    private val dialect: Dialect,
    private val make: (IdempotencyStore, ScenarioConfig) -> ScenarioApp,
) {
    private val named = mutableMapOf<String, TestResponse>()
    private val background = mutableMapOf<String, Pair<Future<TestResponse>, JsonObject>>()
    private val keys = mutableMapOf<String, String>()
    private val requestIds = mutableMapOf<String, String>()
    private var ring: KeyRing? = null

    fun run() {
        val config = scenario["config"]?.jsonObject ?: JsonObject(emptyMap())
        config.only(setOf("signed", "storeErrors", "maxWaitMillis", "bodyLimit", "mounts", "grant", "sameTransaction"), "config key")
        val storeErrors = config["storeErrors"]?.jsonPrimitive?.boolean ?: true
        val maxWait = config["maxWaitMillis"]?.jsonPrimitive?.long ?: 0
        val policy = RecordPolicy(30_000, 86_400_000, storeErrors, RecordPolicy.DEFAULT.retryAfterMillis, maxWait, 20)
        if (config["signed"]?.jsonPrimitive?.boolean == true) ring = KeyRing(1, ByteArray(32).also { SecureRandom().nextBytes(it) })
        val bodyLimit = config["bodyLimit"]?.jsonPrimitive?.int ?: HttpRules.DEFAULT_BODY_LIMIT.toInt()
        val executor = Executors.newCachedThreadPool()
        FreshDatabase(dialect).use { database ->
            val pool = SwitchablePool(database)
            Migrations.migrate(pool, dialect)
            pool.connection.use { execute(it, TEST_TABLE) }
            val mounts = config["mounts"]?.jsonArray?.map { it.jsonPrimitive.content } ?: emptyList()
            val grant = config["grant"]?.jsonPrimitive?.content
            val same = config["sameTransaction"]?.jsonPrimitive?.boolean ?: false
            make(IdempotencyStore(pool, dialect, policy), ScenarioConfig(ring, bodyLimit, mounts, grant, same)).use { app ->
                try {
                    for (step in scenario.getValue("steps").jsonArray.map { it.jsonObject }) step(step, app, pool, executor)
                    check(background.isEmpty()) { "background requests never awaited: ${background.keys}" }
                } finally {
                    executor.shutdownNow()
                    pool.close()
                }
            }
        }
    }

    private fun step(
        step: JsonObject,
        app: ScenarioApp,
        pool: SwitchablePool,
        executor: java.util.concurrent.ExecutorService,
    ) {
        when (val first = step.keys.first()) {
            "name", "request" -> {
                step.only(setOf("name", "request", "expect", "background"), "request step field")
                val request = request(step.getValue("request").jsonObject)
                val expect = step.getValue("expect").jsonObject
                val name = step["name"]?.jsonPrimitive?.content
                if (step["background"]?.jsonPrimitive?.boolean == true) {
                    background[name ?: fail("a background request needs a name")] = executor.submit<TestResponse> { app.send(request) } to expect
                } else {
                    val response = app.send(request)
                    check(response, expect)
                    name?.let { named[it] = response }
                }
            }
            "await" -> {
                val name = step.text("await")
                val (future, expect) = background.remove(name) ?: fail("no background request $name")
                val response = future.get(30, TimeUnit.SECONDS)
                check(response, expect)
                named[name] = response
            }
            "open" -> app.handler.gate(step.text("open")).countDown()
            "untilHandlerCalls" -> {
                val n = step.getValue("untilHandlerCalls").jsonPrimitive.int
                val deadline = System.nanoTime() + 5_000_000_000
                while (app.handler.calls.get() < n) {
                    check(System.nanoTime() < deadline) { "the handler was called ${app.handler.calls.get()} times, not $n" }
                    Thread.sleep(5)
                }
            }
            "sleepMillis" -> Thread.sleep(step.getValue("sleepMillis").jsonPrimitive.long)
            "storage" ->
                pool.down =
                    when (val state = step.text("storage")) {
                        "down" -> true
                        "up" -> false
                        else -> fail("unknown storage state $state")
                    }
            "check" -> {
                val check = step.getValue("check").jsonObject
                check.only(setOf("handlerCalls", "writes"), "check")
                check["handlerCalls"]?.let { assertEquals(it.jsonPrimitive.int, app.handler.calls.get(), "handler calls") }
                check["writes"]?.let { assertEquals(it.jsonPrimitive.long, committedRows(pool), "committed rows") }
            }
            else -> fail("unknown step \"$first\" in $step")
        }
    }

    private fun committedRows(pool: SwitchablePool): Long =
        pool.connection.use { connection ->
            connection.createStatement().use { statement -> statement.executeQuery(COUNT_ROWS).use { rows -> check(rows.next()); rows.getLong(1) } }
        }

    private fun request(spec: JsonObject): TestRequest {
        spec.only(setOf("method", "path", "user", "headers", "body", "handler"), "request field")
        // A step without a user has no authenticated caller: no test header.
        val user = spec["user"]?.jsonPrimitive?.content
        val headers = if (user == null) mutableListOf() else mutableListOf(USER_HEADER to user)
        spec["handler"]?.let { headers += DIRECTIVE_HEADER to it.toString() }
        spec["headers"]?.jsonObject?.forEach { (name, value) -> headers += name to headerValue(value, user) }
        val body = spec["body"]?.jsonObject ?: fail("no body in $spec")
        body.only(setOf("json", "jsonText", "text", "none"), "body kind")
        val bytes =
            when (val kind = body.keys.single()) {
                "json" -> body.getValue("json").toString().also { headers += "content-type" to "application/json" }
                "jsonText" -> body.text("jsonText").also { headers += "content-type" to "application/json" }
                "text" -> body.text("text").also { headers += "content-type" to "text/plain" }
                "none" -> ""
                else -> fail("unknown body kind $kind")
            }
        return TestRequest(spec.text("method"), spec.text("path"), headers, bytes.toByteArray())
    }

    private fun headerValue(
        value: JsonElement,
        user: String?,
    ): String {
        if (value is JsonPrimitive) return value.content
        val spec = value.jsonObject
        if ("key" in spec) {
            spec.only(setOf("key", "form"), "key field")
            val id = keys.getOrPut(spec.text("key")) { UUID.randomUUID().toString() }
            return when (val form = spec["form"]?.jsonPrimitive?.content) {
                null -> id
                "sf-string" -> "\"$id\""
                else -> fail("unknown key form $form")
            }
        }
        if ("requestId" in spec) {
            spec.only(setOf("requestId", "grantFor", "grant", "tamper", "ageMillis"), "requestId field")
            val ring = ring ?: fail("a requestId needs the signed config")
            val id =
                requestIds.getOrPut(spec.text("requestId")) {
                    val expired = spec["grant"]?.jsonPrimitive?.content?.also { assertEquals("expired", it, "grant") } != null
                    val now = System.currentTimeMillis()
                    val grant = ring.issueGrant("user:${spec["grantFor"]?.jsonPrimitive?.content ?: user ?: fail("an anonymous step's requestId needs grantFor")}", if (expired) now - 1000 else now + 3_600_000)
                    val age = spec["ageMillis"]?.jsonPrimitive?.long
                    val uuid = if (age == null) Uuid7.next() else Uuid7.fromFields(now - age, 0, 1)
                    RequestId.mint(Grant.parse(grant.text), uuid).text
                }
            if (spec["tamper"]?.jsonPrimitive?.boolean != true) return id
            val at = 40 // inside the tag
            return id.substring(0, at) + (if (id[at] == 'A') 'B' else 'A') + id.substring(at + 1)
        }
        fail("unknown header value object $spec")
    }

    private fun check(
        response: TestResponse,
        expect: JsonObject,
    ) {
        expect.only(setOf("status", "problem", "replayed", "retryAfter", "headers", "json", "sameBodyAs", "bare", "members", "detailContains"), "expectation")
        val what = "${scenario.text("name")}: ${response.status} ${response.body.decodeToString()}"
        assertEquals(expect.getValue("status").jsonPrimitive.int, response.status, what)
        expect["problem"]?.jsonPrimitive?.content?.let { name ->
            assertEquals("application/problem+json", response.header("content-type"), what)
            val document = Json.parseToJsonElement(response.body.decodeToString()).jsonObject
            if (name == "about:blank") {
                assertEquals("about:blank", document.text("type"), what)
                assertEquals(response.status, document.getValue("status").jsonPrimitive.int, what)
            } else {
                val problem = Problem.entries.firstOrNull { it.problemName == name } ?: fail("no problem $name")
                assertEquals(problem.typeUri, document.text("type"), what)
                assertEquals(problem.title, document.text("title"), what)
                assertEquals(problem.status, document.getValue("status").jsonPrimitive.int, what)
            }
        }
        if (expect["bare"]?.jsonPrimitive?.boolean == true) {
            val document = Json.parseToJsonElement(response.body.decodeToString()).jsonObject
            assertEquals(setOf("type", "title", "status"), document.keys, what)
        }
        expect["detailContains"]?.jsonArray?.forEach { part ->
            val document = Json.parseToJsonElement(response.body.decodeToString()).jsonObject
            val detail = document["detail"]?.jsonPrimitive?.content ?: ""
            assertTrue(part.jsonPrimitive.content in detail, "$what: detail lacks ${part.jsonPrimitive.content}")
        }
        expect["members"]?.jsonArray?.forEach { member ->
            val document = Json.parseToJsonElement(response.body.decodeToString()).jsonObject
            assertTrue(member.jsonPrimitive.content in document, "$what: member $member")
        }
        expect["replayed"]?.jsonPrimitive?.boolean?.let { replayed ->
            if (replayed) assertEquals("true", response.header("idempotent-replayed"), what) else assertNull(response.header("idempotent-replayed"), what)
        }
        if (expect["retryAfter"]?.jsonPrimitive?.boolean == true) {
            val seconds = response.header("retry-after")?.toLongOrNull() ?: fail("$what: no Retry-After seconds")
            assertTrue(seconds > 0, what)
        }
        expect["headers"]?.jsonObject?.forEach { (name, value) -> assertEquals(value.jsonPrimitive.content, response.header(name), "$what: $name") }
        expect["json"]?.jsonObject?.forEach { (member, value) ->
            val document = Json.parseToJsonElement(response.body.decodeToString()).jsonObject
            assertEquals(value, document[member], "$what: $member")
        }
        expect["sameBodyAs"]?.jsonPrimitive?.content?.let { name ->
            val earlier = named[name] ?: fail("no earlier response $name")
            assertEquals(earlier.status, response.status, what)
            assertArrayEquals(earlier.body, response.body, what)
        }
    }
}
