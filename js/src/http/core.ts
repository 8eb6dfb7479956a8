/**
 * The framework-neutral part of the HTTP integrations: which requests are
 * covered, reading and verifying the key, fingerprinting the body, running
 * the handler once through the store and turning every outcome into an
 * {@link HttpAnswer}. `mintid/http/express` and `mintid/http/fastify` only
 * move bytes between their framework and this class.
 */

import {
  defaultKind as coreDefaultKind,
  type Fingerprint,
  fingerprintRequest,
  HttpError,
  httpDefaults,
  IdempotencyKey,
  IdempotencyKeyError,
  KeyRing,
  MintidError,
  type ProblemName,
  RequestIdError,
  Uuid7,
  type VerifyOptions,
} from "../node.js";
import { checkCount } from "../check.js";
import { admitKey, keyRefusal } from "../http-rules.js";
import { StoreError } from "../store/errors.js";
import type { Connection } from "../store/database.js";
import { type IdempotencyStore, OperationError, type RunResult, type StoredResponse, type StoreRequest } from "../store/idempotency.js";
import { type HttpAnswer, problemAnswer, refusalAnswer, replayedHeader, retryAfter, statusAnswer } from "./answer.js";
import { type GrantEndpointOptions, grantIssuer } from "./grant.js";
import { fromStored, toStored } from "./stored.js";

export { fingerprintBody, fingerprintRequest, isJsonContentType } from "../node.js";

const DEFAULTS = httpDefaults();
/** The header carrying a signed request ID unless configured otherwise (from the core). */
export const REQUEST_ID_HEADER = DEFAULTS.requestIdHeader;
/** The IETF draft's header (from the core). */
export const IDEMPOTENCY_KEY_HEADER = DEFAULTS.idempotencyKeyHeader;
/** The default body limit: 1 MiB (from the core). */
export const DEFAULT_BODY_LIMIT = DEFAULTS.bodyLimit;
/** The methods covered by default (from the core). */
export const DEFAULT_METHODS: readonly string[] = DEFAULTS.methods;
/** The response headers stored (besides content-type) by default (from the core). */
export const DEFAULT_STORED_HEADERS: readonly string[] = DEFAULTS.storedHeaders;

/** What the integrations need of a store: `runOnce`, its policy and, to report refused request IDs, its metrics (an `IdempotencyStore`). */
export type RunOnceStore = Pick<IdempotencyStore, "runOnce" | "policy"> & Partial<Pick<IdempotencyStore, "metrics" | "inTransaction" | "database">>;

/** What a handler under the same-transaction mode gets (`req.mintid` on Express, `request.mintid` on Fastify). */
export interface MintidRequestState {
  /**
   * The database library's own object the record's transaction runs on (a
   * `pg` `PoolClient`, a `mysql2` connection, a better-sqlite3 `Database`):
   * the handler's writes on it commit or roll back with the record.
   */
  readonly client: unknown;
  /** The same transaction as mintid's {@link Connection} (for `Outbox.enqueue` and the like). */
  readonly transaction: Connection;
}

/** A request as the neutral core sees it; `raw` is the framework's own request object. */
export interface HttpRequestView<R> {
  /** The method, upper case. */
  readonly method: string;
  /** The full path as the application sees it (mount prefix included), without the query. */
  readonly path: string;
  /** The raw query string, without the `?` (empty without one). */
  readonly query: string;
  /** A header's value (names are case-insensitive), or `undefined`. */
  header(name: string): string | undefined;
  /** The framework's request (`req` of Express, `request` of Fastify). */
  readonly raw: R;
}

