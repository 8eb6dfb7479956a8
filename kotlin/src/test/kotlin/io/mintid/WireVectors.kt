package io.mintid

import io.mintid.store.ClaimedMessage
import io.mintid.store.Dialect
import io.mintid.store.RelayReport
import io.mintid.store.StoredResponse
import io.mintid.store.Wire
import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.jsonObject
import kotlinx.serialization.json.jsonPrimitive
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.fail

/**
 * `tests/vectors/wire.json` through the JVM's wire codec ([Wire]): a spec or an input is
 * built from its meaning and packed (the hex must match), a step is read from its hex (its
 * meaning must match). Each direction is the one the JVM uses; a kind, tag or field this
 * runner does not know fails.
 */
internal object WireVectors {
    val ops: VectorOps = mapOf("spec" to ::spec, "input" to ::input, "step" to ::step)

    private val kinds = Wire.Kind.entries.associateBy { it.name.lowercase() }

    private fun kind(case: JsonObject): Wire.Kind = kinds[case.string("kind")] ?: fail("no kind ${case.string("kind")}")

    private fun spec(case: JsonObject) {
        val m = case.obj("meaning")
        val dialect = Dialect.entries.single { it.directory == m.string("dialect") }
        val placeholder = listOf("question", "numbered", "format").indexOf(m.string("placeholder")).also { check(it >= 0) }
        val packed =
            when (kind(case)) {
                Wire.Kind.RECORD ->
                    Wire.recordSpec(
                        dialect,
                        recordPolicy(m.obj("policy")),
                        Wire.Way.valueOf(m.string("way").uppercase()),
                        m["fast"] !is JsonNull,
                        (m["fast"] as? JsonObject)?.let { u64OrNull(it, "ttl_millis") },
                        key(m.obj("key")),
                        m.hex("digest"),
                        u64OrNull(m, "key_created_millis"),
                        placeholder,
                    )
                Wire.Kind.RELAY -> {
                    val p = m.obj("policy")
                    val policy =
                        RelayPolicy(
                            p.u64("batch_size"),
                            p.u64("claim_millis"),
                            p.u64("base_backoff_millis"),
                            p.u64("max_backoff_millis"),
                            p.int("jitter_percent"),
                            p.u64("max_attempts"),
                        )
                    Wire.relaySpec(dialect, policy, m.u64("seed"), placeholder)
                }
                Wire.Kind.RECORD_RENEWAL ->
                    Wire.renewalSpec(
                        dialect,
                        recordPolicy(m.obj("policy")),
                        key(m.obj("key")),
                        Wire.Claim(m.u64("token"), m.u64("created_millis"), m.u64("lease_deadline_millis")),
                        placeholder,
                    )
                Wire.Kind.RECORD_CLEANUP -> Wire.spec(Wire.Kind.RECORD_CLEANUP, dialect, placeholder).u64(m.u64("batch_size")).done()
                Wire.Kind.OUTBOX_CLEANUP ->
                    Wire
                        .spec(Wire.Kind.OUTBOX_CLEANUP, dialect, placeholder)
                        .u64(m.u64("sent_before_millis"))
                        .u64(m.u64("batch_size"))
                        .done()
                Wire.Kind.RECORD_LOAD -> Wire.recordLoadSpec(dialect, key(m.obj("key")), placeholder)
                Wire.Kind.OUTBOX_LOAD -> Wire.outboxLoadSpec(dialect, m.string("message_kind"), m.string("business_key"), placeholder)
                Wire.Kind.ENQUEUE ->
                    Wire.enqueueSpec(dialect, m.u64("message_id"), m.string("message_kind"), m.string("business_key"), m.hex("payload"), placeholder)
                Wire.Kind.MIGRATIONS -> Wire.migrationsSpec(dialect, m.bool("pending"), placeholder)
                Wire.Kind.HEARTBEAT ->
                    Wire.heartbeatSpec(
                        dialect,
                        recordPolicy(m.obj("policy")),
                        key(m.obj("key")),
                        Wire.Claim(m.u64("token"), m.u64("created_millis"), m.u64("lease_deadline_millis")),
                        u64OrNull(m, "renew_every_millis"),
                        placeholder,
                    )
                Wire.Kind.SEGMENT -> {
                    val p = m.obj("policy")
                    val policy =
                        Wire.SegmentFields(
                            p.u64("initial_step"),
                            p.u64("min_step"),
                            p.u64("max_step"),
                            p.int("fetch_at_percent"),
                            p.u64("grow_below_millis"),
                            p.u64("shrink_above_millis"),
                        )
                    Wire.segmentSpec(dialect, m.string("tag"), policy, placeholder)
                }
                Wire.Kind.LEASE_ACQUIRE -> {
                    val p = m.obj("policy")
                    val policy =
                        Wire.LeaseFields(
                            p.int("time_bits"),
                            p.int("worker_bits"),
                            p.int("sequence_bits"),
                            p.int("datacenter_bits"),
                            p.u64("epoch_millis"),
                            p.u64("tick_millis"),
                            p.u64("lease_millis"),
                            p.u64("renew_interval_millis"),
                            p.u64("safety_margin_millis"),
                            p.u64("renew_retry_millis"),
                            p.u64("max_skew_millis"),
                            p.u64("max_start_wait_millis"),
                        )
                    Wire.leaseAcquireSpec(dialect, policy, m.string("owner"), u64OrNull(m, "timeout_millis"), placeholder)
                }
                Wire.Kind.LEASE_RENEW, Wire.Kind.LEASE_RELEASE -> Wire.guardSpec(kind(case), dialect, m.u64("guard"), placeholder)
            }
        assertEquals(case.string("hex"), packed.toHex())
    }

