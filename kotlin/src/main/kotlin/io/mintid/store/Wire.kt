package io.mintid.store

import io.mintid.Enqueued
import io.mintid.RecordPolicy
import io.mintid.RelayPolicy
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The wire's packed layout (`docs/spec.md`, "The wire", version [VERSION]), as the JVM writes
 * specs and inputs and reads steps: little-endian, `u8` tags, `u32` counts and lengths, texts
 * as UTF-8 ([utf8]). Held by `tests/vectors/wire.json`.
 */
internal object Wire {
    /** The layout version this codec speaks (`mintid_wire_version`). */
    const val VERSION = 1

    /** The kinds of driver, by their spec's first byte. */
    enum class Kind(
        val code: Int,
    ) {
        RECORD(1),
        RELAY(2),
        RECORD_RENEWAL(3),
        RECORD_CLEANUP(4),
        OUTBOX_CLEANUP(5),
        RECORD_LOAD(6),
        OUTBOX_LOAD(7),
        ENQUEUE(8),
        MIGRATIONS(9),
        HEARTBEAT(10),
        SEGMENT(11),
        LEASE_ACQUIRE(12),
        LEASE_RENEW(13),
        LEASE_RELEASE(14),
    }

    /** The placeholder style a spec's manifest names; JDBC's is [QUESTION]. */
    const val QUESTION = 0

    /** The way a record driver runs (`0` run once, `1` same transaction, `2` lease). */
    enum class Way { RUN_ONCE, SAME_TRANSACTION, LEASE }

    /** An idempotency key's three parts. */
    data class Key(
        val kind: String,
        val scope: String,
        val id: String,
    )

    /** The claim a record renewal renews. */
    data class Claim(
        val token: Long,
        val createdMillis: Long,
        val leaseDeadlineMillis: Long,
    )

    /** The start of every spec: its [kind] and manifest ([Dialect] is declared in the wire's order: `0` postgres, `1` mysql, `2` sqlite). */
    fun spec(
        kind: Kind,
        dialect: Dialect,
        placeholder: Int = QUESTION,
    ): Writer = Writer().u8(kind.code).u8(dialect.ordinal).u8(placeholder)

    /** A record driver's spec; [fast]: the fast path is on, with [ttlMillis] or none. */
    fun recordSpec(
        dialect: Dialect,
        policy: RecordPolicy,
        way: Way,
        fast: Boolean,
        ttlMillis: Long?,
        key: Key,
        digest: ByteArray,
        keyCreatedMillis: Long?,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.RECORD, dialect, placeholder)
            .policy(policy)
            .u8(way.ordinal)
            .optional(if (fast) Unit else null) { optional(ttlMillis, Writer::u64) }
            .key(key)
            .raw(digest)
            .optional(keyCreatedMillis, Writer::u64)
            .done()

    /** A relay run's spec. */
    fun relaySpec(
        dialect: Dialect,
        policy: RelayPolicy,
        seed: Long,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.RELAY, dialect, placeholder)
            .u64(policy.batchSize)
            .u64(policy.claimMillis)
            .u64(policy.baseBackoffMillis)
            .u64(policy.maxBackoffMillis)
            .u8(policy.jitterPercent)
            .u64(policy.maxAttempts)
            .u64(seed)
            .done()

    /** A record renewal's spec: the policy, the key and the held [claim]. */
    fun renewalSpec(
        dialect: Dialect,
        policy: RecordPolicy,
        key: Key,
        claim: Claim,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.RECORD_RENEWAL, dialect, placeholder)
            .policy(policy)
            .key(key)
            .u64(claim.token)
            .u64(claim.createdMillis)
            .u64(claim.leaseDeadlineMillis)
            .done()

    /** A heartbeat's spec: the policy, the key, the held [claim] and its renewal period, if any. */
    fun heartbeatSpec(
        dialect: Dialect,
        policy: RecordPolicy,
        key: Key,
        claim: Claim,
        renewEveryMillis: Long?,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.HEARTBEAT, dialect, placeholder)
            .policy(policy)
            .key(key)
            .u64(claim.token)
            .u64(claim.createdMillis)
            .u64(claim.leaseDeadlineMillis)
            .optional(renewEveryMillis, Writer::u64)
            .done()

    /** The migrations' spec: apply them, or list the [pending] ones. */
    fun migrationsSpec(
        dialect: Dialect,
        pending: Boolean,
        placeholder: Int = QUESTION,
    ): ByteArray = spec(Kind.MIGRATIONS, dialect, placeholder).flag(pending).done()

