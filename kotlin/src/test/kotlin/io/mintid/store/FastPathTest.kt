package io.mintid.store

import io.lettuce.core.ClientOptions
import io.lettuce.core.RedisClient
import io.lettuce.core.RedisURI
import io.lettuce.core.SocketOptions
import io.lettuce.core.TimeoutOptions
import io.lettuce.core.api.StatefulConnection
import io.lettuce.core.api.StatefulRedisConnection
import io.lettuce.core.api.sync.RedisScriptingCommands
import io.lettuce.core.cluster.ClusterClientOptions
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions
import io.lettuce.core.cluster.RedisClusterClient
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection
import io.lettuce.core.codec.ByteArrayCodec
import io.lettuce.core.resource.ClientResources
import io.lettuce.core.resource.DefaultClientResources
import io.micrometer.core.instrument.simple.SimpleMeterRegistry
import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.RecordPolicy
import io.mintid.bool
import io.mintid.has
import io.mintid.int
import io.mintid.metrics.MicrometerMetrics
import io.mintid.obj
import io.mintid.string
import kotlinx.serialization.json.Json
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.DynamicContainer.dynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest.dynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.net.ServerSocket
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.Paths
import java.time.Duration
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.CyclicBarrier
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

// The Redis fast path (RedisFastPath) on the real Redis Cluster of scripts/db/with-db.sh
// (MINTID_REDIS_CLUSTER) in front of SQLite, PostgreSQL and MariaDB, through Lettuce's
// RedisClusterClient: the cases of tests/redis/fast_path.json, the fault tests (a primary
// killed, a primary asleep) with 32 workers racing on 100 keys, and a cluster that lost its
// scripts or its data.
class FastPathTest {
    @TestFactory
    fun `the fast path cases`(): List<DynamicNode> =
        Dialect.entries.map { dialect ->
            val skip = skipReason(dialect) ?: redisSkipReason()
            dynamicContainer(
                "fast_path.json on ${dialect.directory}",
                cases.map { case ->
                    dynamicTest(case.string("name")) {
                        assumeTrue(skip == null, skip)
                        FreshDatabase(dialect).use { db -> runCase(case, db) }
                    }
                },
            )
        }

    private fun runCase(
        case: kotlinx.serialization.json.JsonObject,
        db: FreshDatabase,
    ) {
        val name = case.string("name")
        val redis = if (case.has("redis")) DownRedis().also { assertEquals("down", case.string("redis")) } else Cluster(CASE_TIMEOUT)
        redis.use {
            val fast = RedisFastPath(redis.connection.commands())
            val registry = SimpleMeterRegistry()
            val store = IdempotencyStore(db.open(), db.dialect, RecordPolicy(), StoreClock.SYSTEM, MicrometerMetrics(registry), fast)
            Migrations.migrate(store.dataSource, db.dialect)
            val scope = "s${UUID.randomUUID().toString().replace("-", "").take(16)}"
            var lease: RecordLease? = null
            for (element in case["steps"]!!.jsonArray) {
                val step = element.jsonObject
                val where = "$name: $step"
                when (val action = step.string("do")) {
                    "run" -> {
                        checkFields(step, setOf("key", "payload", "respond", "fail", "retryable", "text", "error", "ran"), where)
                        var ran = false
                        val key = IdempotencyKey.of("order", scope, step.string("key"))
                        val result =
                            try {
                                store.runOnce(key, request(step.string("payload"))) {
                                    ran = true
                                    if (step.has("fail")) {
                                        throw OperationException(step.string("fail"), step.has("retryable") && step.bool("retryable"))
                                    }
                                    text(step.string("respond"))
                                }
                            } catch (_: OperationException) {
                                null
                            }
                        assertEquals(step.string("expect"), result?.decision ?: "operation_failed", where)
                        assertEquals(step.bool("ran"), ran, where)
                        if (step.has("text")) assertEquals(step.string("text"), body(result), where)
                        if (step.has("error")) assertEquals(step.string("error"), (result as Replayed).error, where)
                    }
                    "lease" -> {
                        checkFields(step, setOf("key", "payload"), where)
                        val key = IdempotencyKey.of("order", scope, step.string("key"))
                        when (val claimed = store.claimLease(key, request(step.string("payload")))) {
                            is RecordLease -> lease = claimed.also { assertEquals(step.string("expect"), "lease", where) }
                            else -> assertEquals(step.string("expect"), claimed.decision, where)
                        }
                    }
                    "complete" -> {
                        checkFields(step, setOf("text"), where)
                        lease!!.complete(text(step.string("text")))
                    }
                    "flush" -> (redis as Cluster).connection.sync().flushall()
                    "flush_scripts" -> primaryPorts().forEach { port -> assertEquals("OK", cli(port, "SCRIPT", "FLUSH")?.trim()) }
                    "metrics" -> {
                        val expect = step.obj("expect")
                        val metrics = fast.metrics
                        assertEquals(
                            listOf(expect.int("hits"), expect.int("misses"), expect.int("fallbacks")).map(Int::toLong),
                            listOf(metrics.hits, metrics.misses, metrics.fallbacks),
                            "$where: $metrics",
                        )

                        // The same verdicts through the store's hook, under the core's names.
                        fun lookups(verdict: String) = registry.find("mintid.fast_path.lookups").tag("verdict", verdict).counter()?.count()?.toLong() ?: 0
                        assertEquals(listOf(metrics.hits, metrics.misses, metrics.fallbacks), listOf("hit", "miss", "fallback").map(::lookups), where)
                        val writeFailures = registry.find("mintid.fast_path.write_failures").counter()?.count()?.toLong() ?: 0
                        assertEquals(metrics.writeFailures, writeFailures, where)
                    }
                    else -> fail("$where: unknown step $action")
                }
            }
        }
    }

