package io.mintid.store

import io.lettuce.core.RedisNoScriptException
import io.lettuce.core.ScriptOutputType
import io.lettuce.core.api.sync.RedisScriptingCommands
import io.mintid.core
import io.mintid.requireNonNegative
import uniffi.mintid_ffi.Finished
import uniffi.mintid_ffi.Held
import uniffi.mintid_ffi.OperationOutcome
import uniffi.mintid_ffi.fastPathScripts
import java.util.concurrent.atomic.LongAdder

/**
 * The fast path's counters, as read by [RedisFastPath.metrics]: the sums of what every store
 * using it also reports to its [StoreMetrics] (`fastPathLookup`, `fastPathWriteFailed`).
 *
 * @property hits requests answered from Redis (a replay or in progress).
 * @property misses requests that found nothing usable in Redis and went to the database.
 * @property fallbacks requests whose check failed (an error, a timeout, a failover) and went to the database.
 * @property writeFailures writes after the database path (settle, forget) that failed; nothing depends on them.
 */
data class FastPathMetrics(
    val hits: Long,
    val misses: Long,
    val fallbacks: Long,
    val writeFailures: Long,
)

/**
 * The Redis Cluster fast path in front of an [IdempotencyStore] (pass it as `fastPath`): before
 * the database, one script (`EVALSHA`, one round trip) replays a stored response, says that a
 * duplicate is in flight, or lets the request through to the database claim; after the database
 * committed a result, a second script writes it to Redis with a time to live below the
 * record's retention. The database stays the truth: Redis failing, slow, failing over, evicting
 * or flushed sends the request down the database path. Every decision is the core's
 * (`mintid::store::FastPath`, `docs/spec.md`, "The fast path"); this class only runs the named
 * scripts and pushes back what Redis said.
 *
 * [commands] is the synchronous API of the application's Lettuce connection with the
 * `ByteArrayCodec`: a `RedisClusterClient`'s (or a plain `RedisClient`'s), made with a command
 * timeout well under the request's (`TimeoutOptions`), so that a Redis that is down or slow
 * falls back to the database soon. [ttlMillis] caps how long an entry
 * lives (it always ends before the record's retention). One instance may serve several stores;
 * its [metrics] add up across them. Thread-safe, as Lettuce's connections are.
 *
 * Lettuce is an optional dependency of mintid: add `io.lettuce:lettuce-core` to use this class.
 *
 * @throws io.mintid.ArgumentException `argument.negative` for a negative [ttlMillis].
 */
class RedisFastPath
    @JvmOverloads
    constructor(
        val commands: RedisScriptingCommands<ByteArray, ByteArray>,
        val ttlMillis: Long? = null,
    ) {
        private val ttl: Long = ttlMillis?.let { requireNonNegative(it, "ttlMillis").toLong() } ?: -1

        /** The core's scripts by name: their text and SHA-1 (for `EVALSHA`). */
        private val scripts: Map<String, Pair<String, String>> =
            core { fastPathScripts() }.associate { it.name to (it.text to commands.digest(it.text)) }

        private val hits = LongAdder()
        private val misses = LongAdder()
        private val fallbacks = LongAdder()
        private val writeFailures = LongAdder()

        /** The counters so far. */
        val metrics: FastPathMetrics
            get() = FastPathMetrics(hits.sum(), misses.sum(), fallbacks.sum(), writeFailures.sum())

        internal fun bind(
            lane: Lane,
            metrics: StoreMetrics,
        ): BoundFastPath = BoundFastPath(this, FastLane(lane, ttl), metrics)

        /**
         * Runs [call] (`EVALSHA`; `EVAL` on `NOSCRIPT`, which loads the script on that node):
         * Redis's reply, or null after a failure of a write nothing depends on (counted).
         */
        internal fun run(
            call: RedisCall,
            output: ScriptOutputType,
        ): Any? {
            val (text, sha) = scripts.getValue(call.script)
            return try {
                commands.evalsha<Any?>(sha, output, call.keys, *call.args)
            } catch (_: RedisNoScriptException) {
                commands.eval<Any?>(text, output, call.keys, *call.args)
            }
        }

        /** Runs a write that nothing depends on (`settle`, `forget`): a failure is only counted (here and in [metrics]). */
        internal fun write(
            call: RedisCall?,
            metrics: StoreMetrics,
        ) {
            if (call == null) return
            try {
                run(call, ScriptOutputType.INTEGER)
            } catch (_: RuntimeException) {
                // Redis down or slow: the database holds the truth.
                writeFailures.increment()
                metrics.fastPathWriteFailed()
            }
        }

        /** Counts the core's [verdict] of a lookup, here and in [metrics]. */
        internal fun count(
            verdict: FastVerdict,
            metrics: StoreMetrics,
        ) {
            when (verdict) {
                is FastVerdict.Hit -> hits.increment()
                FastVerdict.Miss -> misses.increment()
                FastVerdict.Fallback -> fallbacks.increment()
            }
            metrics.fastPathLookup(verdict.name)
        }
    }

/**
 * A fast path under one store's policy (made by the store): the core's calls out, Redis's
 * answers in, its verdicts and failed writes reported to the store's [metrics].
 */
internal class BoundFastPath(
    private val fast: RedisFastPath,
    private val lane: FastLane,
    private val metrics: StoreMetrics,
) {
    /** The check before the database: the end to answer with, or null for the database path. */
    fun check(
        keyText: String,
        digest: ByteArray,
        keyCreatedMillis: Long,
        nowMillis: Long,
    ): Finished? {
        val call = core { lane.check(keyText, digest, keyCreatedMillis, nowMillis) } ?: return null
        val answer =
            try {
                packAnswer(fast.run(call, ScriptOutputType.MULTI))
            } catch (error: RuntimeException) {
                // Down, slow, failing over: the database path.
                packFailed(error.message ?: error.javaClass.name)
            }
        val verdict = core { lane.read(digest, answer) }
        fast.count(verdict, metrics)
        return (verdict as? FastVerdict.Hit)?.answer
    }

    /** What one request's database path came to, written to Redis when it ends ([settle]). */
    fun settling(
        keyText: String,
        digest: ByteArray,
    ) = Settling(keyText, digest)

    /** One request on the database path: its claim, the operation's outcome, the driver's end. */
    inner class Settling internal constructor(
        private val keyText: String,
        private val digest: ByteArray,
    ) {
        private var held: Held? = null

        /** What the operation came to. */
        var outcome: OperationOutcome? = null

        /** How the driver ended; null while it has not (or the store threw). */
        var finished: Finished? = null

        /** A claim was written under [held]: a fenced takeover invalidates the entry. */
        fun claimed(held: Held) {
            this.held = held
            fast.write(core { lane.claimed(keyText, held) }, metrics)
        }

        /** The write after the database path: the committed result, or forget. */
        fun settle(nowMillis: Long) {
            val settled = packSettled(held, outcome, finished)
            fast.write(core { lane.settle(keyText, digest, settled, nowMillis) }, metrics)
        }
    }
}