    /** A record load's spec. */
    fun recordLoadSpec(
        dialect: Dialect,
        key: Key,
        placeholder: Int = QUESTION,
    ): ByteArray = spec(Kind.RECORD_LOAD, dialect, placeholder).key(key).done()

    /** An outbox load's spec. */
    fun outboxLoadSpec(
        dialect: Dialect,
        kind: String,
        businessKey: String,
        placeholder: Int = QUESTION,
    ): ByteArray = spec(Kind.OUTBOX_LOAD, dialect, placeholder).text(kind).text(businessKey).done()

    /** An enqueue's spec. */
    fun enqueueSpec(
        dialect: Dialect,
        messageId: Long,
        kind: String,
        businessKey: String,
        payload: ByteArray,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.ENQUEUE, dialect, placeholder)
            .u64(messageId)
            .text(kind)
            .text(businessKey)
            .bytes(payload)
            .done()

    /** A segment policy's fields, in the layout's order. */
    class SegmentFields(
        val initialStep: Long,
        val minStep: Long,
        val maxStep: Long,
        val fetchAtPercent: Int,
        val growBelowMillis: Long,
        val shrinkAboveMillis: Long,
    )

    /** A segment driver's spec: its [tag] and policy. */
    fun segmentSpec(
        dialect: Dialect,
        tag: String,
        policy: SegmentFields,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.SEGMENT, dialect, placeholder)
            .text(tag)
            .u64(policy.initialStep)
            .u64(policy.minStep)
            .u64(policy.maxStep)
            .u8(policy.fetchAtPercent)
            .u64(policy.growBelowMillis)
            .u64(policy.shrinkAboveMillis)
            .done()

    /** A lease policy's fields, in the layout's order: the Snowflake layout's, then the durations. */
    class LeaseFields(
        val timeBits: Int,
        val workerBits: Int,
        val sequenceBits: Int,
        val datacenterBits: Int,
        val epochMillis: Long,
        val tickMillis: Long,
        val leaseMillis: Long,
        val renewIntervalMillis: Long,
        val safetyMarginMillis: Long,
        val renewRetryMillis: Long,
        val maxSkewMillis: Long,
        val maxStartWaitMillis: Long,
    )

    /** A lease acquisition's spec: the policy, the [owner], the timeout if any. */
    fun leaseAcquireSpec(
        dialect: Dialect,
        policy: LeaseFields,
        owner: String,
        timeoutMillis: Long?,
        placeholder: Int = QUESTION,
    ): ByteArray =
        spec(Kind.LEASE_ACQUIRE, dialect, placeholder)
            .u8(policy.timeBits)
            .u8(policy.workerBits)
            .u8(policy.sequenceBits)
            .u8(policy.datacenterBits)
            .u64(policy.epochMillis)
            .u64(policy.tickMillis)
            .u64(policy.leaseMillis)
            .u64(policy.renewIntervalMillis)
            .u64(policy.safetyMarginMillis)
            .u64(policy.renewRetryMillis)
            .u64(policy.maxSkewMillis)
            .u64(policy.maxStartWaitMillis)
            .text(owner)
            .optional(timeoutMillis, Writer::u64)
            .done()

    /** A lease renewal's or release's ([kind]) spec: the guard's registry serial. */
    fun guardSpec(
        kind: Kind,
        dialect: Dialect,
        guard: Long,
        placeholder: Int = QUESTION,
    ): ByteArray = spec(kind, dialect, placeholder).u64(guard).done()

    /** The tags of the inputs a host pushes (`call`). */
    enum class Input(
        val code: Int,
    ) {
        START(1),
        ROWS(2),
        AFFECTED(3),
        FAILED(4),
        RESUME(5),
        FINISH(6),
        SENT(7),
        SEND_FAILED(8),
        REDIS(9),
        REPORT(10),
        STOP(11),
        TAKE(12),
        FETCH(13),
        ABANDON(14),
        FORKED(15),
        MARK(16),
    }

    /** An input of [tag] at [nowMillis]; its fields follow (see [Writer]). */
    fun input(
        tag: Input,
        nowMillis: Long,
    ): Writer = Writer().u8(tag.code).u64(nowMillis)

    /** What an operation came to, for a record's `finish`. */
    sealed interface Finish {
        /** It returned [response]. */
        class Succeeded(
            val response: StoredResponse,
        ) : Finish

