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
import { type Admitted, type HttpRequestView, headerText, HttpIdempotency, type IdempotencyOptions, payloadBytes, type RunAnswer } from "./core.js";
import { type GrantEndpointOptions, grantIssuer } from "./grant.js";
import { groupedHeaders, headerPairs } from "./node-response.js";

export { DEFAULT_BODY_LIMIT, DEFAULT_METHODS, DEFAULT_STORED_HEADERS, IDEMPOTENCY_KEY_HEADER, type IdempotencyOptions, REQUEST_ID_HEADER } from "./core.js";
export type { GrantEndpointOptions } from "./grant.js";

/** What the plugin reads of a Fastify request. */
export interface FastifyRequestLike {
  /** The method. */
  readonly method: string;
  /** The URL (path and query). */
  readonly url: string;
  /** The headers. */
  readonly headers: IncomingHttpHeaders;
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
}

type Hook = (request: FastifyRequestLike, reply: FastifyReplyLike, payload?: unknown) => Promise<unknown>;
interface FastifyHooks {
  addHook(name: "preParsing" | "preHandler" | "onSend", hook: Hook): unknown;
}

/** A request on its way through the hooks. */
interface InFlight {
  readonly admitted: Admitted;
  readonly contentType: string | undefined;
  readonly body: Uint8Array;
  /** Set once the route handler was let through: resolves its response. */
  respond?: (answer: HttpAnswer) => void;
  running?: Promise<RunAnswer>;
}

function viewOf<R extends FastifyRequestLike>(request: R): HttpRequestView<R> {
  return {
    method: request.method.toUpperCase(),
    path: new URL(request.url, "http://localhost").pathname,
    header: (name) => headerText(request.headers[name.toLowerCase()]),
    raw: request,
  };
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
 */
export function idempotency<R extends FastifyRequestLike = FastifyRequestLike>(options: IdempotencyOptions<R>): (instance: unknown) => Promise<void> {
  const core = new HttpIdempotency<R>(options);
  const inFlight = new WeakMap<FastifyRequestLike, InFlight>();

  const preParsing: Hook = async (request, reply, payload) => {
    const view = viewOf(request as R);
    if (!core.covers(view)) return payload;
    const admission = await core.admit(view);
    if ("answer" in admission) return send(reply, admission.answer);
    const body = await readLimited(payload as AsyncIterable<Uint8Array>, core.bodyLimit);
    if (body === undefined) return send(reply, core.tooLarge());
    inFlight.set(request, { admitted: admission.admitted, contentType: headerText(request.headers["content-type"]), body });
    return Readable.from([Buffer.from(body)]);
  };

  const preHandler: Hook = async (request, reply) => {
    const flight = inFlight.get(request);
    if (flight === undefined) return undefined;
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<undefined>((resolve) => {
      started = () => resolve(undefined);
    });
    const response = new Promise<HttpAnswer>((resolve) => {
      flight.respond = resolve;
    });
    const running = core.run(flight.admitted, flight.contentType, flight.body, () => {
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
    // The handler's response goes out once the store has it (or failed to keep it).
    await flight.running;
    return Buffer.from(body);
  };

  const plugin = async (instance: unknown) => {
    const hooks = instance as FastifyHooks;
    hooks.addHook("preParsing", preParsing);
    hooks.addHook("preHandler", preHandler);
    hooks.addHook("onSend", onSend);
  };
  return Object.assign(plugin, { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "mintid-idempotency" });
}

/**
 * A route handler answering `{ grant, expiresMillis }` (JSON, `Cache-Control:
 * no-store`) for the logged-in user's scope, or 401 when `scope` gives none.
 */
export function grantEndpoint<R extends FastifyRequestLike = FastifyRequestLike>(options: GrantEndpointOptions<R>): (request: R, reply: FastifyReplyLike) => Promise<FastifyReplyLike> {
  const issue = grantIssuer(options);
  return async (request, reply) => send(reply, await issue(request));
}
