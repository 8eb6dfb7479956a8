/**
 * `mintid/http/fastify`: the idempotency plugin and the grant endpoint for
 * Fastify 4 and 5.
 *
 * @packageDocumentation
 */

import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import type { HttpAnswer } from "./answer.js";
import { readLimited } from "./body.js";
import type { StoreRequest } from "../store/idempotency.js";
import { type Admitted, type HttpRequestView, headerText, HttpIdempotency, type IdempotencyOptions, type MintidRequestState, payloadBytes, type RunAnswer } from "./core.js";
import { type GrantEndpointOptions, grantIssuer } from "./grant.js";
import { groupedHeaders, headerPairs } from "./node-response.js";

export {
  DEFAULT_BODY_LIMIT,
  DEFAULT_METHODS,
  DEFAULT_STORED_HEADERS,
  IDEMPOTENCY_KEY_HEADER,
  type IdempotencyOptions,
  type MintidRequestState,
  REQUEST_ID_HEADER,
} from "./core.js";
export type { GrantEndpointOptions } from "./grant.js";

/** What the plugin reads of a Fastify request. */
export interface FastifyRequestLike {
  /** The method. */
  readonly method: string;
  /** The URL (path and query), as received: the full path, any prefix included. */
  readonly url: string;
  /** The matched route's options (Fastify 4.10 and later): its handler. */
  readonly routeOptions?: { readonly handler?: unknown };
  /** The headers. */
  readonly headers: IncomingHttpHeaders;
  /** The record's transaction, set for the route handler under the same-transaction mode. */
  mintid?: MintidRequestState | null;
}

/** What the plugin uses of a Fastify reply. */
export interface FastifyReplyLike {
  /** The status code set so far. */
  readonly statusCode: number;
  /** Sets the status code. */
  code(status: number): FastifyReplyLike;
  /** Sets headers. */
  headers(values: Record<string, string | string[]>): FastifyReplyLike;
  /** The headers set so far. */
  getHeaders(): OutgoingHttpHeaders;
  /** Sends a payload. */
  send(payload?: unknown): FastifyReplyLike;
  /** Removes a header. */
  removeHeader(name: string): FastifyReplyLike;
}

type Hook = (request: FastifyRequestLike, reply: FastifyReplyLike, payload?: unknown) => Promise<unknown>;
interface FastifyHooks {
  addHook(name: "preParsing" | "preHandler" | "onSend", hook: Hook): unknown;
  post(path: string, handler: (request: never, reply: FastifyReplyLike) => Promise<FastifyReplyLike>): unknown;
  hasRequestDecorator(name: string): boolean;
  decorateRequest(name: string, value: null): unknown;
}

/** A request on its way through the hooks. */
interface InFlight {
  readonly admitted: Admitted;
  /** What the store compares (taken before Fastify's parsers, which refuse bad JSON their own way). */
  readonly request: StoreRequest;
  /** The reply's headers before the route handler ran (set by earlier hooks). */
  before?: OutgoingHttpHeaders;
  /** Set once the route handler was let through: resolves its response. */
  respond?: (answer: HttpAnswer) => void;
  running?: Promise<RunAnswer>;
}

/** Route handlers made by {@link grantEndpoint}: the plugin never covers their routes. */
const GRANT_HANDLERS = new WeakSet<object>();

function viewOf<R extends FastifyRequestLike>(request: R): HttpRequestView<R> {
  const at = request.url.indexOf("?");
  return {
    method: request.method.toUpperCase(),
    // The raw path (the core cuts any query and decodes escapes): prefixes included.
    path: at < 0 ? request.url : request.url.slice(0, at),
    query: at < 0 ? "" : request.url.slice(at + 1),
    header: (name) => headerText(request.headers[name.toLowerCase()]),
    raw: request,
  };
}

function isGrantRoute(request: FastifyRequestLike): boolean {
  const handler = request.routeOptions?.handler;
  return typeof handler === "function" && GRANT_HANDLERS.has(handler);
}

/**
 * Sends `answer` from a hook. The hook returns the reply: Fastify then waits
 * until it is sent (a reply is a thenable), so the rest of the chain and the
 * route handler do not run.
 */
function send(reply: FastifyReplyLike, answer: HttpAnswer): FastifyReplyLike {
  return reply.code(answer.status).headers(groupedHeaders(answer.headers)).send(Buffer.from(answer.body));
}

