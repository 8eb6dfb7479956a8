package io.mintid.store

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.Problem
import io.mintid.RecordPolicy
import io.mintid.SchemaMissingException
import io.mintid.StaleSnapshotException
import io.mintid.StoreException
import io.mintid.storeException
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import java.nio.file.Files
import java.nio.file.Paths
import java.sql.SQLException

// The store's errors beyond the conformance files: a driver error behind a typed one, and the
// claim that cannot see its own key's record.
class StoreErrorsTest {
    private val key = IdempotencyKey.of("order.create", "tenant-1", "k-1")
    private val request = StoreRequest(Fingerprint.ofJson("{}"))

    private fun text(value: String) = StoredResponse("text/plain", value.toByteArray())

    @Test
    fun `every store code of the core has its own exception class`() {
        val conformance = Paths.get(System.getProperty("mintid.conformance") ?: "../tests/conformance")
        val source = Files.readString(conformance.resolve("../../core/src/store/error.rs"))
        val codes = Regex(""""(store\.[a-z_]+)"""").findAll(source).map { it.groupValues[1] }.toSet()
        assertEquals(9, codes.size, "$codes")
        val classes =
            codes.map { code ->
                val error = storeException(code, "detail", null, null, null)
                assertEquals(code, error.code)
                error.javaClass
            }
        assertEquals(codes.size, classes.toSet().size, "one class per code: $classes")
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a database never migrated is store schema_missing naming migrate, the driver's error its cause`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            // Up but never migrated: the table is missing.
            val store = IdempotencyStore(db.open(), dialect, RecordPolicy.DEFAULT)
            val error = assertThrows(SchemaMissingException::class.java) { store.load(key) }
            assertEquals("store.schema_missing", error.code)
            assertTrue(error.detail.contains("Migrations.migrate(dataSource, dialect)"), error.detail)
            assertEquals("schema_missing", error.part)
            assertEquals(Problem.STORAGE_UNAVAILABLE, error.problem)
            val cause = error.cause as SQLException
            assertTrue(cause.message.orEmpty().contains("idempotency_record"), cause.message)
            assertFalse(error.detail.contains("idempotency_record"), error.detail)
        }
    }

    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `a claim in an old snapshot is store stale_snapshot and nothing runs`(dialect: Dialect) {
        assumeTrue(dialect == Dialect.MYSQL, "only MySQL/MariaDB REPEATABLE READ keeps a snapshot across statements")
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val pooled = db.open()
            Migrations.migrate(pooled, dialect)
            val store = IdempotencyStore(pooled, dialect, RecordPolicy.DEFAULT)
            var ran = false
            db.open().connection.use { connection ->
                connection.autoCommit = false
                connection.createStatement().use { it.executeQuery("SELECT COUNT(*) FROM idempotency_record").close() }
                store.runOnce(key, request) { text("first") }
                val error =
                    assertThrows(StaleSnapshotException::class.java) {
                        store.inTransaction(connection, key, request) {
                            ran = true
                            text("second")
                        }
                    }
                assertEquals("store.stale_snapshot", (error as StoreException).code)
                connection.rollback()
            }
            assertFalse(ran)
            assertEquals("replay", store.runOnce(key, request) { text("third") }.decision)
        }
    }
}
