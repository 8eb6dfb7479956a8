package io.mintid.store

import io.mintid.Enqueued
import io.mintid.OutboxStatus
import io.mintid.RelayPolicy
import io.mintid.requireNonNegative
import java.security.SecureRandom
import java.sql.Connection
import java.util.function.LongSupplier
import javax.sql.DataSource

/**
 * A message to enqueue: one per [kind] and [businessKey].
 *
 * @property messageId its id (a Snowflake ID, never negative: [Outbox.enqueue] refuses a
 *   negative one, `outbox.invalid_message`).
 * @property kind the kind of event, e.g. `order.created` (1 to 64 bytes of printable ASCII).
 * @property businessKey the business event's key (1 to 255 bytes of UTF-8).
 */
class OutboxMessage(
    val messageId: Long,
    val kind: String,
    val businessKey: String,
    payload: ByteArray,
) {
    private val bytes = payload.copyOf()

    /** A copy of the payload (at most 1 MiB). */
    val payload: ByteArray get() = bytes.copyOf()

    internal fun payloadBytes(): ByteArray = bytes

    override fun toString(): String = "OutboxMessage($messageId, $kind, $businessKey, ${bytes.size} bytes)"
}

/**
 * A message of a claimed batch, handed to the [MessageSender].
 *
 * @property messageId its id.
 * @property kind its kind.
 * @property businessKey its business key.
 * @property attempts the sends started so far, this one included.
 * @property createdMillis when it was enqueued (Unix ms).
 */
class ClaimedMessage internal constructor(
    val messageId: Long,
    val kind: String,
    val businessKey: String,
    payload: ByteArray,
    val attempts: Long,
    val createdMillis: Long,
) {
    private val bytes = payload

    /** A copy of the payload. */
    val payload: ByteArray get() = bytes.copyOf()

    override fun toString(): String = "ClaimedMessage($messageId, $kind, $businessKey, attempt $attempts)"
}

/**
 * A message as stored (`outbox_load`).
 *
 * @property messageId its id.
 * @property status pending, sent or dead.
 * @property attempts the sends started so far.
 * @property nextAttemptMillis when it is next due (while claimed: when the claim ends), Unix ms.
 * @property lastError the last failed send's text (at most 1024 bytes), or null.
 */
data class StoredMessage(
    val messageId: Long,
    val status: OutboxStatus,
    val attempts: Long,
    val nextAttemptMillis: Long,
    val lastError: String?,
)

/**
 * What one [Outbox.relay] run did (the core's `RelayReport`).
 *
 * @property sent messages sent.
 * @property retried messages whose send failed, due again after the policy's backoff.
 * @property dead messages whose last attempt failed: dead.
 * @property givenUp messages whose attempts ran out before this claim (relays died sending them):
 *   dead unsent.
 * @property claimLost marks that found another relay's claim (`outbox.claim_lost`): counted, the
 *   run goes on.
 * @property released messages given back unsent because the claim would end first; claimed again.
 * @property markFailed marks that failed on a database error (not a broken connection nor a
 *   conflict): counted, the run goes on; the message stays claimed until its claim ends, then is
 *   sent again.
 */
data class RelayReport(
    val sent: Long,
    val retried: Long,
    val dead: Long,
    val givenUp: Long,
    val claimLost: Long,
    val released: Long,
    val markFailed: Long,
)

/**
 * Sends one claimed message (to a broker, a webhook, …); throws to fail the attempt. From Java
 * it may throw checked exceptions (an `IOException`) with no try/catch.
 */
fun interface MessageSender {
    /** Sends [message]; an exception fails this attempt (its message is stored as the error). */
    @Throws(Exception::class)
    fun send(message: ClaimedMessage)
}

/**
 * The transactional outbox in one database (any JDBC driver), relayed under one [RelayPolicy],
 * driven by the core's outbox drivers: [enqueue] writes a message on the caller's connection
 * inside its business transaction; [relay] runs the core's relay loop (claim a batch, decide
 * before each message whether the claim still covers a send, call the [MessageSender], mark the
 * result, give back what the claim cannot cover, claim again until nothing is due). Delivery is
 * at least once: consumers deduplicate by message id or by kind and business key.
 *
 * Apply the schema first ([Migrations.migrate]). Thread-safe.
 *
 * @property dataSource where a relay's connections come from.
 * @property dialect the database's SQL dialect.
 * @property policy batch size, claim length, backoff and attempts.
 * @property clock the time every decision and statement uses (the system clock by default).
 * @property metrics where each run's sent, retried and dead messages, and the database errors of its
 *   statements, are reported.
 * @param draw a random 64-bit number per relay run, for its claim tokens and backoff jitter (a
 *   [SecureRandom] by default).
 */
