/**
 * The Redis fast path on the lane: the core's calls and verdicts read, what
 * Redis said and what the database path came to packed (`docs/spec.md`,
 * "The lane"). What each of them means is the core's (`FastLane`); this
 * module only reads and writes the layout.
 */

import type { Held, StoreResponse } from "./driver.js";
import { type Finished, finished, Reader, Writer } from "./lane.js";

export { FastLane, fastPathScripts } from "../wasm/mintid_wasm.js";

/** A script to run: its name, its keys, its arguments. */
export interface RedisCall {
  readonly script: string;
  readonly keys: readonly string[];
  readonly args: readonly Uint8Array[];
}

/** A verdict of the core on a `check`: the end to answer with, or go to the database. */
export type FastVerdict = Extract<Finished, { kind: "replay" | "in_progress" }> | { readonly kind: "miss" } | { readonly kind: "fallback" };

const writer = new Writer();
const encoder = new TextEncoder();

function list(reader: Reader): Uint8Array[] {
  const count = reader.u8();
  const items: Uint8Array[] = [];
  for (let n = 0; n < count; n += 1) items.push(reader.bytes(reader.u32()));
  return items;
}

/** A packed call: `null` (go on without Redis), or the script's name, keys and arguments. */
export function redisCall(packed: Uint8Array): RedisCall | null {
  const reader = new Reader(packed);
  if (reader.u8() === 0) return null;
  const script = reader.text(reader.u8());
  const decoder = new TextDecoder();
  const keys = list(reader).map((key) => decoder.decode(key));
  return { script, keys, args: list(reader) };
}

/** A packed verdict. */
export function fastVerdict(packed: Uint8Array): FastVerdict {
  const tag = packed[0];
  if (tag === 0) return { kind: "miss" };
  if (tag === 1) return { kind: "fallback" };
  const end = finished(new Reader(packed));
  if (end.kind !== "replay" && end.kind !== "in_progress") throw new TypeError(`the fast path answered ${end.kind}`);
  return end;
}

/** Redis failed (an error reply, a timeout, a lost connection), packed. */
export function failedAnswer(message: string): Uint8Array {
  const out = writer.reset();
  out.u8(2);
  out.text(message);
  return out.done();
}

/** What Redis said to a `check`, packed: nil, the fields of an array, or a failure (a reply of another shape). */
export function packAnswer(reply: unknown): Uint8Array {
  if (reply === null || reply === undefined) return Uint8Array.of(0);
  if (!Array.isArray(reply)) return failedAnswer(`a reply of type ${typeof reply}`);
  const out = writer.reset();
  out.u8(1);
  out.u32(reply.length);
  for (const field of reply) {
    if (field === null || field === undefined) out.u8(0);
    else if (field instanceof Uint8Array) {
      out.u8(1);
      out.bytes(field);
    } else if (typeof field === "string" || typeof field === "number" || typeof field === "bigint") {
      out.u8(1);
      out.bytes(encoder.encode(String(field)));
    } else {
      return failedAnswer(`an element of type ${typeof field}`);
    }
  }
  return out.done();
}

function fence(out: Writer, held: Held): void {
  out.u64(held.token);
  out.u64(held.createdMillis);
  out.u64(held.leaseDeadlineMillis);
}

/** The operation ran under `held` and this response is committed, packed. */
export function packExecuted(held: Held, response: StoreResponse): Uint8Array {
  const out = writer.reset();
  out.u8(0);
  fence(out, held);
  out.response(response);
  return out.done();
}

/** The operation ran under `held` and its final failure is committed, packed. */
export function packFailedStored(held: Held, message: string, response: StoreResponse | null): Uint8Array {
  const out = writer.reset();
  out.u8(1);
  fence(out, held);
  out.text(message);
  if (response === null) out.u8(0);
  else {
    out.u8(1);
    out.response(response);
  }
  return out.done();
}

/** Anything else (`held`: the claim the request held, if any), packed. */
export function packOther(held: Held | undefined): Uint8Array {
  const out = writer.reset();
  out.u8(2);
  if (held === undefined) out.u8(0);
  else {
    out.u8(1);
    fence(out, held);
  }
  return out.done();
}
