package io.mintid.store

import com.sun.jna.Native
import uniffi.mintid_ffi.DbErrorClass
import uniffi.mintid_ffi.Finished
import uniffi.mintid_ffi.Held
import uniffi.mintid_ffi.Manifest
import uniffi.mintid_ffi.OperationOutcome
import uniffi.mintid_ffi.RecordDrivers
import uniffi.mintid_ffi.RecordStep
import uniffi.mintid_ffi.SqlValue
import uniffi.mintid_ffi.StoreAnswer
import uniffi.mintid_ffi.StoreQuery
import uniffi.mintid_ffi.Way
import uniffi.mintid_ffi.outboxRelayLane
import java.io.ByteArrayOutputStream
import java.lang.ref.Cleaner
import java.nio.ByteBuffer
import java.nio.ByteOrder
import uniffi.mintid_ffi.MintidException as FfiException
import uniffi.mintid_ffi.Outcome as FfiOutcome
import uniffi.mintid_ffi.RelayPolicy as FfiRelayPolicy
import uniffi.mintid_ffi.StoredResponse as FfiResponse

/**
 * The core's plain C entry points for the record driver (`mintid_lane_*`, `docs/spec.md`, "The
 * lane"), bound by JNA direct mapping: primitive arguments and byte arrays only, so a step costs
 * one native call and no JNA `Structure` (each of uniffi's buffers is one, allocated and freed
 * through a global map that threads contend on).
 */
internal object LaneNative {
    init {
        Native.register(LaneNative::class.java, LANE_LIBRARY)
    }

    @JvmStatic external fun mintid_lane_record_new(
        lane: Long,
        way: Byte,
        key: ByteArray,
        keyLen: Long,
        fingerprint: ByteArray,
        fingerprintLen: Long,
        keyCreatedMillis: Long,
    ): Long

