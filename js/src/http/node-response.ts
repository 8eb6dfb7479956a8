/** Moving an {@link HttpAnswer} in and out of Node's `ServerResponse`. */

import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { HttpAnswer } from "./answer.js";

/** Header pairs of Node's header object (lower-case names; repeated headers as several pairs). */
export function headerPairs(headers: OutgoingHttpHeaders): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) pairs.push([name.toLowerCase(), String(item)]);
  }
  return pairs;
}

/** Header pairs grouped by name, as `setHeader` and Fastify's `headers` take them. */
export function groupedHeaders(pairs: HttpAnswer["headers"]): Record<string, string | string[]> {
  const grouped: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const current = grouped[name];
    grouped[name] = current === undefined ? value : [...(Array.isArray(current) ? current : [current]), value];
  }
  return grouped;
}

/** Sends `answer` on a response nothing was written to yet. */
export function sendAnswer(res: ServerResponse, answer: HttpAnswer): void {
  res.statusCode = answer.status;
  for (const [name, value] of Object.entries(groupedHeaders(answer.headers))) res.setHeader(name, value);
  res.setHeader("content-length", answer.body.byteLength);
  res.end(answer.body);
}