        /** It failed in a way the caller said ([retryable], [message], an optional [response]). */
        class Failed(
            val retryable: Boolean,
            val message: String,
            val response: StoredResponse?,
        ) : Finish

        /** It returned something that is not a response (the value's type name). */
        class NotAResponse(
            val typeName: String,
        ) : Finish

        /** It threw: the type's short name and the message (the stored text is the core's). */
        class Raised(
            val typeName: String,
            val message: String,
        ) : Finish
    }

    /** What Redis said to a Redis step. */
    sealed interface RedisAnswer {
        /** A nil reply. */
        data object Nil : RedisAnswer

        /** The reply's fields (an integer reply: one field, its decimal text). */
        class Fields(
            val fields: List<ByteArray?>,
        ) : RedisAnswer

        /** The client failed with [message]. */
        class Failed(
            val message: String,
        ) : RedisAnswer

        /** `NOSCRIPT`: the script is not loaded. */
        data object NoScript : RedisAnswer
    }

    /** Packs specs and inputs. */
    class Writer {
        private val out = ByteArrayOutputStream(64)
        private val word = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)

        fun u8(value: Int) = apply { out.write(value) }

        fun flag(value: Boolean) = u8(if (value) 1 else 0)

        fun u32(value: Int) = apply { out.write(word.clear().putInt(value).array(), 0, 4) }

        fun u64(value: Long) = apply { out.write(word.clear().putLong(value).array(), 0, 8) }

        fun raw(value: ByteArray) = apply { out.write(value) }

        fun bytes(value: ByteArray) = u32(value.size).raw(value)

        fun text(value: String) = bytes(utf8(value))

        fun <T : Any> optional(
            value: T?,
            write: Writer.(T) -> Unit,
        ) = apply { if (value == null) u8(0) else u8(1).write(value) }

        /** A value: `null`, a [Long], a [String] or a [ByteArray]. */
        fun value(value: Any?): Writer =
            when (value) {
                null -> u8(0)
                is Long -> u8(1).u64(value)
                is String -> u8(2).text(value)
                is ByteArray -> u8(3).bytes(value)
                else -> throw IllegalArgumentException("not a wire value: ${value.javaClass.name}")
            }

        /** The `rows` input's list of rows. */
        fun rows(rows: List<List<Any?>>) =
            apply {
                u32(rows.size)
                for (row in rows) {
                    u32(row.size)
                    row.forEach(::value)
                }
            }

        fun response(response: StoredResponse) = text(response.contentType).bytes(response.bodyBytes())

        fun finish(outcome: Finish) =
            when (outcome) {
                is Finish.Succeeded -> u8(0).response(outcome.response)
                is Finish.Failed -> u8(1).flag(outcome.retryable).text(outcome.message).optional(outcome.response) { response(it) }
                is Finish.NotAResponse -> u8(2).text(outcome.typeName)
                is Finish.Raised -> u8(3).text(outcome.typeName).text(outcome.message)
            }

        fun redis(answer: RedisAnswer) =
            when (answer) {
                RedisAnswer.Nil -> u8(0)
                is RedisAnswer.Fields -> u8(1).u32(answer.fields.size).apply { answer.fields.forEach { optional(it) { field -> bytes(field) } } }
                is RedisAnswer.Failed -> u8(2).text(answer.message)
                RedisAnswer.NoScript -> u8(3)
            }

        fun policy(policy: RecordPolicy) =
            u64(policy.leaseMillis)
                .u64(policy.retentionMillis)
                .flag(policy.storeErrors)
                .u64(policy.retryAfterMillis)
                .u64(policy.maxWaitMillis)
                .u64(policy.pollMillis)

        fun key(key: Key) = text(key.kind).text(key.scope).text(key.id)

