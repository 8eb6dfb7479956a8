package io.mintid

import kotlinx.serialization.json.JsonObject
import kotlinx.serialization.json.jsonObject
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.fail
import java.util.UUID

/** `tests/vectors/request_id.json`. */
internal object RequestIdVectors {
    val ops: VectorOps =
        mapOf(
            "issue_grant" to ::issueGrant,
            "parse_grant" to ::parseGrant,
            "mint" to ::mint,
            "verify" to ::verify,
            "verify_unsigned" to ::verifyUnsigned,
            "key_ring" to ::keyRing,
        )

    private fun ring(key: JsonObject) = KeyRing(key.u64("id"), key.hex("secret"))

    private fun freshness(case: JsonObject) = Freshness(case.u64("max_age"), case.u64("max_skew"))

    private fun issueGrant(case: JsonObject) {
        case.expect({ ring(case.obj("key")).issueGrant(case.string("scope"), case.u64("expires")) }) { grant ->
            assertEquals(case.string("grant"), grant.text)
            assertEquals(case.string("grant_key"), grant.grantKey().toHex())
            assertEquals(case.u64("expires"), grant.expiresMillis)
        }
    }

    private fun parseGrant(case: JsonObject) =
        case.expect({ Grant.parse(case.string("text")) }) { grant ->
            assertEquals(case.u64("key_id"), grant.keyId)
            assertEquals(case.u64("expires"), grant.expiresMillis)
            assertEquals(case.string("grant_key"), grant.grantKey().toHex())
            assertEquals(case.string("text"), grant.toString())
        }

    private fun mint(case: JsonObject) {
        val grant = Grant.parse(case.string("grant"))
        val uuid = UUID.fromString(case.string("uuid"))
        case.expect({ RequestId.mint(grant, uuid) }) { id ->
            assertEquals(case.string("request_id"), id.text)
            assertEquals(case.string("tag"), id.tag().toHex())
            assertEquals(id, grant.mint(uuid))
            val read = RequestId.parse(id.text)
            assertEquals(uuid, read.unverifiedUuid)
            assertArrayEquals(id.tag(), read.tag())
            assertEquals(grant.keyId, read.keyId)
            assertEquals(grant.expiresMillis, read.expiresMillis)
        }
    }

    private fun verify(case: JsonObject) {
        val keys = case.array("keys").map { it.jsonObject }
        val current = keys.firstOrNull { it.u64("id") == case.u64("current") } ?: fail("no current key")
        val ring = ring(current)
        keys.filter { it !== current }.forEach { ring.add(it.u64("id"), it.hex("secret")) }
        case.expect({
            RequestId.verify(ring, case.string("request_id"), case.string("scope"), case.u64("now"), freshness(case))
        }) { uuid -> assertEquals(case.string("expect"), uuid.toString()) }
    }

    private fun verifyUnsigned(case: JsonObject) =
        case.expect({ RequestId.verifyUnsigned(case.string("text"), case.u64("now"), freshness(case)) }) { uuid ->
            assertEquals(case.string("expect"), uuid.toString())
        }

    private fun keyRing(case: JsonObject) {
        var ring: KeyRing? = null
        for (element in case.array("steps")) {
            val step = element.jsonObject
            val action: () -> Unit =
                when (val action = step.string("do")) {
                    "new" -> { -> ring = ring(step.obj("key")) }
                    "add" -> { -> ring!!.add(step.obj("key").u64("id"), step.obj("key").hex("secret")) }
                    "rotate" -> { -> ring!!.rotate(step.obj("key").u64("id"), step.obj("key").hex("secret")) }
                    "retire" -> { -> ring!!.retire(step.u64("id")) }
                    else -> fail("unknown key ring step $action")
                }
            if (!step.has("error")) assertEquals("ok", step.string("expect"))
            step.expect(action) {}
            if (step.has("current")) {
                assertEquals(step.u64("current"), ring?.currentId)
                assertEquals(step.u64("current"), ring?.keyIds?.first())
            } else {
                assertNull(ring)
            }
        }
    }
}
