/**
 * `mintid/http/express`: the idempotency middleware and the grant endpoint
 * for Express 4 and 5 (any Connect-style framework over Node's `http`).
 *
 * @packageDocumentation
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { checkBodyRead } from "../http-rules.js";
import type { HttpAnswer } from "./answer.js";
import { readLimited } from "./body.js";
import { type HttpRequestView, headerText, HttpIdempotency, type IdempotencyOptions, isJsonContentType, type MintidRequestState } from "./core.js";
import { type GrantEndpointOptions, grantIssuer } from "./grant.js";
import { headerPairs, sendAnswer } from "./node-response.js";

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

/**
 * The request shape the middleware relies on (Express's `req` has it);
 * `rawBody` is where a body parser mounted before the middleware keeps the
 * bytes it read (see {@link keepRawBody}); `mintid` is set for the route
 * under the same-transaction mode (the record's transaction).
 */
export type ExpressRequest = IncomingMessage & { body?: unknown; rawBody?: unknown; path?: string; baseUrl?: string; originalUrl?: string; mintid?: MintidRequestState };
/** Express's `next`. */
export type NextFunction = (error?: unknown) => void;
/** A Connect-style middleware. */
export type Middleware<R extends ExpressRequest> = (req: R, res: ServerResponse, next: NextFunction) => void;

/** The raw query string of a request target, without the `?`. */
function queryOf(target: string): string {
  const at = target.indexOf("?");
  return at < 0 ? "" : target.slice(at + 1);
}

function viewOf<R extends ExpressRequest>(req: R): HttpRequestView<R> {
  const target = req.originalUrl ?? req.url ?? "/";
  return {
    method: (req.method ?? "GET").toUpperCase(),
    // The full path: the sub-app's or router's mount prefix, then the path within it.
    path: req.path === undefined ? new URL(target, "http://localhost").pathname : (req.baseUrl ?? "") + req.path,
    query: queryOf(target),
    header: (name) => headerText(req.headers[name.toLowerCase()]),
    raw: req,
  };
}

/**
 * A `verify` function for Express's body parsers that keeps the bytes they
 * read on `req.rawBody`, where the middleware finds them when it is mounted
 * after the parser: `app.use(express.json({ verify: keepRawBody }))`.
 */
export function keepRawBody(req: IncomingMessage & { rawBody?: unknown }, _res: unknown, body: Buffer): void {
  req.rawBody = body;
}

/** The remedy `http.body_consumed` names. */
const BODY_CONSUMED_FIX = "mount idempotency() before express.json() and any other body parser, or keep the raw body with express.json({ verify: keepRawBody })";

/**
 * The bytes of a covered request's body, or `undefined` over `limit`: read
 * here, or, when a reader mounted before the middleware took bytes out of
 * the stream (`readableDidRead`: a body parser), the raw bytes it kept on
 * `req.rawBody`. `read` says whether the middleware read them itself (and sets `req.body`).
 *
 * @throws HttpError `http.body_consumed` (the core's rule) when the request
 *   declares a body that was taken and not kept, or that ended short.
 */
async function bodyOf(req: ExpressRequest, limit: number): Promise<{ bytes: Uint8Array | undefined; read: boolean }> {
  const taken = req.readableDidRead;
  if (taken && req.rawBody instanceof Uint8Array) return { bytes: req.rawBody.byteLength > limit ? undefined : req.rawBody, read: false };
  const bytes = taken ? new Uint8Array() : await readLimited(req, limit);
  if (bytes === undefined) return { bytes, read: true };
  const length = req.headers["content-length"];
  const declaredLength = length === undefined ? undefined : Number(length);
  checkBodyRead({ declaredLength, transferCoded: req.headers["transfer-encoding"] !== undefined, endedBeforeRead: taken, read: bytes.byteLength }, BODY_CONSUMED_FIX);
  // Taken, and no body declared: the body was empty, and the parser's `req.body` stays.
  return { bytes, read: !taken };
}

/** The body as `express.json()` or `express.raw()` would give it: parsed JSON, or a Buffer. */
function setBody(req: ExpressRequest, contentType: string | undefined, body: Uint8Array): void {
  const buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (isJsonContentType(contentType) && body.byteLength > 0) {
    try {
      req.body = JSON.parse(buffer.toString("utf8"));
      return;
    } catch {
      // Not JSON after all: the handler gets the bytes and decides.
    }
  }
  req.body = buffer;
}

