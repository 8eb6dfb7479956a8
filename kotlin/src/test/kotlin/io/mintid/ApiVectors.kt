package io.mintid

import kotlinx.serialization.json.JsonArray
import kotlinx.serialization.json.JsonElement
import kotlinx.serialization.json.JsonNull
import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.JsonPrimitive
import kotlinx.serialization.json.booleanOrNull
import kotlinx.serialization.json.buildJsonObject
import kotlinx.serialization.json.jsonPrimitive
import kotlinx.serialization.json.longOrNull
import kotlinx.serialization.json.put
import org.junit.jupiter.api.Assertions.assertEquals

/** `tests/vectors/api.json`: each case is one public call of the Kotlin API. */
internal object ApiVectors {
    val ops: VectorOps =
        mapOf(
            "fingerprint" to { case -> api(case) { JsonPrimitive(Fingerprint.of(valueOf(case), include(case), exclude(case)).text) } },
            "fingerprint_json" to { case -> api(case) { JsonPrimitive(Fingerprint.ofJson(textOf(case), include(case), exclude(case)).text) } },
            "fingerprint_bytes" to { case -> api(case) { JsonPrimitive(Fingerprint.ofBytes(case.hex("raw")).text) } },
            "issue_grant" to { case -> api(case) { issueGrant(case) } },
            "record_policy" to { case -> api(case) { recordPolicy(case.obj("args")) } },
            "segment_policy" to { case -> api(case) { segmentPolicy(case.obj("args")) } },
            "relay_policy" to { case -> api(case) { relayPolicy(case.obj("args")) } },
            "lease_policy" to { case -> api(case) { leasePolicy(case.obj("args")) } },
            "decide" to { case -> api(case) { decide(case) } },
        )

    private fun api(
        case: JsonObject,
        call: () -> JsonElement,
    ) = case.expect(call) { assertEquals(case["expect"], it, case.string("name")) }

    private fun include(case: JsonObject) = if (case.has("include")) case.strings("include") else emptyList()

    private fun exclude(case: JsonObject) = if (case.has("exclude")) case.strings("exclude") else emptyList()

    private fun valueOf(case: JsonObject): Any? = if (case.has("value_bytes")) case.hex("value_bytes") else plain(case["value"])

    private fun textOf(case: JsonObject): ByteArray =
        if (case.has("text_bytes")) case.hex("text_bytes") else case.string("text").toByteArray(Charsets.UTF_8)

    /** A parsed JSON value as a Kotlin caller holds one: maps, lists, strings, numbers, booleans, null. */
    private fun plain(element: JsonElement?): Any? =
        when (element) {
            null, JsonNull -> null
            is JsonObject -> element.mapValues { plain(it.value) }
            is JsonArray -> element.map { plain(it) }
            is JsonPrimitive ->
                when {
                    element.isString -> element.content
                    element.booleanOrNull != null -> element.booleanOrNull
                    else -> element.longOrNull ?: element.content.toDouble()
                }
        }

    /** `decide(existing, incoming, nowMillis, policy)`, in the order of every host. */
    private fun decide(case: JsonObject): JsonElement {
        val stored = case["existing"]
        val existing =
            if (stored == null || stored is JsonNull) {
                null
            } else {
                val record = stored as JsonObject
                Record(
                    RecordStatus.parse(record.string("status")),
                    Fingerprint.parse(record.string("fingerprint")),
                    record.u64("token"),
                    record.u64("lease_deadline_millis"),
                    record.u64("created_millis"),
                    record.u64("expires_millis"),
                )
            }
        val args = case.obj("args")
        val d = RecordPolicy()
        val policy = RecordPolicy(leaseMillis = args.arg("lease_millis", setOf("lease_millis")) ?: d.leaseMillis)
        val decision = Decision.decide(existing, Incoming(Fingerprint.parse(case.string("fingerprint"))), case.u64("now_millis"), policy)
        return buildJsonObject {
            put("decision", decision.name)
            if (decision is Decision.Execute) {
                val record = decision.claim.record
                put("token", record.token.toString())
                put("lease_deadline_millis", record.leaseDeadlineMillis.toString())
                put("created_millis", record.createdMillis.toString())
                put("expires_millis", record.expiresMillis.toString())
            }
        }
    }

    private fun issueGrant(case: JsonObject): JsonElement {
        val grant = KeyRing(case.int("key_id").toLong(), case.hex("secret")).issueGrant(case.string("scope"), case.u64("expires_millis"))
        return buildJsonObject {
            put("text", grant.text)
            put("key_id", grant.keyId)
            put("expires_millis", grant.expiresMillis.toString())
            put("grant_key", grant.grantKey().toHex())
        }
    }

    /** Fails on an argument this runner does not pass: no case is skipped silently. */
    private fun JsonObject.arg(
        name: String,
        known: Set<String>,
    ): Long? {
        keys.forEach { require(it in known) { "unknown argument $it" } }
        return this[name]?.jsonPrimitive?.content?.toLong()
    }

    private fun recordPolicy(args: JsonObject): JsonElement {
        val known = setOf("lease_millis", "retention_millis")
        val d = RecordPolicy()
        val p =
            RecordPolicy(
                leaseMillis = args.arg("lease_millis", known) ?: d.leaseMillis,
                retentionMillis = args.arg("retention_millis", known) ?: d.retentionMillis,
            )
        p.check()
        return buildJsonObject {
            put("lease_millis", p.leaseMillis.toString())
            put("retention_millis", p.retentionMillis.toString())
            put("store_errors", p.storeErrors)
            put("retry_after_millis", p.retryAfterMillis.toString())
            put("max_wait_millis", p.maxWaitMillis.toString())
            put("poll_millis", p.pollMillis.toString())
        }
    }

    private fun segmentPolicy(args: JsonObject): JsonElement {
        val known = setOf("initial_step", "min_step", "max_step")
        val d = SegmentPolicy()
        val p =
            SegmentPolicy(
                initialStep = args.arg("initial_step", known) ?: d.initialStep,
                minStep = args.arg("min_step", known) ?: d.minStep,
                maxStep = args.arg("max_step", known) ?: d.maxStep,
            ).check()
        return buildJsonObject {
            put("initial_step", p.initialStep.toString())
            put("min_step", p.minStep.toString())
            put("max_step", p.maxStep.toString())
            put("fetch_at_percent", p.fetchAtPercent)
            put("grow_below_millis", p.growBelowMillis.toString())
            put("shrink_above_millis", p.shrinkAboveMillis.toString())
        }
    }

    private fun relayPolicy(args: JsonObject): JsonElement {
        val known = setOf("batch_size", "claim_millis")
        val d = RelayPolicy()
        val p =
            RelayPolicy(
                batchSize = args.arg("batch_size", known) ?: d.batchSize,
                claimMillis = args.arg("claim_millis", known) ?: d.claimMillis,
            ).check()
        return buildJsonObject {
            put("batch_size", p.batchSize.toString())
            put("claim_millis", p.claimMillis.toString())
            put("base_backoff_millis", p.baseBackoffMillis.toString())
            put("max_backoff_millis", p.maxBackoffMillis.toString())
            put("jitter_percent", p.jitterPercent)
            put("max_attempts", p.maxAttempts.toString())
        }
    }

    private fun leasePolicy(args: JsonObject): JsonElement {
        args.arg("", emptySet())
        val p = LeasePolicy()
        return buildJsonObject {
            put("max_worker", p.maxWorker.toString())
            put("lease_millis", p.leaseMillis.toString())
            put("renew_interval_millis", p.renewIntervalMillis.toString())
        }
    }
}
