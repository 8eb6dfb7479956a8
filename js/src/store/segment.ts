/**
 * Segment IDs over `id_segment`, driven by the core's segment driver on the
 * wire: a take hands out a run of IDs (counted out here, no call per ID) and
 * says what to do next (hand out, fetch beside, fetch now, wait), and the
 * driver names the fetch's every step (the tag created on first use,
 * retries, typed errors); this module runs the steps.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { SegmentPolicy } from "../node.js";
import { type StoreClock, systemClock, waitAtMostShutdown } from "./clock.js";
import type { Database } from "./database.js";
import { Driver, failure, type Use } from "./loop.js";
import { Reporter, type StoreMetrics } from "./metrics.js";
import { defaultMetrics } from "./otel.js";
import type { WireTaken } from "./wire.js";

/** IDs of one tag, unique across every process sharing the tag, increasing within this one. */
export class SegmentIds {
  /** The database. */
  readonly database: Database;
  /** The tag. */
  readonly tag: string;
  readonly #driver: Driver<"segment">;
  #next = 0n;
  #end = 0n;
  /** What the last take said when it handed out nothing. */
  #last: WireTaken | undefined;
  /** The fetch under way: resolves to its error, or `undefined` once the segment is installed. */
  #fetching: Promise<unknown> | undefined;

  /**
   * IDs of `tag` (1 to 64 ASCII characters, created on first use) under
   * `policy`; `options.metrics` gets their database errors (default as in
   * `IdempotencyStoreOptions.metrics`).
   *
   * @throws SegmentError `segment.invalid_tag`, … (the core's refusal of the tag or policy, as in every host).
   */
  constructor(database: Database, tag: string, policy: SegmentPolicy, options: { readonly clock?: StoreClock; readonly metrics?: StoreMetrics } = {}) {
    if (!(policy instanceof SegmentPolicy)) throw new TypeError("policy must be a SegmentPolicy");
    if (typeof tag !== "string") throw new TypeError("tag must be a string");
    this.database = database;
    this.tag = tag;
    const { initialStep, minStep, maxStep, fetchAtPercent, growBelowMillis, shrinkAboveMillis } = policy;
    const fields = { initialStep, minStep, maxStep, fetchAtPercent, growBelowMillis, shrinkAboveMillis };
    const use: Use = (action) => this.database.withConnection(action);
    const context = { clock: options.clock ?? systemClock, reporter: new Reporter(options.metrics ?? defaultMetrics()), dialect: database.dialect, use };
    this.#driver = new Driver(context, { kind: "segment", tag, policy: fields });
    try {
      this.#driver.check();
    } catch (error) {
      this.#driver.free();
      throw error;
    }
  }

  /**
   * The next ID: from memory in the steady state; runs the fetch, or waits
   * for another caller's, only when both segments ran out.
   *
   * @throws StoreError `store.unavailable` when a needed segment cannot be fetched.
   */
  async nextId(): Promise<bigint> {
    for (;;) {
      const id = this.nextIdNow();
      if (id !== undefined) return id;
      const taken = this.#last;
      if (taken?.action === "fetch_now") {
        const failure = await this.#fetching;
        if (failure !== undefined) throw failure;
      } else if (taken?.action === "wait") {
        // Another caller's fetch: until it ends, at most the core's bound (a wake-up missed).
        const woken = new AbortController();
        await Promise.race([this.#fetching, sleep(Number(taken.waitMillis), undefined, { signal: woken.signal }).catch(() => undefined)]);
        woken.abort();
      }
    }
  }

  /**
   * The next ID if one is in memory (the steady state: no promise, no
   * database), or `undefined` when both segments ran out: then `await nextId()`.
   */
  nextIdNow(): bigint | undefined {
    const next = this.#next;
    if (next < this.#end) {
      this.#next = next + 1n;
      return next;
    }
    const taken = this.#driver.tell({ tag: "take" });
    if (taken.tag === "fail") throw failure(taken, undefined);
    if (taken.tag !== "taken") throw new TypeError(`the segment driver answered a take with ${taken.tag}`);
    // Fetch beside (in the background: its failure is the driver's to record) or now (awaited by nextId).
    if (taken.action === "fetch_beside" || taken.action === "fetch_now") this.#fetch();
    if (taken.count === 0n) {
      this.#last = taken;
      return undefined;
    }
    this.#next = taken.first + 1n;
    this.#end = taken.first + taken.count;
    return taken.first;
  }

  /** Waits for a fetch in flight (e.g. before a test inspects the row). */
  async settled(): Promise<void> {
    await this.#fetching;
  }

  /**
   * Waits for a background fetch under way at most the core's shutdown bound
   * (`shutdownWaitMillis()`, 10 s), then goes on without it: a segment it
   * claims later is a gap unless these IDs are drawn from again.
   */
  async close(): Promise<void> {
    await waitAtMostShutdown(this.#fetching);
  }

  /** {@link close} at the end of an `await using` block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Runs the due fetch's steps; {@link #fetching} resolves to its error, if it failed. */
  #fetch(): void {
    const driver = this.#driver;
    const fetching: Promise<unknown> = driver.drive({ tag: "fetch" }).then(
      () => undefined,
      (error: unknown) => {
        // After the driver's own failure this does nothing; otherwise the host failed mid-fetch.
        driver.tell({ tag: "abandon" });
        return error;
      },
    );
    this.#fetching = fetching;
    void fetching.finally(() => {
      if (this.#fetching === fetching) this.#fetching = undefined;
    });
  }
}