    @JvmStatic external fun mintid_lane_record_start(driver: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_step(driver: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_push_affected(driver: Long, count: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_push_rows(driver: Long, rows: ByteArray, rowsLen: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_push_failed(
        driver: Long,
        dbClass: Byte,
        message: ByteArray,
        messageLen: Long,
        nowMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_record_resume(driver: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_finish(driver: Long, outcome: ByteArray, outcomeLen: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_push_redis(
        driver: Long,
        answer: ByteArray,
        answerLen: Long,
        nowMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_record_fast_report(driver: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_record_free(driver: Long)

    @JvmStatic external fun mintid_lane_free(lane: Long)

    @JvmStatic external fun mintid_lane_relay_start(driver: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_step(driver: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_push_affected(driver: Long, count: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_push_rows(driver: Long, rows: ByteArray, rowsLen: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_push_failed(
        driver: Long,
        dbClass: Byte,
        message: ByteArray,
        messageLen: Long,
        nowMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_relay_resume(driver: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_sent(driver: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_failed(driver: Long, error: ByteArray, errorLen: Long, nowMillis: Long, out: ByteArray, cap: Long): Long

    @JvmStatic external fun mintid_lane_relay_free(driver: Long)

    @JvmStatic external fun mintid_lane_key_text(
        kind: ByteArray,
        kindLen: Long,
        scope: ByteArray,
        scopeLen: Long,
        id: ByteArray,
        idLen: Long,
        out: ByteArray,
        cap: Long,
    ): Long
}

/** The native library every lane entry point is bound from (uniffi's override, if set). */
internal val LANE_LIBRARY: String get() = System.getProperty("uniffi.component.mintid_ffi.libraryOverride") ?: "mintid_ffi"

/**
 * [value]'s UTF-16 as bytes, losing nothing: UTF-8, each unpaired surrogate in the three bytes
 * Java's modified UTF-8 gives it. What a text the core reads may become is the core's rule
 * (`docs/spec.md`, "Storable text": one U+FFFD for each such surrogate), never this encoder's.
 */
internal fun utf8(value: String): ByteArray {
    if (value.none { it.isSurrogate() }) return value.toByteArray(Charsets.UTF_8)
    val out = ByteArrayOutputStream(value.length * 3)
    var at = 0
    while (at < value.length) {
        val unit = value[at]
        val pair = unit.isHighSurrogate() && at + 1 < value.length && value[at + 1].isLowSurrogate()
        if (unit.isSurrogate() && !pair) {
            out.write(0xE0 or (unit.code shr 12))
            out.write(0x80 or ((unit.code shr 6) and 0x3F))
            out.write(0x80 or (unit.code and 0x3F))
        } else {
            out.write(value.substring(at, if (pair) at + 2 else at + 1).toByteArray(Charsets.UTF_8))
        }
        at += if (pair) 2 else 1
    }
    return out.toByteArray()
}

/**
 * The canonical text of the key [kind], [scope], [id] (the core's rule, one native call and no
 * uniffi buffer); a part the core refuses is thrown as the bindings' `key.*` error.
 */
internal fun keyText(
    kind: String,
    scope: String,
    id: String,
): String {
    val (k, s, i) = Triple(utf8(kind), utf8(scope), utf8(id))
    var out = ByteArray(CAP)
    var length = LaneNative.mintid_lane_key_text(k, k.size.toLong(), s, s.size.toLong(), i, i.size.toLong(), out, CAP.toLong())
    if (length > CAP) {
        out = ByteArray(length.toInt())
        length = LaneNative.mintid_lane_key_text(k, k.size.toLong(), s, s.size.toLong(), i, i.size.toLong(), out, length)
    }
    if (out[0].toInt() == 0) return String(out, 1, length.toInt() - 1, Charsets.UTF_8)
    throw Unpacker(ByteBuffer.wrap(out, 1, length.toInt() - 1).order(ByteOrder.LITTLE_ENDIAN)).failure()
}

internal val CLEANER: Cleaner = Cleaner.create()

/** A buffer a step usually fits in; a longer one is copied again, whole. */
internal const val CAP = 1024

/**
 * The manifest and policy every driver of one store shares, with the Redis fast path in front of
 * the database when [fastPath] is given (every driver made then yields its Redis steps): a core
 * handle, freed with the store.
 */
internal class Lane(
    drivers: RecordDrivers,
    fastPath: RedisFastPath?,
) {
    private val handle: Long = (if (fastPath == null) drivers.lane() else drivers.fastLane(fastPath.ttl)).toLong()

    init {
        val handle = handle
        CLEANER.register(this) { LaneNative.mintid_lane_free(handle) }
    }

    /** A driver for one request; a key or digest the core refuses makes one whose first step fails. */
    fun driver(
        way: Way,
        keyText: String,
        digest: ByteArray,
        keyCreatedMillis: Long,
    ): LaneDriver {
        val key = keyText.toByteArray(Charsets.UTF_8)
        val wayCode: Byte =
            when (way) {
                Way.RUN_ONCE -> 0
                Way.SAME_TRANSACTION -> 1
                Way.LEASE -> 2
            }
        return LaneDriver(LaneNative.mintid_lane_record_new(handle, wayCode, key, key.size.toLong(), digest, digest.size.toLong(), keyCreatedMillis))
    }
}

/**
 * A core driver on the lane: its steps read from the packed layout as [S], answers packed and
 * pushed through its kind's entry points. Closing frees the core's driver (one never closed is
 * freed when collected). One call at a time.
 */
internal abstract class PackedDriver<S>(
    protected val handle: Long,
    free: (Long) -> Unit,
) : AutoCloseable {
    protected val out = ByteArray(CAP)
    private val cleanable: Cleaner.Cleanable

    init {
        val handle = handle
        cleanable = CLEANER.register(this) { free(handle) }
    }

    protected abstract fun affected(
        count: Long,
        now: Long,
    ): Long

    protected abstract fun rows(
        rows: ByteArray,
        now: Long,
    ): Long

    protected abstract fun failed(
        dbClass: Byte,
        message: ByteArray,
        now: Long,
    ): Long

    protected abstract fun resumed(): Long

    /** Copies the last step again into [into]. */
    protected abstract fun again(into: ByteArray): Long

    /** Reads the step in [unpacker]. */
    protected abstract fun step(unpacker: Unpacker): S

    @Synchronized
    fun push(
        answer: StoreAnswer,
        nowMillis: ULong,
    ): S {
        val now = nowMillis.toLong()
        val length =
            when (answer) {
                is StoreAnswer.Affected -> affected(answer.count.toLong(), now)
                is StoreAnswer.Rows -> rows(packRows(answer.rows), now)
                is StoreAnswer.Failed -> failed(classCode(answer.`class`), utf8(answer.message), now)
            }
        return read(length)
    }

    @Synchronized
    fun resume(): S = read(resumed())

    override fun close() = cleanable.clean()

    /** The step just packed, from the buffer or copied again when longer. */
    protected fun read(length: Long): S {
        val bytes = if (length <= CAP) out else ByteArray(length.toInt()).also { again(it) }
        return step(Unpacker(ByteBuffer.wrap(bytes, 0, length.toInt()).order(ByteOrder.LITTLE_ENDIAN)))
    }
}

/**
 * A step of a record driver on the lane: one of the core's [RecordStep]s, or (on a lane with the
 * fast path) a script to run on Redis.
 */
internal sealed interface LaneStep {
    /** A step of the record protocol. */
    class Record(
        val step: RecordStep,
    ) : LaneStep

    /** Send this script to Redis and push what Redis said ([LaneDriver.pushRedis]). */
    class Redis(
        val call: RedisCall,
    ) : LaneStep
}

/**
 * A script the record driver asks the host to send: `EVAL` with its source ([eval]) or
 * `EVALSHA` with its SHA-1 ([script]: that source or the SHA-1's hex text), its keys (one
 * entry, one slot) and its arguments.
 */
internal class RedisCall(
    val eval: Boolean,
    val script: ByteArray,
    val keys: Array<ByteArray>,
    val args: Array<ByteArray>,
)

/**
 * What one driver's fast path came to since its last report: the lookup's verdict by the core's
 * name (`hit`, `miss`, `fallback`), if one was answered, and the writes to Redis that failed.
 */
internal class FastReport(
    val lookup: String?,
    val writeFailures: Int,
)

/** One request's record driver through the lane: the steps of the core's `RecordDriver`. */
internal class LaneDriver(
    handle: Long,
) : PackedDriver<LaneStep>(handle, LaneNative::mintid_lane_record_free) {
    override fun affected(
        count: Long,
        now: Long,
    ) = LaneNative.mintid_lane_record_push_affected(handle, count, now, out, CAP.toLong())

    override fun rows(
        rows: ByteArray,
        now: Long,
    ) = LaneNative.mintid_lane_record_push_rows(handle, rows, rows.size.toLong(), now, out, CAP.toLong())

    override fun failed(
        dbClass: Byte,
        message: ByteArray,
        now: Long,
    ) = LaneNative.mintid_lane_record_push_failed(handle, dbClass, message, message.size.toLong(), now, out, CAP.toLong())

    override fun resumed() = LaneNative.mintid_lane_record_resume(handle, out, CAP.toLong())

    override fun again(into: ByteArray) = LaneNative.mintid_lane_record_step(handle, into, into.size.toLong())

    override fun step(unpacker: Unpacker) = unpacker.recordStep()

    @Synchronized
    fun start(nowMillis: ULong): LaneStep = read(LaneNative.mintid_lane_record_start(handle, nowMillis.toLong(), out, CAP.toLong()))

    @Synchronized
    fun finish(
        outcome: OperationOutcome,
        nowMillis: ULong,
    ): LaneStep {
        val packed = packOutcome(outcome)
        return read(LaneNative.mintid_lane_record_finish(handle, packed, packed.size.toLong(), nowMillis.toLong(), out, CAP.toLong()))
    }

    /** Pushes what Redis said to the last [LaneStep.Redis] ([answer], packed by [RedisFastPath]). */
    @Synchronized
    fun pushRedis(
        answer: ByteArray,
        nowMillis: ULong,
    ): LaneStep = read(LaneNative.mintid_lane_record_push_redis(handle, answer, answer.size.toLong(), nowMillis.toLong(), out, CAP.toLong()))

    /** Takes what the fast path came to since the last report (each event once). */
    @Synchronized
    fun takeFastReport(): FastReport {
        val length = LaneNative.mintid_lane_record_fast_report(handle, out, CAP.toLong())
        val packed = ByteBuffer.wrap(out, 0, length.toInt()).order(ByteOrder.LITTLE_ENDIAN)
        val lookup = ByteArray(packed.get().toInt() and 0xff).also { packed.get(it) }
        return FastReport(if (lookup.isEmpty()) null else String(lookup, Charsets.UTF_8), packed.getInt())
    }
}

/** A step of a relay run on the lane; a failure is thrown. */
internal sealed interface RelayStep {
    /** Run this query and push the answer. */
    data class Run(
        val query: StoreQuery,
    ) : RelayStep

    /** Sleep, then resume. */
    data class Pause(
        val millis: ULong,
    ) : RelayStep

    /** Send this message, then say whether it was sent. */
    data class Send(
        val message: ClaimedMessage,
    ) : RelayStep

    /** Nothing is due any more: what the run did. */
    data class Done(
        val report: RelayReport,
    ) : RelayStep
}

/** One outbox relay run through the lane: the steps of the core's `OutboxRelay`. */
internal class RelayLaneDriver(
    manifest: Manifest,
    policy: FfiRelayPolicy,
    seed: ULong,
) : PackedDriver<RelayStep>(outboxRelayLane(manifest, policy, seed).toLong(), LaneNative::mintid_lane_relay_free) {
    override fun affected(
        count: Long,
        now: Long,
    ) = LaneNative.mintid_lane_relay_push_affected(handle, count, now, out, CAP.toLong())

    override fun rows(
        rows: ByteArray,
        now: Long,
    ) = LaneNative.mintid_lane_relay_push_rows(handle, rows, rows.size.toLong(), now, out, CAP.toLong())

    override fun failed(
        dbClass: Byte,
        message: ByteArray,
        now: Long,
    ) = LaneNative.mintid_lane_relay_push_failed(handle, dbClass, message, message.size.toLong(), now, out, CAP.toLong())

    override fun resumed() = LaneNative.mintid_lane_relay_resume(handle, out, CAP.toLong())

    override fun again(into: ByteArray) = LaneNative.mintid_lane_relay_step(handle, into, into.size.toLong())

    override fun step(unpacker: Unpacker) = unpacker.relayStep()

    @Synchronized
    fun start(nowMillis: ULong): RelayStep = read(LaneNative.mintid_lane_relay_start(handle, nowMillis.toLong(), out, CAP.toLong()))

    /** The message of the last send was sent. */
    @Synchronized
    fun sent(nowMillis: ULong): RelayStep = read(LaneNative.mintid_lane_relay_sent(handle, nowMillis.toLong(), out, CAP.toLong()))

    /** The last send failed with [error]. */
    @Synchronized
    fun failed(
        error: String,
        nowMillis: ULong,
    ): RelayStep {
        val text = utf8(error)
        return read(LaneNative.mintid_lane_relay_failed(handle, text, text.size.toLong(), nowMillis.toLong(), out, CAP.toLong()))
    }
}

/** Reads one packed step; a `FAIL` is thrown as the bindings' error of its concern. */
internal class Unpacker(
    private val buffer: ByteBuffer,
) {
    /** A step: `run`, `pause` or the driver's own (tags 3, 4 and 6, read by [handOver]). */
    private inline fun <S> step(
        run: (StoreQuery) -> S,
        pause: (ULong) -> S,
        handOver: (Int) -> S,
    ): S =
        when (val tag = byte()) {
            1 -> {
                val name = String(bytes(byte().toInt()), Charsets.UTF_8)
                run(StoreQuery(name, List(byte().toInt()) { value() }))
            }
            2 -> pause(buffer.getLong().toULong())
            3, 4, 6 -> handOver(tag)
            5 -> throw failure()
            else -> error("the lane packed a step with tag $tag")
        }

    fun recordStep(): LaneStep =
        step({ LaneStep.Record(RecordStep.Run(it)) }, { LaneStep.Record(RecordStep.Pause(it)) }) { tag ->
            when (tag) {
                4 -> LaneStep.Record(RecordStep.Done(finished()))
                3 -> {
                    val token = buffer.getLong().toULong()
                    val created = buffer.getLong().toULong()
                    val deadline = buffer.getLong().toULong()
                    val every = buffer.getLong()
                    LaneStep.Record(RecordStep.Execute(Held(token, created, deadline, if (every < 0) null else every.toULong())))
                }
                else -> {
                    val eval = byte() != 0
                    // The script's name: Redis is sent its source or SHA-1.
                    val name = byte()
                    buffer.position(buffer.position() + name)
                    val script = lengthBytes()
                    val keys = Array(byte()) { lengthBytes() }
                    LaneStep.Redis(RedisCall(eval, script, keys, Array(byte()) { lengthBytes() }))
                }
            }
        }

    fun relayStep(): RelayStep =
        step(RelayStep::Run, RelayStep::Pause) { tag ->
            check(tag != 6) { "the lane packed a Redis step for a relay" }
            if (tag == 4) {
                val counts = List(7) { buffer.getLong() }
                RelayStep.Done(RelayReport(counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6]))
            } else {
                val id = buffer.getLong()
                val kind = text()
                val businessKey = text()
                val payload = lengthBytes()
                RelayStep.Send(ClaimedMessage(id, kind, businessKey, payload, buffer.getLong(), buffer.getLong()))
            }
        }

    /** A record end, its tag included. */
    private fun finished(): Finished =
        when (val end = byte()) {
            0 -> Finished.Executed
            1 -> Finished.OperationFailed(byte() != 0)
            2 -> {
                val outcome = if (byte() == 0) FfiOutcome.SUCCEEDED else FfiOutcome.FAILED
                val response = if (byte() == 0) null else FfiResponse(text(), lengthBytes())
                Finished.Replay(outcome, response, optionalText())
            }
            3 -> Finished.InProgress(buffer.getLong().toULong())
            4 -> Finished.FingerprintMismatch
            5 -> Finished.KeyTooOld
            6 -> Finished.OperationFailedUnrecorded(text(), text())
            else -> error("the lane packed an end with tag $end")
        }

    /** A `FAIL` step's error, its tag read already. */
    fun failure(): FfiException {
        val code = text()
        val detail = text()
        val part = optionalText()
        val position = if (byte() == 0) null else buffer.getLong().toULong()
        val problem = optionalText()
        return when (text()) {
            "snowflake" -> FfiException.Snowflake(code, detail, part, position, problem)
            "uuid" -> FfiException.Uuid(code, detail, part, position, problem)
            "uuid7" -> FfiException.Uuid7(code, detail, part, position, problem)
            "key" -> FfiException.Key(code, detail, part, position, problem)
            "request_id" -> FfiException.RequestId(code, detail, part, position, problem)
            "record" -> FfiException.Record(code, detail, part, position, problem)
            "lease" -> FfiException.Lease(code, detail, part, position, problem)
            "segment" -> FfiException.Segment(code, detail, part, position, problem)
            "outbox" -> FfiException.Outbox(code, detail, part, position, problem)
            "fingerprint" -> FfiException.Fingerprint(code, detail, part, position, problem)
            "http" -> FfiException.Http(code, detail, part, position, problem)
            "store" -> FfiException.Store(code, detail, part, position, problem)
            else -> FfiException.Argument(code, detail, part, position, problem)
        }
    }

    private fun value(): SqlValue =
        when (val kind = byte()) {
            0 -> SqlValue.Null
            1 -> SqlValue.Int(buffer.getLong())
            2 -> SqlValue.Text(text())
            3 -> SqlValue.Bytes(lengthBytes())
            else -> error("the lane packed a value with tag $kind")
        }

    private fun byte(): Int = buffer.get().toInt() and 0xff

    private fun bytes(count: Int): ByteArray = ByteArray(count).also { buffer.get(it) }

    private fun lengthBytes(): ByteArray = bytes(buffer.getInt())

    private fun text(): String = String(lengthBytes(), Charsets.UTF_8)

    private fun optionalText(): String? = if (byte() == 0) null else text()
}

/** Writes the packed layout of what a host pushes: rows, outcomes, Redis's answers. */
internal class Packer {
    private val out = ByteArrayOutputStream(64)
    private val word = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)

    fun byte(value: Int) = out.write(value)

    fun int(value: Int) {
        word.clear()
        out.write(word.putInt(value).array(), 0, 4)
    }

    fun long(value: Long) {
        word.clear()
        out.write(word.putLong(value).array(), 0, 8)
    }

    fun bytes(value: ByteArray) {
        int(value.size)
        out.write(value)
    }

    fun text(value: String) = bytes(utf8(value))

    fun response(response: FfiResponse) {
        text(response.contentType)
        bytes(response.body)
    }

    fun value(value: SqlValue) =
        when (value) {
            is SqlValue.Null -> byte(0)
            is SqlValue.Int -> byte(1).also { long(value.value) }
            is SqlValue.Text -> byte(2).also { text(value.value) }
            is SqlValue.Bytes -> byte(3).also { bytes(value.value) }
        }

    fun done(): ByteArray = out.toByteArray()
}

private fun packRows(rows: List<List<SqlValue>>): ByteArray =
    Packer()
        .apply {
            int(rows.size)
            for (row in rows) {
                byte(row.size)
                row.forEach(::value)
            }
        }.done()

private fun packOutcome(outcome: OperationOutcome): ByteArray =
    Packer()
        .apply {
            when (outcome) {
                is OperationOutcome.Succeeded -> byte(0).also { response(outcome.response) }
                is OperationOutcome.Failed -> {
                    byte(1)
                    byte(if (outcome.retryable) 1 else 0)
                    text(outcome.message)
                    val response = outcome.response
                    if (response == null) byte(0) else byte(1).also { response(response) }
                }
                is OperationOutcome.NotAResponse -> byte(2).also { text(outcome.typeName) }
                is OperationOutcome.Raised -> byte(3).also { text(outcome.message) }
            }
        }.done()

private fun classCode(dbClass: DbErrorClass): Byte =
    when (dbClass) {
        DbErrorClass.UNIQUE_VIOLATION -> 0
        DbErrorClass.SERIALIZATION -> 1
        DbErrorClass.CONNECTION_LOST -> 2
        DbErrorClass.CONSTRAINT -> 3
        DbErrorClass.OTHER -> 4
        DbErrorClass.SCHEMA_MISSING -> 5
    }
