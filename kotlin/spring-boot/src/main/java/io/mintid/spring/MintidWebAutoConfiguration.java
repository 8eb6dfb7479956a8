package io.mintid.spring;

import io.mintid.KeyRing;
import io.mintid.http.GrantEndpoint;
import io.mintid.http.HttpIdempotency;
import io.mintid.store.IdempotencyStore;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.web.servlet.HandlerMapping;

/**
 * The {@link IdempotencyFilter} of a servlet Spring MVC application: {@link Idempotent}
 * controller methods run once per key, under the {@code mintid.http.*} settings and the
 * application's {@link IdempotencyScopeResolver} (default: the authenticated principal).
 */
@AutoConfiguration(after = MintidAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(HandlerMapping.class)
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnProperty(name = "mintid.http.enabled", havingValue = "true", matchIfMissing = true)
public class MintidWebAutoConfiguration {
    /** The default scope: the authenticated principal's name. */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyScopeResolver idempotencyScopeResolver() {
        return IdempotencyScopeResolver.principal();
    }

    /**
     * The neutral wrapper under the properties, the resolver, the key ring (if any) and the
     * application's handler mappings (read lazily: they exist once the dispatcher does).
     */
    @Bean
    @ConditionalOnMissingBean
    public IdempotencyFilter idempotencyFilter(
            IdempotencyStore store,
            MintidProperties properties,
            IdempotencyScopeResolver scope,
            ObjectProvider<KeyRing> keyRing,
            @Lazy List<HandlerMapping> mappings) {
        return new IdempotencyFilter(http(store, properties.getHttp(), scope, keyRing.getIfAvailable()).routes(IdempotencyFilter.idempotentHandlers(mappings)).build());
    }

    /**
     * The neutral wrapper's settings from {@code http} (unset ones stay the core's defaults): the
     * filter's, and a test's that builds one of its own.
     */
    public static HttpIdempotency.Builder<HttpServletRequest> http(
            IdempotencyStore store, MintidProperties.Http http, IdempotencyScopeResolver scope, KeyRing keyRing) {
        HttpIdempotency.Builder<HttpServletRequest> builder = HttpIdempotency.<HttpServletRequest>builder(store, request -> {
                    String of = scope.scopeOf(request.getRaw());
                    if (of == null) {
                        throw new IllegalStateException("mintid: no scope for this request: authenticate it, or declare an IdempotencyScopeResolver bean");
                    }
                    return of;
                })
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
        return builder;
    }
}
