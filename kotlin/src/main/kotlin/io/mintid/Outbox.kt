package io.mintid

import uniffi.mintid_ffi.outboxAfterFailure
import uniffi.mintid_ffi.outboxBackoffMillis
import uniffi.mintid_ffi.outboxCheckMarked
import uniffi.mintid_ffi.outboxCheckMessage
import uniffi.mintid_ffi.outboxClaim
import uniffi.mintid_ffi.outboxDelivery
import uniffi.mintid_ffi.outboxEnqueued
import uniffi.mintid_ffi.outboxRelayPolicyNew
import uniffi.mintid_ffi.outboxStatusParse
import uniffi.mintid_ffi.outboxStatusText
import uniffi.mintid_ffi.AfterFailure as FfiAfterFailure
import uniffi.mintid_ffi.Delivery as FfiDelivery
import uniffi.mintid_ffi.Enqueued as FfiEnqueued
import uniffi.mintid_ffi.OutboxStatus as FfiStatus
import uniffi.mintid_ffi.RelayPolicy as FfiPolicy

// The transactional outbox: message checks, batch claims, delivery and retry decisions for a
// relay. Counts, tokens, draws and times are the core's unsigned 64-bit values carried in Longs.

/** Where an outbox message is; [text] is how storage writes it. */
enum class OutboxStatus(
    internal val ffi: FfiStatus,
) {
    /** Waiting to be sent. */
    PENDING(FfiStatus.PENDING),

    /** Sent. */
    SENT(FfiStatus.SENT),

    /** Given up on. */
    DEAD(FfiStatus.DEAD),
    ;

    /** The stored text. */
    val text: String get() = outboxStatusText(ffi)

    /** Reading stored texts. */
    companion object {
        /**
         * Reads a stored status text.
         *
         * @throws OutboxException `outbox.unknown_status`.
         */
        @JvmStatic
        fun parse(text: String): OutboxStatus {
            val status = core { outboxStatusParse(text) }
            return entries.first { it.ffi == status }
        }
    }
}

/**
 * A relay's claim on a batch of messages.
 *
 * @property claimToken the token the claimed rows carry.
 * @property claimedUntilMillis when the claim lapses.
 * @property batchSize how many messages to claim.
 * @property nowMillis when it was made.
 */
data class BatchClaim(
    val claimToken: Long,
    val claimedUntilMillis: Long,
    val batchSize: Long,
    val nowMillis: Long,
)

/** What to do with a claimed message. */
enum class Delivery {
    /** Send it. */
    SEND,

    /** Its attempts are used up: mark it dead. */
    GIVE_UP,
}

/** What to do after a failed send: retry at [Retry.nextAttemptMillis], or mark it dead. */
sealed class AfterFailure {
    /** Retry at [nextAttemptMillis]. */
    data class Retry(
        /** When to try again (Unix ms). */
        val nextAttemptMillis: Long,
    ) : AfterFailure()

    /** Give up: mark it dead. */
    object Dead : AfterFailure() {
        override fun toString() = "AfterFailure.Dead"
    }
}

/** Whether an enqueue stored a new message or found it already there (by business key). */
enum class Enqueued {
    /** A new message. */
    NEW,

    /** The same business key was enqueued before: nothing new. */
    ALREADY_ENQUEUED,
}

/** The core's default relay policy, read once. */
private val DEFAULT_RELAY_POLICY = core { outboxRelayPolicyNew() }

/**
 * How a relay claims, sends and retries; every value left out keeps the core's default (batches
 * of 100 claimed for 60 s, backoff from 1 s to 10 minutes with 50 % jitter, 10 attempts).
 *
 * @property batchSize messages per claim.
 * @property claimMillis how long a claim holds its messages.
 * @property baseBackoffMillis the first retry delay.
 * @property maxBackoffMillis the longest retry delay.
 * @property jitterPercent how much of a delay is drawn at random.
 * @property maxAttempts attempts before a message is dead.
 */
