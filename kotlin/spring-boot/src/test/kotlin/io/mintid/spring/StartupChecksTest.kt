package io.mintid.spring

import io.mintid.store.Dialect
import io.mintid.store.Migrations
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.junit.jupiter.api.io.TempDir
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.boot.test.system.CapturedOutput
import org.springframework.boot.test.system.OutputCaptureExtension
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.context.annotation.Import
import org.springframework.jdbc.datasource.DriverManagerDataSource
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RestController
import java.nio.file.Path

/**
 * Applications without Spring Security that lack what mintid needs stop at start-up with Spring
 * Boot's failure report naming the fix, instead of failing every request: no
 * `IdempotencyScopeResolver` bean for their `@Idempotent` methods, no schema with migrations
 * off. The same applications with the fix start.
 */
@ExtendWith(OutputCaptureExtension::class)
class StartupChecksTest {
    @Test
    fun `an Idempotent method without a scope resolver stops the start`(
        @TempDir dir: Path,
        output: CapturedOutput,
    ) {
        val url = migrated(dir)
        val failure = assertThrows(Exception::class.java) { start(NoScope::class.java, url).close() }
        val cause = causeOf(failure)
        assertTrue(cause.description().contains("Payments#pay"), cause.description())
        assertTrue(output.out.contains("APPLICATION FAILED TO START"), output.out)
        assertTrue(output.out.contains("Declare a bean of type io.mintid.spring.IdempotencyScopeResolver"), output.out)
        // The fix: the same application with a resolver starts.
        start(WithScope::class.java, url).close()
    }

    @Test
    fun `an application without Idempotent methods needs no scope resolver`(
        @TempDir dir: Path,
    ) {
        start(StoreOnly::class.java, migrated(dir)).close()
    }

    @Test
    fun `a database without the schema stops the start when migrations are off`(
        @TempDir dir: Path,
        output: CapturedOutput,
    ) {
        val url = "jdbc:sqlite:${dir.resolve("empty.db")}"
        val failure = assertThrows(Exception::class.java) { start(WithScope::class.java, url).close() }
        assertTrue(causeOf(failure).description().contains("mintid_schema_migrations cannot be read"), causeOf(failure).description())
        assertTrue(output.out.contains("APPLICATION FAILED TO START"), output.out)
        assertTrue(output.out.contains("set mintid.migrate=true"), output.out)
        assertTrue(output.out.contains("spring.flyway.locations=classpath:db/migration/mintid/sqlite"), output.out)
        assertTrue(output.out.contains("Migrations.migrate(dataSource, Dialect.SQLITE)"), output.out)
        // The fix: with mintid.migrate=true the same application starts, on a database it migrated.
        start(WithScope::class.java, url, "mintid.migrate=true").close()
        assertEquals(schemaVersions(Dialect.SQLITE), Migrations.applied(DriverManagerDataSource(url), Dialect.SQLITE))
    }

    @Test
    fun `a schema that lacks migrations stops the start`(
        @TempDir dir: Path,
    ) {
        val url = migrated(dir)
        DriverManagerDataSource(url).connection.use { it.createStatement().execute("DELETE FROM mintid_schema_migrations WHERE version = 4") }
        val failure = assertThrows(Exception::class.java) { start(WithScope::class.java, url).close() }
        assertTrue(causeOf(failure).description().contains("lacks the migrations [4]"), causeOf(failure).description())
    }

    /** A SQLite file with mintid's schema. */
    private fun migrated(dir: Path): String {
        val url = "jdbc:sqlite:${dir.resolve("app.db")}"
        Migrations.migrate(DriverManagerDataSource(url), Dialect.SQLITE)
        return url
    }

    private fun start(
        app: Class<*>,
        url: String,
        vararg more: String,
    ) = SpringApplicationBuilder(app)
        .properties(
            "server.port=0",
            "spring.datasource.url=$url",
            "spring.flyway.enabled=false",
            "spring.liquibase.enabled=false",
            *more,
        ).run()

    private fun causeOf(failure: Throwable): MintidStartupException =
        generateSequence(failure) { it.cause }.filterIsInstance<MintidStartupException>().firstOrNull()
            ?: throw AssertionError("no MintidStartupException behind $failure", failure)

    /** An `@Idempotent` method. */
    @RestController
    open class Payments {
        @Idempotent
        @PostMapping("/payments")
        open fun pay(): String = "paid"
    }

    /** The method, and no resolver (no Spring Security either). */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Payments::class)
    open class NoScope

    /** The method and a resolver. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    @Import(Payments::class)
    open class WithScope {
        @Bean
        open fun scope() = IdempotencyScopeResolver { request -> request.getHeader("X-User")?.let { "user:$it" } }
    }

    /** The store alone: no `@Idempotent` method. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    open class StoreOnly
}
