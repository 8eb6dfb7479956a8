package io.mintid.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a controller method (or every method of a controller) once per idempotency key: the
 * request's key comes from its {@code Idempotency-Key} header, or from a signed request ID when
 * the application has a key ring ({@code mintid.request-ids.secret}), scoped by the
 * {@link IdempotencyScopeResolver}. The first request runs and its response is stored; a
 * duplicate is answered with that response and {@code Idempotent-Replayed: true}; the refusals
 * are the core's problem documents (400, 409 with {@code Retry-After}, 422, 503), the same in
 * every mintid host. Only the covered methods ({@code mintid.http.methods}, default POST and
 * PATCH) are, the others pass through.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface Idempotent {}
