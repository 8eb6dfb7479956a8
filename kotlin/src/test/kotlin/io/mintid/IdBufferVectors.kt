package io.mintid

import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import uniffi.mintid_ffi.idBufferBatchCap
import uniffi.mintid_ffi.idBufferFreshUntil
import uniffi.mintid_ffi.idBufferNextBatchSize

/** `tests/vectors/id_buffer.json`: the core's ID buffer rule, as the generators' batches carry it. */
internal object IdBufferVectors {
    val ops: VectorOps =
        mapOf(
            "fresh_until" to ::freshUntil,
            "next_batch_size" to ::nextBatchSize,
            "batch_cap" to ::batchCap,
            "hand_out" to ::handOut,
        )

    private fun bound(case: JsonObject) =
        idBufferFreshUntil(case.string("first_tick_start_millis").toULong(), case.string("tick_millis").toULong()).toLong()

    private fun freshUntil(case: JsonObject) = assertEquals(case.string("fresh_until_millis"), bound(case).toULong().toString())

    private fun nextBatchSize(case: JsonObject) =
        assertEquals(case.string("size"), idBufferNextBatchSize(case.string("handed_out").toULong(), case.string("cap").toUInt()).toString())

    private fun batchCap(case: JsonObject) = assertEquals(case.string("cap"), idBufferBatchCap(case.string("ids_per_tick").toULong()).toString())

    /** [IdBuffer.claim]'s test: an ID goes out while the clock reads at most the bound. */
    private fun handOut(case: JsonObject) {
        val bound = bound(case).toULong()
        val out = case.strings("now_millis").map { it.toULong() }.takeWhile { it <= bound }.size
        assertEquals(case.string("handed_out"), out.toString())
    }
}
