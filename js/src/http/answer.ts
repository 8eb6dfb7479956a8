/**
 * What the integrations send: a status, headers and body bytes. Refusals are
 * `application/problem+json` documents whose status, type and title come
 * from the core (`problemDetails`); nothing here invents its own.
 */

import { httpConstants, type ProblemName, problemDetails } from "../node.js";

/** A complete HTTP response. */
export interface HttpAnswer {
  /** The status code. */
  readonly status: number;
  /** Header names (lower case) and values. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The body bytes. */
  readonly body: Uint8Array;
}

const encoder = new TextEncoder();

/** The HTTP names and values every mintid server uses (from the core). */
export const HTTP = httpConstants();

function problemDocument(status: number, type: string, title: string, detail: string | undefined, extraHeaders: ReadonlyArray<readonly [string, string]>): HttpAnswer {
  const document = detail === undefined ? { type, title, status } : { type, title, status, detail };
  return {
    status,
    headers: [["content-type", HTTP.problemContentType], ...extraHeaders],
    body: encoder.encode(JSON.stringify(document)),
  };
}

/**
 * The `application/problem+json` answer for the core's problem `name`, with
 * an optional `detail` (e.g. the error's message) and extra headers.
 */
export function problemAnswer(name: ProblemName, detail?: string, extraHeaders: ReadonlyArray<readonly [string, string]> = []): HttpAnswer {
  const details = problemDetails(name);
  if (details === undefined) throw new Error(`the core has no problem named ${name}`);
  return problemDocument(details.status, details.type, details.title, detail, extraHeaders);
}

/**
 * A plain HTTP status as a problem (RFC 9457 §4.2.1: type `about:blank`,
 * the title the status's reason phrase), for the answers outside the
 * idempotency rules: 413 (body over the limit), 401 (no user for a grant).
 */
export function statusAnswer(status: 401 | 413 | 500, detail?: string): HttpAnswer {
  const titles = { 401: "Unauthorized", 413: "Content Too Large", 500: "Internal Server Error" } as const;
  return problemDocument(status, "about:blank", titles[status], detail, []);
}

/** `Retry-After` and its seconds. */
export function retryAfter(secs: bigint): readonly [string, string] {
  return [HTTP.retryAfterHeader.toLowerCase(), secs.toString()];
}

/** The replay marker header (`Idempotent-Replayed: true`). */
export function replayedHeader(): readonly [string, string] {
  return [HTTP.replayedHeader.toLowerCase(), HTTP.replayedValue];
}
