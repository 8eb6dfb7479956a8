/**
 * The rules the HTTP integrations share, from the core (`mintid::http`): the
 * default key kind, which bodies are fingerprinted as JSON, the problem and
 * grant documents, the stored response envelope and the integrations'
 * defaults. `mintid/http` builds its middleware on these; nothing there
 * computes them again. (Not in the browser build.)
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkBytes, checkIndex, checkString, toU64 } from "./check.js";
import type { MintidError } from "./errors.js";
import { Fingerprint } from "./fingerprint.js";
import type { ProblemName } from "./record.js";

/** The HTTP integrations' header names and defaults. */
export interface HttpDefaults {
  /** The IETF draft's header of a plain idempotency key (`Idempotency-Key`). */
  readonly idempotencyKeyHeader: string;
  /** The header of a signed request ID (`Mintid-Request-Id`). */
  readonly requestIdHeader: string;
  /** The largest body read, in bytes (1 MiB). */
  readonly bodyLimit: number;
  /** The methods covered (POST, PATCH). */
  readonly methods: readonly string[];
  /** The response headers stored besides content-type. */
  readonly storedHeaders: readonly string[];
  /** How long a grant lasts, in milliseconds (one hour). */
  readonly grantTtlMillis: number;
  /** The content type of a grant endpoint's answer. */
  readonly grantContentType: string;
}

/** The HTTP integrations' header names and defaults. */
export function httpDefaults(): HttpDefaults {
  const [idempotencyKeyHeader = "", requestIdHeader = "", bodyLimit = "0", grantTtlMillis = "0", grantContentType = ""] = wasm.httpDefaults();
  return {
    idempotencyKeyHeader,
    requestIdHeader,
    bodyLimit: Number(bodyLimit),
    methods: wasm.httpDefaultMethods(),
    storedHeaders: wasm.httpDefaultStoredHeaders(),
    grantTtlMillis: Number(grantTtlMillis),
    grantContentType,
  };
}

/**
 * The default key kind of a request: `http.<method in lower case>.<first 10
 * hex digits of SHA-256 of the path>`. `path` is the full path as the
 * application sees it, mount prefix included (Express `baseUrl` + `path`,
 * Fastify's raw URL); the core cuts off a query and decodes `%XX` escapes.
 *
 * @throws HttpError `http.invalid_method`.
 */
export function defaultKind(method: string, path: string): string {
  checkString(method, "method");
  checkString(path, "path");
  return call(() => wasm.httpDefaultKind(method, path));
}

/** Whether a content type is JSON (`application/json` or `application/…+json`). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType !== undefined) checkString(contentType, "contentType");
  return wasm.httpIsJsonContentType(contentType);
}

/**
 * The fingerprint (`sha256:…`) of a request body: a non-empty JSON body (by
 * its content type) through the canonicaliser, so formatting and member
 * order do not count; any other body as raw bytes.
 *
 * @throws HttpError `http.malformed_body` (problem `malformed_body`) for a
 *   JSON content type whose body is not JSON.
 */
export function fingerprintBody(contentType: string | undefined, body: Uint8Array): Fingerprint {
  if (contentType !== undefined) checkString(contentType, "contentType");
  const bytes = checkBytes(body, "body");
  return Fingerprint.ofText(call(() => wasm.httpFingerprintBody(contentType, bytes)));
}

/**
 * The fingerprint (`sha256:…`) of a request, compared when its key comes
 * again: its body's ({@link fingerprintBody}) and its raw `query` string
 * (without `?`), so that another query under the same key is a mismatch.
 *
 * @throws HttpError `http.malformed_body`, as {@link fingerprintBody}.
 */
export function fingerprintRequest(contentType: string | undefined, query: string, body: Uint8Array): Fingerprint {
  if (contentType !== undefined) checkString(contentType, "contentType");
  checkString(query, "query");
  const bytes = checkBytes(body, "body");
  return Fingerprint.ofText(call(() => wasm.httpFingerprintRequest(contentType, query, bytes)));
}

/** What a middleware saw of a covered request's body when it read it (the core's `http::BodyRead`). */
export interface BodyRead {
  /** The request's `Content-Length`, if it has one. */
  readonly declaredLength: number | undefined;
  /** Whether the request declares a transfer coding (a body of unknown length). */
  readonly transferCoded: boolean;
  /** Whether the body's stream had ended, or bytes had been taken out of it, before the middleware read it. */
  readonly endedBeforeRead: boolean;
  /** How many bytes the middleware read. */
  readonly read: number;
}

/**
 * Checks that the body a middleware read is the request's, before it is
 * fingerprinted: a request that declares a body whose stream another reader
 * had taken (a body parser mounted first), or that gave fewer bytes than its
 * `Content-Length`, is never fingerprinted as what was left. `fix` names the
 * remedy in the framework's words. The core's rule (`mintid::http::check_body_read`).
 *
 * @throws HttpError `http.body_consumed` (the server's setup: no problem document).
 */
