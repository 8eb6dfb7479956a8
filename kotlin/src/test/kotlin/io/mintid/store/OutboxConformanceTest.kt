package io.mintid.store

import io.mintid.RelayPolicy
import io.mintid.int
import io.mintid.obj
import io.mintid.string
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * `tests/conformance/outbox.json` against [Outbox] on SQLite, PostgreSQL and MariaDB. A `relay`
 * step runs one relay with a scripted sender (a send's `during` steps run inside it, on the
 * manual clock); `concurrent_relays` and `slow_relays` run one thread per relay, each with its
 * own connection and [Outbox].
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
    private val foundRowsSource = db.open(foundRows = true)
    private val outbox = Outbox(admin, db.dialect, policy, clock)
    private val foundRows = Outbox(foundRowsSource, db.dialect, policy, clock)

    fun run() =
        case["steps"]!!.jsonArray.forEachIndexed { index, element ->
            runChecked(element.jsonObject, "step $index")
        }

    private fun runChecked(
        step: JsonObject,
        at: String,
    ) {
        val where = "$at (${step.string("do")} ${step["relay"] ?: ""})"
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
                checkFields(step, setOf("way", "message_id", "kind", "business_key", "payload", "now", "store"), where)
                val message = OutboxMessage(step.long("message_id"), step.string("kind"), step.string("business_key"), step.string("payload").toByteArray())
                val (source, store) =
                    when (val kind = step["store"]?.jsonPrimitive?.content) {
                        null -> admin to outbox
                        "found_rows" -> foundRowsSource to foundRows
                        else -> fail("$where: unknown store $kind")
                    }
                outcome { JsonPrimitive(enqueue(source, store, message, step.string("way"), where).name.lowercase()) }
            }
            "relay" -> {
                checkFields(step, setOf("relay", "now", "draw", "sends", "lose_reply"), where)
                relay(step, where)
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
            "slow_relays" -> {
                checkFields(step, setOf("messages", "send_millis", "second_after_millis"), where)
                slowRelays(step.long("messages").toInt(), step.long("send_millis"), step.long("second_after_millis"))
            }
            else -> fail("$where: unknown step")
        }

    /** Enqueues inside a business transaction that commits or rolls back. */
    private fun enqueue(
        source: WorkerDataSource,
        store: Outbox,
        message: OutboxMessage,
        way: String,
        where: String,
    ) = source.connection.use { connection ->
        connection.autoCommit = false
        try {
            val result =
                try {
                    store.enqueue(connection, message)
                } catch (error: Exception) {
                    connection.rollback()
                    throw error
                }
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

    /** One relay run with a scripted sender on the manual clock. */
    private fun relay(
        step: JsonObject,
        where: String,
    ): JsonElement {
        val script = ArrayDeque(step["sends"]!!.jsonArray.map { it.jsonObject })
        val losing = LosingDataSource(db.open(), db.dialect)
        step["lose_reply"]?.jsonPrimitive?.content?.let { name ->
            assertTrue(name in MARKS, "$where: lose_reply names no mark: $name")
            losing.loseReplyTo(name)
        }
        val own = Outbox(losing, db.dialect, policy, clock) { step.long("draw") }
        val report =
            own.relay { message ->
                val entry = script.removeFirstOrNull() ?: fail("$where: an unscripted send of message ${message.messageId}")
                checkFields(entry, setOf("message_id", "outcome", "millis", "during", "mark_fails"), where)
                assertEquals(entry.string("message_id"), message.messageId.toString(), "$where: the send order")
                val start = (clock as StepClock).current
                entry["during"]?.jsonArray?.forEachIndexed { index, inner -> runChecked(inner.jsonObject, "$where, during $index") }
                clock.current = start + entry.long("millis")
                // The mark after this call fails, unrun.
                entry["mark_fails"]?.jsonPrimitive?.content?.let { dbClass ->
                    assertEquals("other", dbClass, "$where: mark_fails of an unknown class")
                    losing.failNext(MARKS)
                }
                when (val spec = entry["outcome"]!!) {
                    JsonPrimitive("delivered") -> Unit
                    is JsonObject ->
                        if (spec.keys == setOf("failed")) throw SendFailed(errorText(spec["failed"]!!, where)) else fail("$where: unknown outcome $spec")
                    else -> fail("$where: unknown outcome $spec")
                }
            }
        assertTrue(script.isEmpty(), "$where: scripted sends never made: $script")
        assertTrue(losing.disarm(), "$where: lose_reply: no ${step["lose_reply"]} statement ran")
        assertTrue(losing.unfail(), "$where: mark_fails: no mark ran after the send")
        return json(
            "sent" to str(report.sent),
            "retried" to str(report.retried),
            "dead" to str(report.dead),
            "given_up" to str(report.givenUp),
            "claim_lost" to str(report.claimLost),
            "released" to str(report.released),
            "mark_failed" to str(report.markFailed),
        )
    }

    private fun enqueueMany(messages: Int) {
        val enqueuer = Outbox(admin, db.dialect, policy)
        admin.connection.use { connection ->
            for (n in 0 until messages) enqueuer.enqueue(connection, OutboxMessage(n + 1L, "event", "e-$n", "{}".toByteArray()))
        }
    }

    /** [messages] enqueued, then [relays] threads relay at once until nothing is due. */
    private fun concurrentRelays(
        messages: Int,
        relays: Int,
    ): JsonElement {
        enqueueMany(messages)
        val sent = ConcurrentLinkedQueue<Long>()
        val start = CountDownLatch(1)
        val pool = Executors.newFixedThreadPool(relays)
        try {
            val futures =
                (0 until relays).map {
                    val own = Outbox(db.open(), db.dialect, policy)
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
        return sentCounts(sent)
    }

    /** A relay whose sends take [sendMillis], and a second one started [secondAfterMillis] later. */
    private fun slowRelays(
        messages: Int,
        sendMillis: Long,
        secondAfterMillis: Long,
    ): JsonElement {
        enqueueMany(messages)
        val sent = ConcurrentLinkedQueue<Long>()
        val pool = Executors.newFixedThreadPool(2)
        try {
            val futures =
                listOf(0L, secondAfterMillis).map { after ->
                    val own = Outbox(db.open(), db.dialect, policy)
                    pool.submit<RelayReport> {
                        Thread.sleep(after)
                        own.relay {
                            Thread.sleep(sendMillis)
                            sent += it.messageId
                        }
                    }
                }
            futures.forEach { it.get(5, TimeUnit.MINUTES) }
        } finally {
            pool.shutdownNow()
        }
        return sentCounts(sent)
    }
}

/** The relay's marks: the statements `lose_reply` and `mark_fails` may fault. */
private val MARKS = listOf("outbox_mark_sent", "outbox_mark_retry", "outbox_mark_dead")

/** A scripted send failure. */
private class SendFailed(
    message: String,
) : RuntimeException(message)

private fun errorText(
    spec: JsonElement,
    where: String,
): String =
    when {
        spec is JsonPrimitive && spec.isString -> spec.content
        spec is JsonObject && spec.keys == setOf("fill") -> spec.obj("fill").let { it.string("text").repeat(it.long("length").toInt()) }
        else -> fail("$where: unknown error text $spec")
    }

private fun sentCounts(sent: Collection<Long>): JsonElement {
    val distinct = sent.toSet().size
    return json("sent" to str(distinct), "sent_twice" to str(sent.size - distinct))
}
