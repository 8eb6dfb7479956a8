package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.MintidException
import io.mintid.Outcome
import io.mintid.RecordPolicy
import io.mintid.StoreException
import io.mintid.bool
import io.mintid.hexToBytes
import io.mintid.obj
import io.mintid.string
import io.mintid.toHex
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.boolean
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.sql.Connection
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * The storage conformance suite's `tests/conformance/idempotency.json` against [IdempotencyStore]
 * on SQLite, PostgreSQL and MariaDB: every case on every database, each on a fresh database; an
 * unknown op, step, field or value fails the case.
 */
class IdempotencyConformanceTest {
    @TestFactory
    fun idempotencyScenarios(): List<DynamicNode> = scenarioTests("idempotency.json") { case, db -> CaseRunner(case, db).run() }
}

private val KNOWN_STEP_FIELDS =
    setOf(
        "do",
        "expect",
        "way",
        "worker",
        "fingerprint",
        "operation",
        "now",
        "key",
        "key_created",
        "store",
        "response",
        "failure",
        "error",
        "batch_size",
        "workers",
        "keys",
        "in_forked_child",
        "first",
        "second_after_millis",
        "second",
        "lose_reply",
        "unavailable_after_operation",
    )
private val KNOWN_OPERATION_FIELDS = setOf("outcome", "response", "failure", "error", "sleep_millis", "kill_connections", "outage_millis")

private fun responseOf(spec: JsonObject): StoredResponse {
    val type = spec.string("content_type")
    return when {
        spec.containsKey("text") -> StoredResponse(type, spec.string("text").toByteArray(Charsets.UTF_8))
        spec.containsKey("hex") -> StoredResponse(type, hexToBytes(spec.string("hex")))
        spec.containsKey("fill") -> {
            val fill = spec.obj("fill")
            StoredResponse(type, ByteArray(fill.long("length").toInt()) { fill.string("byte").toInt(16).toByte() })
        }
        else -> fail("unknown response $spec")
    }
}

/** A stored response in the shape of the expected one. */
private fun responseLike(
    response: StoredResponse?,
    expected: JsonElement?,
): JsonElement {
    if (response == null) return JsonNull
    val body = response.body
    val type = "content_type" to JsonPrimitive(response.contentType)
    val spec = expected as? JsonObject
    return when {
        spec == null -> json(type, "hex" to JsonPrimitive(body.toHex()))
        spec.containsKey("text") -> json(type, "text" to JsonPrimitive(String(body, Charsets.UTF_8)))
        spec.containsKey("hex") -> json(type, "hex" to JsonPrimitive(body.toHex()))
        else -> {
            val byte = if (body.isNotEmpty() && body.all { it == body[0] }) byteArrayOf(body[0]).toHex() else "mixed"
            json(type, "fill" to json("byte" to JsonPrimitive(byte), "length" to str(body.size)))
        }
    }
}

/** A request outcome in the vocabulary of the conformance file. */
private fun outcomeOf(
    result: RunResult,
    expected: JsonObject?,
): JsonElement =
    when (result) {
        is Executed -> json("decision" to JsonPrimitive("execute"), "response" to responseLike(result.response, expected?.get("response")))
        is Replayed ->
            if (result.outcome == Outcome.SUCCEEDED) {
                json(
                    "decision" to JsonPrimitive("replay"),
                    "outcome" to JsonPrimitive("succeeded"),
                    "response" to responseLike(result.response, expected?.get("response")),
                )
            } else {
                json("decision" to JsonPrimitive("replay"), "outcome" to JsonPrimitive("failed"), "error" to JsonPrimitive(result.error))
            }
        is InProgress ->
            json(
                "decision" to JsonPrimitive("in_progress"),
                "problem" to JsonPrimitive(result.problem!!.problemName),
                "retry_after_millis" to str(result.retryAfterMillis),
            )
        is NotExecuted -> json("decision" to JsonPrimitive(result.decision), "problem" to JsonPrimitive(result.problem!!.problemName))
    }

/**
 * A request's error in the file's vocabulary: the operation's own, or a store error of the
 * operation's result (no problem: the operation ran), a store error with its problem, or
 * another mintid error (a key refused before any query).
 */
