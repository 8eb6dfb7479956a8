package io.mintid

import kotlinx.serialization.json.JsonObject
import org.junit.jupiter.api.Assertions.assertEquals
import uniffi.mintid_ffi.Dialect
import uniffi.mintid_ffi.classifyDbError

/** `tests/vectors/db_error.json`: the core's database error classes, as every JDBC executor asks them. */
internal object DbErrorVectors {
    val ops: VectorOps = mapOf("classify" to ::classify)

    private fun classify(case: JsonObject) {
        val dialect = Dialect.valueOf(case.string("dialect").uppercase())
        val made = classifyDbError(dialect, case.stringOrNull("code"), case.stringOrNull("sqlstate"), case.stringOrNull("message"))
        assertEquals(case.string("class"), made.name.lowercase())
    }
}