    private fun input(case: JsonObject) {
        val m = case.obj("meaning")
        val tag = Wire.Input.valueOf(m.string("tag").uppercase())
        val writer = Wire.input(tag, m.u64("now_millis"))
        when (tag) {
            Wire.Input.START, Wire.Input.RESUME, Wire.Input.SENT, Wire.Input.REPORT, Wire.Input.STOP -> Unit
            Wire.Input.TAKE, Wire.Input.FETCH, Wire.Input.ABANDON, Wire.Input.FORKED -> Unit
            Wire.Input.MARK -> writer.u64(m.u64("high_water_millis"))
            Wire.Input.ROWS -> writer.rows(m.array("rows").map { row -> (row as JsonArray).map { value(it.jsonObject) } })
            Wire.Input.AFFECTED -> writer.u64(m.u64("count"))
            Wire.Input.FAILED -> {
                val classes = listOf("unique_violation", "serialization", "connection_lost", "constraint", "other", "schema_missing")
                writer.u8(classes.indexOf(m.string("class")).also { check(it >= 0) }).text(m.string("message"))
            }
            Wire.Input.FINISH -> writer.finish(finish(m.obj("outcome")))
            Wire.Input.SEND_FAILED -> writer.text(m.string("error"))
            Wire.Input.REDIS -> writer.redis(redis(m.obj("answer")))
        }
        assertEquals(case.string("hex"), writer.done().toHex())
    }

    private fun step(case: JsonObject) {
        val kind = if (case.string("kind") == "any") Wire.Kind.RECORD else kind(case)
        val read = Wire.step(kind, case.hex("hex"))
        assertEquals(case.obj("meaning"), meaning(kind, read))
    }

    private fun meaning(
        kind: Wire.Kind,
        step: Wire.Step,
    ): JsonObject =
        when (step) {
            is Wire.Step.Run -> obj("tag" to "run", "name" to step.name, "params" to JsonArray(step.params.map(::valueMeaning)))
            is Wire.Step.Pause -> obj("tag" to "pause", "millis" to u64(step.millis))
            is Wire.Step.Fail ->
                obj(
                    "tag" to "fail",
                    "code" to step.code,
                    "detail" to step.detail,
                    "part" to step.part,
                    "position" to step.position?.let(::u64),
                    "problem" to step.problem,
                    "concern" to step.concern,
                )
            is Wire.Step.Begin -> obj("tag" to "begin", "write" to step.write)
            Wire.Step.Commit -> obj("tag" to "commit")
            Wire.Step.Rollback -> obj("tag" to "rollback")
            is Wire.Step.Redis ->
                obj(
                    "tag" to "redis",
                    "eval" to step.eval,
                    "script" to step.script,
                    "code" to step.code,
                    "keys" to JsonArray(step.keys.map(::JsonPrimitive)),
                    "args" to JsonArray(step.args.map { JsonPrimitive(it.toHex()) }),
                )
            is Wire.Step.Report -> obj("tag" to "report", "lookup" to step.lookup, "write_failures" to step.writeFailures)
            is Wire.Step.Taken ->
                obj(
                    "tag" to "taken",
                    "first" to u64(step.first),
                    "count" to u64(step.count),
                    "action" to listOf("hand_out", "fetch_beside", "fetch_now", "wait")[step.action],
                    "wait_millis" to u64(step.waitMillis),
                )
            is Wire.Step.Yield -> JsonObject(mapOf("tag" to JsonPrimitive("yield")) + handOver(step.value))
            is Wire.Step.Done -> JsonObject(mapOf("tag" to JsonPrimitive("done")) + end(kind, step.value))
        }

