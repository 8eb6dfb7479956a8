package io.mintid.spring;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;

/**
 * Whose keys a request's are: the authenticated user or tenant (within the core's limits, e.g.
 * {@code user:42}). Declare a bean of this type: with Spring Security it replaces the default,
 * which reads the authenticated principal ({@code user:<name>}); without Spring Security there is
 * no default, and an application with {@link Idempotent} methods and no resolver does not start.
 * The same scope is the grant endpoint's.
 */
@FunctionalInterface
public interface IdempotencyScopeResolver {
    /** The scope of {@code request}, or null when nobody is authenticated. */
    String scopeOf(HttpServletRequest request);

    /** The default: {@code user:} and the principal's name, or null without a principal. */
    static IdempotencyScopeResolver principal() {
        return request -> {
            Principal principal = request.getUserPrincipal();
            return principal == null ? null : "user:" + principal.getName();
        };
    }
}