/** The settings of the HTTP integrations; all but `store` and `scope` have defaults. */
export interface IdempotencyOptions<R> {
  /** Where records live (`new IdempotencyStore(database, policy)`); its policy decides waiting and `storeErrors`. */
  readonly store: RunOnceStore;
  /**
   * Whose keys these are: the authenticated user or tenant, e.g.
   * `user:${req.user.id}` (1–64 bytes); `undefined` or `null` when the
   * request has no authenticated caller (answered 401 before any key is read).
   */
  readonly scope: (request: R) => string | null | undefined | Promise<string | null | undefined>;
  /** Verifies signed request IDs; without it only `Idempotency-Key` is read. */
  readonly keyRing?: KeyRing;
  /** The header carrying signed request IDs (default `Mintid-Request-Id`). */
  readonly requestIdHeader?: string;
  /**
   * Whether plain `Idempotency-Key` values are accepted: default `true`
   * without a key ring, `false` with one (then only signed IDs count).
   */
  readonly acceptIdempotencyKey?: boolean;
  /** Freshness bounds for signed request IDs (`maxAgeMillis` should not exceed the retention). */
  readonly verify?: Omit<VerifyOptions, "now">;
  /** The methods covered (default POST and PATCH); others pass through untouched. */
  readonly methods?: readonly string[];
  /** Which covered requests need a key (default: all of them). */
  readonly routes?: (request: HttpRequestView<R>) => boolean;
  /** The largest body read, in bytes (default 1 MiB); above it the answer is 413. */
  readonly bodyLimit?: number;
  /** Response headers stored and replayed besides content-type (default {@link DEFAULT_STORED_HEADERS}). */
  readonly storedHeaders?: readonly string[];
  /** The key's kind (1–32 of `a-z 0-9 . _ -`); default the core's `defaultKind` (`http.<method>.<10 hex of SHA-256 of the full path>`). */
  readonly kind?: (request: HttpRequestView<R>) => string;
  /**
   * The grant endpoint, served by the middleware itself so that it is never
   * covered: a `POST` to `path` (the full path) answers the grant of
   * `scope(request)` from `keyRing` (which must be set), or 401.
   */
  readonly grant?: GrantRoute<R>;
  /**
   * Receives what goes wrong out of the client's sight: a store failure
   * (with the driver's error as its `cause`), before or after the handler
   * ran. Default: `console.error`. The answer never carries its text.
   */
  readonly onError?: (message: string, error: unknown) => void;
  /**
   * The **same-transaction** mode (default `false`: the **run-once** mode,
   * where the handler commits its own writes and then the record completes).
   * When `true`, a covered request runs inside one transaction of the store's
   * database (`store.inTransaction`): the handler gets its connection
   * ({@link MintidRequestState}) and its writes, the claim and the completed
   * record commit together; a failed handler (5xx, a throw) rolls them all
   * back and nothing is stored, so the next request with the key runs again.
   */
  readonly sameTransaction?: boolean;
}

/** The grant endpoint of {@link IdempotencyOptions.grant}. */
export interface GrantRoute<R> extends Omit<GrantEndpointOptions<R>, "keyRing"> {
  /** The full path of the endpoint, e.g. `/api/grant`. */
  readonly path: string;
}

/** A request whose key was read and verified: run it with {@link HttpIdempotency.run}. */
export interface Admitted {
  /** The idempotency key. */
  readonly key: IdempotencyKey;
  /** When the key was created (a signed request ID's UUIDv7 time), if known. */
  readonly keyCreatedMillis: number | undefined;
  /** The request's raw query string, which takes part in its fingerprint. */
  readonly query: string;
}

/** The outcome of {@link HttpIdempotency.admit}: go on with the key, or answer now. */
export type Admission = { readonly admitted: Admitted } | { readonly answer: HttpAnswer };

/** What {@link HttpIdempotency.run} reports besides the answer. */
export interface RunAnswer {
  /** The answer to send. */
  readonly answer: HttpAnswer;
  /** Whether the handler ran for this request and `answer` is its response, unchanged. */
  readonly executed: boolean;
  /**
   * Whether the handler ran for this request: also when the store failed
   * after it, and `answer` is then a 500 instead of its response (drop what
   * the handler set on the framework's response).
   */
  readonly ran: boolean;
}

