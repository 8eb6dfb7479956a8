package io.mintid.store

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The named-query loader and the migrations list, on the SQL shipped with the package. */
class SchemaFilesTest {
    @Test
    fun `a block is rewritten to JDBC placeholders, a repeated name bound each time`() {
        val text =
            """
            -- file header, not a query
            -- name: first :one
            -- documentation: :not_a_parameter
            SELECT a FROM t WHERE b = :b AND c > :now_millis AND d < :now_millis;

            -- name: second :execrows
            UPDATE t SET a = :a
            WHERE b = :b;
            """.trimIndent()
        val queries = SchemaFiles.parseQueries(text)
        assertEquals(listOf("first", "second"), queries.keys.toList())
        val first = queries.getValue("first")
        assertEquals(ResultKind.ONE, first.kind)
        assertEquals("SELECT a FROM t WHERE b = ? AND c > ? AND d < ?", first.sql)
        assertEquals(listOf("b", "now_millis", "now_millis"), first.params)
        assertEquals(ResultKind.EXECROWS, queries.getValue("second").kind)
        assertEquals("UPDATE t SET a = ?\nWHERE b = ?", queries.getValue("second").sql)
    }

    @Test
    fun `every dialect has the idempotency queries, fully rewritten, and its migrations in order`() {
        val names = setOf("claim", "load", "complete", "fail", "release", "reclaim", "cleanup")
        for (dialect in Dialect.entries) {
            val queries = SchemaFiles.queries(dialect)
            assertTrue(queries.keys.containsAll(names), "$dialect: ${queries.keys}")
            for (query in queries.values) {
                assertEquals(query.params.size, query.sql.count { it == '?' }, "$dialect ${query.name}")
                assertFalse(Regex("""(?<![:\w]):[a-z]""").containsMatchIn(query.sql), "$dialect ${query.name}: a parameter left")
                assertFalse(query.sql.endsWith(";"), "$dialect ${query.name}")
            }
            val expectedClaim = if (dialect == Dialect.MYSQL) ResultKind.EXECROWS else ResultKind.ONE
            assertEquals(expectedClaim, queries.getValue("claim").kind, "$dialect claim")
            val migrations = SchemaFiles.migrations(dialect)
            assertEquals(listOf(1, 2, 3, 4), migrations.map { it.version }, "$dialect")
            assertTrue(migrations.all { it.statements.isNotEmpty() && it.statements.none { s -> s.trimEnd().endsWith(";") } })
        }
    }
}
