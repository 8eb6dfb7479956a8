package io.mintid.spring

import example.forms.FormsApplication
import io.mintid.store.Dialect
import io.mintid.store.FreshDatabase
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.springframework.boot.builder.SpringApplicationBuilder
import org.springframework.jdbc.core.JdbcTemplate
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.util.UUID

/**
 * Issue 25, item 6 in the servlet filter: a form PATCH, whose body Spring Boot's
 * `FormContentFilter` reads before mintid's filter, is refused (`http.body_consumed`, a 500: the
 * server's configuration) and never fingerprinted as empty, which would answer another body
 * under the same key with the first one's replay; a JSON PATCH runs once per key as usual.
 */
class BodyConsumedTest {
    private val client = HttpClient.newHttpClient()

    @Test
    fun `a body another filter read first is refused, never fingerprinted as empty`() {
        FreshDatabase(Dialect.SQLITE).use { db ->
            val app =
                SpringApplicationBuilder(FormsApplication::class.java)
                    .properties(
                        "server.port=0",
                        "spring.datasource.url=${db.url}",
                        "spring.flyway.locations=classpath:db/migration/mintid/sqlite",
                        "spring.liquibase.enabled=false",
                    ).run()
            app.use {
                val base = "http://127.0.0.1:${it.environment.getProperty("local.server.port")}"
                val key = UUID.randomUUID().toString()
                val first = patch("$base/accounts/1", "application/x-www-form-urlencoded", "amount=1", key)
                assertEquals(500, first.statusCode(), first.body())
                val other = patch("$base/accounts/1", "application/x-www-form-urlencoded", "amount=9999", key)
                assertEquals(500, other.statusCode(), "refused again, not a replay of another body: ${other.body()}")
                assertEquals(0, FormsApplication.RAN.get(), "the handler never ran")
                val records = it.getBean(JdbcTemplate::class.java).queryForObject("SELECT COUNT(*) FROM idempotency_record", Long::class.java)
                assertEquals(0L, records, "nothing claimed")

                // A body no filter reads: once per key, another body under it 422.
                val json = UUID.randomUUID().toString()
                assertEquals(200, patch("$base/accounts/2", "application/json", "{}", json).statusCode())
                assertEquals(422, patch("$base/accounts/2", "application/json", """{"amount":9999}""", json).statusCode())
                assertEquals(1, FormsApplication.RAN.get())
            }
        }
    }

    private fun patch(
        url: String,
        contentType: String,
        body: String,
        key: String,
    ): HttpResponse<String> =
        client.send(
            HttpRequest
                .newBuilder(URI.create(url))
                .header("content-type", contentType)
                .header("Idempotency-Key", key)
                .method("PATCH", HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString(),
        )
}