    private fun handOver(value: Any): JsonObject =
        when (value) {
            is Wire.Held ->
                obj(
                    "decision" to value.decision,
                    "token" to u64(value.token),
                    "created_millis" to u64(value.createdMillis),
                    "lease_deadline_millis" to u64(value.leaseDeadlineMillis),
                    "renew_every_millis" to value.renewEveryMillis?.let(::u64),
                )
            is ClaimedMessage ->
                obj(
                    "message_id" to u64(value.messageId),
                    "message_kind" to value.kind,
                    "business_key" to value.businessKey,
                    "payload" to value.payload.toHex(),
                    "attempts" to u64(value.attempts),
                    "created_millis" to u64(value.createdMillis),
                )
            is Wire.MigrationStatement -> obj("version" to value.version, "sql" to value.sql)
            is Wire.Beat -> obj("millis" to u64(value.millis), "lease_deadline_millis" to u64(value.leaseDeadlineMillis))
            Unit -> obj()
            else -> fail("no meaning for a yield of $value")
        }

    private fun end(
        kind: Wire.Kind,
        value: Any?,
    ): JsonObject =
        when (kind) {
            Wire.Kind.RECORD_RENEWAL, Wire.Kind.HEARTBEAT -> obj("lease_deadline_millis" to u64(value as Long))
            Wire.Kind.MIGRATIONS -> obj("versions" to JsonArray((value as List<*>).map { JsonPrimitive(it as Int) }))
            Wire.Kind.RECORD_CLEANUP, Wire.Kind.OUTBOX_CLEANUP -> obj("deleted" to u64(value as Long))
            Wire.Kind.RECORD_LOAD -> obj("record" to (value as Wire.LoadedRecord?)?.let(::loadedRecord))
            Wire.Kind.OUTBOX_LOAD -> obj("message" to (value as Wire.LoadedMessage?)?.let(::loadedMessage))
            Wire.Kind.LEASE_RENEW -> obj("lease_deadline_millis" to u64(value as Long))
            Wire.Kind.LEASE_RELEASE -> obj("released" to (value as Boolean))
            else -> end(value)
        }

    private fun loadedRecord(r: Wire.LoadedRecord) =
        obj(
            "status" to r.status,
            "fingerprint" to r.fingerprint.toHex(),
            "token" to u64(r.token),
            "lease_deadline_millis" to u64(r.leaseDeadlineMillis),
            "created_millis" to u64(r.createdMillis),
            "expires_millis" to u64(r.expiresMillis),
            "response" to r.response?.let(::response),
            "error" to r.error,
        )

    private fun loadedMessage(m: Wire.LoadedMessage) =
        obj(
            "message_id" to u64(m.messageId),
            "message_kind" to m.kind,
            "business_key" to m.businessKey,
            "payload" to m.payload.toHex(),
            "status" to m.status,
            "attempts" to u64(m.attempts),
            "next_attempt_millis" to u64(m.nextAttemptMillis),
            "last_error" to m.lastError,
            "created_millis" to u64(m.createdMillis),
            "updated_millis" to u64(m.updatedMillis),
        )

    private fun end(value: Any?): JsonObject =
        when (value) {
            is Wire.RecordEnd -> JsonObject(mapOf("decision" to JsonPrimitive(value.decision)) + recordEnd(value.end))
            is RelayReport ->
                obj(
                    "sent" to u64(value.sent),
                    "retried" to u64(value.retried),
                    "dead" to u64(value.dead),
                    "given_up" to u64(value.givenUp),
                    "claim_lost" to u64(value.claimLost),
                    "released" to u64(value.released),
                    "mark_failed" to u64(value.markFailed),
                )
            is Enqueued -> obj("enqueued" to value.name.lowercase())
            is Wire.Installed -> obj("max_id" to u64(value.maxId), "step" to u64(value.step))
            is Wire.Acquired ->
                obj(
                    "worker_id" to u64(value.workerId),
                    "fencing_token" to u64(value.fencingToken),
                    "lease_deadline_millis" to u64(value.leaseDeadlineMillis),
                    "start_after_millis" to u64(value.startAfterMillis),
                    "ready_at_millis" to u64(value.readyAtMillis),
                    "acquired_millis" to u64(value.acquiredMillis),
                    "high_water_millis" to u64(value.highWaterMillis),
                    "expected_token" to u64(value.expectedToken),
                )
            else -> fail("no meaning for an end of $value")
        }