private fun errorOutcome(error: Throwable): JsonElement =
    when {
        error is OperationException ->
            if (error.suppressed.any { it is MintidException }) {
                json("decision" to JsonPrimitive("execute"), "error" to JsonPrimitive(error.message), "not_recorded" to JsonPrimitive(true))
            } else {
                json("decision" to JsonPrimitive("execute"), "error" to JsonPrimitive(error.message))
            }
        error is StoreException && error.problem == null -> json("decision" to JsonPrimitive("execute"), "error" to JsonPrimitive(error.code))
        error is StoreException -> json("error" to JsonPrimitive(error.code), "problem" to JsonPrimitive(error.problem!!.problemName))
        error is MintidException -> json("error" to JsonPrimitive(error.code))
        else -> throw error
    }

private class Worker(
    val name: String,
    /** Its pool, behind the lost-reply fault the store's connections come through. */
    val losing: LosingDataSource,
    /** The fault proxy's listener its connections go through (a case with an outage, on a server), or null. */
    val proxyPort: Int?,
    val store: IdempotencyStore,
) {
    val dataSource: WorkerDataSource get() = losing.inner

    var lease: RecordLease? = null
}

/** The claims the stores of a case reported through [StoreMetrics.claimed], by way and decision. */
private class ClaimCounts : StoreMetrics {
    private val counts = ConcurrentHashMap<Pair<String, String>, AtomicInteger>()

    override fun claimed(
        way: String,
        decision: String,
        nanos: Long,
    ) {
        counts.computeIfAbsent(way to decision) { AtomicInteger() }.incrementAndGet()
    }

    fun snapshot(): Map<Pair<String, String>, Int> = counts.mapValues { it.value.get() }
}