        fun done(): ByteArray = out.toByteArray()
    }

    /** A step of a driver of [kind], read from [step]'s first [length] bytes. */
    fun step(
        kind: Kind,
        step: ByteArray,
        length: Int = step.size,
    ): Step = Reader(ByteBuffer.wrap(step, 0, length).order(ByteOrder.LITTLE_ENDIAN)).step(kind)

    /** A step, as the wire packs it. */
    sealed interface Step {
        /** Run the named query with [params] (values as [Writer.value] takes them). */
        class Run(
            val name: String,
            val params: List<Any?>,
        ) : Step

        /** Sleep [millis], then push `resume`. */
        class Pause(
            val millis: Long,
        ) : Step

        /** The kind's hand-over before its end: [Held] or [ClaimedMessage]. */
        class Yield(
            val value: Any,
        ) : Step

        /** The kind's end (see [Reader.step]). */
        class Done(
            val value: Any?,
        ) : Step

        /** The driver failed: the core's error, by its concern. */
        class Fail(
            val code: String,
            val detail: String,
            val part: String?,
            val position: Long?,
            val problem: String?,
            val concern: String,
        ) : Step

        /** Run a script on Redis and push `redis`. */
        class Redis(
            val eval: Boolean,
            val script: String,
            val code: String,
            val keys: List<String>,
            val args: List<ByteArray>,
        ) : Step

        /** Begin a transaction ([write]: the write lock at once). */
        class Begin(
            val write: Boolean,
        ) : Step

        /** Commit. */
        data object Commit : Step

        /** Roll back. */
        data object Rollback : Step

        /** What the fast path came to: the lookup's verdict, if any, and the failed writes. */
        class Report(
            val lookup: String?,
            val writeFailures: Int,
        ) : Step

        /** A segment's run of IDs `first`, [count] of them, and what to do ([action]: hand out, fetch beside, fetch now, wait [waitMillis]). */
        class Taken(
            val first: Long,
            val count: Long,
            val action: Int,
            val waitMillis: Long,
        ) : Step
    }

    /** A segment fetch's end: the segment installed. */
    class Installed(
        val maxId: Long,
        val step: Long,
    )

    /** A lease acquisition's end: the row written, held. */
    class Acquired(
        val workerId: Long,
        val fencingToken: Long,
        val leaseDeadlineMillis: Long,
        val startAfterMillis: Long,
        val readyAtMillis: Long,
        val acquiredMillis: Long,
        val highWaterMillis: Long,
        val expectedToken: Long,
    )

    /** A record's `execute` hand-over. */
    class Held(
        val decision: String,
        val token: Long,
        val createdMillis: Long,
        val leaseDeadlineMillis: Long,
        val renewEveryMillis: Long?,
    )

    /** How a record driver ended, with the core's decision name. */
    class RecordEnd(
        val decision: String,
        val end: End,
    ) {
        /** The ends, as the layout numbers them. */
        sealed interface End {
            /** The operation ran and its response was stored. */
            data object Executed : End

            /** The operation failed; [stored]: its failure was stored (else released). */
            class OperationFailed(
                val stored: Boolean,
            ) : End

            /** A stored outcome replayed. */
            class Replay(
                val succeeded: Boolean,
                val response: StoredResponse?,
                val error: String?,
            ) : End

            /** Another request holds the key. */
            class InProgress(
                val retryAfterMillis: Long,
            ) : End

            /** The key was used with another payload. */
            data object FingerprintMismatch : End

            /** The key is older than the policy allows. */
            data object KeyTooOld : End

            /** The operation failed and recording its failure failed too: the store error's [code] and [message]. */
            class OperationFailedUnrecorded(
                val code: String,
                val message: String,
            ) : End
        }
    }

    /** A heartbeat's pause (its hand-over): sleep [millis], then push `resume`; the deadline as last renewed. */
    class Beat(
        val millis: Long,
        val leaseDeadlineMillis: Long,
    )

    /** A statement of a migration to execute as it is (the migrations' hand-over). */
    class MigrationStatement(
        val version: Int,
        val sql: String,
    )

    /** A stored record, as a record load reads it. */
    class LoadedRecord(
        val status: String,
        val fingerprint: ByteArray,
        val token: Long,
        val leaseDeadlineMillis: Long,
        val createdMillis: Long,
        val expiresMillis: Long,
        val response: StoredResponse?,
        val error: String?,
    )

    /** A stored message, as an outbox load reads it. */
    class LoadedMessage(
        val messageId: Long,
        val kind: String,
        val businessKey: String,
        val payload: ByteArray,
        val status: String,
        val attempts: Long,
        val nextAttemptMillis: Long,
        val lastError: String?,
        val createdMillis: Long,
        val updatedMillis: Long,
    )

    /** Reads one packed step. */
    private class Reader(
        private val buffer: ByteBuffer,
    ) {
        /**
         * A step; a yield or done is the kind's: record [Held] / [RecordEnd], relay
         * [ClaimedMessage] / [RelayReport], renewal the new deadline, cleanups the count
         * deleted, loads a [LoadedRecord] / [LoadedMessage] or null, enqueue [Enqueued],
         * migrations [MigrationStatement] / the versions, heartbeat [Beat] / the last deadline, segment
         * nothing / [Installed], lease acquire [Acquired], renew the deadline, release whether
         * the row was still the holder's.
         */
        fun step(kind: Kind): Step =
            when (val tag = u8()) {
                1 -> Step.Run(text(), List(u32()) { value() })
                2 -> Step.Pause(u64())
                3 -> Step.Yield(handOver(kind))
                4 -> Step.Done(end(kind))
                5 -> Step.Fail(text(), text(), optional(::text), optional(::u64), optional(::text), text())
                6 -> Step.Redis(flag(), text(), text(), List(u32()) { text() }, List(u32()) { bytes() })
                7 -> Step.Begin(flag())
                8 -> Step.Commit
                9 -> Step.Rollback
                10 -> Step.Report(optional(::text), u32())
                11 -> Step.Taken(u64(), u64(), u8(), u64())
                else -> error("the wire packed a step with tag $tag")
            }

        private fun handOver(kind: Kind): Any =
            when (kind) {
                Kind.RECORD -> Held(text(), u64(), u64(), u64(), optional(::u64))
                Kind.RELAY -> ClaimedMessage(u64(), text(), text(), bytes(), u64(), u64())
                Kind.MIGRATIONS -> MigrationStatement(u32(), text())
                Kind.HEARTBEAT -> Beat(u64(), u64())
                // A segment's answer to `abandon` and `forked`: the wire is idle.
                Kind.SEGMENT -> Unit
                else -> error("a $kind driver yields nothing")
            }

        private fun end(kind: Kind): Any? =
            when (kind) {
                Kind.RECORD -> RecordEnd(text(), recordEnd())
                Kind.RELAY -> RelayReport(u64(), u64(), u64(), u64(), u64(), u64(), u64())
                Kind.RECORD_RENEWAL, Kind.RECORD_CLEANUP, Kind.OUTBOX_CLEANUP, Kind.HEARTBEAT -> u64()
                Kind.RECORD_LOAD ->
                    optional { LoadedRecord(text(), raw(32), u64(), u64(), u64(), u64(), optional(::response), optional(::text)) }
                Kind.OUTBOX_LOAD ->
                    optional { LoadedMessage(u64(), text(), text(), bytes(), text(), u64(), u64(), optional(::text), u64(), u64()) }
                Kind.ENQUEUE -> if (u8() == 0) Enqueued.NEW else Enqueued.ALREADY_ENQUEUED
                Kind.MIGRATIONS -> List(u32()) { u32() }
                Kind.SEGMENT -> Installed(u64(), u64())
                Kind.LEASE_ACQUIRE -> Acquired(u64(), u64(), u64(), u64(), u64(), u64(), u64(), u64())
                Kind.LEASE_RENEW -> u64()
                Kind.LEASE_RELEASE -> flag()
            }

        private fun recordEnd(): RecordEnd.End =
            when (val end = u8()) {
                0 -> RecordEnd.End.Executed
                1 -> RecordEnd.End.OperationFailed(flag())
                2 -> RecordEnd.End.Replay(u8() == 0, optional(::response), optional(::text))
                3 -> RecordEnd.End.InProgress(u64())
                4 -> RecordEnd.End.FingerprintMismatch
                5 -> RecordEnd.End.KeyTooOld
                6 -> RecordEnd.End.OperationFailedUnrecorded(text(), text())
                else -> error("the wire packed a record end with tag $end")
            }

        private fun value(): Any? =
            when (val type = u8()) {
                0 -> null
                1 -> u64()
                2 -> text()
                3 -> bytes()
                else -> error("the wire packed a value with tag $type")
            }

        private fun response() = StoredResponse(text(), bytes())

        private fun <T> optional(read: () -> T): T? = if (u8() == 0) null else read()

        private fun u8(): Int = buffer.get().toInt() and 0xff

        private fun flag(): Boolean = u8() != 0

        private fun u32(): Int = buffer.getInt()

        private fun u64(): Long = buffer.getLong()

        private fun raw(count: Int): ByteArray = ByteArray(count).also { buffer.get(it) }

        private fun bytes(): ByteArray = raw(u32())

        private fun text(): String = String(bytes(), Charsets.UTF_8)
    }
}
