package io.mintid.store

import com.sun.jna.Native
import uniffi.mintid_ffi.DbErrorClass
import uniffi.mintid_ffi.Finished
import uniffi.mintid_ffi.Held
import uniffi.mintid_ffi.OperationOutcome
import uniffi.mintid_ffi.RecordDrivers
import uniffi.mintid_ffi.RecordStep
import uniffi.mintid_ffi.SqlValue
import uniffi.mintid_ffi.StoreAnswer
import uniffi.mintid_ffi.StoreQuery
import uniffi.mintid_ffi.StoredResponse as FfiResponse
import uniffi.mintid_ffi.Way
import java.io.ByteArrayOutputStream
import java.lang.ref.Cleaner
import java.nio.ByteBuffer
import java.nio.ByteOrder
import uniffi.mintid_ffi.MintidException as FfiException
import uniffi.mintid_ffi.Outcome as FfiOutcome

/**
 * The core's plain C entry points for the record driver (`mintid_lane_*`, `docs/spec.md`, "The
 * lane"), bound by JNA direct mapping: primitive arguments and byte arrays only, so a step costs
 * one native call and no JNA `Structure` (each of uniffi's buffers is one, allocated and freed
 * through a global map that threads contend on).
 */
internal object LaneNative {
    init {
        val name = System.getProperty("uniffi.component.mintid_ffi.libraryOverride") ?: "mintid_ffi"
        Native.register(LaneNative::class.java, name)
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

    @JvmStatic external fun mintid_lane_record_free(driver: Long)

    @JvmStatic external fun mintid_lane_free(lane: Long)

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

/** UTF-8 with each unpaired surrogate as U+FFFD, which the core refuses and places. */
private fun utf8(value: String): ByteArray {
    if (value.none { it.isSurrogate() }) return value.toByteArray(Charsets.UTF_8)
    val encoder =
        Charsets.UTF_8
            .newEncoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPLACE)
            .replaceWith("\uFFFD".toByteArray(Charsets.UTF_8))
    val encoded = encoder.encode(java.nio.CharBuffer.wrap(value))
    return ByteArray(encoded.remaining()).also { encoded.get(it) }
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

private val CLEANER: Cleaner = Cleaner.create()

/** A buffer a step usually fits in; a longer one is copied again, whole. */
private const val CAP = 1024

/** The manifest and policy every driver of one store shares: a core handle, freed with the store. */
internal class Lane(
    drivers: RecordDrivers,
) {
    private val handle: Long = drivers.lane().toLong()

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
 * One request's record driver through the lane: the same steps as uniffi's `RecordDriver`, read
 * from the packed layout. Closing frees the core's driver (a driver never closed is freed when
 * collected). One call at a time.
 */
internal class LaneDriver(
    private val handle: Long,
) : AutoCloseable {
    private val out = ByteArray(CAP)
    private val cleanable: Cleaner.Cleanable

    init {
        val handle = handle
        cleanable = CLEANER.register(this) { LaneNative.mintid_lane_record_free(handle) }
    }

    @Synchronized
    fun start(nowMillis: ULong): RecordStep = read(LaneNative.mintid_lane_record_start(handle, nowMillis.toLong(), out, CAP.toLong()))

    @Synchronized
    fun push(
        answer: StoreAnswer,
        nowMillis: ULong,
    ): RecordStep {
        val now = nowMillis.toLong()
        val length =
            when (answer) {
                is StoreAnswer.Affected -> LaneNative.mintid_lane_record_push_affected(handle, answer.count.toLong(), now, out, CAP.toLong())
                is StoreAnswer.Rows -> {
                    val rows = packRows(answer.rows)
                    LaneNative.mintid_lane_record_push_rows(handle, rows, rows.size.toLong(), now, out, CAP.toLong())
                }
                is StoreAnswer.Failed -> {
                    val message = answer.message.toByteArray(Charsets.UTF_8)
                    LaneNative.mintid_lane_record_push_failed(handle, classCode(answer.`class`), message, message.size.toLong(), now, out, CAP.toLong())
                }
            }
        return read(length)
    }

    @Synchronized
    fun resume(): RecordStep = read(LaneNative.mintid_lane_record_resume(handle, out, CAP.toLong()))

    @Synchronized
    fun finish(
        outcome: OperationOutcome,
        nowMillis: ULong,
    ): RecordStep {
        val packed = packOutcome(outcome)
        return read(LaneNative.mintid_lane_record_finish(handle, packed, packed.size.toLong(), nowMillis.toLong(), out, CAP.toLong()))
    }

    override fun close() = cleanable.clean()

    /** The step just packed, from the buffer or copied again when longer. */
    private fun read(length: Long): RecordStep {
        val bytes =
            if (length <= CAP) {
                out
            } else {
                ByteArray(length.toInt()).also { LaneNative.mintid_lane_record_step(handle, it, length) }
            }
        return Unpacker(ByteBuffer.wrap(bytes, 0, length.toInt()).order(ByteOrder.LITTLE_ENDIAN)).step()
    }
}

/** Reads one packed step; a `FAIL` is thrown as the bindings' error of its concern. */
private class Unpacker(
    private val buffer: ByteBuffer,
) {
    fun step(): RecordStep =
        when (val tag = byte()) {
            1 -> {
                val name = String(bytes(byte().toInt()), Charsets.UTF_8)
                RecordStep.Run(StoreQuery(name, List(byte().toInt()) { value() }))
            }
            2 -> RecordStep.Pause(buffer.getLong().toULong())
            3 -> {
                val token = buffer.getLong().toULong()
                val created = buffer.getLong().toULong()
                val deadline = buffer.getLong().toULong()
                val every = buffer.getLong()
                RecordStep.Execute(Held(token, created, deadline, if (every < 0) null else every.toULong()))
            }
            4 -> RecordStep.Done(finished())
            5 -> throw failure()
            else -> error("the lane packed a step with tag $tag")
        }

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

/** Writes the packed layout of what a host pushes: rows and outcomes. */
private class Packer {
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

    fun text(value: String) = bytes(value.toByteArray(Charsets.UTF_8))

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
    }
