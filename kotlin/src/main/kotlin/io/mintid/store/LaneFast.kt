package io.mintid.store

import com.sun.jna.Native
import uniffi.mintid_ffi.Finished
import uniffi.mintid_ffi.Held
import uniffi.mintid_ffi.OperationOutcome
import java.nio.ByteBuffer
import java.nio.ByteOrder

/**
 * The Redis fast path's C entry points (`mintid_lane_fast_*`, `docs/spec.md`, "The lane"), bound
 * by JNA direct mapping like [LaneNative]. Every call is pure: a packed result longer than the
 * buffer is computed again into one that fits.
 */
internal object LaneFastNative {
    init {
        Native.register(LaneFastNative::class.java, LANE_LIBRARY)
    }

    @JvmStatic external fun mintid_lane_fast_new(
        lane: Long,
        ttlMillis: Long,
    ): Long

    @JvmStatic external fun mintid_lane_fast_free(fast: Long)

    @JvmStatic external fun mintid_lane_fast_check(
        fast: Long,
        key: ByteArray,
        keyLen: Long,
        fingerprint: ByteArray,
        fingerprintLen: Long,
        keyCreatedMillis: Long,
        nowMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_fast_read(
        fast: Long,
        fingerprint: ByteArray,
        fingerprintLen: Long,
        answer: ByteArray,
        answerLen: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_fast_settle(
        fast: Long,
        key: ByteArray,
        keyLen: Long,
        fingerprint: ByteArray,
        fingerprintLen: Long,
        settled: ByteArray,
        settledLen: Long,
        nowMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long

    @JvmStatic external fun mintid_lane_fast_claimed(
        fast: Long,
        key: ByteArray,
        keyLen: Long,
        token: Long,
        createdMillis: Long,
        out: ByteArray,
        cap: Long,
    ): Long
}

/** A script the core asks the host to run: its name, its keys (one entry, one slot), its arguments. */
internal class RedisCall(
    val script: String,
    val keys: Array<ByteArray>,
    val args: Array<ByteArray>,
)

/**
 * What a `check` came to: a hit to answer with ([answer]), or the database path (a miss or a
 * fallback). [name] is the core's name of the packed verdict (`FastVerdict::as_str`, the
 * `verdict` attribute of `mintid.fast_path.lookups`).
 */
internal sealed class FastVerdict(
    val name: String,
) {
    /** Answer with this end (a replay or in progress) without the database. */
    class Hit(
        val answer: Finished,
    ) : FastVerdict("hit")

    /** Nothing usable in Redis: the database path. */
    object Miss : FastVerdict("miss")

    /** Redis failed or answered out of the script's layout: the database path. */
    object Fallback : FastVerdict("fallback")
}

/**
 * The core's fast path of one store (a core handle, under the policy of its record [lane]),
 * entries living at most [ttlMillis] (−1: no cap). Freed when collected.
 */
internal class FastLane(
    private val lane: Lane,
    ttlMillis: Long,
) {
    private val handle: Long = LaneFastNative.mintid_lane_fast_new(lane.handle, ttlMillis)

    init {
        val handle = handle
        CLEANER.register(this) { LaneFastNative.mintid_lane_fast_free(handle) }
    }

    /** The `check` to run before the database, or null (a key too old goes straight to the database). */
    fun check(
        keyText: String,
        digest: ByteArray,
        keyCreatedMillis: Long,
        nowMillis: Long,
    ): RedisCall? =
        keyed(keyText) { key, out, cap ->
            LaneFastNative.mintid_lane_fast_check(handle, key, key.size.toLong(), digest, digest.size.toLong(), keyCreatedMillis, nowMillis, out, cap)
        }

    /** What Redis's packed [answer] to a `check` means. */
    fun read(
        digest: ByteArray,
        answer: ByteArray,
    ): FastVerdict {
        val verdict =
            packed { out, cap ->
                LaneFastNative.mintid_lane_fast_read(handle, digest, digest.size.toLong(), answer, answer.size.toLong(), out, cap)
            }
        // A replay or in progress is packed as a record's end (tags 2 and 3).
        return when (verdict.get(0).toInt()) {
            0 -> FastVerdict.Miss
            1 -> FastVerdict.Fallback
            else -> FastVerdict.Hit(Unpacker(verdict).finished())
        }
    }

    /** The script after the database path, for what it came to ([settled], packed). */
    fun settle(
        keyText: String,
        digest: ByteArray,
        settled: ByteArray,
        nowMillis: Long,
    ): RedisCall? =
        keyed(keyText) { key, out, cap ->
            LaneFastNative.mintid_lane_fast_settle(handle, key, key.size.toLong(), digest, digest.size.toLong(), settled, settled.size.toLong(), nowMillis, out, cap)
        }

    /** The script after a claim was written under [held] (a takeover invalidates the entry), or null. */
    fun claimed(
        keyText: String,
        held: Held,
    ): RedisCall? =
        keyed(keyText) { key, out, cap ->
            LaneFastNative.mintid_lane_fast_claimed(handle, key, key.size.toLong(), held.token.toLong(), held.createdMillis.toLong(), out, cap)
        }

    /** The call [entry] packs for the key [keyText] (its UTF-8 bytes passed in). */
    private inline fun keyed(
        keyText: String,
        entry: (key: ByteArray, out: ByteArray, cap: Long) -> Long,
    ): RedisCall? {
        val key = keyText.toByteArray(Charsets.UTF_8)
        return call(packed { out, cap -> entry(key, out, cap) })
    }

    /**
     * Runs [entry] into a buffer (again into one that fits when longer); what it packed. A
     * failure (tag 5) is thrown as the bindings' error.
     */
    private inline fun packed(entry: (ByteArray, Long) -> Long): ByteBuffer {
        var out = ByteArray(CAP)
        val length = entry(out, CAP.toLong())
        if (length > CAP) {
            out = ByteArray(length.toInt())
            entry(out, length)
        }
        val buffer = ByteBuffer.wrap(out, 0, length.toInt()).order(ByteOrder.LITTLE_ENDIAN)
        if (out[0].toInt() == FAIL) throw Unpacker(buffer.position(1)).failure()
        return buffer
    }

    /** A packed call: `0` none, or `1`, the script's name, its keys and its arguments. */
    private fun call(packed: ByteBuffer): RedisCall? {
        val unpacker = Unpacker(packed)
        if (unpacker.byte() == 0) return null
        val name = String(ByteArray(unpacker.byte()).also { packed.get(it) }, Charsets.UTF_8)
        val keys = Array(unpacker.byte()) { unpacker.lengthBytes() }
        val args = Array(unpacker.byte()) { unpacker.lengthBytes() }
        return RedisCall(name, keys, args)
    }

    private companion object {
        const val FAIL = 5
    }
}

/**
 * What Redis said to a `check`, packed: nil, the fields of an array (each bulk string's bytes,
 * an integer as its decimal text, a nil element absent) or a failure (a reply of another
 * shape). Lettuce's `MULTI` output reads a nil reply as a list of one null element (the
 * `check` script answers nil or an array of nine).
 */
internal fun packAnswer(reply: Any?): ByteArray {
    if (reply == null || (reply is List<*> && reply.size == 1 && reply[0] == null)) return byteArrayOf(0)
    if (reply !is List<*>) return packFailed("a reply of type ${reply.javaClass.name}")
    val packer = Packer()
    packer.byte(1)
    packer.int(reply.size)
    for (field in reply) {
        when (field) {
            null -> packer.byte(0)
            is ByteArray -> packer.byte(1).also { packer.bytes(field) }
            is Long, is String -> packer.byte(1).also { packer.text(field.toString()) }
            else -> return packFailed("an element of type ${field.javaClass.name}")
        }
    }
    return packer.done()
}

/** Redis failed (an error reply, a timeout, a lost connection), packed. */
internal fun packFailed(message: String): ByteArray = Packer().apply { byte(2).also { text(message) } }.done()

/**
 * What the database path came to, packed for the core's `settle`: `0` executed (the claim
 * [held], the response), `1` failed and stored (the claim, the failure's text and optional
 * response), `2` anything else (the claim, if one was held). [outcome] is what the operation
 * came to, [finished] the driver's end (null when the store threw).
 */
internal fun packSettled(
    held: Held?,
    outcome: OperationOutcome?,
    finished: Finished?,
): ByteArray {
    val packer = Packer()

    fun fence(held: Held) {
        packer.long(held.token.toLong())
        packer.long(held.createdMillis.toLong())
        packer.long(held.leaseDeadlineMillis.toLong())
    }
    if (held != null && finished is Finished.Executed && outcome is OperationOutcome.Succeeded) {
        packer.byte(0)
        fence(held)
        packer.response(outcome.response)
    } else if (held != null && finished is Finished.OperationFailed && finished.stored && outcome is OperationOutcome.Failed) {
        packer.byte(1)
        fence(held)
        packer.text(outcome.message)
        val response = outcome.response
        if (response == null) packer.byte(0) else packer.byte(1).also { packer.response(response) }
    } else {
        packer.byte(2)
        if (held == null) packer.byte(0) else packer.byte(1).also { fence(held) }
    }
    return packer.done()
}
