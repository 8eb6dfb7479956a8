package io.mintid.store

import io.lettuce.core.RedisNoScriptException
import io.lettuce.core.ScriptOutputType
import io.lettuce.core.api.sync.RedisScriptingCommands
import io.mintid.requireNonNegative
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
 * path, a second script writes what the database holds to Redis with a time to live below the
 * record's retention. The database stays the truth: Redis failing, slow, failing over, evicting
 * or flushed sends the request down the database path. Every decision and the order of the
 * calls are the core's record driver's (`RecordDriver::with_fast_path`, `docs/spec.md`, "The
 * fast path"); this class only sends the script each Redis step names and pushes back what
 * Redis said.
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
        /** [ttlMillis], checked, as the core takes it. */
        internal val ttl: Long? = ttlMillis?.let { requireNonNegative(it, "ttlMillis").toLong() }

        /** The lookups by the core's name of their verdict (`hit`, `miss`, `fallback`). */
        private val lookups = mapOf("hit" to LongAdder(), "miss" to LongAdder(), "fallback" to LongAdder())
        private val writeFailures = LongAdder()

        /** The counters so far. */
        val metrics: FastPathMetrics
            get() = FastPathMetrics(lookups.getValue("hit").sum(), lookups.getValue("miss").sum(), lookups.getValue("fallback").sum(), writeFailures.sum())

        /**
         * Sends [call] (`EVALSHA`, or `EVAL` with the script's source when the driver asks so):
         * what Redis said. A failure is an answer too (`NOSCRIPT` apart, which the driver
         * answers by asking for `EVAL`).
         */
        internal fun send(call: Wire.Step.Redis): Wire.RedisAnswer {
            val keys = call.keys.map { it.toByteArray(Charsets.UTF_8) }.toTypedArray()
            val args = call.args.toTypedArray()
            val reply =
                try {
                    if (call.eval) {
                        commands.eval<Any?>(call.code.toByteArray(Charsets.UTF_8), ScriptOutputType.MULTI, keys, *args)
                    } else {
                        commands.evalsha<Any?>(call.code, ScriptOutputType.MULTI, keys, *args)
                    }
                } catch (_: RedisNoScriptException) {
                    return Wire.RedisAnswer.NoScript
                } catch (error: RuntimeException) {
                    // Down, slow, failing over, an error reply: the driver decides.
                    return Wire.RedisAnswer.Failed(error.message ?: error.javaClass.name)
                }
            return answer(reply)
        }

        /** Counts what a driver's fast path came to ([report]), here and in the store's [metrics]. */
        internal fun count(
            step: Wire.Step,
            metrics: StoreMetrics,
        ) {
            // A driver that failed before its first step (a key the core refused) has no report.
            val report = step as? Wire.Step.Report ?: return
            report.lookup?.let { verdict ->
                lookups[verdict]?.increment()
                metrics.fastPathLookup(verdict)
            }
            repeat(report.writeFailures) {
                writeFailures.increment()
                metrics.fastPathWriteFailed()
            }
        }

        private companion object {
            /**
             * Redis's [reply] as Lettuce's `MULTI` output reads it: nil, the fields of an array
             * (each bulk string's bytes, an integer as its decimal text, a nil element absent;
             * an integer reply is one field), or a failure (a reply of another shape). `MULTI`
             * reads a nil reply as a list of one null (no script answers an array of one nil);
             * its `OBJECT` output fails on a nil reply.
             */
            fun answer(reply: Any?): Wire.RedisAnswer {
                if (reply == null || (reply is List<*> && reply.size == 1 && reply[0] == null)) return Wire.RedisAnswer.Nil
                val fields = reply as? List<*> ?: return Wire.RedisAnswer.Failed("a reply of type ${reply.javaClass.name}")
                return Wire.RedisAnswer.Fields(
                    fields.map { field ->
                        when (field) {
                            null, is ByteArray -> field
                            is Long, is String -> utf8(field.toString())
                            else -> return Wire.RedisAnswer.Failed("an element of type ${field.javaClass.name}")
                        }
                    },
                )
            }
        }
    }
