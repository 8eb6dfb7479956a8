package io.mintid.store

/**
 * The SQL dialects of the shared schema (`schema/` in the mintid repository), each with its
 * numbered migrations and named queries shipped in this jar.
 *
 * @property directory the dialect's directory under `schema/`.
 */
enum class Dialect(
    val directory: String,
) {
    /** PostgreSQL 12+. */
    POSTGRES("postgres"),

    /**
     * MySQL 8.0.16+ and MariaDB 10.6+. The JDBC URL must say `useAffectedRows=true` (MariaDB
     * and MySQL Connector/J otherwise report found rows, and a duplicate claim would look like a
     * new one), and the server must keep strict SQL mode.
     */
    MYSQL("mysql"),

    /** SQLite 3.37+ (xerial `sqlite-jdbc`). */
    SQLITE("sqlite"),
}
