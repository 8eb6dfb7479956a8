/** The grant-issuing endpoint: a logged-in browser asks for a grant for its own scope. */

import { checkCount } from "../check.js";
import { grantDocument, httpDefaults, KeyRing } from "../node.js";
import { type HttpAnswer, statusAnswer } from "./answer.js";

/** Settings of a grant endpoint. */
export interface GrantEndpointOptions<R> {
  /** The ring whose current key issues the grants. */
  readonly keyRing: KeyRing;
  /** The logged-in user's scope (as the idempotency middleware computes it), or `undefined`/`null` when nobody is logged in. */
  readonly scope: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** How long a grant lasts, in milliseconds (default the core's: one hour). */
  readonly ttlMillis?: number;
  /** The time now in Unix ms (default `Date.now`), for tests. */
  readonly now?: () => number;
}

const encoder = new TextEncoder();

/** The answer of a grant endpoint; see {@link GrantEndpointOptions}. */
export function grantIssuer<R>(options: GrantEndpointOptions<R>): (request: R) => Promise<HttpAnswer> {
  if (!(options.keyRing instanceof KeyRing)) throw new TypeError("options.keyRing must be a KeyRing");
  if (typeof options.scope !== "function") throw new TypeError("options.scope must be a function of the request");
  const defaults = httpDefaults();
  const ttl = checkCount(options.ttlMillis ?? defaults.grantTtlMillis, "options.ttlMillis", 1);
  const now = options.now ?? Date.now;
  return async (request) => {
    const scope = await options.scope(request);
    if (scope === undefined || scope === null) return statusAnswer(401, "log in to get a grant");
    const expiresMillis = now() + ttl;
    const grant = options.keyRing.issueGrant(scope, expiresMillis);
    return {
      status: 200,
      // The grant is a bearer secret of its scope: never cached.
      headers: [
        ["content-type", defaults.grantContentType],
        ["cache-control", "no-store"],
      ],
      body: encoder.encode(grantDocument(grant.text, expiresMillis)),
    };
  };
}