    @Test
    fun `scripts flushed from every primary are sent again by EVAL`() {
        assumeTrue(redisSkipReason() == null, redisSkipReason())
        FreshDatabase(Dialect.SQLITE).use { db ->
            Cluster(CASE_TIMEOUT).use { redis ->
                val fast = RedisFastPath(redis.connection.commands())
                val registry = SimpleMeterRegistry()
                val store = IdempotencyStore(db.open(), db.dialect, RecordPolicy(), StoreClock.SYSTEM, MicrometerMetrics(registry), fast)
                Migrations.migrate(store.dataSource, db.dialect)
                val scope = "n${UUID.randomUUID().toString().replace("-", "").take(16)}"
                val first = IdempotencyKey.of("order", scope, "k1")
                assertEquals("execute", store.runOnce(first, request("p1")) { text("r1") }.decision)
                primaryPorts().also { assertEquals(3, it.size) }.forEach { port -> assertEquals("OK", cli(port, "SCRIPT", "FLUSH")?.trim()) }
                // Each script is unknown to every node now: the check (a hit) and, for a new
                // key, the check and the settle are answered NOSCRIPT to EVALSHA, then sent by EVAL.
                val replayed = store.runOnce(first, request("p1")) { fail("ran twice") }
                assertEquals("replay" to "r1", replayed.decision to body(replayed))
                val second = IdempotencyKey.of("order", scope, "k2")
                assertEquals("execute", store.runOnce(second, request("p2")) { text("r2") }.decision)
                val hit = store.runOnce(second, request("p2")) { fail("ran twice") }
                assertEquals("replay" to "r2", hit.decision to body(hit))
                assertEquals(FastPathMetrics(hits = 2, misses = 2, fallbacks = 0, writeFailures = 0), fast.metrics)
                assertEquals(null, registry.find("mintid.fast_path.write_failures").counter()?.count()?.takeIf { it > 0 })
                assertEquals(null, registry.find("mintid.fast_path.lookups").tag("verdict", "fallback").counter()?.count()?.takeIf { it > 0 })
            }
        }
    }