class Outbox
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: RelayPolicy,
        val clock: StoreClock = StoreClock.SYSTEM,
        val metrics: StoreMetrics = StoreMetrics.NONE,
        private val draw: LongSupplier = defaultDraw(),
    ) {
        init {
            policy.check()
        }

        private fun now(): Long = clock.nowMillis()

        /**
         * Inserts [message] on [connection], inside the caller's business transaction (or in
         * autocommit): [Enqueued.ALREADY_ENQUEUED] when its kind and business key already have a
         * message (a replay of the same event, not an error).
         *
         * @throws io.mintid.OutboxException `outbox.invalid_message` (nothing written).
         * @throws io.mintid.StoreQueryFailedException `store.query_failed` when the message id is
         *   another message's.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun enqueue(
            connection: Connection,
            message: OutboxMessage,
        ): Enqueued {
            val spec = Wire.enqueueSpec(dialect, message.messageId, message.kind, message.businessKey, message.payloadBytes())
            return (DriverRun.on(connection, dialect, clock, metrics).once(Wire.Kind.ENQUEUE, spec) as Wire.Step.Done).value as Enqueued
        }

        /**
         * Relays until nothing is due: the core claims batches, decides before each message
         * whether its claim still covers a send, and calls [sender]; a send that throws fails
         * that attempt (its message is stored, cut to 1024 bytes). Run it on a schedule, on as
         * many threads or processes as needed.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun relay(sender: MessageSender): RelayReport {
            val report =
                WireDriver(Wire.Kind.RELAY, Wire.relaySpec(dialect, policy, draw.asLong)).use { wire ->
                    run().use { run ->
                        // The connection is held from send to send.
                        var step = run.drive(wire, Wire.input(Wire.Input.START, now()).done(), hold = true)
                        while (step is Wire.Step.Yield) {
                            val failure = send(sender, step.value as ClaimedMessage)
                            val input =
                                if (failure == null) Wire.input(Wire.Input.SENT, now()) else Wire.input(Wire.Input.SEND_FAILED, now()).text(failure)
                            step = run.drive(wire, input.done(), hold = true)
                        }
                        (step as Wire.Step.Done).value as RelayReport
                    }
                }
            return report.also { metrics.relayed(it.sent, it.retried, it.dead) }
        }

        /** Calls [sender] on [message]: null when it returned, else its error text. */
        private fun send(
            sender: MessageSender,
            message: ClaimedMessage,
        ): String? =
            try {
                sender.send(message)
                null
            } catch (error: Exception) {
                error.message ?: error.toString()
            }

        /**
         * The message of [kind] and [businessKey], or null.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun load(
            kind: String,
            businessKey: String,
        ): StoredMessage? {
            val stored = (run().once(Wire.Kind.OUTBOX_LOAD, Wire.outboxLoadSpec(dialect, kind, businessKey)) as Wire.Step.Done).value
            return (stored as Wire.LoadedMessage?)?.let {
                StoredMessage(it.messageId, OutboxStatus.parse(it.status), it.attempts, it.nextAttemptMillis, it.lastError)
            }
        }

        /**
         * Deletes sent messages last updated at or before [sentBeforeMillis], [batchSize] per
         * statement until a batch comes back short; the total. Dead messages are kept.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws io.mintid.ArgumentException `argument.negative` for a negative [batchSize] (the
         *   core reads 0 as 1, `tests/vectors/limits.json`).
         */
        @JvmOverloads
        fun cleanup(
            sentBeforeMillis: Long,
            batchSize: Int = 1000,
        ): Long {
            val batch = requireNonNegative(batchSize.toLong(), "the batch size").toLong()
            val spec = Wire.spec(Wire.Kind.OUTBOX_CLEANUP, dialect).u64(sentBeforeMillis).u64(batch).done()
            return (run().once(Wire.Kind.OUTBOX_CLEANUP, spec) as Wire.Step.Done).value as Long
        }

        private fun run() = DriverRun.pooled(dataSource, dialect, clock, metrics)

        private companion object {
            fun defaultDraw(): LongSupplier {
                val random = SecureRandom()
                return LongSupplier { random.nextLong() }
            }
        }
    }
