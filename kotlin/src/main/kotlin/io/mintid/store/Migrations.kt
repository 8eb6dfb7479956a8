package io.mintid.store

import java.sql.Connection
import javax.sql.DataSource

/**
 * Applies the shared schema's numbered migrations (`schema/<dialect>/NNNN_*.sql`, compiled into
 * the core) with the core's migration driver (`docs/spec.md`, "The migration driver": its lock,
 * order and versions table), each file in one transaction. Idempotent: applied twice, nothing
 * changes.
 */
object Migrations {
    /**
     * Applies every migration of [dialect] to the database behind [dataSource].
     *
     * @throws io.mintid.StoreUnavailableException `store.unavailable`.
     * @throws io.mintid.StoreConflictException `store.conflict` when another process held the
     *   migration lock for too long.
     */
    @JvmStatic
    fun migrate(
        dataSource: DataSource,
        dialect: Dialect,
    ) {
        dataSource.withConnection(dialect) { migrate(it, dialect) }
    }

    /** Applies every migration of [dialect] on [connection] (in autocommit meanwhile), committing each file. */
    @JvmStatic
    fun migrate(
        connection: Connection,
        dialect: Dialect,
    ) {
        run(connection, dialect, pending = false)
    }

    /**
     * The versions of [dialect]'s migrations that `mintid_schema_migrations` does not record, in
     * order: empty once [migrate] ran (or the same migrations through Flyway or Liquibase).
     *
     * @throws io.mintid.StoreException when the database cannot be read.
     */
    @JvmStatic
    fun pending(
        dataSource: DataSource,
        dialect: Dialect,
    ): List<Long> = dataSource.withConnection(dialect) { run(it, dialect, pending = true) }

    /** The versions recorded in `mintid_schema_migrations` (the core's `applied_migrations`), in order. */
    @JvmStatic
    fun applied(
        dataSource: DataSource,
        dialect: Dialect,
    ): List<Long> = dataSource.query(dialect, "applied_migrations").map { it.single() as Long }

    /** Runs the migration driver on [connection]: the versions applied, or the [pending] ones. */
    private fun run(
        connection: Connection,
        dialect: Dialect,
        pending: Boolean,
    ): List<Long> {
        val autoCommit = connection.autoCommit
        connection.autoCommit = true
        try {
            WireDriver(Wire.Kind.MIGRATIONS, Wire.migrationsSpec(dialect, pending)).use { wire ->
                DriverRun.on(connection, dialect, StoreClock.SYSTEM, StoreMetrics.NONE).use { run ->
                    var step = run.drive(wire, Wire.input(Wire.Input.START, System.currentTimeMillis()).done(), hold = true)
                    while (step is Wire.Step.Yield) {
                        val statement = step.value as Wire.MigrationStatement
                        step = run.drive(wire, run.execute(statement.sql).input(System.currentTimeMillis()), hold = true)
                    }
                    @Suppress("UNCHECKED_CAST")
                    return ((step as Wire.Step.Done).value as List<Int>).map(Int::toLong)
                }
            }
        } finally {
            connection.autoCommit = autoCommit
        }
    }
}
