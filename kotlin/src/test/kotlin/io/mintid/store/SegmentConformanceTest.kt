package io.mintid.store

import io.mintid.MintidException
import io.mintid.SegmentPolicy
import io.mintid.int
import io.mintid.obj
import io.mintid.string
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonArray
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.junit.jupiter.api.fail
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import javax.sql.DataSource

/**
 * `tests/conformance/segments.json` against [SegmentIds] on SQLite, PostgreSQL and MariaDB. In a
 * manual case each process fetches inline and takes one ID per crossing (the file's order: fetch
 * when due, take, fetch when due); `concurrent` runs one thread per process, each with its own
 * connection and [SegmentIds] as an application would use it (background fetches, batches).
 */
class SegmentConformanceTest {
    @TestFactory
    fun segmentScenarios(): List<DynamicNode> = scenarioTests("segments.json") { case, db -> SegmentCaseRunner(case, db).run() }
}

/** The `SegmentPolicy` object of `tests/vectors/segment.json`. */
internal fun segmentPolicyOf(spec: JsonObject) =
    SegmentPolicy(
        spec.long("initial_step"),
        spec.long("min_step"),
        spec.long("max_step"),
        spec.int("fetch_at_percent"),
        spec.long("grow_below_millis"),
        spec.long("shrink_above_millis"),
    )

/** The tag's `[max_id, step]` (`segment_load`), or null. */
internal fun segmentRow(
    dataSource: DataSource,
    dialect: Dialect,
    tag: String,
): List<Long>? = dataSource.query(dialect, "segment_load", tag).firstOrNull()?.map { it as Long }

private class SegmentCaseRunner(
    private val case: JsonObject,
    private val db: FreshDatabase,
) {
    private val policy = segmentPolicyOf(case.obj("policy"))
    private val clock = clockOf(case)
    private val tag = case.string("tag")
    private val admin = db.open()
    private val processes = HashMap<Pair<String, String>, SegmentIds>()
    private val live = db.open()

    /** Each process's store: the case's database, down after `disconnect`. */
    private val stores = HashMap<String, SwitchableDataSource>()

    fun run() {
        try {
            case["steps"]!!.jsonArray.forEachIndexed { index, element ->
                val step = element.jsonObject
                val where = "step $index (${step.string("do")})"
                step["now"]?.let { (clock as? StepClock)?.current = step.long("now") }
                assertEquals(step["expect"], runStep(step, where), where)
            }
        } finally {
            processes.values.forEach { it.close() }
        }
    }

    private fun runStep(
        step: JsonObject,
        where: String,
    ): JsonElement =
        when (step.string("do")) {
            "migrate" -> {
                checkFields(step, emptySet(), where)
                Migrations.migrate(admin, db.dialect)
                JsonPrimitive("ok")
            }
            "next" -> {
                checkFields(step, setOf("process", "now", "count", "tag"), where)
                val place = step.string("process") to (step["tag"]?.let { step.string("tag") } ?: tag)
                val store = stores.getOrPut(place.first) { SwitchableDataSource(live) }
                val ids = processes.getOrPut(place) { SegmentIds(store, db.dialect, place.second, policy, clock, background = false) }
                val drawn = mutableListOf<JsonElement>()
                try {
                    repeat(step.long("count").toInt()) { drawn += str(ids.nextId()) }
                    JsonArray(drawn)
                } catch (error: MintidException) {
                    json("error" to JsonPrimitive(error.code), "drawn" to JsonArray(drawn))
                }
            }
            "disconnect", "reconnect" -> {
                checkFields(step, setOf("process"), where)
                stores.getOrPut(step.string("process")) { SwitchableDataSource(live) }.down = step.string("do") == "disconnect"
                JsonPrimitive("ok")
            }
            "restart" -> {
                checkFields(step, setOf("process"), where)
                processes.keys.filter { it.first == step.string("process") }.forEach { processes.remove(it)?.close() }
                JsonPrimitive("ok")
            }
            "row" -> {
                checkFields(step, emptySet(), where)
                segmentRow(admin, db.dialect, tag)?.let { json("max_id" to str(it[0]), "step" to str(it[1])) } ?: JsonNull
            }
            "concurrent" -> {
                checkFields(step, setOf("processes", "ids_per_process"), where)
                concurrent(step.long("processes").toInt(), step.long("ids_per_process").toInt(), step.obj("expect").long("max_unused"))
            }
            else -> fail("$where: unknown step")
        }

    /** [count] threads draw [each] IDs at once, each with its own connection and [SegmentIds]. */
    private fun concurrent(
        count: Int,
        each: Int,
        maxUnused: Long,
    ): JsonElement {
        val start = CountDownLatch(1)
        val pool = Executors.newFixedThreadPool(count)
        val drawn =
            try {
                val futures =
                    (0 until count).map {
                        val ids = SegmentIds(db.open(), db.dialect, tag, policy)
                        pool.submit<LongArray> {
                            ids.use {
                                start.await()
                                LongArray(each) { ids.nextId() }
                            }
                        }
                    }
                start.countDown()
                futures.map { it.get(5, TimeUnit.MINUTES) }
            } finally {
                pool.shutdownNow()
            }
        val every = drawn.flatMap { it.asList() }
        val decreasing = drawn.sumOf { ids -> (1 until ids.size).count { ids[it] <= ids[it - 1] } }
        val unused = segmentRow(admin, db.dialect, tag)!![0] - every.size
        return json(
            "duplicates" to str(every.size - every.toSet().size),
            "decreasing" to str(decreasing),
            "max_unused" to str(if (unused <= maxUnused) maxUnused else unused),
        )
    }
}
