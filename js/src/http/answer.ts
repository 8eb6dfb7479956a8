/**
 * What the integrations send: a status, headers and body bytes. Refusals are
 * `application/problem+json` documents written by the core
 * (`problemDocument`, `statusDocument`); nothing here invents its own.
 */

import { httpConstants, type ProblemName, problemDetails, problemDocument, statusDocument } from "../node.js";

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

function document(status: number, text: string, extraHeaders: ReadonlyArray<readonly [string, string]>): HttpAnswer {
  return { status, headers: [["content-type", HTTP.problemContentType], ...extraHeaders], body: encoder.encode(text) };
}

/**
 * The `application/problem+json` answer for the core's problem `name`, with
 * an optional `detail` (e.g. the error's message) and extra headers.
 */
export function problemAnswer(name: ProblemName, detail?: string, extraHeaders: ReadonlyArray<readonly [string, string]> = []): HttpAnswer {
  const details = problemDetails(name);
  if (details === undefined) throw new Error(`the core has no problem named ${name}`);
  return document(details.status, problemDocument(name, detail), extraHeaders);
}

/**
 * A plain HTTP status as a problem (RFC 9457 §4.2.1: type `about:blank`,
 * the title the status's reason phrase, from the core), for the answers
 * outside the idempotency rules: 413 (body over the limit), 401 (no user for
 * a grant), 500 (a failure replayed without a stored response).
 */
export function statusAnswer(status: 401 | 413 | 500, detail?: string): HttpAnswer {
  return document(status, statusDocument(status, detail), []);
}

/** A refusal the core wrote in full: its `status` and problem `document`. */
export function refusalAnswer(status: number, text: string): HttpAnswer {
  return document(status, text, []);
}

/** `Retry-After` and its seconds. */
export function retryAfter(secs: bigint): readonly [string, string] {
  return [HTTP.retryAfterHeader.toLowerCase(), secs.toString()];
}

/** The replay marker header (`Idempotent-Replayed: true`). */
export function replayedHeader(): readonly [string, string] {
  return [HTTP.replayedHeader.toLowerCase(), HTTP.replayedValue];
}