async function payloadOf(payload: unknown): Promise<Uint8Array> {
  if (payload instanceof Readable) return (await readLimited(payload, Number.MAX_SAFE_INTEGER)) ?? new Uint8Array();
  return payloadBytes(payload);
}

/**
 * The idempotency plugin: `await app.register(idempotency({ store, scope, … }))`.
 * Its hooks apply to the instance it is registered on (it skips Fastify's
 * encapsulation, as `fastify-plugin` does) and to every route registered
 * after it. It reads the body of covered requests itself (up to
 * `bodyLimit`) before Fastify's parsers, which then parse it as usual.
 * With `sameTransaction: true` the route handler finds the record's
 * transaction on `request.mintid` (`client`: the database library's own
 * object) and writes on it.
 */
export function idempotency<R extends FastifyRequestLike = FastifyRequestLike>(options: IdempotencyOptions<R>): (instance: unknown) => Promise<void> {
  const core = new HttpIdempotency<R>(options);
  const inFlight = new WeakMap<FastifyRequestLike, InFlight>();

  const preParsing: Hook = async (request, reply, payload) => {
    const view = viewOf(request as R);
    if (isGrantRoute(request) || !core.covers(view)) return payload;
    const admission = await core.admit(view);
    if ("answer" in admission) return send(reply, admission.answer);
    const body = await readLimited(payload as AsyncIterable<Uint8Array>, core.bodyLimit);
    if (body === undefined) return send(reply, core.tooLarge());
    const stored = core.storeRequest(admission.admitted, headerText(request.headers["content-type"]), body);
    if ("status" in stored) return send(reply, stored);
    inFlight.set(request, { admitted: admission.admitted, request: stored });
    return Readable.from([Buffer.from(body)]);
  };

  const preHandler: Hook = async (request, reply) => {
    const flight = inFlight.get(request);
    if (flight === undefined) return undefined;
    flight.before = { ...reply.getHeaders() };
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<undefined>((resolve) => {
      started = () => resolve(undefined);
    });
    const response = new Promise<HttpAnswer>((resolve) => {
      flight.respond = resolve;
    });
    const running = core.runRequest(flight.admitted, flight.request, (mintid) => {
      if (mintid !== undefined) request.mintid = mintid;
      started();
      return response;
    });
    flight.running = running;
    const first = await Promise.race([handlerStarted, running]);
    if (first === undefined) return undefined;
    inFlight.delete(request);
    return send(reply, first.answer);
  };

  const onSend: Hook = async (request, reply, payload) => {
    const flight = inFlight.get(request);
    if (flight?.respond === undefined || flight.running === undefined) return payload;
    inFlight.delete(request);
    const body = await payloadOf(payload);
    flight.respond({ status: reply.statusCode, headers: headerPairs(reply.getHeaders()), body });
    // The handler's response goes out once the store has it.
    const { answer, executed } = await flight.running;
    if (executed) return Buffer.from(body);
    // The store failed after the handler answered: its answer instead, without what the route set.
    for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(flight.before ?? {})) if (value !== undefined) headers[name] = Array.isArray(value) ? value : String(value);
    reply.code(answer.status).headers({ ...headers, ...groupedHeaders(answer.headers) });
    return Buffer.from(answer.body);
  };

  const plugin = async (instance: unknown) => {
    const hooks = instance as FastifyHooks;
    hooks.addHook("preParsing", preParsing);
    hooks.addHook("preHandler", preHandler);
    hooks.addHook("onSend", onSend);
    // `request.mintid`: the record's transaction under the same-transaction mode.
    if (!hooks.hasRequestDecorator("mintid")) hooks.decorateRequest("mintid", null);
    // The grant endpoint's route, never covered (its handler is a grant endpoint's).
    if (options.grant !== undefined && options.keyRing !== undefined) {
      hooks.post(options.grant.path, grantEndpoint<R>({ ...options.grant, keyRing: options.keyRing }));
    }
  };
  return Object.assign(plugin, { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "mintid-idempotency" });
}

/**
 * A route handler answering `{ grant, expiresMillis }` (JSON, `Cache-Control:
 * no-store`) for the logged-in user's scope, or 401 when `scope` gives none.
 */
export function grantEndpoint<R extends FastifyRequestLike = FastifyRequestLike>(
  options: GrantEndpointOptions<R>,
): (request: R, reply: FastifyReplyLike) => Promise<FastifyReplyLike> {
  const issue = grantIssuer(options);
  const handler = async (request: R, reply: FastifyReplyLike) => send(reply, await issue(request));
  GRANT_HANDLERS.add(handler);
  return handler;
}
