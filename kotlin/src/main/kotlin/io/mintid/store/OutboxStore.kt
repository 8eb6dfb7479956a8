package io.mintid.store

import io.mintid.AfterFailure
import io.mintid.Delivery
import io.mintid.Enqueued
import io.mintid.Outbox
import io.mintid.OutboxException
import io.mintid.OutboxStatus
import io.mintid.RelayPolicy
import java.security.SecureRandom
import java.sql.Connection
import java.util.function.LongSupplier
import javax.sql.DataSource

/**
 * A message to enqueue: one per [kind] and [businessKey].
 *
 * @property messageId its id (a Snowflake ID, never negative).
 * @throws IllegalArgumentException for a negative [messageId].
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

    init {
        require(messageId >= 0) { "the message id must not be negative, not $messageId" }
    }

    /** A copy of the payload (at most 1 MiB). */
    val payload: ByteArray get() = bytes.copyOf()

    internal fun payloadBytes(): ByteArray = bytes

    override fun toString(): String = "OutboxMessage($messageId, $kind, $businessKey, ${bytes.size} bytes)"
}

/**
 * A message of a claimed batch.
 *
 * @property messageId its id.
 * @property kind its kind.
 * @property businessKey its business key.
 * @property attempts the attempts so far, this claim's included.
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
 * The messages one claim took: they are this relay's until [claimedUntilMillis]; every mark is
 * checked against [claimToken].
 *
 * @property claimToken the claim's token.
 * @property claimedUntilMillis when the claim ends (Unix ms); then another relay may claim them.
 * @property messages the messages, in message id order.
 */
class OutboxBatch internal constructor(
    val claimToken: Long,
    val claimedUntilMillis: Long,
    val messages: List<ClaimedMessage>,
)

/**
 * A message as stored (`outbox_load`).
 *
 * @property messageId its id.
 * @property status pending, sent or dead.
 * @property attempts the attempts so far.
 * @property nextAttemptMillis when it is next due (while claimed: when the claim ends), Unix ms.
 * @property lastError the last failure's text, or null.
 */
data class StoredMessage(
    val messageId: Long,
    val status: OutboxStatus,
    val attempts: Long,
    val nextAttemptMillis: Long,
    val lastError: String?,
)

/** What became of one claimed message ([OutboxStore.deliver]). */
sealed class DeliveryResult {
    /** Sent and marked sent. */
    object Sent : DeliveryResult() {
        override fun toString() = "DeliveryResult.Sent"
    }

    /**
     * The send failed: the message is due again at [nextAttemptMillis] (the core's backoff).
     *
     * @property nextAttemptMillis when it is due again (Unix ms).
     */
    data class Retry(
        val nextAttemptMillis: Long,
    ) : DeliveryResult()

    /** The send failed and the attempts are used up: marked dead with the error. */
    object Dead : DeliveryResult() {
        override fun toString() = "DeliveryResult.Dead"
    }

    /**
     * Not sent: its attempts ran out before this claim (earlier relays died sending it); marked
     * dead with [ATTEMPTS_EXHAUSTED].
     */
    object GivenUp : DeliveryResult() {
        override fun toString() = "DeliveryResult.GivenUp"
    }
}

/**
 * What an [OutboxStore.relay] run did.
 *
 * @property sent messages sent.
 * @property retried messages whose send failed, due again later.
 * @property dead messages marked dead (failed for the last time, or given up unsent).
 * @property lost messages whose claim ended and another relay took them before they were marked.
 */
data class RelayReport(
    val sent: Long,
    val retried: Long,
    val dead: Long,
    val lost: Long,
)

/** Sends one claimed message (to a broker, a webhook, …); throws to fail the attempt. */
fun interface MessageSender {
    /** Sends [message]; an exception fails this attempt (its message is stored as the error). */
    fun send(message: ClaimedMessage)
}

/** The error text a message given up without sending is marked dead with. */
const val ATTEMPTS_EXHAUSTED: String = "outbox.attempts_exhausted"

