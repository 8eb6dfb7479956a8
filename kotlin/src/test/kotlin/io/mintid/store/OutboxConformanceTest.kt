package io.mintid.store

import io.mintid.RelayPolicy
import io.mintid.int
import io.mintid.obj
import io.mintid.string
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * `tests/conformance/outbox.json` against [OutboxStore] on SQLite, PostgreSQL and MariaDB. Relays
 * keep their latest batch; `concurrent_relays` runs one thread per relay, each with its own
 * connection and [OutboxStore], all started at once.
 */
class OutboxConformanceTest {
    @TestFactory
    fun outboxScenarios(): List<DynamicNode> = scenarioTests("outbox.json") { case, db -> OutboxCaseRunner(case, db).run() }
}

/** The `RelayPolicy` object of `tests/vectors/outbox.json`. */
internal fun relayPolicyOf(spec: JsonObject) =
    RelayPolicy(
        spec.long("batch_size"),
        spec.long("claim_millis"),
        spec.long("base_backoff_millis"),
        spec.long("max_backoff_millis"),
        spec.int("jitter_percent"),
        spec.long("max_attempts"),
    )

private class OutboxCaseRunner(
    private val case: JsonObject,
    private val db: FreshDatabase,
) {
    private val policy = relayPolicyOf(case.obj("policy"))
    private val clock = clockOf(case)
    private val admin = db.open()
    private val outbox = OutboxStore(admin, db.dialect, policy, clock)
    private val batches = HashMap<String, OutboxBatch>()

    fun run() =
        case["steps"]!!.jsonArray.forEachIndexed { index, element ->
            val step = element.jsonObject
            val where = "step $index (${step.string("do")})"
            step["now"]?.let { (clock as? StepClock)?.current = step.long("now") }
            assertEquals(step["expect"], runStep(step, where), where)
        }

    private fun runStep(
        step: JsonObject,
        where: String,
    ): JsonElement =
        when (step.string("do")) {
            "migrate" -> {
                checkFields(step, emptySet(), where)
                Migrations.migrate(admin, db.dialect)
                JsonPrimitive("ok")
            }
            "enqueue" -> {
                checkFields(step, setOf("way", "message_id", "kind", "business_key", "payload", "now"), where)
                val message = OutboxMessage(step.long("message_id"), step.string("kind"), step.string("business_key"), step.string("payload").toByteArray())
                JsonPrimitive(enqueue(message, step.string("way"), where).name.lowercase())
            }
            "claim" -> {
                checkFields(step, setOf("relay", "now", "draw"), where)
                val batch = outbox.claim(step.long("draw"))
                batches[step.string("relay")] = batch
                JsonArray(batch.messages.map { str(it.messageId) })
            }
            "send" -> {
                checkFields(step, setOf("relay", "message_id", "now", "outcome"), where)
                send(step, where)
            }
            "message" -> {
                checkFields(step, setOf("kind", "business_key"), where)
                outbox.load(step.string("kind"), step.string("business_key"))?.let {
                    json(
                        "status" to JsonPrimitive(it.status.text),
                        "attempts" to str(it.attempts),
                        "next_attempt" to str(it.nextAttemptMillis),
                        "last_error" to JsonPrimitive(it.lastError),
                    )
                } ?: JsonNull
            }
            "cleanup" -> {
                checkFields(step, setOf("sent_before", "batch_size"), where)
                json("deleted" to str(outbox.cleanup(step.long("sent_before"), step.long("batch_size").toInt())))
            }
            "concurrent_relays" -> {
                checkFields(step, setOf("messages", "relays"), where)
                concurrentRelays(step.long("messages").toInt(), step.long("relays").toInt())
            }
            else -> fail("$where: unknown step")
        }

    /** Enqueues inside a business transaction that commits or rolls back. */
    private fun enqueue(
        message: OutboxMessage,
        way: String,
        where: String,
    ) = admin.connection.use { connection ->
        connection.autoCommit = false
        try {
            val result = outbox.enqueue(connection, message)
            when (way) {
                "commit" -> connection.commit()
                "rollback" -> connection.rollback()
                else -> fail("$where: unknown way $way")
            }
            result
        } finally {
            connection.autoCommit = true
        }
    }

    private fun send(
        step: JsonObject,
        where: String,
    ): JsonElement {
        val batch = batches[step.string("relay")] ?: fail("$where: relay ${step.string("relay")} has no claim")
        val message = batch.messages.firstOrNull { it.messageId == step.long("message_id") } ?: fail("$where: message not in the claim")
        val spec = step["outcome"]!!
        val (sender, draw) =
            when {
                spec == JsonPrimitive("delivered") -> MessageSender { } to null
                spec is JsonObject && spec.keys == setOf("failed", "draw") ->
                    MessageSender { throw RuntimeException(spec.string("failed")) } to spec.long("draw")
                else -> fail("$where: unknown outcome $spec")
            }
        return outcome {
            when (val result = outbox.deliver(batch, message, sender, draw)) {
                DeliveryResult.Sent -> JsonPrimitive("sent")
                is DeliveryResult.Retry -> json("retry" to str(result.nextAttemptMillis))
                DeliveryResult.Dead -> JsonPrimitive("dead")
                DeliveryResult.GivenUp -> JsonPrimitive("given_up")
            }
        }
    }

    /** [messages] enqueued, then [relays] threads relay at once until nothing is due. */
    private fun concurrentRelays(
        messages: Int,
        relays: Int,
    ): JsonElement {
        val enqueuer = OutboxStore(admin, db.dialect, policy)
        admin.connection.use { connection ->
            for (n in 0 until messages) enqueuer.enqueue(connection, OutboxMessage(n + 1L, "event", "e-$n", "{}".toByteArray()))
        }
        val sent = ConcurrentLinkedQueue<Long>()
        val start = CountDownLatch(1)
        val pool = Executors.newFixedThreadPool(relays)
        try {
            val futures =
                (0 until relays).map {
                    val own = OutboxStore(db.open(), db.dialect, policy)
                    pool.submit<RelayReport> {
                        start.await()
                        own.relay { sent += it.messageId }
                    }
                }
            start.countDown()
            futures.forEach { it.get(5, TimeUnit.MINUTES) }
        } finally {
            pool.shutdownNow()
        }
        val distinct = sent.toSet().size
        return json("sent" to str(distinct), "sent_twice" to str(sent.size - distinct))
    }
}
