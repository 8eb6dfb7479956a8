package io.mintid.docs

import io.lettuce.core.RedisURI
import io.lettuce.core.TimeoutOptions
import io.lettuce.core.cluster.ClusterClientOptions
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions
import io.lettuce.core.cluster.RedisClusterClient
import io.lettuce.core.codec.ByteArrayCodec
import io.mintid.*
import io.mintid.store.*
import java.time.Duration
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test

/**
 * The fast path block of kotlin/README.md, line for line (scripts/docs/blocks.py checks it), on
 * PostgreSQL and the Redis Cluster of scripts/db/with-db.sh (skipped without them).
 */
class FastPathDocsTest {
    private fun placeOrder(): ByteArray = """{"placed":true}""".toByteArray()

    @Test
    fun `kotlin README's fast path block, on PostgreSQL and the Redis Cluster`() {
        val seeds = System.getenv("MINTID_REDIS_CLUSTER")
        assumeTrue(seeds != null || System.getenv("CI") == "true", "MINTID_REDIS_CLUSTER not set (run under scripts/db/with-db.sh)")
        val redisUrl = "redis://${seeds!!.split(",").first()}"
        DocsDatabases.postgres { dataSource ->
            val key = IdempotencyKey.of("order.create", "tenant-7", "order-${System.nanoTime()}")
            val request = StoreRequest(Fingerprint.ofJson("""{"sku":"tea"}"""))
            // The application's Lettuce cluster client: a command timeout well under the request's
            // (a Redis down or slow sends the request to the database after it), the topology
            // followed through failovers.
            val client = RedisClusterClient.create(RedisURI.create(redisUrl))
            client.setOptions(
                ClusterClientOptions.builder()
                    .timeoutOptions(TimeoutOptions.enabled(Duration.ofMillis(100)))
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
                    .build(),
            )
            val fastPath = RedisFastPath(client.connect(ByteArrayCodec.INSTANCE).sync())
            val store = IdempotencyStore(dataSource, Dialect.POSTGRES, fastPath = fastPath)
            store.runOnce(key, request) { StoredResponse("application/json", placeOrder()) }   // runs: Redis, then the database
            val again = store.runOnce(key, request) { StoredResponse("application/json", placeOrder()) }   // a replay from Redis, no database
            fastPath.metrics           // FastPathMetrics(hits, misses, fallbacks, writeFailures)
            assertEquals("replay", again.decision)
            assertEquals(2, fastPath.metrics.run { hits + misses + fallbacks })
            client.shutdown()
        }
    }
}
