package io.mintid.spring;

import io.mintid.KeyRing;
import io.mintid.http.GrantEndpoint;
import io.mintid.http.HttpIdempotency;
import io.mintid.store.IdempotencyStore;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.handler.AbstractHandlerMethodMapping;

/**
 * The {@link IdempotencyFilter} of a servlet Spring MVC application: {@link Idempotent}
 * controller methods run once per key, under the {@code mintid.http.*} settings and the
 * application's {@link IdempotencyScopeResolver} (with Spring Security, by default the
 * authenticated principal; without it, the application declares one or does not start).
 */
@AutoConfiguration(after = MintidAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(HandlerMapping.class)
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnProperty(name = "mintid.http.enabled", havingValue = "true", matchIfMissing = true)
public class MintidWebAutoConfiguration {
    /**
     * With Spring Security, the default scope: the authenticated principal's name. Without it
     * there is no default: the application declares its {@link IdempotencyScopeResolver}, or it
     * does not start ({@link #mintidScopeCheck}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.security.core.Authentication")
    static class PrincipalScope {
        @Bean
        @ConditionalOnMissingBean
        IdempotencyScopeResolver idempotencyScopeResolver() {
            return IdempotencyScopeResolver.principal();
        }
    }

    /**
     * The neutral wrapper under the properties, the resolver, the key ring (if any) and the
     * application's handler mappings (read lazily: they exist once the dispatcher does). Without
     * a resolver no request has a scope; the start-up check refuses an application that needs one.
     */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyFilter idempotencyFilter(
            IdempotencyStore store,
            MintidProperties properties,
            ObjectProvider<IdempotencyScopeResolver> scope,
            ObjectProvider<KeyRing> keyRing,
            @Lazy List<HandlerMapping> mappings) {
        IdempotencyScopeResolver resolver = scope.getIfAvailable(() -> request -> null);
        return new IdempotencyFilter(http(store, properties.getHttp(), resolver, keyRing.getIfAvailable()).routes(IdempotencyFilter.idempotentHandlers(mappings)).build());
    }

    /**
     * Stops the start of an application that has {@link Idempotent} methods (or serves the grant
     * endpoint) but no {@link IdempotencyScopeResolver} bean: every such request would fail.
     * It looks once every singleton exists, when the handler mappings know their methods.
     */
    @Bean
    static SmartInitializingSingleton mintidScopeCheck(
            ObjectProvider<IdempotencyScopeResolver> scope,
            ObjectProvider<HandlerMapping> mappings,
            ObjectProvider<KeyRing> keyRing,
            ObjectProvider<MintidProperties> properties) {
        return () -> {
            if (scope.getIfAvailable() != null) {
                return;
            }
            List<String> needing = new ArrayList<>();
            mappings.orderedStream().forEach(mapping -> {
                if (mapping instanceof AbstractHandlerMethodMapping<?> methods) {
                    methods.getHandlerMethods().values().stream()
                            .filter(IdempotencyFilter::idempotent)
                            .map(HandlerMethod::getShortLogMessage)
                            .forEach(needing::add);
                }
            });
            MintidProperties settings = properties.getIfAvailable();
            if (settings != null && settings.getHttp().getGrantPath() != null && keyRing.getIfAvailable() != null) {
                needing.add("the grant endpoint " + settings.getHttp().getGrantPath());
            }
            if (!needing.isEmpty()) {
                throw new MintidStartupException(
                        "mintid needs the scope of each idempotent request (whose keys they are) for " + String.join(", ", needing)
                                + ", and the application has no IdempotencyScopeResolver bean (the default, the authenticated"
                                + " principal, comes with Spring Security, which is not on the class path).",
                        "Declare a bean of type io.mintid.spring.IdempotencyScopeResolver that returns a request's scope"
                                + " (e.g. \"tenant:\" and the authenticated tenant's id, or null when nobody is authenticated),"
                                + " or add Spring Security (spring-boot-starter-security).",
                        null);
            }
        };
    }

    /**
     * The neutral wrapper's settings from {@code http} (unset ones stay the core's defaults): the
     * filter's, and a test's that builds one of its own.
     */
    public static HttpIdempotency.Builder<HttpServletRequest> http(
            IdempotencyStore store, MintidProperties.Http http, IdempotencyScopeResolver scope, KeyRing keyRing) {
        // No scope (nobody authenticated) is the core's 401, as at every mintid edge.
        HttpIdempotency.Builder<HttpServletRequest> builder = HttpIdempotency.<HttpServletRequest>builder(
                        store, request -> scope.scopeOf(request.getRaw()))
                .keyRing(keyRing);
        if (http.getMethods() != null) {
            builder.methods(http.getMethods());
        }
        if (http.getBodyLimit() != null) {
            builder.bodyLimit(http.getBodyLimit());
        }
        if (http.getRequestIdHeader() != null) {
            builder.requestIdHeader(http.getRequestIdHeader());
        }
        if (http.getAcceptIdempotencyKey() != null) {
            builder.acceptIdempotencyKey(http.getAcceptIdempotencyKey());
        }
        if (http.getGrantPath() != null && keyRing != null) {
            GrantEndpoint endpoint = http.getGrantTtl() == null
                    ? new GrantEndpoint(keyRing)
                    : new GrantEndpoint(keyRing, http.getGrantTtl().toMillis());
            builder.grant(http.getGrantPath(), endpoint, request -> scope.scopeOf(request.getRaw()));
        }
        if (http.isSameTransaction()) {
            builder.sameTransaction(new SpringRecordTransactions(store));
        }
        return builder;
    }
}
