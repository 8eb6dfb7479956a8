package io.mintid.spring

import io.mintid.store.Dialect
import java.io.File

/**
 * The versions of the repository's `schema/<dialect>/NNNN_*.sql` migrations, in order: what a
 * fully migrated database lists (the tests run from `kotlin/spring-boot`, Maven's base directory).
 */
internal fun schemaVersions(dialect: Dialect): List<Long> {
    val directory = File("../../schema/${dialect.directory}")
    val names = directory.list() ?: error("no schema directory at ${directory.absolutePath}")
    return names.filter { Regex("""\d{4}_.*\.sql""").matches(it) }.map { it.take(4).toLong() }.sorted()
}
