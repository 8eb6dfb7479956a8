package io.mintid.spring.scenarios

import io.mintid.http.DIRECTIVE_HEADER
import io.mintid.http.INSERT_ROW
import io.mintid.http.ScenarioApp
import io.mintid.http.ScenarioConfig
import io.mintid.http.TestHandler
import io.mintid.http.TestRequest
import io.mintid.http.TestResponse
import io.mintid.http.USER_HEADER
import io.mintid.http.httpScenarioTests
import io.mintid.spring.IdempotencyFilter
import io.mintid.spring.IdempotencyScopeResolver
import io.mintid.spring.Idempotent
import io.mintid.spring.MintidProperties
import io.mintid.spring.MintidWebAutoConfiguration
import io.mintid.store.Dialect
import io.mintid.store.IdempotencyStore
import jakarta.servlet.http.HttpServletRequest
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.TestFactory
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.autoconfigure.SpringBootApplication
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.core.annotation.AnnotationAwareOrderComparator
import org.springframework.http.HttpMethod
import org.springframework.http.ResponseEntity
import org.springframework.jdbc.core.JdbcTemplate
import org.springframework.test.web.servlet.MockMvc
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders
import org.springframework.test.web.servlet.setup.DefaultMockMvcBuilder
import org.springframework.test.web.servlet.setup.MockMvcBuilders
import org.springframework.web.bind.annotation.RequestBody
import org.springframework.web.bind.annotation.RequestMapping
import org.springframework.web.bind.annotation.RequestMethod
import org.springframework.web.bind.annotation.RestController
import org.springframework.web.context.WebApplicationContext
import org.springframework.web.servlet.HandlerMapping
import java.net.URI

/**
 * Every scenario of `tests/http/scenarios.json` on the starter's filter in front of an
 * `@Idempotent` controller, through Spring MVC's dispatcher (MockMvc over one application
 * context), on SQLite, PostgreSQL and MariaDB. Each scenario builds its filter the way the
 * auto-configuration does, over the scenario's own store and settings.
 */
@SpringBootTest(
    classes = [ScenarioApplication::class],
    properties = [
        "mintid.http.enabled=false",
        "spring.autoconfigure.exclude=" +
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration," +
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    ],
)
class SpringScenariosTest {
    @Autowired
    lateinit var context: WebApplicationContext

    @TestFactory
    fun `every HTTP scenario`(): List<DynamicNode> =
        httpScenarioTests(mapOf("spring" to { store, config -> SpringApp(context, store, config) }), Dialect.entries)
}

/** The scenarios' test app: one controller for every mount, the handler of the running scenario. */
@SpringBootApplication
open class ScenarioApplication {
    @RestController
    @Idempotent
    open class Orders {
        @RequestMapping(path = ["/orders", "/*/orders"], method = [RequestMethod.POST, RequestMethod.PATCH, RequestMethod.GET])
        open fun orders(
            request: HttpServletRequest,
            @RequestBody(required = false) body: ByteArray?,
        ): ResponseEntity<ByteArray> {
            val handler = current ?: error("no scenario is running")
            val directive = TestHandler.directive(request.getHeader(DIRECTIVE_HEADER))
            val received = TestHandler.received(request.contentType, body ?: ByteArray(0))
            val n = handler.call()
            // On the store's data source: in the same-transaction mode JdbcTemplate joins the
            // record's transaction, else it commits at once.
            if (handler.writes(directive)) (writes ?: error("no scenario is running")).update(INSERT_ROW)
            handler.gateOf(directive)?.let(TestHandler::await)
            val answer = handler.answer(n, request.method, request.requestURI, directive, received)
            val response = ResponseEntity.status(answer.status)
            answer.headers.forEach { (name, value) -> response.header(name, value) }
            return response.body(answer.body)
        }
    }

    companion object {
        @Volatile
        internal var current: TestHandler? = null

        @Volatile
        internal var writes: JdbcTemplate? = null
    }
}

/** One scenario's filter, as the auto-configuration builds it, in front of the dispatcher. */
private class SpringApp(
    context: WebApplicationContext,
    store: IdempotencyStore,
    config: ScenarioConfig,
) : ScenarioApp {
    override val handler = TestHandler()
    private val mvc: MockMvc

    init {
        val settings =
            MintidProperties.Http().apply {
                bodyLimit = config.bodyLimit
                grantPath = config.grant
                isSameTransaction = config.sameTransaction
            }
        val scope = IdempotencyScopeResolver { request -> request.getHeader(USER_HEADER)?.let { "user:$it" } }
        // In the dispatcher's order, as the auto-configuration's injected list is.
        val mappings = context.getBeansOfType(HandlerMapping::class.java).values.sortedWith(AnnotationAwareOrderComparator.INSTANCE)
        val idempotency =
            MintidWebAutoConfiguration
                .http(store, settings, scope, config.keyRing)
                .routes(IdempotencyFilter.idempotentHandlers(mappings))
                .handlerErrors { }
                .build()
        mvc = MockMvcBuilders.webAppContextSetup(context).addFilters<DefaultMockMvcBuilder>(IdempotencyFilter(idempotency)).build()
        ScenarioApplication.current = handler
        ScenarioApplication.writes = JdbcTemplate(store.dataSource)
    }

    override fun send(request: TestRequest): TestResponse {
        val builder = MockMvcRequestBuilders.request(HttpMethod.valueOf(request.method), URI.create(request.path)).content(request.body)
        request.headers.forEach { (name, value) -> builder.header(name, value) }
        val response = mvc.perform(builder).andReturn().response
        val headers = response.headerNames.flatMap { name -> response.getHeaders(name).map { name.lowercase() to it } }
        return TestResponse(response.status, headers, response.contentAsByteArray)
    }

    override fun close() {
        ScenarioApplication.current = null
        ScenarioApplication.writes = null
    }
}
