package io.mintid.store

import java.io.File
import java.net.JarURLConnection
import java.net.URL

/** How a named query's result is read (`schema/README.md`). */
internal enum class ResultKind {
    ONE,
    MANY,
    EXECROWS,
    EXEC,
}

/**
 * One named query of `schema/<dialect>/queries.sql`, rewritten for JDBC: [sql] has a `?` for
 * each `:name` in order of appearance, and [params] says which value each `?` takes.
 */
internal class NamedQuery(
    val name: String,
    val kind: ResultKind,
    val sql: String,
    val params: List<String>,
)

/** The named queries of one dialect, looked up by name (a missing one is a packaging error). */
internal class DialectQueries(
    private val dialect: Dialect,
) {
    private val all = SchemaFiles.queries(dialect)

    operator fun get(name: String): NamedQuery = all[name] ?: error("schema/${dialect.directory}/queries.sql has no query $name")
}

/** The shared SQL as shipped in the jar, under `io/mintid/schema/<dialect>/`. */
internal object SchemaFiles {
    private const val ROOT = "io/mintid/schema"
    private val BLOCK_START = Regex("""^-- name: ([a-z][a-z0-9_]*) :(one|many|execrows|exec)\s*$""")
    private val PARAMETER = Regex("""(?<![:\w]):([a-z][a-z0-9_]*)""")
    private val MIGRATION_FILE = Regex("""^(\d{4})_[a-z0-9_]+\.sql$""")

    private val cache = java.util.concurrent.ConcurrentHashMap<Dialect, Map<String, NamedQuery>>()

    /** The named queries of [dialect], by name. */
    fun queries(dialect: Dialect): Map<String, NamedQuery> = cache.computeIfAbsent(dialect) { parseQueries(text("${it.directory}/queries.sql")) }

    /** The migrations of [dialect]: (version, file name, statements), in version order. */
    fun migrations(dialect: Dialect): List<Migration> =
        listNames(dialect.directory)
            .mapNotNull { name -> MIGRATION_FILE.find(name)?.let { Migration(it.groupValues[1].toInt(), name, statements(text("${dialect.directory}/$name"))) } }
            .sortedBy { it.version }

    private fun resource(path: String): URL =
        SchemaFiles::class.java.classLoader.getResource("$ROOT/$path")
            ?: error("the jar has no $ROOT/$path: it was built without the shared schema")

    private fun text(path: String): String = resource(path).readText(Charsets.UTF_8)

    private fun listNames(directory: String): List<String> {
        val url = resource(directory)
        return when (url.protocol) {
            "file" -> File(url.toURI()).list()?.toList().orEmpty()
            "jar" -> {
                val prefix = "$ROOT/$directory/"
                // Without caches the connection opens a JarFile of its own, safe to close.
                val connection = url.openConnection() as JarURLConnection
                connection.useCaches = false
                connection.jarFile.use { jar ->
                    jar.entries().toList().map { it.name }.filter { it.startsWith(prefix) && it.length > prefix.length }.map { it.removePrefix(prefix) }
                }
            }
            else -> error("cannot list $url")
        }
    }

    /** Splits a file into blocks at `-- name:` lines; drops comment lines and the final `;`. */
    fun parseQueries(text: String): Map<String, NamedQuery> {
        val queries = LinkedHashMap<String, NamedQuery>()
        var header: MatchResult? = null
        val body = StringBuilder()
        fun finish() {
            val start = header ?: return
            val sql = body.toString().trim().removeSuffix(";").trim()
            val params = PARAMETER.findAll(sql).map { it.groupValues[1] }.toList()
            val name = start.groupValues[1]
            val kind = ResultKind.valueOf(start.groupValues[2].uppercase())
            queries[name] = NamedQuery(name, kind, PARAMETER.replace(sql, "?"), params)
            body.setLength(0)
        }
        for (line in text.lines()) {
            val match = BLOCK_START.find(line)
            if (match != null) {
                finish()
                header = match
            } else if (!line.trimStart().startsWith("--")) {
                body.append(line).append('\n')
            }
        }
        finish()
        return queries
    }

    /** A migration's statements: each ends with `;` at the end of a line; `--` lines are comments. */
    private fun statements(text: String): List<String> {
        val result = mutableListOf<String>()
        val current = StringBuilder()
        for (line in text.lines()) {
            if (line.trimStart().startsWith("--")) continue
            val trimmed = line.trimEnd()
            if (trimmed.endsWith(";")) {
                current.append(trimmed.removeSuffix(";"))
                result += current.toString().trim()
                current.setLength(0)
            } else {
                current.append(line).append('\n')
            }
        }
        if (current.isNotBlank()) result += current.toString().trim()
        return result.filter { it.isNotEmpty() }
    }
}

/** One numbered migration file. */
internal class Migration(
    val version: Int,
    val file: String,
    val statements: List<String>,
)
