package io.mintid.store

import io.mintid.LeaseGuard
import io.mintid.LeasePolicy
import io.mintid.ManualClock
import io.mintid.MintidException
import io.mintid.Snowflake
import io.mintid.SnowflakeVectors
import io.mintid.obj
import io.mintid.string
import io.mintid.u64
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * `tests/conformance/leases.json` against [WorkerLeases] on SQLite, PostgreSQL and MariaDB. Hosts
 * keep their [LeaseGuard] and a Snowflake generator on a [ManualClock]; `concurrent_acquire`
 * runs one thread per host, each with its own connection and [WorkerLeases], all released at once.
 */
class LeaseConformanceTest {
    @TestFactory
    fun leaseScenarios(): List<DynamicNode> = scenarioTests("leases.json") { case, db -> LeaseCaseRunner(case, db).run() }
}

/** The `LeasePolicy` object of `tests/vectors/lease.json`. */
internal fun leasePolicyOf(spec: JsonObject) =
    LeasePolicy(
        SnowflakeVectors.layoutOf(spec),
        spec.u64("lease_millis"),
        spec.u64("renew_interval_millis"),
        spec.u64("safety_margin_millis"),
        spec.u64("renew_retry_millis"),
        spec.u64("max_skew_millis"),
        spec.u64("max_start_wait_millis"),
    )

private class Host(
    val guard: LeaseGuard,
    val clock: ManualClock,
    val snowflake: Snowflake,
)