function defaultKind(request: HttpRequestView<unknown>): string {
  return coreDefaultKind(request.method, request.path);
}

/** The problem the core attaches to a store's failure; every store error's is `storage_unavailable`. */
function problemOfFailure(error: unknown): ProblemName | undefined {
  if (error instanceof MintidError && error.problem !== undefined) return error.problem as ProblemName;
  return error instanceof StoreError ? "storage_unavailable" : undefined;
}

/** The neutral middleware: one per app (or per group of routes sharing settings). */
export class HttpIdempotency<R> {
  readonly #options: IdempotencyOptions<R>;
  readonly #methods: ReadonlySet<string>;
  readonly #storedHeaders: readonly string[];
  readonly #acceptIdempotencyKey: boolean;
  readonly #grant: ((request: R) => Promise<HttpAnswer>) | undefined;
  readonly #onError: (message: string, error: unknown) => void;
  /** The largest body read, in bytes. */
  readonly bodyLimit: number;

  /** The middleware for `options`. */
  constructor(options: IdempotencyOptions<R>) {
    if (typeof options !== "object" || options === null) throw new TypeError("options must be an object");
    if (typeof options.store?.runOnce !== "function") throw new TypeError("options.store must be an IdempotencyStore");
    if (options.sameTransaction === true && (typeof options.store.inTransaction !== "function" || options.store.database === undefined)) {
      throw new TypeError("options.sameTransaction needs an IdempotencyStore (its inTransaction and database)");
    }
    if (typeof options.scope !== "function") throw new TypeError("options.scope must be a function of the request");
    if (options.keyRing !== undefined && !(options.keyRing instanceof KeyRing)) throw new TypeError("options.keyRing must be a KeyRing");
    const limit = checkCount(options.bodyLimit ?? DEFAULT_BODY_LIMIT, "options.bodyLimit");
    this.#options = options;
    this.#methods = new Set((options.methods ?? DEFAULT_METHODS).map((method) => method.toUpperCase()));
    this.#storedHeaders = [...(options.storedHeaders ?? DEFAULT_STORED_HEADERS)];
    this.#acceptIdempotencyKey = options.acceptIdempotencyKey ?? options.keyRing === undefined;
    this.bodyLimit = limit;
    const grant = options.grant;
    if (grant !== undefined) {
      if (typeof grant.path !== "string" || !grant.path.startsWith("/")) throw new TypeError("options.grant.path must be a path starting with '/'");
      if (options.keyRing === undefined) throw new TypeError("options.grant needs options.keyRing, which verifies the request IDs it lets clients mint");
      this.#grant = grantIssuer({ ...grant, keyRing: options.keyRing });
    }
    this.#onError = options.onError ?? ((message, error) => console.error(message, error));
  }

