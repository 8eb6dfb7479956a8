/**
 * Segment IDs over `id_segment`, driven by the core's `SegmentDriver`: it
 * hands out runs of IDs (counted out here, no wasm call per ID), says when
 * the next segment's fetch is due, and names the fetch's every step (the tag
 * created on first use, retries, typed errors); this module runs the steps.
 */

import { segmentPolicyHandle } from "../handles.js";
import { SegmentPolicy } from "../node.js";
import * as wasm from "../wasm/mintid_wasm.js";
import { type StoreClock, systemClock } from "./clock.js";
import type { Database } from "./database.js";
import { drive, manifestOf, runDriver } from "./driver.js";
import { Reporter, type StoreMetrics } from "./metrics.js";
import { defaultMetrics } from "./otel.js";

/** IDs of one tag, unique across every process sharing the tag, increasing within this one. */
export class SegmentIds {
  /** The database. */
  readonly database: Database;
  /** The tag. */
  readonly tag: string;
  readonly #driver: wasm.SegmentDriver;
  readonly #clock: StoreClock;
  readonly #reporter: Reporter;
  #next = 0n;
  #end = 0n;
  /** The fetch under way: resolves to its error, or `undefined` once the segment is installed. */
  #fetching: Promise<unknown> | undefined;

  /** IDs of `tag` (1 to 64 ASCII characters, created on first use) under `policy`; `options.metrics` gets their database errors (default as in `IdempotencyStoreOptions.metrics`). */
  constructor(database: Database, tag: string, policy: SegmentPolicy, options: { readonly clock?: StoreClock; readonly metrics?: StoreMetrics } = {}) {
    if (!(policy instanceof SegmentPolicy)) throw new TypeError("policy must be a SegmentPolicy");
    if (typeof tag !== "string") throw new TypeError("tag must be a string");
    this.database = database;
    this.tag = tag;
    this.#driver = drive(() => new wasm.SegmentDriver(manifestOf(database.dialect), tag, segmentPolicyHandle(policy)), undefined);
    this.#clock = options.clock ?? systemClock;
    this.#reporter = new Reporter(options.metrics ?? defaultMetrics());
  }

  /**
   * The next ID: from memory in the steady state; waits for a fetch only
   * when both segments ran out.
   *
   * @throws StoreError `store.unavailable` when a needed segment cannot be fetched.
   */
  async nextId(): Promise<bigint> {
    for (;;) {
      const id = this.nextIdNow();
      if (id !== undefined) return id;
      const failure = await this.#fetching;
      if (failure !== undefined) throw failure;
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
    const taken = this.#driver.take(this.#clock.now());
    if (taken.fetchDue) {
      const fetching: Promise<unknown> = this.#fetch().finally(() => {
        if (this.#fetching === fetching) this.#fetching = undefined;
      });
      this.#fetching = fetching;
    }
    if (taken.count === 0n) return undefined;
    this.#next = taken.first + 1n;
    this.#end = taken.first + taken.count;
    return taken.first;
  }

  /** Waits for a fetch in flight (e.g. before a test inspects the row). */
  async settled(): Promise<void> {
    await this.#fetching;
  }

  /**
   * Runs the due fetch's steps (the stores' one step loop, `runDriver`); resolves to
   * its typed error if it failed (the driver then ends the fetch, losing
   * nothing).
   */
  async #fetch(): Promise<unknown> {
    const driver = this.#driver;
    const clock = this.#clock;
    try {
      await runDriver(
        this.database,
        clock,
        () => driver.fetch(),
        (answer) => driver.push(answer, clock.now()),
        () => driver.resume(),
        this.#reporter,
      );
      return undefined;
    } catch (error) {
      // After the driver's own failure this does nothing; otherwise the host failed mid-fetch.
      driver.abandon();
      return error;
    }
  }
}