    @Test
    fun `a duplicate after FLUSHALL replays from the database and is written back`() {
        assumeTrue(redisSkipReason() == null, redisSkipReason())
        FreshDatabase(Dialect.SQLITE).use { db ->
            Cluster(CASE_TIMEOUT).use { redis ->
                val source = db.open()
                Migrations.migrate(source, db.dialect)
                val connections = AtomicInteger()
                val counted =
                    object : TestDataSource() {
                        override fun getConnection(): java.sql.Connection = source.connection.also { connections.incrementAndGet() }
                    }
                val fast = RedisFastPath(redis.connection.commands())
                val store = IdempotencyStore(counted, db.dialect, fastPath = fast)
                val key = IdempotencyKey.of("order", "w${UUID.randomUUID().toString().replace("-", "").take(16)}", "k1")
                assertEquals("execute", store.runOnce(key, request("p1")) { text("r1") }.decision)
                primaryPorts().also { assertEquals(3, it.size) }.forEach { port -> assertEquals("OK", cli(port, "FLUSHALL")?.trim()) }
                val before = connections.get()
                val fromDatabase = store.runOnce(key, request("p1")) { fail("ran twice") }
                assertEquals("replay" to "r1", fromDatabase.decision to body(fromDatabase))
                assertTrue(connections.get() > before, "the replay after FLUSHALL came from the database")
                assertEquals(FastPathMetrics(hits = 0, misses = 2, fallbacks = 0, writeFailures = 0), fast.metrics)
                val written = connections.get()
                val fromRedis = store.runOnce(key, request("p1")) { fail("ran twice") }
                assertEquals("replay" to "r1", fromRedis.decision to body(fromRedis))
                assertEquals(written, connections.get(), "the replay written back came from Redis, without the database")
                assertEquals(FastPathMetrics(hits = 1, misses = 2, fallbacks = 0, writeFailures = 0), fast.metrics)
            }
        }
    }

    @Test
    fun `a primary killed mid-run`() {
        assumeFaultTests()
        try {
            race { kill(it) }
        } finally {
            waitHealthy(6 - killed.size)
            restart()
            waitHealthy(6)
        }
    }

    @Test
    fun `a primary asleep mid-run`() {
        assumeFaultTests()
        try {
            race { port -> cli(port, "DEBUG", "SLEEP", "1.2") }
        } finally {
            waitHealthy(6)
        }
    }

    /**
     * The fault tests run on PostgreSQL only, to stay within the suite's budget: what they test
     * is Redis's failure, and the database's part is the same driver on every dialect (the cases
     * above run on all three).
     */
    private fun assumeFaultTests() {
        val skip = skipReason(Dialect.POSTGRES) ?: redisSkipReason()
        assumeTrue(skip == null, skip)
    }

    /**
     * 32 workers race on rounds of 100 fresh keys (each worker on 20 of them) for about two
     * seconds while [fault] strikes a primary: every key's operation runs exactly once, every
     * duplicate gets the stored response or `in_progress`, nothing is lost.
     */
    private fun race(fault: (Int) -> Unit) {
        FreshDatabase(Dialect.POSTGRES).use { db ->
            Cluster().use { redis ->
                val fast = RedisFastPath(redis.connection.commands())
                // A 2 s lease: a claiming marker the fault left behind lives no longer.
                val store = IdempotencyStore(db.open(), Dialect.POSTGRES, RecordPolicy(2_000), StoreClock.SYSTEM, fastPath = fast)
                Migrations.migrate(store.dataSource, Dialect.POSTGRES)
                val scope = "f${UUID.randomUUID().toString().replace("-", "").take(16)}"
                val effects = ConcurrentHashMap<String, AtomicInteger>()
                val problems = ConcurrentLinkedQueue<String>()

                fun run(name: String): RunResult =
                    store.runOnce(IdempotencyKey.of("order", scope, name), request(name)) {
                        effects.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet()
                        text("done $name")
                    }

                val all = mutableListOf<String>()
                var striker: Thread? = null
                val deadline = System.nanoTime() + 2_000_000_000L
                var round = 0
                while (System.nanoTime() < deadline) {
                    val names = List(100) { "r$round-$it" }
                    all += names
                    val barrier = CyclicBarrier(32)
                    val workers =
                        List(32) {
                            Thread {
                                barrier.await()
                                for (name in names.shuffled().take(20)) {
                                    try {
                                        val result = run(name)
                                        when (result.decision) {
                                            "replay" -> if (body(result) != "done $name") problems += "$name: replayed ${body(result)}"
                                            "execute", "in_progress" -> Unit
                                            else -> problems += "$name: ${result.decision}"
                                        }
                                    } catch (error: Exception) {
                                        problems += "$name: $error"
                                    }
                                }
                            }.apply { start() }
                        }
                    if (round == 0) striker = Thread { fault(primaryPorts().random()) }.apply { start() }
                    workers.forEach(Thread::join)
                    round++
                }
                striker?.join()
                assertEquals(emptyList<String>(), problems.toList())
                assertTrue(all.all { (effects[it]?.get() ?: 0) <= 1 }, "a side effect ran twice")
                // Nothing lost: a key nobody saw run is one whose every request was in progress;
                // its next request runs it, and every key replays its one response. A claiming
                // marker whose forget or settle was lost to the fault answers in progress until
                // its lease-long life ends (docs/spec.md, "The fast path").
                val giveUp = System.nanoTime() + 4_000_000_000L
                for (name in all) {
                    var result = run(name)
                    while (result.decision == "in_progress" && System.nanoTime() < giveUp) {
                        Thread.sleep(100)
                        result = run(name)
                    }
                    assertTrue(result.decision in setOf("replay", "execute"), "$name: ${result.decision}")
                    assertEquals("done $name", body(result), name)
                }
                assertTrue(all.all { effects[it]?.get() == 1 }, "an operation did not run exactly once")
                assertTrue(fast.metrics.hits > 0, "no hit: ${fast.metrics}")
            }
        }
    }