data class RelayPolicy
    @JvmOverloads
    constructor(
        val batchSize: Long = DEFAULT_RELAY_POLICY.batchSize.toLong(),
        val claimMillis: Long = DEFAULT_RELAY_POLICY.claimMillis.toLong(),
        val baseBackoffMillis: Long = DEFAULT_RELAY_POLICY.baseBackoffMillis.toLong(),
        val maxBackoffMillis: Long = DEFAULT_RELAY_POLICY.maxBackoffMillis.toLong(),
        val jitterPercent: Int = DEFAULT_RELAY_POLICY.jitterPercent.toInt(),
        val maxAttempts: Long = DEFAULT_RELAY_POLICY.maxAttempts.toLong(),
    ) {
        internal fun toFfi() =
            FfiPolicy(
                batchSize.toULong(),
                claimMillis.toULong(),
                baseBackoffMillis.toULong(),
                maxBackoffMillis.toULong(),
                requireUByte(jitterPercent, "jitter_percent"),
                maxAttempts.toULong(),
            )

        /**
         * Checks the policy against the core's rules; returns it.
         *
         * @throws OutboxException `outbox.invalid_policy`.
         */
        fun check(): RelayPolicy {
            core {
                outboxRelayPolicyNew(
                    batchSize.toULong(),
                    claimMillis.toULong(),
                    baseBackoffMillis.toULong(),
                    maxBackoffMillis.toULong(),
                    requireUByte(jitterPercent, "jitter_percent"),
                    maxAttempts.toULong(),
                )
            }
            return this
        }

        /**
         * The retry delay after [attempts] failures, with [draw] a random number for the jitter.
         *
         * @throws OutboxException `outbox.invalid_policy`.
         */
        fun backoffMillis(
            attempts: Long,
            draw: Long,
        ): Long = core { outboxBackoffMillis(toFfi(), attempts.toULong(), draw.toULong()) }.toLong()

        /**
         * A claim at [nowMillis], its token from [draw].
         *
         * @throws OutboxException `outbox.time_overflow` or `outbox.invalid_policy`.
         */
        fun claim(
            nowMillis: Long,
            draw: Long,
        ): BatchClaim {
            val made = core { outboxClaim(toFfi(), nowMillis.toULong(), draw.toULong()) }
            return BatchClaim(made.claimToken.toLong(), made.claimedUntilMillis.toLong(), made.batchSize.toLong(), made.nowMillis.toLong())
        }

        /**
         * Whether to send a message that has had [attempts] attempts.
         *
         * @throws OutboxException `outbox.invalid_policy`.
         */
        fun delivery(attempts: Long): Delivery =
            when (core { outboxDelivery(toFfi(), attempts.toULong()) }) {
                FfiDelivery.SEND -> Delivery.SEND
                FfiDelivery.GIVE_UP -> Delivery.GIVE_UP
            }

        /**
         * What to do after the send at attempt [attempts] failed at [nowMillis].
         *
         * @throws OutboxException `outbox.time_overflow` or `outbox.invalid_policy`.
         */
        fun afterFailure(
            attempts: Long,
            nowMillis: Long,
            draw: Long,
        ): AfterFailure =
            when (val after = core { outboxAfterFailure(toFfi(), attempts.toULong(), nowMillis.toULong(), draw.toULong()) }) {
                is FfiAfterFailure.Retry -> AfterFailure.Retry(after.nextAttemptMillis.toLong())
                FfiAfterFailure.Dead -> AfterFailure.Dead
            }

        /** Factories. */
        companion object {
            /**
             * A policy with this batch size and claim length and the core's defaults for the rest.
             *
             * @throws OutboxException `outbox.invalid_policy`.
             */
            @JvmStatic
            fun of(
                batchSize: Long,
                claimMillis: Long,
            ): RelayPolicy {
                val made = core { outboxRelayPolicyNew(batchSize.toULong(), claimMillis.toULong()) }
                return RelayPolicy(
                    made.batchSize.toLong(),
                    made.claimMillis.toLong(),
                    made.baseBackoffMillis.toLong(),
                    made.maxBackoffMillis.toLong(),
                    made.jitterPercent.toInt(),
                    made.maxAttempts.toLong(),
                )
            }
        }
    }

/** The outbox checks a storage adapter runs on its statements' results. */
object OutboxRules {
    /**
     * What an enqueue's affected-row count [rows] means.
     *
     * @throws OutboxException `outbox.unexpected_rows`.
     */
    @JvmStatic
    fun enqueued(rows: Long): Enqueued =
        when (core { outboxEnqueued(rows.toULong()) }) {
            FfiEnqueued.NEW -> Enqueued.NEW
            FfiEnqueued.ALREADY_ENQUEUED -> Enqueued.ALREADY_ENQUEUED
        }

    /**
     * Checks that marking [messageId] under [claimToken] affected [rows] = 1 row.
     *
     * @throws OutboxException `outbox.claim_lost` or `outbox.unexpected_rows`.
     */
    @JvmStatic
    fun checkMarked(
        rows: Long,
        messageId: Long,
        claimToken: Long,
    ) = core { outboxCheckMarked(rows.toULong(), messageId.toULong(), claimToken.toULong()) }

    /**
     * Checks a message before it is enqueued.
     *
     * @throws OutboxException `outbox.invalid_message`.
     */
    @JvmStatic
    fun checkMessage(
        kind: String,
        businessKey: String,
        payloadLength: Long,
    ) = core { outboxCheckMessage(kind, businessKey, payloadLength.toULong()) }
}
