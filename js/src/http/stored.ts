/**
 * A response as the idempotency store keeps it: the content type in the
 * record's content-type column, and in its body column a small envelope
 * holding the status, the selected headers and the body bytes
 * (`tests/http/README.md`, "Stored responses"):
 *
 * ```text
 * mintid-http/1 201\r\n
 * location: /orders/7\r\n
 * \r\n
 * <body bytes>
 * ```
 */

import type { StoredResponse } from "../store/idempotency.js";
import type { HttpAnswer } from "./answer.js";

const MAGIC = "mintid-http/1 ";
const CRLF = "\r\n";
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The stored form of `answer`, keeping only the headers named in `keep` (lower case) besides content-type. */
export function toStored(answer: HttpAnswer, keep: ReadonlySet<string>): StoredResponse {
  let contentType = "";
  let head = `${MAGIC}${answer.status}${CRLF}`;
  for (const [name, value] of answer.headers) {
    if (name === "content-type") contentType = value;
    else if (keep.has(name)) head += `${name}: ${value}${CRLF}`;
  }
  const headBytes = encoder.encode(head + CRLF);
  const body = new Uint8Array(headBytes.byteLength + answer.body.byteLength);
  body.set(headBytes, 0);
  body.set(answer.body, headBytes.byteLength);
  return { contentType, body };
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.byteLength; i += 1) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

/**
 * The answer a stored response replays.
 *
 * @throws Error when the stored bytes are not an envelope (a record written by something else).
 */
export function fromStored(stored: StoredResponse): HttpAnswer {
  const end = indexOfBlankLine(stored.body);
  const lines = end < 0 ? [] : decoder.decode(stored.body.subarray(0, end)).split(CRLF);
  const first = lines.shift() ?? "";
  const status = Number(first.slice(MAGIC.length));
  if (!first.startsWith(MAGIC) || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new Error("the stored response is not a mintid-http/1 envelope");
  }
  const headers: Array<readonly [string, string]> = stored.contentType === "" ? [] : [["content-type", stored.contentType]];
  for (const line of lines) {
    const colon = line.indexOf(": ");
    if (colon <= 0) throw new Error(`the stored response has a bad header line: ${line}`);
    headers.push([line.slice(0, colon), line.slice(colon + 2)]);
  }
  return { status, headers, body: stored.body.slice(end + 4) };
}