    private companion object {
        /** The fault tests' command timeout: well under a request's, so a slow Redis falls back to the database. */
        val TIMEOUT: Duration = Duration.ofMillis(500)

        /** The shared cases' timeout: they count hits, misses and fallbacks exactly, so a Redis only slow on a loaded machine must not turn a miss into a fallback. */
        val CASE_TIMEOUT: Duration = Duration.ofSeconds(2)

        val root: Path = Paths.get(System.getProperty("mintid.conformance") ?: "../tests/conformance").toAbsolutePath().normalize().parent.parent

        val cases =
            Json
                .parseToJsonElement(Files.readString(root.resolve("tests/redis/fast_path.json")))
                .jsonObject["cases"]!!
                .jsonArray
                .map { it.jsonObject }

        /** One set of event loops for every client of the tests. */
        val resources: ClientResources by lazy { DefaultClientResources.create() }

        @JvmStatic
        @AfterAll
        fun shutdown() {
            resources.shutdown()
        }

        /** Why the cluster cannot be tested here (a failure under `CI=true`), or null. */
        fun redisSkipReason(): String? {
            if (System.getenv("MINTID_REDIS_CLUSTER") != null) return null
            check(System.getenv("CI") != "true") { "MINTID_REDIS_CLUSTER must be set under CI=true (run under scripts/db/with-db.sh)" }
            return "MINTID_REDIS_CLUSTER not set (run under scripts/db/with-db.sh)"
        }

        /** The cluster's nodes: host and port. */
        fun nodes(): List<Pair<String, Int>> =
            System.getenv("MINTID_REDIS_CLUSTER")!!.split(",").map { node ->
                node.substringBeforeLast(":") to node.substringAfterLast(":").toInt()
            }

        /**
         * A short command timeout (a command queued while its node reconnects waits no longer)
         * and connect timeout. (`REJECT_COMMANDS` would also refuse a command while the
         * cluster client makes its first connection to a node.)
         */
        fun <T : ClientOptions.Builder> T.fastFailing(timeout: Duration): T =
            apply {
                timeoutOptions(TimeoutOptions.enabled(timeout))
                socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            }

        fun request(payload: String) = StoreRequest(Fingerprint.ofBytes(payload.toByteArray()))

        fun text(value: String) = StoredResponse("text/plain", value.toByteArray())

        fun body(result: RunResult?): String? =
            when (result) {
                is Executed -> String(result.response.body)
                is Replayed -> result.response?.let { String(it.body) }
                else -> null
            }

        /** `redis-cli -p PORT args…`: its output, or null when the node does not answer. */
        fun cli(
            port: Int,
            vararg args: String,
        ): String? {
            val process = ProcessBuilder("redis-cli", "-p", "$port", *args).redirectErrorStream(true).start()
            val output = process.inputStream.bufferedReader().readText()
            check(process.waitFor(10, TimeUnit.SECONDS))
            return if (process.exitValue() == 0 && !output.startsWith("Could not connect")) output else null
        }

        fun field(
            info: String?,
            name: String,
        ): String? = info?.lineSequence()?.firstOrNull { it.startsWith("$name:") }?.substringAfter(":")?.trim()

        fun primaryPorts(): List<Int> = nodes().map { it.second }.filter { field(cli(it, "INFO", "replication"), "role") == "master" }

        /** The nodes killed, to start again: port and data directory. */
        val killed = mutableListOf<Pair<Int, String>>()

        /** SIGKILLs the primary on [port]; [restart] starts it again. */
        fun kill(port: Int) {
            val pid = field(cli(port, "INFO", "server"), "process_id")!!.toLong()
            val directory = cli(port, "CONFIG", "GET", "dir")!!.lines()[1].trim()
            ProcessHandle.of(pid).ifPresent { it.destroyForcibly() }
            synchronized(killed) { killed += port to directory }
        }

        /** Starts the killed nodes again (each rejoins as a replica), with scripts/db/redis-node.sh. */
        fun restart() {
            synchronized(killed) {
                for ((port, directory) in killed) {
                    val script = root.resolve("scripts/db/redis-node.sh").toString()
                    check(ProcessBuilder(script, "$port", directory).inheritIO().start().waitFor() == 0)
                }
                killed.clear()
            }
        }

        /** [count] nodes up, each saying the cluster is ok, three of them primaries. */
        fun waitHealthy(count: Int) {
            val end = System.nanoTime() + 10_000_000_000L
            while (System.nanoTime() < end) {
                val up = nodes().mapNotNull { (_, port) -> cli(port, "CLUSTER", "INFO")?.let { field(it, "cluster_state") to field(cli(port, "INFO", "replication"), "role") } }
                if (up.size == count && up.all { it.first == "ok" } && up.count { it.second == "master" } == 3) return
                Thread.sleep(50)
            }
            fail("the Redis Cluster did not come back")
        }
    }

