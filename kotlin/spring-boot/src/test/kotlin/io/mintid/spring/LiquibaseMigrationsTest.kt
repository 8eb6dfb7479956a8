package io.mintid.spring

import io.mintid.Fingerprint
import io.mintid.IdempotencyKey
import io.mintid.store.Dialect
import io.mintid.store.Executed
import io.mintid.store.FreshDatabase
import io.mintid.store.IdempotencyStore
import io.mintid.store.Migrations
import io.mintid.store.Replayed
import io.mintid.store.StoreRequest
import io.mintid.store.StoredResponse
import io.mintid.store.skipReason
import liquibase.Contexts
import liquibase.LabelExpression
import liquibase.Liquibase
import liquibase.database.DatabaseFactory
import liquibase.database.jvm.JdbcConnection
import liquibase.resource.ClassLoaderResourceAccessor
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertInstanceOf
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource
import javax.sql.DataSource

/**
 * The starter's Liquibase changelogs (`db/changelog/mintid/<dialect>.xml`, the schema's
 * migrations copied from `schema/` at build time) on every database: applied once, again
 * without change, and the store works on what they made.
 */
class LiquibaseMigrationsTest {
    @ParameterizedTest
    @EnumSource(Dialect::class)
    fun `the changelog applies the schema's migrations`(dialect: Dialect) {
        assumeTrue(skipReason(dialect) == null, skipReason(dialect))
        FreshDatabase(dialect).use { db ->
            val pool = db.open()
            update(pool, dialect)
            update(pool, dialect)
            // Every migration ran once: in mintid's own history and in Liquibase's.
            assertEquals(schemaVersions(dialect), Migrations.applied(pool, dialect))
            val changeSets =
                pool.connection.use { connection ->
                    connection.createStatement().use { statement ->
                        statement.executeQuery("SELECT COUNT(*) FROM DATABASECHANGELOG").use { it.next().let { _ -> it.getInt(1) } }
                    }
                }
            assertEquals(schemaVersions(dialect).size, changeSets)
            val store = IdempotencyStore(pool, dialect)
            val key = IdempotencyKey.of("order.create", "tenant-1", "liquibase")
            val request = StoreRequest(Fingerprint.ofJson("""{"sku":"a"}"""))
            val response = StoredResponse("application/json", """{"order":1}""".toByteArray())
            assertInstanceOf(Executed::class.java, store.runOnce(key, request) { response })
            assertInstanceOf(Replayed::class.java, store.runOnce(key, request) { error("not run") })
        }
    }

    private fun update(
        dataSource: DataSource,
        dialect: Dialect,
    ) {
        val database = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(JdbcConnection(dataSource.connection))
        Liquibase("db/changelog/mintid/${dialect.directory}.xml", ClassLoaderResourceAccessor(), database).use { liquibase ->
            liquibase.update(Contexts(), LabelExpression())
        }
    }
}
