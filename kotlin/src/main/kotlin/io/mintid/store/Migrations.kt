package io.mintid.store

import uniffi.mintid_ffi.storeMigrations
import java.sql.Connection
import javax.sql.DataSource

/**
 * Applies the shared schema's numbered migrations (`schema/<dialect>/NNNN_*.sql`, compiled into
 * the core and split into statements there) in order, each file in one transaction.
 * Idempotent: applied twice, nothing changes.
 */
object Migrations {
    /**
     * Applies every migration of [dialect] to the database behind [dataSource].
     *
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     */
    @JvmStatic
    fun migrate(
        dataSource: DataSource,
        dialect: Dialect,
    ) = dataSource.withConnection { migrate(it, dialect) }

    /** Applies every migration of [dialect] on [connection], committing each file. */
    @JvmStatic
    fun migrate(
        connection: Connection,
        dialect: Dialect,
    ) {
        val autoCommit = connection.autoCommit
        try {
            for (migration in storeMigrations(dialect.ffi)) {
                connection.autoCommit = false
                try {
                    connection.createStatement().use { statement ->
                        for (sql in migration.statements) statement.execute(sql)
                    }
                    connection.commit()
                } catch (error: Exception) {
                    connection.rollback()
                    throw error
                }
            }
        } finally {
            connection.autoCommit = autoCommit
        }
    }

    /**
     * The versions of [dialect]'s migrations that `mintid_schema_migrations` does not record, in
     * order: empty once [migrate] ran (or the same migrations through Flyway or Liquibase).
     * Fails as [applied] does when that table cannot be read (no schema at all).
     */
    @JvmStatic
    fun pending(
        dataSource: DataSource,
        dialect: Dialect,
    ): List<Long> {
        val applied = applied(dataSource).toSet()
        return storeMigrations(dialect.ffi).map { it.version.toLong() }.filter { it !in applied }
    }

    /** The versions recorded in `mintid_schema_migrations`, in order. */
    @JvmStatic
    fun applied(dataSource: DataSource): List<Long> =
        dataSource.withConnection { connection ->
            connection.createStatement().use { statement ->
                statement.executeQuery("SELECT version FROM mintid_schema_migrations ORDER BY version").use { result ->
                    buildList { while (result.next()) add(result.getLong(1)) }
                }
            }
        }
}