    /** A Redis to run the fast path on, and its connection (the `ByteArrayCodec`). */
    private interface Redis : AutoCloseable {
        val connection: StatefulConnection<ByteArray, ByteArray>
    }

    /** A connection to the cluster as it is now, following failovers (topology refreshed on MOVED, reconnects and every second). */
    private class Cluster(
        timeout: Duration = TIMEOUT,
    ) : Redis {
        private val client =
            RedisClusterClient.create(resources, nodes().map { (host, port) -> RedisURI.builder().withHost(host).withPort(port).withTimeout(timeout).build() }).apply {
                val refresh = ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().enablePeriodicRefresh(Duration.ofSeconds(1)).build()
                setOptions(ClusterClientOptions.builder().fastFailing(timeout).topologyRefreshOptions(refresh).build())
            }
        override val connection: StatefulRedisClusterConnection<ByteArray, ByteArray> = client.connect(ByteArrayCodec.INSTANCE)

        override fun close() {
            connection.close()
            client.shutdown()
        }
    }

    /** A Redis that is down: a server of its own, started, connected to, then killed. */
    private class DownRedis : Redis {
        private val port = ServerSocket(0).use { it.localPort }
        private val directory = Files.createTempDirectory("mintid-kt-redis-")
        private val client = RedisClient.create(resources, RedisURI.builder().withHost("127.0.0.1").withPort(port).withTimeout(Duration.ofMillis(100)).build())
        override val connection: StatefulConnection<ByteArray, ByteArray>

        init {
            // Down is down: a connection lost for good, and no reconnecting meanwhile.
            client.options = ClientOptions.builder().fastFailing(Duration.ofMillis(100)).autoReconnect(false).build()
            val server =
                ProcessBuilder("redis-server", "--port", "$port", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", "$directory")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectErrorStream(true)
                    .start()
            val end = System.nanoTime() + 10_000_000_000L
            var connected: StatefulConnection<ByteArray, ByteArray>? = null
            while (connected == null) {
                connected = runCatching { client.connect(ByteArrayCodec.INSTANCE) }.getOrNull()
                if (connected == null) {
                    check(System.nanoTime() < end) { "redis-server did not start on $port" }
                    Thread.sleep(20)
                }
            }
            connection = connected
            server.destroyForcibly().waitFor()
            while (connection.isOpen && System.nanoTime() < end) Thread.sleep(10)
        }

        override fun close() {
            connection.close()
            client.shutdown()
            directory.toFile().deleteRecursively()
        }
    }
}

/** The synchronous scripting commands of a standalone or a cluster connection. */
private fun StatefulConnection<ByteArray, ByteArray>.commands(): RedisScriptingCommands<ByteArray, ByteArray> =
    when (this) {
        is StatefulRedisConnection -> sync()
        is StatefulRedisClusterConnection -> sync()
        else -> error("a connection of type ${javaClass.name}")
    }