/**
 * Holds back what the route writes on `res` until `release`: `response`
 * resolves with the complete response when the route ends it.
 */
function captureResponse(res: ServerResponse): { response: Promise<HttpAnswer>; release: () => void } {
  const { write, end, writeHead } = res;
  const chunks: Buffer[] = [];
  const add = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8") : Buffer.from(chunk as Uint8Array));
  };
  let resolve: (answer: HttpAnswer) => void = () => undefined;
  const response = new Promise<HttpAnswer>((done) => {
    resolve = done;
  });
  res.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    const headers = rest.find((item) => typeof item === "object" && item !== null);
    if (headers !== undefined) for (const [name, value] of headerPairs(headers as Record<string, string>)) res.appendHeader(name, value);
    return res;
  } as typeof res.writeHead;
  res.write = ((chunk: unknown, encoding?: unknown) => {
    add(chunk, encoding);
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown, encoding?: unknown) => {
    add(chunk, encoding);
    resolve({ status: res.statusCode, headers: headerPairs(res.getHeaders()), body: Buffer.concat(chunks) });
    return res;
  }) as typeof res.end;
  const release = () => {
    res.write = write;
    res.writeHead = writeHead;
    res.end = end;
  };
  return { response, release };
}

/**
 * The idempotency middleware: mount it before the routes it covers (and
 * before `express.json()`: it reads the body itself, up to `bodyLimit`, and
 * sets `req.body` to the parsed JSON or, for other bodies, a `Buffer`).
 * Requests it does not cover pass through untouched. Mounted after a body
 * parser, it fingerprints the raw bytes the parser kept on `req.rawBody`
 * ({@link keepRawBody}); a covered request whose body was read and not kept
 * is refused with HttpError `http.body_consumed` (passed to `next`: the
 * framework's 500, a configuration fault), before anything runs or is stored.
 * With `sameTransaction: true` the route finds the record's transaction on
 * `req.mintid` (`client`: the database library's own object) and writes on
 * it (see {@link IdempotencyOptions.sameTransaction}).
 */
export function idempotency<R extends ExpressRequest = ExpressRequest>(options: IdempotencyOptions<R>): Middleware<R> {
  const core = new HttpIdempotency<R>(options);
  const handle = async (req: R, res: ServerResponse, next: NextFunction): Promise<void> => {
    const view = viewOf(req);
    const grant = await core.grant(view);
    if (grant !== undefined) return sendAnswer(res, grant);
    if (!core.covers(view)) return next();
    const admission = await core.admit(view);
    if ("answer" in admission) return sendAnswer(res, admission.answer);
    const { bytes: body, read } = await bodyOf(req, core.bodyLimit);
    if (body === undefined) return sendAnswer(res, core.tooLarge());
    const contentType = req.headers["content-type"];
    // A parser mounted before the middleware set `req.body` already.
    if (read) setBody(req, contentType, body);
    let release: (() => void) | undefined;
    const before = res.getHeaders();
    const { answer, executed, ran } = await core.run(admission.admitted, contentType, body, (mintid) => {
      const capture = captureResponse(res);
      release = capture.release;
      if (mintid !== undefined) req.mintid = mintid;
      next();
      return capture.response;
    });
    release?.();
    if (ran && !executed) {
      // The store failed after the route answered: drop what the route set.
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      for (const [name, value] of Object.entries(before)) if (value !== undefined) res.setHeader(name, value);
    }
    // The route's own response (its status and headers are already on `res`), or another answer.
    if (executed) res.end(answer.body);
    else sendAnswer(res, answer);
  };
  return (req, res, next) => {
    handle(req, res, next).catch(next);
  };
}

/**
 * A route handler answering `{ grant, expiresMillis }` (JSON, `Cache-Control:
 * no-store`) for the logged-in user's scope, or 401 when `scope` gives none.
 */
export function grantEndpoint<R extends ExpressRequest = ExpressRequest>(options: GrantEndpointOptions<R>): Middleware<R> {
  const issue = grantIssuer(options);
  return (req, res, next) => {
    issue(req).then((answer) => sendAnswer(res, answer), next);
  };
}
