/**
 * Segment allocation over `id_segment`: IDs handed out from memory, the next
 * segment fetched in the background once the core's `fetchDue` says so
 * (double buffer), the step adapted by the core's `SegmentPolicy`.
 */

import { SegmentAllocator, SegmentPolicy } from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { type Database, execRows, int, one } from "./database.js";
import { storeCall } from "./driver.js";

/** Fetches a segment: `segment_fetch` + `segment_load` in one transaction, creating the tag on first use. */
async function fetchSegment(database: Database, tag: string, step: bigint, now: bigint): Promise<{ maxId: bigint; step: bigint }> {
  return storeCall(() => fetchOrCreate(database, tag, step, now));
}

async function fetchOrCreate(database: Database, tag: string, step: bigint, now: bigint): Promise<{ maxId: bigint; step: bigint }> {
  for (;;) {
    const params = { tag, step, now_millis: now };
    const row = await database.transaction(async (connection) => {
      if ((await execRows(connection, database.statement("segment_fetch"), params)) !== 1) return undefined;
      return one(connection, database.statement("segment_load"), { tag });
    });
    if (row !== undefined) return { maxId: int(row["max_id"]), step: int(row["step"]) };
    // Outside any transaction: two creators of one tag would deadlock on MySQL's gap locks.
    await database.withConnection((connection) => execRows(connection, database.statement("segment_create"), params));
  }
}

/** IDs of one tag, unique across every process sharing the tag, increasing within this one. */
export class SegmentIds {
  /** The database. */
  readonly database: Database;
  /** The tag. */
  readonly tag: string;
  readonly #allocator: SegmentAllocator;
  readonly #clock: StoreClock;
  #fetching: Promise<void> | undefined;
  #lastError: unknown;

  /** IDs of `tag` (1 to 64 ASCII characters) under `policy`. */
  constructor(database: Database, tag: string, policy: SegmentPolicy, options: { readonly clock?: StoreClock } = {}) {
    if (!(policy instanceof SegmentPolicy)) throw new TypeError("policy must be a SegmentPolicy");
    if (typeof tag !== "string" || tag.length === 0) throw new TypeError("tag must be a non-empty string");
    this.database = database;
    this.tag = tag;
    this.#allocator = new SegmentAllocator(policy);
    this.#clock = options.clock ?? systemClock;
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
      this.#lastError = undefined;
      this.#startFetch();
      await this.#fetching;
      if (this.#allocator.remaining === 0n && this.#lastError !== undefined) throw this.#lastError;
    }
  }

  /**
   * The next ID if one is in memory (the steady state: no promise, no
   * database), or `undefined` when both segments ran out: then `await nextId()`.
   */
  nextIdNow(): bigint | undefined {
    const id = this.#allocator.nextId();
    if (id !== undefined) this.#startFetch();
    return id;
  }

  /** Starts the fetch the core asks for, if any, in the background. */
  #startFetch(): void {
    if (this.#fetching !== undefined) return;
    const step = this.#allocator.fetchDue(this.#clock.now());
    if (step === undefined) return;
    this.#fetching = fetchSegment(this.database, this.tag, step, this.#clock.now())
      .then((row) => this.#allocator.fetched(row, this.#clock.now()))
      .catch((error: unknown) => {
        this.#lastError = error;
        this.#allocator.fetchFailed();
      })
      .finally(() => {
        this.#fetching = undefined;
      });
  }

  /** Waits for a fetch in flight (e.g. before a test inspects the row). */
  async settled(): Promise<void> {
    await this.#fetching;
  }
}