private class LeaseCaseRunner(
    private val case: JsonObject,
    private val db: FreshDatabase,
) {
    private val policy = leasePolicyOf(case.obj("policy"))
    private val clock = clockOf(case)
    private val leases = WorkerLeases(db.open(), db.dialect, policy, clock)
    private val hosts = HashMap<String, Host>()
    private val leased = HashMap<String, LeasedSnowflake>()
    private val ids = mutableListOf<Long>()

    fun run() =
        case["steps"]!!.jsonArray.forEachIndexed { index, element ->
            val step = element.jsonObject
            val where = "step $index (${step.string("do")})"
            step["now"]?.let { (clock as? StepClock)?.current = step.long("now") }
            assertEquals(step["expect"], runStep(step, where), where)
        }

    private fun host(step: JsonObject): Host = hosts[step.string("host")] ?: fail("no host ${step.string("host")}")

    private fun runStep(
        step: JsonObject,
        where: String,
    ): JsonElement =
        when (step.string("do")) {
            "migrate" -> {
                checkFields(step, emptySet(), where)
                Migrations.migrate(leases.dataSource, db.dialect)
                JsonPrimitive("ok")
            }
            "acquire" -> {
                checkFields(step, setOf("host", "owner", "now", "timeout"), where)
                outcome {
                    val guard = leases.acquire(step.string("owner"), step["timeout"]?.let { step.long("timeout") })
                    val generatorClock = ManualClock(step.long("now"))
                    val snowflake =
                        Snowflake
                            .builder(policy.layout, guard.workerId)
                            .startingAfterUnixMillis(guard.startAfterMillis)
                            .clock(generatorClock)
                            .build()
                    hosts[step.string("host")] = Host(guard, generatorClock, snowflake)
                    json(
                        "worker_id" to str(guard.workerId),
                        "fencing_token" to str(guard.fencingToken),
                        "start_after" to str(guard.startAfterMillis),
                        "ready_at" to str(guard.readyAtMillis),
                    )
                }
            }
            "check" -> {
                checkFields(step, setOf("host", "now"), where)
                outcome {
                    host(step).guard.check(step.long("now"))
                    JsonPrimitive("ok")
                }
            }
            "generate" -> {
                checkFields(step, setOf("host", "now", "count"), where)
                val host = host(step)
                val now = step.long("now")
                outcome {
                    host.clock.setMillis(now)
                    repeat(step.long("count").toInt()) {
                        host.guard.check(now)
                        val id = host.snowflake.nextId()
                        host.guard.admit(id)
                        ids += id
                    }
                    json("admitted" to JsonPrimitive(step.string("count")))
                }
            }
            "renew" -> {
                checkFields(step, setOf("host", "now", "high_water"), where)
                outcome {
                    leases.renew(host(step).guard, step.long("high_water"))
                    JsonPrimitive("ok")
                }
            }
            "renew_unreachable" -> {
                checkFields(step, setOf("host", "now"), where)
                val guard = host(step).guard
                val down = WorkerLeases(db.unavailable(), db.dialect, policy, clock)
                assertThrows<io.mintid.StoreUnavailableException> { down.renew(guard, step.long("now")) }
                json("next_renewal_at" to str(guard.nextRenewalAtMillis))
            }
            "release" -> {
                checkFields(step, setOf("host", "now", "high_water"), where)
                json("released" to JsonPrimitive(leases.release(host(step).guard, step.long("high_water"))))
            }
            "row" -> {
                checkFields(step, setOf("worker_id"), where)
                leases.load(step.long("worker_id"))?.let {
                    json(
                        "owner" to JsonPrimitive(it.owner),
                        "fencing_token" to str(it.fencingToken),
                        "lease_deadline" to str(it.leaseDeadlineMillis),
                        "high_water" to str(it.highWaterMillis),
                    )
                } ?: JsonNull
            }
            "guard" -> {
                checkFields(step, setOf("host"), where)
                val guard = host(step).guard
                json(
                    "lease_deadline" to str(guard.leaseDeadlineMillis),
                    "stop_at" to str(guard.stopAtMillis),
                    "next_renewal_at" to str(guard.nextRenewalAtMillis),
                )
            }
            "leased_acquire" -> {
                checkFields(step, setOf("host", "owner", "timeout"), where)
                val generator =
                    LeasedSnowflake.acquire(WorkerLeases(leases.dataSource, db.dialect, policy), step.string("owner"), step["timeout"]?.let { step.long("timeout") })
                leased[step.string("host")] = generator
                json("worker_id" to str(generator.workerId))
            }
            "leased_generate" -> {
                checkFields(step, setOf("host", "count"), where)
                val generator = leased[step.string("host")] ?: fail("$where: no leased generator")
                repeat(step.long("count").toInt()) { ids += generator.nextId() }
                json("admitted" to JsonPrimitive(step.string("count")))
            }
            "leased_release" -> {
                checkFields(step, setOf("host"), where)
                val generator = leased.remove(step.string("host")) ?: fail("$where: no leased generator")
                val released = generator.release()
                val row = leases.load(generator.workerId) ?: fail("$where: no row")
                val last = policy.layout.decode(ids.last()).unixMillis
                json(
                    "released" to JsonPrimitive(released),
                    "high_water_is_generators" to JsonPrimitive(row.highWaterMillis == generator.highWaterMillis),
                    "high_water_covers_last_id" to JsonPrimitive(row.highWaterMillis >= last),
                )
            }
            "ids_increasing" -> {
                checkFields(step, emptySet(), where)
                if (ids.zipWithNext().all { (a, b) -> a < b }) JsonPrimitive("ok") else JsonPrimitive("decreasing")
            }
            "ids_unique" -> {
                checkFields(step, emptySet(), where)
                val duplicates = ids.size - ids.toSet().size
                if (duplicates == 0) JsonPrimitive("ok") else json("duplicates" to str(duplicates))
            }
            "concurrent_acquire" -> {
                checkFields(step, setOf("hosts"), where)
                concurrentAcquire(step.long("hosts").toInt())
            }
            else -> fail("$where: unknown step")
        }

    /** [count] threads, each with its own connection, acquire at once on the system clock. */
    private fun concurrentAcquire(count: Int): JsonElement {
        val start = CountDownLatch(1)
        val pool = Executors.newFixedThreadPool(count)
        val results =
            try {
                val futures =
                    (0 until count).map { n ->
                        val own = WorkerLeases(db.open(), db.dialect, policy)
                        pool.submit<Any> {
                            start.await()
                            try {
                                own.acquire("host-$n").workerId
                            } catch (error: MintidException) {
                                error.code
                            }
                        }
                    }
                start.countDown()
                futures.map { it.get(5, TimeUnit.MINUTES) }
            } finally {
                pool.shutdownNow()
            }
        val workers = results.filterIsInstance<Long>()
        assertEquals(workers.size, workers.toSet().size, "two hosts got one worker id: $workers")
        val refused = results.filterIsInstance<String>()
        assertTrue(refused.all { it == "lease.no_worker_free" }, "refusals: $refused")
        return json("acquired" to str(workers.size), "no_worker_free" to str(refused.size))
    }
}