  /**
   * The grant endpoint's answer when `request` is a `POST` to its path (see
   * {@link IdempotencyOptions.grant}), else `undefined`.
   */
  async grant(request: HttpRequestView<R>): Promise<HttpAnswer | undefined> {
    if (this.#grant === undefined || request.path !== this.#options.grant?.path || request.method.toUpperCase() !== "POST") return undefined;
    return this.#grant(request.raw);
  }

  /** Whether the request is covered: its method is, it is not for the grant endpoint, and the route predicate accepts it. */
  covers(request: HttpRequestView<R>): boolean {
    if (this.#options.grant !== undefined && request.path === this.#options.grant.path) return false;
    return this.#methods.has(request.method.toUpperCase()) && (this.#options.routes?.(request) ?? true);
  }

  /**
   * Reads the key: a signed request ID (when a key ring is configured) from
   * its header, else an `Idempotency-Key` (when accepted), verified and
   * scoped. Refusals (the core's `admitKey` first): 401 when the scope
   * function finds no caller; `missing_key` naming the accepted header(s),
   * `malformed_key`, `invalid_request_id`, `grant_expired`, `key_too_old`
   * (all 400).
   */
  async admit(request: HttpRequestView<R>): Promise<Admission> {
    const ring = this.#options.keyRing;
    const requestIdHeader = ring === undefined ? undefined : (this.#options.requestIdHeader ?? REQUEST_ID_HEADER);
    const signed = requestIdHeader === undefined ? undefined : request.header(requestIdHeader);
    const plain = request.header(IDEMPOTENCY_KEY_HEADER);
    const scope = (await this.#options.scope(request.raw)) ?? undefined;
    const source = admitKey(requestIdHeader, this.#acceptIdempotencyKey, {
      caller: scope !== undefined,
      requestIdSent: signed !== undefined,
      idempotencyKeySent: plain !== undefined,
    });
    if (!("source" in source)) return { answer: refusalAnswer(source.status, source.document) };
    if (scope === undefined) throw new Error("the core admits no request without a caller");
    const kind = (this.#options.kind ?? defaultKind)(request);
    if (ring !== undefined && signed !== undefined && source.source === "signed") {
      let uuid: string;
      try {
        // Bare, or a Structured Field String as `Idempotency-Key` values are.
        uuid = ring.verify(IdempotencyKey.parseHeader(signed), scope, this.#options.verify ?? {});
      } catch (error) {
        if (!(error instanceof RequestIdError || error instanceof IdempotencyKeyError)) throw error;
        const refusal = keyRefusal(error, true);
        if (refusal === undefined) throw error;
        this.#options.store.metrics?.requestIdRejected?.(error.code);
        return { answer: problemAnswer(refusal, error.message) };
      }
      return { admitted: { key: new IdempotencyKey(kind, scope, uuid), keyCreatedMillis: Uuid7.parse(uuid).unixMillis, query: request.query } };
    }
    try {
      return { admitted: { key: IdempotencyKey.fromHeader(kind, scope, plain ?? ""), keyCreatedMillis: undefined, query: request.query } };
    } catch (error) {
      if (!(error instanceof IdempotencyKeyError)) throw error;
      const refusal = keyRefusal(error, false);
      if (refusal === undefined) throw error;
      return { answer: problemAnswer(refusal, error.message) };
    }
  }

  /** The answer for a body over {@link bodyLimit}: 413. */
  tooLarge(): HttpAnswer {
    return statusAnswer(413, `the body exceeds ${this.bodyLimit} bytes`);
  }

  /**
   * What the store compares when the key comes again: the request's
   * fingerprint (its body and query string) and the key's creation time; or
   * the 400 `malformed_body` answer for a JSON content type whose body is not
   * JSON (nothing runs, nothing is stored).
   */
  storeRequest(admitted: Admitted, contentType: string | undefined, body: Uint8Array): StoreRequest | HttpAnswer {
    let fingerprint: Fingerprint;
    try {
      fingerprint = fingerprintRequest(contentType, admitted.query, body);
    } catch (error) {
      if (error instanceof HttpError && error.problem === "malformed_body") return problemAnswer("malformed_body", error.message);
      throw error;
    }
    return { fingerprint, ...(admitted.keyCreatedMillis === undefined ? {} : { keyCreatedMillis: admitted.keyCreatedMillis }) };
  }

  /**
   * The answer when the store (or the record rules) failed with `error`:
   * before the handler ran, the problem the core attaches to the error (503
   * `storage_unavailable` for every store error); after it ran (`ran`), 500,
   * since its outcome is the record's to tell (a retry gets what the record
   * holds). Never a detail: the error and its `cause` go to `onError`.
   *
   * @throws `error` again when the handler did not run and the error names
   *   no problem: a fault of the server, answered by its framework.
   */
  failureAnswer(error: unknown, ran: boolean): HttpAnswer {
    const problem = ran ? undefined : problemOfFailure(error);
    if (problem === undefined && !ran) throw error;
    const answer = problem === undefined ? statusAnswer(500) : problemAnswer(problem);
    this.#onError(`mintid: the store failed ${ran ? "after" : "before"} the handler ran; answering ${answer.status}`, error);
    return answer;
  }

  /**
   * Runs `handler` once for the admitted key (`handler` runs the framework's
   * route and resolves with its complete response), and says what to send:
   * the handler's response, a replay (with `Idempotent-Replayed: true`), 409
   * with `Retry-After`, 422, 400 (key too old, or a body that is not JSON
   * under a JSON content type) or 503 (storage unavailable, nothing run). A
   * 5xx response is a final failure: stored and replayed when the store's
   * policy stores errors, else the key is released. A store failure is
   * answered by {@link failureAnswer}, also after the handler ran (its
   * response is then not sent). Under {@link IdempotencyOptions.sameTransaction}
   * `handler` gets the record's transaction, else `undefined`.
   */
  async run(admitted: Admitted, contentType: string | undefined, body: Uint8Array, handler: (mintid?: MintidRequestState) => Promise<HttpAnswer>): Promise<RunAnswer> {
    const request = this.storeRequest(admitted, contentType, body);
    if ("status" in request) return { answer: request, executed: false, ran: false };
    return this.runRequest(admitted, request, handler);
  }

  /** {@link run} for a request whose {@link storeRequest} was taken already (a framework that must refuse a body early). */
  async runRequest(admitted: Admitted, request: StoreRequest, handler: (mintid?: MintidRequestState) => Promise<HttpAnswer>): Promise<RunAnswer> {
    let response: HttpAnswer | undefined;
    const operation = async (transaction?: Connection) => {
      response = await handler(transaction === undefined ? undefined : { client: transaction.client, transaction });
      const stored = toStored(response, this.#storedHeaders);
      if (response.status >= 500) throw new OperationError(`the handler answered ${response.status}`, { response: stored });
      return stored;
    };
    let result: RunResult;
    try {
      result = await this.#runOperation(admitted, request, operation);
    } catch (error) {
      // The handler's own 5xx, stored as its final failure (or released).
      const ran = response !== undefined;
      if (error instanceof OperationError && response !== undefined) return { answer: response, executed: true, ran };
      return { answer: this.failureAnswer(error, ran), executed: false, ran };
    }
    const executed = result.decision === "execute";
    return { answer: this.#answerOf(result, response), executed, ran: executed };
  }

  /** The store's run-once way, or (same-transaction mode) its same-transaction way in a transaction of its database. */
  #runOperation(admitted: Admitted, request: StoreRequest, operation: (transaction?: Connection) => Promise<StoredResponse>): Promise<RunResult> {
    const store = this.#options.store;
    const { inTransaction, database } = store;
    if (this.#options.sameTransaction !== true || inTransaction === undefined || database === undefined) return store.runOnce(admitted.key, request, () => operation());
    return database.transaction((connection) => inTransaction.call(store, connection, admitted.key, request, operation), { writeLock: true });
  }

  #answerOf(result: RunResult, response: HttpAnswer | undefined): HttpAnswer {
    switch (result.decision) {
      case "execute":
        return response ?? fromStored(result.response);
      case "replay": {
        const stored = result.response;
        const replayed = stored === null ? statusAnswer(500, result.outcome === "failed" ? result.error : undefined) : fromStored(stored);
        return { ...replayed, headers: [...replayed.headers, replayedHeader()] };
      }
      case "in_progress":
        return problemAnswer(result.problem, undefined, [retryAfter(result.retryAfterSecs)]);
      case "fingerprint_mismatch":
      case "key_too_old":
        return problemAnswer(result.problem);
    }
  }
}

/** Header values of a framework as one string (repeated headers joined with `, `). */
export function headerText(value: string | readonly string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(", ") : String(value);
}

/** The bytes of a response payload as frameworks hold it. */
export function payloadBytes(payload: unknown): Uint8Array {
  if (payload === null || payload === undefined) return new Uint8Array();
  if (payload instanceof Uint8Array) return payload;
  if (typeof payload === "string") return new TextEncoder().encode(payload);
  throw new TypeError("the response payload must be a string or bytes");
}
