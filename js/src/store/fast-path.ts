/**
 * The Redis Cluster fast path in front of an {@link IdempotencyStore}.
 *
 * Before the database, one script (`EVALSHA`, one round trip) either
 * replays a stored response, says that a duplicate is in flight, or lets the
 * request through to the database claim; after the database committed a
 * result, a second script writes it to Redis with a time to live below the
 * record's retention. The database stays the truth: Redis failing, slow,
 * failing over, evicting or flushed sends the request down the database
 * path. Every decision is the core's (`mintid::store::FastPath`); this
 * module only runs the named scripts on the client given and pushes back
 * what Redis said (`docs/spec.md`, "The fast path").
 *
 * The client is the application's ioredis `Cluster` (or a plain `Redis`),
 * made with a short `commandTimeout`, no retries and no offline queue; this
 * module never imports ioredis itself.
 */

import { createHash } from "node:crypto";
import { toU64 } from "../check.js";
import { policyHandle } from "../handles.js";
import type { IdempotencyKey, RecordPolicy } from "../node.js";
import { drive, type Held } from "./driver.js";
import type { Finished, OperationOutcome } from "./lane.js";
import type { StoreMetrics } from "./metrics.js";
import {
  FastLane,
  type FastVerdict,
  failedAnswer,
  fastPathScripts,
  fastVerdict,
  packAnswer,
  packExecuted,
  packFailedStored,
  packOther,
  type RedisCall,
  redisCall,
} from "./lane-fast.js";

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

interface Script {
  readonly sha: string;
  readonly text: string;
}

/** What a store's {@link BoundFastPath} uses of a {@link RedisFastPath}: its counters and its client. */
interface Internals {
  count(counter: keyof FastPathMetrics): void;
  run(call: RedisCall): Promise<unknown>;
}

let internalsOf: (fast: RedisFastPath) => Internals;

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
  readonly #scripts = new Map<string, Script>();
  readonly #counts = { hits: 0, misses: 0, fallbacks: 0, writeFailures: 0 };

  /** The fast path over `client`, with the core's scripts (sent by `EVALSHA`, loaded again on `NOSCRIPT`). */
  constructor(client: FastPathClient, options: FastPathOptions = {}) {
    if (typeof client !== "object" || client === null || typeof client.callBuffer !== "function")
      throw new TypeError("client must be a Redis client with callBuffer (ioredis Cluster or Redis)");
    this.client = client;
    this.ttlMillis = options.ttlMillis === undefined ? undefined : toU64(options.ttlMillis, "ttlMillis");
    for (const { name, text } of fastPathScripts()) this.#scripts.set(name, { sha: createHash("sha1").update(text).digest("hex"), text });
  }

  /** The counters so far. */
  get metrics(): FastPathMetrics {
    return { ...this.#counts };
  }

  static {
    internalsOf = (fast) => ({
      count: (counter) => {
        fast.#counts[counter] += 1;
      },
      run: (call) => fast.#run(call),
    });
  }

  /** Runs `call` on the client (`EVALSHA`, `EVAL` after `NOSCRIPT`); its reply. */
  async #run(call: RedisCall): Promise<unknown> {
    const script = this.#scripts.get(call.script);
    if (script === undefined) throw new TypeError(`the core named an unknown script ${call.script}`);
    const args = [call.keys.length, ...call.keys, ...call.args.map((arg) => Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength))];
    try {
      return await this.client.callBuffer("EVALSHA", [script.sha, ...args]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return this.client.callBuffer("EVAL", [script.text, ...args]);
    }
  }
}

/** What the database path of one request came to, for the write after it. */
export interface Settling {
  /** The claim the request held, if it got one. */
  held?: Held;
  /** What the operation came to, if it ran. */
  outcome?: OperationOutcome;
  /** The driver's end, if it ended. */
  finished?: Finished;
}

/** A fast path under one store's policy (made by the store): the core's calls out, Redis's answers in. */
export class BoundFastPath {
  readonly #fast: Internals;
  readonly #lane: FastLane;
  readonly #metrics: StoreMetrics;

  constructor(fast: RedisFastPath, policy: RecordPolicy, metrics: StoreMetrics) {
    this.#fast = internalsOf(fast);
    this.#lane = drive(() => new FastLane(policyHandle(policy), fast.ttlMillis), undefined);
    this.#metrics = metrics;
  }

  /** The check before the database: the end to answer with, or `null` to go to the database. */
  async check(
    key: IdempotencyKey,
    fingerprint: string,
    keyCreatedMillis: bigint | undefined,
    now: bigint,
  ): Promise<Extract<FastVerdict, { kind: "replay" | "in_progress" }> | null> {
    const call = redisCall(drive(() => this.#lane.check(key.kind, key.scope, key.id, fingerprint, keyCreatedMillis, now), undefined));
    if (call === null) return null;
    let answer: Uint8Array;
    try {
      answer = packAnswer(await this.#fast.run(call));
    } catch (error) {
      // Down, slow, failing over: the database path.
      answer = failedAnswer(error instanceof Error && error.message !== "" ? error.message : String(error));
    }
    const verdict = fastVerdict(drive(() => this.#lane.read(fingerprint, answer), undefined));
    if (verdict.kind === "replay" || verdict.kind === "in_progress") {
      this.#fast.count("hits");
      this.#metrics.fastPathLookup?.("hit");
      return verdict;
    }
    this.#fast.count(verdict.kind === "miss" ? "misses" : "fallbacks");
    this.#metrics.fastPathLookup?.(verdict.kind);
    return null;
  }

  /** The write after the database path: the committed result, or forget. */
  settle(key: IdempotencyKey, fingerprint: string, { held, outcome, finished }: Settling, now: bigint): RedisCall | null {
    let settled: Uint8Array;
    if (held !== undefined && finished?.kind === "executed" && outcome?.kind === "succeeded") settled = packExecuted(held, outcome.response);
    else if (held !== undefined && finished?.kind === "operation_failed" && finished.stored && outcome?.kind === "failed")
      settled = packFailedStored(held, outcome.message, outcome.response);
    else settled = packOther(held);
    return redisCall(drive(() => this.#lane.settle(key.kind, key.scope, key.id, fingerprint, settled, now), undefined));
  }

  /** The write after a claim, if any: a takeover invalidates the entry. */
  claimed(key: IdempotencyKey, held: Held): RedisCall | null {
    return redisCall(drive(() => this.#lane.claimed(key.kind, key.scope, key.id, held.token, held.createdMillis), undefined));
  }

  /** Runs a write that nothing depends on: a failure is only counted. */
  async write(call: RedisCall | null): Promise<void> {
    if (call === null) return;
    try {
      await this.#fast.run(call);
    } catch {
      // Redis down or slow: the database holds the truth.
      this.#fast.count("writeFailures");
      this.#metrics.fastPathWriteFailed?.();
    }
  }
}