/**
 * The transactional outbox in one database (any JDBC driver), relayed under one [RelayPolicy]:
 * [enqueue] writes a message on the caller's connection inside its business transaction, so the
 * message commits or rolls back with the business writes; relays [claim] due messages in
 * batches (`FOR UPDATE SKIP LOCKED` on PostgreSQL and MySQL/MariaDB; SQLite's single writer
 * serializes claims), send them with no transaction open, and mark them sent, retried with
 * backoff, or dead, as the core decides. [relay] is the loop. Delivery is at least once:
 * consumers deduplicate by message id or by kind and business key.
 *
 * (Named `OutboxStore`, not `Outbox` as in Python and JS, because `io.mintid.Outbox` holds the
 * core's checks.) Apply the schema first ([Migrations.migrate]). Thread-safe.
 *
 * @property dataSource where a relay's connections come from.
 * @property dialect the database's SQL dialect.
 * @property policy batch size, claim length, backoff and attempts.
 * @property clock the time every decision and statement uses (the system clock by default).
 * @param draw random 64-bit numbers for claim tokens and backoff jitter (a [SecureRandom] by
 *   default).
 */
class OutboxStore
    @JvmOverloads
    constructor(
        val dataSource: DataSource,
        val dialect: Dialect,
        val policy: RelayPolicy,
        val clock: StoreClock = StoreClock.SYSTEM,
        private val draw: LongSupplier = defaultDraw(),
    ) {
        private val queries = Statements.of(dialect)

        init {
            policy.check()
        }

        /**
         * Inserts [message] on [connection], inside the caller's business transaction (or in
         * autocommit): [Enqueued.ALREADY_ENQUEUED] when its kind and business key already have a
         * message (a replay of the same event, not an error). Inside a transaction it waits for
         * a concurrent uncommitted enqueue of the same key.
         *
         * @throws OutboxException `outbox.invalid_message` (kind, business key or payload out of
         *   bounds; nothing written).
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws java.sql.SQLException when the message id is already another message's.
         */
        fun enqueue(
            connection: Connection,
            message: OutboxMessage,
        ): Enqueued {
            Outbox.checkMessage(message.kind, message.businessKey, message.payloadBytes().size.toLong())
            val values =
                mapOf(
                    "message_id" to message.messageId,
                    "kind" to message.kind,
                    "business_key" to message.businessKey,
                    "payload" to message.payloadBytes(),
                    "now_millis" to clock.nowMillis(),
                )
            return Outbox.enqueued(connection.execRows(queries["outbox_enqueue"], values))
        }

        /**
         * Claims a batch of due messages, oldest due first; concurrent relays never claim one
         * message at once. An empty batch: nothing is due.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun claim(): OutboxBatch = claim(draw.asLong)

        /**
         * [claim] with [draw] as the claim token's randomness (tests).
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun claim(draw: Long): OutboxBatch {
            val made = policy.claim(clock.nowMillis(), draw)
            val values =
                mapOf(
                    "claim_token" to made.claimToken,
                    "claimed_until_millis" to made.claimedUntilMillis,
                    "now_millis" to made.nowMillis,
                    "batch_size" to made.batchSize,
                )
            val rows =
                dataSource.withConnection { connection ->
                    connection.execRows(queries["outbox_claim"], values)
                    connection.rows(queries["outbox_claimed"], mapOf("claim_token" to made.claimToken))
                }
            val messages =
                rows.map {
                    ClaimedMessage(
                        it.long("message_id"),
                        it.text("kind") ?: "",
                        it.text("business_key") ?: "",
                        it.bytes("payload") ?: ByteArray(0),
                        it.long("attempts"),
                        it.long("created_millis"),
                    )
                }
            return OutboxBatch(made.claimToken, made.claimedUntilMillis, messages)
        }

        /**
         * Sends [message] of [batch] with [sender] and marks the outcome: [DeliveryResult.Sent];
         * [DeliveryResult.Retry] after a failed send with attempts left; [DeliveryResult.Dead]
         * after the last failed attempt; [DeliveryResult.GivenUp] (not sent) when its attempts
         * ran out before this claim.
         *
         * @throws OutboxException `outbox.claim_lost` when the claim ended and another relay
         *   claimed the message before the mark (that relay sends it).
         * @throws io.mintid.StoreUnavailableException `store.unavailable` (the message is due
         *   again when the claim ends).
         */
        fun deliver(
            batch: OutboxBatch,
            message: ClaimedMessage,
            sender: MessageSender,
        ): DeliveryResult = deliver(batch, message, sender, null)

        /**
         * [deliver] with [draw] as the backoff jitter's randomness (tests).
         *
         * @throws OutboxException `outbox.claim_lost`.
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun deliver(
            batch: OutboxBatch,
            message: ClaimedMessage,
            sender: MessageSender,
            draw: Long?,
        ): DeliveryResult {
            if (policy.delivery(message.attempts) == Delivery.GIVE_UP) {
                mark("outbox_mark_dead", batch, message, mapOf("last_error" to ATTEMPTS_EXHAUSTED))
                return DeliveryResult.GivenUp
            }
            try {
                sender.send(message)
            } catch (error: Exception) {
                val lastError = error.message ?: error.toString()
                return when (val after = policy.afterFailure(message.attempts, clock.nowMillis(), draw ?: this.draw.asLong)) {
                    is AfterFailure.Retry -> {
                        val values = mapOf("last_error" to lastError, "next_attempt_millis" to after.nextAttemptMillis)
                        mark("outbox_mark_retry", batch, message, values)
                        DeliveryResult.Retry(after.nextAttemptMillis)
                    }
                    AfterFailure.Dead -> {
                        mark("outbox_mark_dead", batch, message, mapOf("last_error" to lastError))
                        DeliveryResult.Dead
                    }
                }
            }
            mark("outbox_mark_sent", batch, message, emptyMap())
            return DeliveryResult.Sent
        }

        /**
         * Claims and delivers batches until nothing is due; what happened. A message whose claim
         * ended and was taken over is left to its new relay (counted as lost). Run it on a
         * schedule, or in a loop with a pause, on as many threads or processes as needed.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         */
        fun relay(sender: MessageSender): RelayReport {
            var sent = 0L
            var retried = 0L
            var dead = 0L
            var lost = 0L
            while (true) {
                val batch = claim()
                if (batch.messages.isEmpty()) return RelayReport(sent, retried, dead, lost)
                for (message in batch.messages) {
                    val result =
                        try {
                            deliver(batch, message, sender)
                        } catch (error: OutboxException) {
                            if (error.code != CLAIM_LOST) throw error
                            lost += 1
                            continue
                        }
                    when (result) {
                        DeliveryResult.Sent -> sent += 1
                        is DeliveryResult.Retry -> retried += 1
                        DeliveryResult.Dead, DeliveryResult.GivenUp -> dead += 1
                    }
                }
            }
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
            val values = mapOf("kind" to kind, "business_key" to businessKey)
            val row = dataSource.withConnection { it.rows(queries["outbox_load"], values).firstOrNull() } ?: return null
            return StoredMessage(
                row.long("message_id"),
                OutboxStatus.parse(row.text("status") ?: ""),
                row.long("attempts"),
                row.long("next_attempt_millis"),
                row.text("last_error"),
            )
        }

        /**
         * Deletes sent messages last updated at or before [sentBeforeMillis], [batchSize] per
         * statement until a batch comes back short; the total. Dead messages are kept.
         *
         * @throws io.mintid.StoreUnavailableException `store.unavailable`.
         * @throws IllegalArgumentException for a batch size below 1.
         */
        @JvmOverloads
        fun cleanup(
            sentBeforeMillis: Long,
            batchSize: Int = 1000,
        ): Long {
            require(batchSize > 0) { "the batch size must be positive, not $batchSize" }
            val values = mapOf("sent_before_millis" to sentBeforeMillis, "batch_size" to batchSize.toLong())
            var total = 0L
            while (true) {
                val deleted = dataSource.withConnection { it.execRows(queries["outbox_cleanup"], values) }
                total += deleted
                if (deleted < batchSize) return total
            }
        }

        /** Runs a mark guarded by the claim token; the core says what a count other than 1 means. */
        private fun mark(
            name: String,
            batch: OutboxBatch,
            message: ClaimedMessage,
            values: Map<String, Any?>,
        ) {
            val all = mapOf("message_id" to message.messageId, "claim_token" to batch.claimToken, "now_millis" to clock.nowMillis()) + values
            val rows = dataSource.withConnection { it.execRows(queries[name], all) }
            Outbox.checkMarked(rows, message.messageId, batch.claimToken)
        }

        private companion object {
            const val CLAIM_LOST = "outbox.claim_lost"

            fun defaultDraw(): LongSupplier {
                val random = SecureRandom()
                return LongSupplier { random.nextLong() }
            }
        }
    }
