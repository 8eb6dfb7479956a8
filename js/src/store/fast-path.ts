/**
 * The Redis Cluster fast path in front of an {@link IdempotencyStore}.
 *
 * Before the database, one script (`EVALSHA`, one round trip) either
 * replays a stored response, says that a duplicate is in flight, or lets the
 * request through to the database claim; after the database committed a
 * result, a second script writes it to Redis with a time to live below the
 * record's retention. The database stays the truth: Redis failing, slow,
 * failing over, evicting or flushed sends the request down the database
 * path. The record driver yields every Redis step in its order and decides
 * on every answer (`mintid::store`, `docs/spec.md` "The fast path"); this
 * module only sends the call the driver names on the client given and packs
 * what Redis said.
 *
 * The client is the application's ioredis `Cluster` (or a plain `Redis`),
 * made with a short `commandTimeout`, no retries and no offline queue; this
 * module never imports ioredis itself.
 */

import { toU64 } from "../check.js";
import type { RedisAnswer, WireRedis } from "./wire.js";
import type { FastPathVerdict, StoreMetrics } from "./metrics.js";

/**
 * What the fast path needs of a Redis client: ioredis's `callBuffer` (a
 * `Cluster` routes the call by its key's slot). Any client that sends one
 * command and answers with its reply, bulk strings as bytes, fits.
 */
export interface FastPathClient {
  callBuffer(command: string, args: (string | Buffer | number)[]): Promise<unknown>;
}

/** The fast path's counters, as read by {@link RedisFastPath.metrics}. */
export interface FastPathMetrics {
  /** Requests answered from Redis (a replay or in progress). */
  readonly hits: number;
  /** Requests that found nothing usable in Redis and went to the database. */
  readonly misses: number;
  /** Requests whose check failed (error, timeout, failover) and went to the database. */
  readonly fallbacks: number;
  /** Writes after the database path (settle, forget) that failed; nothing depends on them. */
  readonly writeFailures: number;
}

/** Options of a {@link RedisFastPath}. */
export interface FastPathOptions {
  /** Caps how long an entry lives (ms); it always ends before the record's retention. */
  readonly ttlMillis?: number | bigint;
}

/** The counter of each lookup verdict. */
const COUNTERS: Readonly<Record<FastPathVerdict, "hits" | "misses" | "fallbacks">> = { hit: "hits", miss: "misses", fallback: "fallbacks" };

const counts = new WeakMap<RedisFastPath, Record<keyof FastPathMetrics, number>>();

/**
 * The fast path over `client` (an ioredis `Cluster`): pass it to an
 * {@link IdempotencyStore} as the `fastPath` option. One instance may serve
 * several stores; its counters ({@link metrics}) add up across them.
 */
export class RedisFastPath {
  /** The Redis client. */
  readonly client: FastPathClient;
  /** The cap on an entry's life (ms), or `undefined`. */
  readonly ttlMillis: bigint | undefined;

  /** The fast path over `client`, with the core's scripts (sent by `EVALSHA`, by `EVAL` when a node does not have them). */
  constructor(client: FastPathClient, options: FastPathOptions = {}) {
    if (typeof client !== "object" || client === null || typeof client.callBuffer !== "function")
      throw new TypeError("client must be a Redis client with callBuffer (ioredis Cluster or Redis)");
    this.client = client;
    this.ttlMillis = options.ttlMillis === undefined ? undefined : toU64(options.ttlMillis, "ttlMillis");
    counts.set(this, { hits: 0, misses: 0, fallbacks: 0, writeFailures: 0 });
  }

  /** The counters so far. */
  get metrics(): FastPathMetrics {
    return { ...counts.get(this) } as FastPathMetrics;
  }
}

/** Sends the driver's `call` on `fast`'s client (`EVALSHA sha nkeys keys… args…`, or `EVAL source …`); the answer, a failure or timeout included. */
export async function sendRedis(fast: RedisFastPath, call: WireRedis): Promise<RedisAnswer> {
  const bytes = (item: Uint8Array) => Buffer.from(item.buffer, item.byteOffset, item.byteLength);
  try {
    return answerOf(await fast.client.callBuffer(call.eval ? "EVAL" : "EVALSHA", [call.code, call.keys.length, ...call.keys, ...call.args.map(bytes)]));
  } catch (error) {
    // Down, slow, failing over, or the node without the script (ioredis's ReplyError).
    if (error instanceof Error && error.message.startsWith("NOSCRIPT")) return { answer: "noscript" };
    return { answer: "failed", message: error instanceof Error && error.message !== "" ? error.message : String(error) };
  }
}

/** Counts what the record driver's fast path came to since its last report in `fast`'s counters and in `metrics`. */
export function countReport(fast: RedisFastPath, { lookup, writeFailures }: { readonly lookup: string | null; readonly writeFailures: number }, metrics: StoreMetrics): void {
  const counted = counts.get(fast);
  if (counted === undefined) return;
  if (lookup !== null) {
    counted[COUNTERS[lookup as FastPathVerdict]] += 1;
    metrics.fastPathLookup?.(lookup as FastPathVerdict);
  }
  for (let n = 0; n < writeFailures; n += 1) {
    counted.writeFailures += 1;
    metrics.fastPathWriteFailed?.();
  }
}

const encoder = new TextEncoder();

/**
 * What Redis answered, for the driver: nil, an array (its elements nil,
 * bytes or integers), an integer (one field, its decimal text), or a
 * failure (a reply of another shape).
 */
function answerOf(reply: unknown): RedisAnswer {
  if (reply === null || reply === undefined) return { answer: "nil" };
  const items = Array.isArray(reply) ? (reply as unknown[]) : typeof reply === "number" || typeof reply === "bigint" ? [reply] : undefined;
  if (items === undefined) return { answer: "failed", message: `a reply of type ${typeName(reply)}` };
  const fields: (Uint8Array | null)[] = [];
  for (const item of items) {
    if (item === null || item === undefined) fields.push(null);
    else if (item instanceof Uint8Array) fields.push(item);
    else if (typeof item === "number" || typeof item === "bigint") fields.push(encoder.encode(String(item)));
    else return { answer: "failed", message: `an element of type ${typeName(item)}` };
  }
  return { answer: "fields", fields };
}

function typeName(value: unknown): string {
  return value instanceof Uint8Array ? "bytes" : Array.isArray(value) ? "array" : typeof value;
}
