package io.mintid.store

import uniffi.mintid_ffi.Dialect as FfiDialect

/**
 * The SQL dialects of the shared schema (`schema/` in the mintid repository), whose numbered
 * migrations and named queries the core carries (compiled in) and hands out rendered for JDBC.
 *
 * @property directory the dialect's directory under `schema/`.
 */
enum class Dialect(
    val directory: String,
    internal val ffi: FfiDialect,
) {
    /** PostgreSQL 12+ (the PostgreSQL JDBC driver). */
    POSTGRES("postgres", FfiDialect.POSTGRES),

    /**
     * MySQL 8.0.16+ and MariaDB 10.6+ (MariaDB Connector/J or MySQL Connector/J), in strict SQL
     * mode. Claims are correct whether the connection reports found rows or affected rows
     * (`useAffectedRows`, `CLIENT_FOUND_ROWS`): a duplicate claim is a duplicate-key error.
     */
    MYSQL("mysql", FfiDialect.MYSQL),

    /** SQLite 3.37+ (xerial `sqlite-jdbc`, whose result codes the executor reads). */
    SQLITE("sqlite", FfiDialect.SQLITE),
}
