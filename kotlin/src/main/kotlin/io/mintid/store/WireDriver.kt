package io.mintid.store

import com.sun.jna.Native
import io.mintid.ArgumentException
import io.mintid.FingerprintException
import io.mintid.HttpException
import io.mintid.IdempotencyKeyException
import io.mintid.LeaseException
import io.mintid.MintidException
import io.mintid.NativeLibrary
import io.mintid.OutboxException
import io.mintid.RecordException
import io.mintid.RequestIdException
import io.mintid.SegmentException
import io.mintid.SnowflakeException
import io.mintid.Uuid7Exception
import io.mintid.UuidException
import io.mintid.problemNamed
import io.mintid.storeException
import java.io.ByteArrayOutputStream
import java.lang.ref.Cleaner

/**
 * The wire's C entry points (`mintid_wire_*`, `docs/spec.md`, "The wire"), bound by JNA direct
 * mapping on the library uniffi loads: primitive arguments and byte arrays only, so a step is
 * one native call and no JNA `Structure`. The layout's version is checked when it loads.
 */
internal object WireNative {
    init {
        try {
            Native.register(WireNative::class.java, System.getProperty("uniffi.component.mintid_ffi.libraryOverride") ?: "mintid_ffi")
        } catch (error: LinkageError) {
            throw NativeLibrary.explain(error)
        }
        val version = mintid_wire_version()
        check(version == Wire.VERSION) { "mintid's native library has wire layout $version, this jar reads ${Wire.VERSION}" }
    }

    @JvmStatic external fun mintid_wire_version(): Int

    @JvmStatic external fun mintid_wire_new(
        spec: ByteArray,
        specLen: Long,
    ): Long

    @JvmStatic external fun mintid_wire_call(
        wire: Long,
        input: ByteArray,
        inputLen: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_wire_step(
        wire: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_wire_free(wire: Long)

    @JvmStatic external fun mintid_wire_key_text(
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

private val CLEANER: Cleaner = Cleaner.create()

/** A buffer a step usually fits in; a longer one is copied again, whole. */
private const val CAP = 1024

/**
 * One core driver of [kind] made from its packed spec: each [call] pushes one packed input and
 * reads the next step. Calls are serialised (a segment's is shared by threads); the native
 * driver is freed by [close] (a call after it is refused) or once this object is unreachable.
 */
internal class WireDriver(
    val kind: Wire.Kind,
    spec: ByteArray,
) : AutoCloseable {
    private val handle = WireNative.mintid_wire_new(spec, spec.size.toLong())
    private val out = ByteArray(CAP)
    private val cleanable =
        handle.let { handle -> CLEANER.register(this) { WireNative.mintid_wire_free(handle) } }
    private var closed = false

    /** Pushes [input] (packed by [Wire.input]); the next step. */
    @Synchronized
    fun call(input: ByteArray): Wire.Step {
        check(!closed) { "this $kind driver is closed" }
        val length = WireNative.mintid_wire_call(handle, input, input.size.toLong(), out, CAP.toLong()).toInt()
        if (length <= CAP) return Wire.step(kind, out, length)
        val long = ByteArray(length)
        WireNative.mintid_wire_step(handle, long, length.toLong())
        return Wire.step(kind, long)
    }

    /** Pushes the input of [tag] with no fields at [nowMillis]; the next step. */
    fun call(
        tag: Wire.Input,
        nowMillis: Long,
    ): Wire.Step = call(Wire.input(tag, nowMillis).done())

    @Synchronized
    override fun close() {
        closed = true
        cleanable.clean()
    }
}

/**
 * A `FAIL` step as the matching [MintidException]; a `store.*` error naming a database error
 * class ([Wire.Step.Fail.part]) gets [cause], the driver's exception behind that answer.
 */
internal fun Wire.Step.Fail.toMintid(cause: Throwable? = null): MintidException {
    val at = position
    return when (concern) {
        "store" -> storeException(code, detail, part, problem, if (part != null) cause else null)
        "snowflake" -> SnowflakeException(code, detail, part, at)
        "uuid" -> UuidException(code, detail, part, at)
        "uuid7" -> Uuid7Exception(code, detail, part, at)
        "key" -> IdempotencyKeyException(code, detail, part, at)
        "fingerprint" -> FingerprintException(code, detail, part, at)
        "request_id" -> RequestIdException(code, detail, part, at, problemNamed(problem))
        "record" -> RecordException(code, detail, part, at)
        "lease" -> LeaseException(code, detail, part, at)
        "segment" -> SegmentException(code, detail, part, at)
        "outbox" -> OutboxException(code, detail, part, at)
        "http" -> HttpException(code, detail, part, at, problemNamed(problem))
        else -> ArgumentException(code, detail, part, at)
    }
}

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
 * The canonical text of the key [kind], [scope], [id] (the core's rule, one native call); a
 * part the core refuses is thrown as its `key.*` error.
 */
internal fun keyText(
    kind: String,
    scope: String,
    id: String,
): String {
    val (k, s, i) = Triple(utf8(kind), utf8(scope), utf8(id))
    var out = ByteArray(CAP)
    val length = WireNative.mintid_wire_key_text(k, k.size.toLong(), s, s.size.toLong(), i, i.size.toLong(), out, CAP.toLong()).toInt()
    if (length > CAP) {
        out = ByteArray(length)
        WireNative.mintid_wire_key_text(k, k.size.toLong(), s, s.size.toLong(), i, i.size.toLong(), out, length.toLong())
    }
    if (out[0].toInt() == 0) return String(out, 1, length - 1, Charsets.UTF_8)
    // A refusal is a packed `FAIL` step after the leading byte.
    throw (Wire.step(Wire.Kind.RECORD, out, length) as Wire.Step.Fail).toMintid()
}