/** Runs one case on one fresh database. */
private class CaseRunner(
    private val case: JsonObject,
    private val db: FreshDatabase,
) {
    private val claims = ClaimCounts()

    private val policy =
        case.obj("policy").let {
            RecordPolicy(
                it.long("lease_millis"),
                it.long("retention_millis"),
                it.bool("store_errors"),
                it.long("retry_after_millis"),
                it.long("max_wait_millis"),
                it.long("poll_millis"),
            )
        }
    private val clock = clockOf(case)
    private val admin = db.open()
    private val adminStore = IdempotencyStore(admin, db.dialect, policy, clock, claims)
    private val workers = HashMap<String, Worker>()

    private fun workerOf(
        name: String,
        store: String?,
    ): Worker =
        workers.getOrPut("$name/${store ?: "up"}") {
            var proxyPort: Int? = null
            val dataSource =
                when (store) {
                    null ->
                        if (outages && db.dialect != Dialect.SQLITE) {
                            db.openThroughProxy().also { proxyPort = it.second }.first
                        } else {
                            db.open()
                        }
                    "found_rows" -> db.open(foundRows = true)
                    "unavailable" -> db.unavailable()
                    else -> fail("unknown store $store")
                }
            val losing = LosingDataSource(dataSource, db.dialect)
            Worker(name, losing, proxyPort, IdempotencyStore(losing, db.dialect, policy, clock, claims))
        }

    /** Whether an operation of the case cuts the database (its workers then connect through the fault proxy). */
    private val outages = case.toString().contains("\"outage_millis\"")

    /** Runs [action] with [step]'s `lose_reply` armed on [worker]; the fault must have fired. */
    private fun <T> losingReply(
        worker: Worker,
        step: JsonObject,
        action: () -> T,
    ): T {
        val name = step["lose_reply"]?.jsonPrimitive?.content ?: return action()
        worker.losing.loseReplyTo(name)
        try {
            return action()
        } finally {
            assertTrue(worker.losing.disarm(), "lose_reply: no $name statement ran")
        }
    }

    private fun keyOf(step: JsonObject): IdempotencyKey {
        val key = (step["key"] ?: case["key"])!!.jsonObject
        return IdempotencyKey.of(key.string("kind"), key.string("scope"), key.string("id"))
    }

    private fun requestOf(step: JsonObject) =
        StoreRequest(Fingerprint.ofDigest(hexToBytes(step.string("fingerprint"))), step["key_created"]?.jsonPrimitive?.content?.toLong())

    private fun sideEffect(
        connection: Connection,
        key: IdempotencyKey,
        worker: String,
    ) {
        connection.prepareStatement("INSERT INTO conformance_side_effect (scope, kind, key_id, worker) VALUES (?, ?, ?, ?)").use {
            it.setString(1, key.scope)
            it.setString(2, key.kind)
            it.setString(3, key.id)
            it.setString(4, worker)
            it.executeUpdate()
        }
    }

    private fun operationResult(
        worker: Worker,
        spec: JsonObject,
    ): StoredResponse =
        when (val outcome = spec.string("outcome")) {
            "succeed" -> {
                spec["sleep_millis"]?.let { Thread.sleep(it.jsonPrimitive.content.toLong()) }
                spec["outage_millis"]?.let {
                    // The completion meets the outage: a cut through the fault proxy, or SQLite's write lock held.
                    val millis = it.jsonPrimitive.content.toLong()
                    worker.proxyPort?.let { port -> FaultProxy.cut(port, millis) } ?: holdExclusiveLock(db, millis)
                }
                if (spec["kill_connections"]?.jsonPrimitive?.content == "true") {
                    db.killConnections()
                    // The runner's own connections went too.
                    admin.closeConnection()
                }
                responseOf(spec.obj("response"))
            }
            "fail" -> {
                val failure = spec.string("failure")
                assertTrue(failure == "final" || failure == "retryable", "unknown failure $failure")
                throw OperationException(spec.string("error"), retryable = failure == "retryable")
            }
            else -> fail("unknown operation outcome $outcome")
        }

    fun request(
        worker: Worker,
        way: String,
        key: IdempotencyKey,
        request: StoreRequest,
        spec: JsonObject,
        away: Boolean = false,
    ): RunResult {
        spec.keys.forEach { assertTrue(it in KNOWN_OPERATION_FIELDS, "unknown operation field $it") }
        return when (way) {
            "run_once" -> {
                val insert = { worker.dataSource.connection.use { sideEffect(it, key, worker.name) } }
                val operation =
                    if (spec.string("outcome") == "not_a_response") {
                        JavaOperations.returningNull(insert)
                    } else {
                        Operation {
                            insert()
                            try {
                                operationResult(worker, spec)
                            } finally {
                                if (away) worker.losing.unreachable()
                            }
                        }
                    }
                worker.store.runOnce(key, request, operation)
            }
            "same_transaction" ->
                worker.store.transaction { connection ->
                    worker.store.inTransaction(connection, key, request) {
                        sideEffect(it, key, worker.name)
                        operationResult(worker, spec)
                    }
                }
            else -> fail("unknown way $way")
        }
    }

    private fun count(
        sql: String,
        vararg values: String,
    ): String =
        admin.connection.use { connection ->
            connection.prepareStatement(sql).use { statement ->
                values.forEachIndexed { index, value -> statement.setString(index + 1, value) }
                statement.executeQuery().use {
                    it.next()
                    it.getLong(1).toString()
                }
            }
        }

    private fun sideEffects(key: IdempotencyKey): String =
        count("SELECT COUNT(*) FROM conformance_side_effect WHERE scope = ? AND kind = ? AND key_id = ?", key.scope, key.kind, key.id)

    fun run() {
        try {
            case["steps"]!!.jsonArray.forEachIndexed { index, element ->
                val step = element.jsonObject
                step.keys.forEach { assertTrue(it in KNOWN_STEP_FIELDS, "step $index: unknown field $it") }
                step["now"]?.let { now -> (clock as? StepClock)?.current = now.jsonPrimitive.content.toLong() }
                runStep(step, "step $index (${step.string("do")})")
            }
        } finally {
            workers.values.forEach { it.dataSource.closeConnection() }
        }
        checkClaims()
    }

    /**
     * The claims the stores reported through their metrics hook are the ones the steps expect,
     * by way and decision (a step "in a forked child" runs in this process, so it counts here);
     * a `concurrent` step's way counts its executed claims and only its allowed other decisions.
     */
    private fun checkClaims() {
        val expected = HashMap<Pair<String, String>, Int>()
        val concurrent = HashMap<String, JsonObject>()

        fun claimed(
            way: String,
            expect: JsonElement?,
        ) {
            val decision = (expect as? JsonObject)?.get("decision")?.jsonPrimitive?.content ?: return
            expected.merge(way to decision, 1, Int::plus)
        }
        for (element in case["steps"]!!.jsonArray) {
            val step = element.jsonObject
            when (step.string("do")) {
                "run" -> claimed(step.string("way"), step["expect"])
                "claim" -> claimed("lease", step["expect"])
                "overlap" -> listOf("first", "second").forEach { claimed(step.obj(it).string("way"), step.obj("expect")[it]) }
                "concurrent" -> concurrent[step.string("way")] = step
            }
        }
        val got = claims.snapshot().toMutableMap()
        for ((way, step) in concurrent) {
            val ours = got.filterKeys { it.first == way }
            ours.keys.forEach { got.remove(it) }
            val total = step.long("workers") * step.long("keys")
            val executed = step.obj("expect").string("executed").toLong()
            val allowed = step.obj("expect")["others"]!!.jsonArray.map { it.jsonPrimitive.content }
            assertEquals(executed, (ours[way to "execute"] ?: 0).toLong(), "concurrent $way: executed claims reported")
            ours.keys.filter { it.second != "execute" }.forEach { assertTrue(it.second in allowed, "concurrent $way: reported ${it.second}") }
            assertEquals(total, ours.values.sum().toLong(), "concurrent $way: claims reported")
        }
        assertEquals(expected, got, "claims reported through StoreMetrics")
    }

    private fun runStep(
        step: JsonObject,
        where: String,
    ) {
        val expect = step["expect"]
        when (step.string("do")) {
            "migrate" -> {
                Migrations.migrate(admin, db.dialect)
                admin.connection.use { c -> c.createStatement().use { it.execute(db.sideEffectTable) } }
                assertEquals(JsonPrimitive("ok"), expect, where)
            }
            "migrations" -> assertEquals(expect, JsonArray(Migrations.applied(admin, db.dialect).map { str(it) }), where)
            // The JVM has no fork(): nothing to inherit, the step runs in this process (README).
            "run" -> assertEquals(expect, runOutcome(step, expect as? JsonObject), where)
            "claim" -> {
                val worker = workerOf(step.string("worker"), null)
                when (val result = worker.store.claimLease(keyOf(step), requestOf(step))) {
                    is RecordLease -> {
                        worker.lease = result
                        val actual = json("decision" to JsonPrimitive("execute"), "token" to str(result.token), "lease_deadline" to str(result.leaseDeadlineMillis))
                        assertEquals(expect, actual, where)
                    }
                    is NotExecuted -> assertEquals(expect, outcomeOf(result, expect as? JsonObject), where)
                }
            }
            "renew" -> {
                val lease = workerOf(step.string("worker"), null).lease ?: fail("$where: no lease")
                assertEquals(expect, outcome { json("lease_deadline" to str(lease.renew())) }, where)
            }
            "overlap" -> runOverlap(step, where)
            "complete", "fail" -> {
                val worker = workerOf(step.string("worker"), null)
                val lease = worker.lease ?: fail("$where: worker ${worker.name} holds no lease")
                val outcome: JsonElement =
                    try {
                        losingReply(worker, step) {
                            if (step.string("do") == "complete") {
                                lease.complete(responseOf(step.obj("response")))
                            } else {
                                val failure = step.string("failure")
                                assertTrue(failure == "final" || failure == "retryable", "$where: unknown failure $failure")
                                lease.fail(step.string("error"), retryable = failure == "retryable")
                            }
                        }
                        JsonPrimitive("ok")
                    } catch (error: MintidException) {
                        json("error" to JsonPrimitive(error.code))
                    }
                assertEquals(expect, outcome, where)
            }
            "check" -> {
                val stored = adminStore.load(keyOf(step))
                val actual =
                    stored?.let {
                        val record = it.record
                        json(
                            "status" to JsonPrimitive(record.status.text),
                            "fingerprint" to JsonPrimitive(record.fingerprint.digest().toHex()),
                            "token" to str(record.token),
                            "lease_deadline" to str(record.leaseDeadlineMillis),
                            "created" to str(record.createdMillis),
                            "expires" to str(record.expiresMillis),
                            "response" to responseLike(it.response, (expect as? JsonObject)?.get("response")),
                            "error" to JsonPrimitive(it.error),
                        )
                    } ?: JsonNull
                assertEquals(expect, actual, where)
            }
            "side_effects" -> assertEquals(expect, JsonPrimitive(sideEffects(keyOf(step))), where)
            "records" -> assertEquals(expect, JsonPrimitive(count("SELECT COUNT(*) FROM idempotency_record")), where)
            "cleanup" -> {
                val deleted = adminStore.cleanup(step.long("batch_size").toInt())
                assertEquals(expect, json("deleted" to str(deleted)), where)
            }
            "concurrent" -> runConcurrent(step, where)
            else -> fail("$where: unknown step")
        }
    }

    /** One `run` request's outcome (its `expect` shapes how responses are written). */
    private fun runOutcome(
        step: JsonObject,
        expect: JsonObject?,
    ): JsonElement {
        val worker = workerOf(step.string("worker"), step["store"]?.jsonPrimitive?.content)
        return try {
            val away = step["unavailable_after_operation"]?.jsonPrimitive?.boolean == true
            try {
                outcomeOf(losingReply(worker, step) { request(worker, step.string("way"), keyOf(step), requestOf(step), step.obj("operation"), away) }, expect)
            } finally {
                assertEquals(away, worker.losing.reachable(), "unavailable_after_operation: the operation never ended")
            }
        } catch (error: MintidException) {
            errorOutcome(error)
        } catch (error: OperationException) {
            errorOutcome(error)
        }
    }

    /** The `first` request on a thread, the `second` one `second_after_millis` after its start, on the system clock. */
    private fun runOverlap(
        step: JsonObject,
        where: String,
    ) {
        val expect = step.obj("expect")
        val first = step.obj("first")
        val second = step.obj("second")
        listOf(first, second).forEach {
            assertEquals("run_once", it.string("way"), "$where: only run_once overlaps")
            workerOf(it.string("worker"), it["store"]?.jsonPrimitive?.content)
        }
        val pool = Executors.newSingleThreadExecutor()
        try {
            val started = System.nanoTime()
            val firstOutcome = pool.submit<JsonElement> { runOutcome(first, expect["first"] as? JsonObject) }
            val wait = step.long("second_after_millis") - (System.nanoTime() - started) / 1_000_000
            if (wait > 0) Thread.sleep(wait)
            var secondOutcome = runOutcome(second, expect["second"] as? JsonObject)
            val expectedSecond = expect.obj("second")
            if (expectedSecond["decision"]?.jsonPrimitive?.content == "in_progress" && "retry_after_millis" !in expectedSecond) {
                secondOutcome = JsonObject(secondOutcome.jsonObject - "retry_after_millis")
            }
            assertEquals(expect, json("first" to firstOutcome.get(1, TimeUnit.MINUTES), "second" to secondOutcome), where)
        } finally {
            pool.shutdownNow()
        }
    }

    /** `workers` threads, each with its own connection, run every key once, all started together. */
    private fun runConcurrent(
        step: JsonObject,
        where: String,
    ) {
        val expect = step.obj("expect")
        val workerCount = step.long("workers").toInt()
        val keyBase = case.obj("key")
        val keys = (0 until step.long("keys").toInt()).map { IdempotencyKey.of(keyBase.string("kind"), keyBase.string("scope"), "${keyBase.string("id")}-$it") }
        val request = StoreRequest(Fingerprint.ofDigest(hexToBytes(step.string("fingerprint"))))
        val threadWorkers =
            (0 until workerCount).map {
                val dataSource = LosingDataSource(db.open(), db.dialect)
                Worker("w$it", dataSource, null, IdempotencyStore(dataSource, db.dialect, policy, StoreClock.SYSTEM, claims))
            }
        val executed = AtomicInteger()
        val others = java.util.concurrent.ConcurrentHashMap.newKeySet<String>()
        val start = CountDownLatch(1)
        val pool = Executors.newFixedThreadPool(workerCount)
        try {
            val futures =
                threadWorkers.map { worker ->
                    pool.submit {
                        start.await()
                        for (key in keys) {
                            val result = request(worker, step.string("way"), key, request, step.obj("operation"))
                            if (result is Executed) executed.incrementAndGet() else others += result.decision
                        }
                    }
                }
            start.countDown()
            futures.forEach { it.get(10, TimeUnit.MINUTES) }
        } finally {
            pool.shutdownNow()
            threadWorkers.forEach { it.dataSource.closeConnection() }
        }
        val perKey = keys.map { sideEffects(it) }.toSet()
        assertEquals(expect.string("executed"), executed.get().toString(), "$where: executed")
        assertEquals(setOf(expect.string("side_effects_per_key")), perKey, "$where: side effects per key")
        val allowed = expect["others"]!!.jsonArray.map { it.jsonPrimitive.content }
        others.forEach { assertTrue(it in allowed, "$where: unexpected decision $it") }
    }
}