export function checkBodyRead(read: BodyRead, fix: string): void {
  checkString(fix, "fix");
  const declared = read.declaredLength === undefined ? undefined : toU64(read.declaredLength, "read.declaredLength");
  call(() => wasm.httpCheckBodyRead(declared, read.transferCoded, read.endedBeforeRead, toU64(read.read, "read.read"), fix));
}

/** Where a covered request's key is read from, or the refusal the core wrote in full. */
export type KeyAdmission = { readonly source: "signed" | "plain" } | { readonly status: number; readonly code: string; readonly document: string };

/**
 * Where a covered request's key is read from (`"signed"`: the signed request
 * ID header, given as `requestIdHeader` only with a key ring; `"plain"`: an
 * `Idempotency-Key`), or the refusal to answer first: 401
 * `http.unauthenticated` when there is no `caller`, 400 `http.missing_key`
 * whose document names the header(s) the route accepts. The core's rule
 * (`mintid::http::admit_key`).
 */
export function admitKey(
  requestIdHeader: string | undefined,
  acceptsIdempotencyKey: boolean,
  request: { readonly caller: boolean; readonly requestIdSent: boolean; readonly idempotencyKeySent: boolean },
): KeyAdmission {
  if (requestIdHeader !== undefined) checkString(requestIdHeader, "requestIdHeader");
  return wasm.httpAdmitKey(requestIdHeader, acceptsIdempotencyKey, request.caller, request.requestIdSent, request.idempotencyKeySent);
}

/**
 * The problem refusing a request whose key failed to read with `error`, from
 * a signed request ID (`signed`) or an `Idempotency-Key`; `undefined`: the
 * server's failure (a kind or scope it computed, a key ring that cannot
 * verify), to be rethrown. The core's rule (`mintid::http::key_refusal`).
 */
export function keyRefusal(error: MintidError, signed: boolean): ProblemName | undefined {
  return wasm.httpKeyRefusal(signed, error.code, error.part) as ProblemName | undefined;
}

/** The `application/problem+json` body of the core's problem `name`, with an optional `detail`. */
export function problemDocument(name: ProblemName, detail?: string): string {
  checkString(name, "name");
  if (detail !== undefined) checkString(detail, "detail");
  return wasm.httpProblemDocument(name, detail);
}

/**
 * The `about:blank` problem body of a plain status: 401, 413 or 500.
 *
 * @throws HttpError `http.invalid_status` for any other status.
 */
export function statusDocument(status: number, detail?: string): string {
  checkIndex(status, 0x10000, "status");
  if (detail !== undefined) checkString(detail, "detail");
  return call(() => wasm.httpStatusDocument(status, detail));
}

/** The body of a grant endpoint's answer: `{"grant", "expiresMillis"}`. */
export function grantDocument(grant: string, expiresMillis: number | bigint): string {
  checkString(grant, "grant");
  return wasm.httpGrantDocument(grant, toU64(expiresMillis, "expiresMillis"));
}

/** A complete HTTP response as the envelope functions see it. */
export interface EnvelopeResponse {
  /** The status code. */
  readonly status: number;
  /** Header names and values, in order. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The body bytes. */
  readonly body: Uint8Array;
}

/** A response as the store keeps it: its content type and the envelope bytes. */
export interface StoredEnvelope {
  /** The content type; empty when the response had none. */
  readonly contentType: string;
  /** The envelope: status, stored headers and body. */
  readonly body: Uint8Array;
}

/**
 * The stored form of `response`: its content type, and the envelope holding
 * its status, the headers named in `storedHeaders` (case-insensitive,
 * written in lower case) and its body.
 *
 * @throws HttpError `http.invalid_status` (outside 100–599) or
 *   `http.invalid_header` (a stored header that is no token, or whose value
 *   holds CR, LF or NUL).
 */
export function encodeEnvelope(response: EnvelopeResponse, storedHeaders: readonly string[]): StoredEnvelope {
  const { status } = response;
  checkIndex(status, 0x10000, "status");
  const flat: string[] = [];
  for (const [name, value] of response.headers) flat.push(checkString(name, "header name"), checkString(value, "header value"));
  const body = checkBytes(response.body, "body");
  const kept = storedHeaders.map((name) => checkString(name, "stored header"));
  const stored = call(() => wasm.httpEncodeEnvelope(status, flat, body, kept));
  return { contentType: stored.contentType, body: stored.bytes };
}

/**
 * The response a stored envelope replays: `content-type` first (when not
 * empty), then the stored headers, and the body.
 *
 * @throws HttpError `http.bad_stored_response` (with `position`) when the
 *   bytes are not an envelope (a record written by something else, or corrupted).
 */
export function decodeEnvelope(contentType: string, body: Uint8Array): EnvelopeResponse {
  checkString(contentType, "contentType");
  const response = call(() => wasm.httpDecodeEnvelope(contentType, checkBytes(body, "body")));
  const flat = response.headers;
  const headers: Array<readonly [string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) headers.push([flat[i] ?? "", flat[i + 1] ?? ""]);
  return { status: response.status, headers, body: response.body };
}