    private fun recordEnd(end: Wire.RecordEnd.End): JsonObject =
        when (end) {
            Wire.RecordEnd.End.Executed -> obj("finished" to "executed")
            is Wire.RecordEnd.End.OperationFailed -> obj("finished" to "operation_failed", "stored" to end.stored)
            is Wire.RecordEnd.End.Replay ->
                obj(
                    "finished" to "replay",
                    "outcome" to if (end.succeeded) "succeeded" else "failed",
                    "response" to end.response?.let(::response),
                    "error" to end.error,
                )
            is Wire.RecordEnd.End.InProgress -> obj("finished" to "in_progress", "retry_after_millis" to u64(end.retryAfterMillis))
            Wire.RecordEnd.End.FingerprintMismatch -> obj("finished" to "fingerprint_mismatch")
            Wire.RecordEnd.End.KeyTooOld -> obj("finished" to "key_too_old")
            is Wire.RecordEnd.End.OperationFailedUnrecorded ->
                obj("finished" to "operation_failed_unrecorded", "store_code" to end.code, "store_message" to end.message)
        }

    private fun recordPolicy(p: JsonObject) =
        RecordPolicy(
            p.u64("lease_millis"),
            p.u64("retention_millis"),
            p.bool("store_errors"),
            p.u64("retry_after_millis"),
            p.u64("max_wait_millis"),
            p.u64("poll_millis"),
        )

    private fun key(k: JsonObject) = Wire.Key(k.string("kind"), k.string("scope"), k.string("id"))

    private fun u64OrNull(
        o: JsonObject,
        field: String,
    ): Long? = if (o[field] is JsonNull) null else o.u64(field)

    private fun value(v: JsonObject): Any? =
        when (v.string("type")) {
            "null" -> null
            "int" -> v.string("value").toLong()
            "text" -> v.string("value")
            "bytes" -> v.hex("value")
            else -> fail("no value type ${v.string("type")}")
        }

    private fun valueMeaning(v: Any?): JsonObject =
        when (v) {
            null -> obj("type" to "null")
            is Long -> obj("type" to "int", "value" to v.toString())
            is String -> obj("type" to "text", "value" to v)
            is ByteArray -> obj("type" to "bytes", "value" to v.toHex())
            else -> fail("no value $v")
        }

    private fun responseOf(r: JsonObject) = StoredResponse(r.string("content_type"), r.hex("body"))

    private fun response(r: StoredResponse) = obj("content_type" to r.contentType, "body" to r.body.toHex())

    private fun finish(o: JsonObject): Wire.Finish =
        when (o.string("outcome")) {
            "succeeded" -> Wire.Finish.Succeeded(responseOf(o.obj("response")))
            "failed" -> Wire.Finish.Failed(o.bool("retryable"), o.string("message"), (o["response"] as? JsonObject)?.let(::responseOf))
            "not_a_response" -> Wire.Finish.NotAResponse(o.string("type_name"))
            "raised" -> Wire.Finish.Raised(o.string("type_name"), o.string("message"))
            else -> fail("no outcome ${o.string("outcome")}")
        }

    private fun redis(o: JsonObject): Wire.RedisAnswer =
        when (o.string("answer")) {
            "nil" -> Wire.RedisAnswer.Nil
            "fields" -> Wire.RedisAnswer.Fields(o.array("fields").map { if (it is JsonNull) null else hexToBytes(it.jsonPrimitive.content) })
            "failed" -> Wire.RedisAnswer.Failed(o.string("message"))
            "noscript" -> Wire.RedisAnswer.NoScript
            else -> fail("no Redis answer ${o.string("answer")}")
        }

    private fun u64(value: Long) = java.lang.Long.toUnsignedString(value)

    private fun obj(vararg fields: Pair<String, Any?>): JsonObject =
        JsonObject(
            fields.associate { (name, value) ->
                name to
                    when (value) {
                        null -> JsonNull
                        is JsonElement -> value
                        is String -> JsonPrimitive(value)
                        is Boolean -> JsonPrimitive(value)
                        is Int -> JsonPrimitive(value)
                        else -> fail("no JSON for $value")
                    }
            },
        )
}
