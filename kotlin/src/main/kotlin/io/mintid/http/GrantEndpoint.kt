package io.mintid.http

import io.mintid.ArgumentException
import io.mintid.KeyRing
import io.mintid.requireNonNegative

/**
 * The grant endpoint: a logged-in browser asks for a grant for its own scope, then mints signed
 * request IDs offline from it.
 *
 * @property keyRing the ring whose current key issues the grants.
 * @property ttlMillis how long a grant lasts (default the core's: one hour).
 */
class GrantEndpoint
    @JvmOverloads
    constructor(
        val keyRing: KeyRing,
        val ttlMillis: Long = HttpRules.DEFAULT_GRANT_TTL_MILLIS,
    ) {
        init {
            if (requireNonNegative(ttlMillis, "the grant TTL") == 0UL) {
                throw ArgumentException("argument.out_of_range", "the grant TTL must be positive, not 0 ms")
            }
        }

        /**
         * The answer for the logged-in user's [scope] (as the idempotency middleware computes it):
         * JSON `{"grant", "expiresMillis"}` with `Cache-Control: no-store` (a grant is a bearer
         * secret of its scope), or 401 (`about:blank`) when nobody is logged in ([scope] null).
         *
         * @throws io.mintid.RequestIdException `request_id.invalid_scope` for a scope the core refuses.
         */
        @JvmOverloads
        fun answer(
            scope: String?,
            nowMillis: Long = System.currentTimeMillis(),
        ): HttpAnswer {
            if (scope == null) return HttpAnswer.status(401, "log in to get a grant")
            val expires = Math.addExact(requireNonNegative(nowMillis, "the time").toLong(), ttlMillis)
            val grant = keyRing.issueGrant(scope, expires)
            return HttpAnswer(
                200,
                listOf("content-type" to HttpRules.GRANT_CONTENT_TYPE, "cache-control" to "no-store"),
                HttpRules.grantDocument(grant.text, expires).toByteArray(Charsets.UTF_8),
            )
        }
    }
