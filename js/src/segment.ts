/**
 * Segment allocation (Meituan Leaf's segment mode): IDs handed out from
 * ranges the host fetches from a database row (`segment_fetch`), the next
 * range fetched before the current one runs out, the step adapted to demand.
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { MAX_BULK } from "./batch.js";
import { call } from "./call.js";
import { checkIndex, toU64 } from "./check.js";
import { segmentPolicyHandle, setSegmentPolicyHandle } from "./handles.js";

/** The settings of a {@link SegmentPolicy}; each left out keeps the core's default. */
export interface SegmentPolicyOptions {
  /** The step of the first fetch (default 1000). */
  readonly initialStep?: number | bigint;
  /** The smallest step (default 100). */
  readonly minStep?: number | bigint;
  /** The largest step (default 1 000 000). */
  readonly maxStep?: number | bigint;
  /** Fetch the next segment once this percentage of the current one is left (0-100). */
  readonly fetchAtPercent?: number;
  /** Double the step when a segment lasted less than this (ms). */
  readonly growBelowMillis?: number | bigint;
  /** Halve it when a segment lasted more than this (ms). */
  readonly shrinkAboveMillis?: number | bigint;
}

const optional = (value: number | bigint | undefined, what: string): bigint | undefined => (value === undefined ? undefined : toU64(value, what));

/** Segment rules; validated by the core (`segment.invalid_policy`). */
export class SegmentPolicy {
  /** A policy; see {@link SegmentPolicyOptions}. */
  constructor(options: SegmentPolicyOptions = {}) {
    const initial = optional(options.initialStep, "initialStep");
    const min = optional(options.minStep, "minStep");
    const max = optional(options.maxStep, "maxStep");
    const percent = options.fetchAtPercent === undefined ? undefined : checkIndex(options.fetchAtPercent, 256, "fetchAtPercent");
    const grow = optional(options.growBelowMillis, "growBelowMillis");
    const shrink = optional(options.shrinkAboveMillis, "shrinkAboveMillis");
    setSegmentPolicyHandle(
      this,
      call(() => new wasm.SegmentPolicyHandle(initial, min, max, percent, grow, shrink)),
    );
  }

  /** The step of the first fetch. */
  get initialStep(): bigint {
    return this.#setting(0);
  }
  /** The smallest step. */
  get minStep(): bigint {
    return this.#setting(1);
  }
  /** The largest step. */
  get maxStep(): bigint {
    return this.#setting(2);
  }
  /** Double the step when a segment lasted less than this (ms). */
  get growBelowMillis(): bigint {
    return this.#setting(3);
  }
  /** Halve it when a segment lasted more than this (ms). */
  get shrinkAboveMillis(): bigint {
    return this.#setting(4);
  }
  /** Fetch the next segment once this percentage of the current one is left. */
  get fetchAtPercent(): number {
    return Number(this.#setting(5));
  }

  #setting(index: number): bigint {
    return segmentPolicyHandle(this).settings()[index] ?? 0n;
  }

  /** The step after a segment of `step` IDs lasted `lastedMillis`. */
  adapt(step: number | bigint, lastedMillis: number | bigint): bigint {
    return segmentPolicyHandle(this).adapt(toU64(step, "step"), toU64(lastedMillis, "lastedMillis"));
  }
}

/** Hands out IDs from fetched segments; the host fetches when {@link fetchDue} says so. */
export class SegmentAllocator {
  readonly #allocator: wasm.SegmentAllocatorHandle;

  /** An allocator with nothing fetched yet. */
  constructor(policy: SegmentPolicy) {
    this.#allocator = new wasm.SegmentAllocatorHandle(segmentPolicyHandle(policy));
  }

  /** The next ID, or `undefined` when the segments ran out (fetch, then ask again). */
  nextId(): bigint | undefined {
    return this.#allocator.nextId();
  }

  /** Up to `count` IDs (fewer when the segments run out). */
  fill(count: number): BigUint64Array {
    return this.#allocator.fill(checkIndex(count, MAX_BULK + 1, "count"));
  }

  /** IDs left in memory. */
  get remaining(): bigint {
    return this.#allocator.remaining;
  }

  /** The step the next fetch asks for. */
  get step(): bigint {
    return this.#allocator.step;
  }

  /** Whether a fetch is in flight. */
  get fetchInFlight(): boolean {
    return this.#allocator.fetchInFlight;
  }

  /** The step of the fetch to run now, if one is due (it is then in flight). */
  fetchDue(now: number | bigint = Date.now()): bigint | undefined {
    return this.#allocator.fetchDue(toU64(now, "now"));
  }

  /**
   * Takes the row `segment_fetch` returned.
   *
   * @throws SegmentError when the row does not fit what was asked.
   */
  fetched(row: { readonly maxId: number | bigint; readonly step: number | bigint }, now: number | bigint = Date.now()): void {
    const maxId = toU64(row.maxId, "maxId");
    const step = toU64(row.step, "step");
    const at = toU64(now, "now");
    call(() => this.#allocator.fetched(maxId, step, at));
  }

  /** Records that the fetch failed (the next `fetchDue` asks again). */
  fetchFailed(): void {
    this.#allocator.fetchFailed();
  }
}
