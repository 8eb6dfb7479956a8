/** Snowflake IDs: 64-bit, time-ordered, with a configurable {@link SnowflakeLayout}. */

import * as wasm from "./wasm/mintid_wasm.js";
import { MAX_BULK } from "./batch.js";
import { call } from "./call.js";
import { checkIndex, checkString, checkU64, toU64 } from "./check.js";
import { clockArg, layoutHandle, rollbackArgs, setLayoutHandle } from "./handles.js";
import type { ManualClock, RollbackPolicy } from "./sources.js";

/** The names of the preset layouts. */
export type SnowflakePreset = "classic" | "twitter" | "datacenter-worker" | "sonyflake-like" | "js-safe";

/** The fields of a custom layout. */
export interface SnowflakeLayoutFields {
  /** Width of the time field (at least 1). */
  readonly timeBits: number;
  /** Width of the worker field (may be 0). */
  readonly workerBits: number;
  /** Width of the sequence field (at least 1); the three add up to at most 63. */
  readonly sequenceBits: number;
  /** The Unix millisecond of tick 0. */
  readonly epochMillis: number | bigint;
  /** Length of a tick in milliseconds (default 1). */
  readonly tickMillis?: number | bigint;
  /** How many of the top worker bits are a datacenter id (default 0). */
  readonly datacenterBits?: number;
}

/** The fields of a decoded ID. */
export interface SnowflakeParts {
  /** The start of the ID's tick, in Unix milliseconds. */
  readonly unixMillis: bigint;
  /** Ticks since the layout's epoch. */
  readonly tick: bigint;
  /** The whole worker field (datacenter and worker together, if split). */
  readonly worker: bigint;
  /** The sequence number within the tick. */
  readonly sequence: bigint;
}

function bits(value: unknown, what: string): number {
  return checkIndex(value, 256, what);
}

/**
 * The bit layout of a Snowflake ID: a zero sign bit, then `timeBits` of ticks
 * since the epoch, `workerBits` of worker id and `sequenceBits` of sequence.
 * Immutable.
 */
export class SnowflakeLayout {
  /**
   * A custom layout.
   *
   * @throws SnowflakeError `snowflake.invalid_layout`.
   */
  constructor(fields: SnowflakeLayoutFields) {
    const timeBits = bits(fields.timeBits, "timeBits");
    const workerBits = bits(fields.workerBits, "workerBits");
    const sequenceBits = bits(fields.sequenceBits, "sequenceBits");
    const epochMillis = toU64(fields.epochMillis, "epochMillis");
    const tickMillis = toU64(fields.tickMillis ?? 1, "tickMillis");
    const datacenterBits = bits(fields.datacenterBits ?? 0, "datacenterBits");
    call(() => {
      const handle = new wasm.LayoutHandle(timeBits, workerBits, sequenceBits, epochMillis, tickMillis);
      setLayoutHandle(this, datacenterBits === 0 ? handle : handle.withDatacenterBits(datacenterBits));
    });
  }

  /**
   * The preset called `name` (ASCII case ignored, `_` read as `-`).
   *
   * @throws SnowflakeError `snowflake.unknown_preset`.
   */
  static preset(name: SnowflakePreset | string): SnowflakeLayout {
    checkString(name, "name");
    return fromHandle(call(() => wasm.LayoutHandle.preset(name)));
  }

  /** The same layout with the top `datacenterBits` of the worker field read as a datacenter id. */
  withDatacenterBits(datacenterBits: number): SnowflakeLayout {
    const value = bits(datacenterBits, "datacenterBits");
    return fromHandle(call(() => layoutHandle(this).withDatacenterBits(value)));
  }

  /** The same layout with another epoch. */
  withEpochMillis(epochMillis: number | bigint): SnowflakeLayout {
    const value = toU64(epochMillis, "epochMillis");
    return fromHandle(call(() => layoutHandle(this).withEpochMillis(value)));
  }

  /** Width of the time field. */
  get timeBits(): number {
    return layoutHandle(this).timeBits;
  }
  /** Width of the worker field (datacenter bits included). */
  get workerBits(): number {
    return layoutHandle(this).workerBits;
  }
  /** Width of the sequence field. */
  get sequenceBits(): number {
    return layoutHandle(this).sequenceBits;
  }
  /** How many of the worker bits are a datacenter id. */
  get datacenterBits(): number {
    return layoutHandle(this).datacenterBits;
  }
  /** The Unix millisecond of tick 0. */
  get epochMillis(): bigint {
    return layoutHandle(this).epochMillis;
  }
  /** The length of one tick in milliseconds. */
  get tickMillis(): bigint {
    return layoutHandle(this).tickMillis;
  }
  /** The largest tick: 2^timeBits − 1. */
  get maxTick(): bigint {
    return layoutHandle(this).maxTick;
  }
  /** The largest worker id: 2^workerBits − 1. */
  get maxWorker(): bigint {
    return layoutHandle(this).maxWorker;
  }
  /** The largest sequence number: 2^sequenceBits − 1. */
  get maxSequence(): bigint {
    return layoutHandle(this).maxSequence;
  }
  /** How many IDs one worker can issue per tick. */
  get idsPerTick(): bigint {
    return layoutHandle(this).idsPerTick;
  }
  /** The largest ID of this layout. */
  get maxId(): bigint {
    return layoutHandle(this).maxId;
  }
  /** Whether every ID is below 2^53 (exact in a JS number or a JSON number read by JS). */
  get isJsSafe(): boolean {
    return layoutHandle(this).isJsSafe;
  }
  /** How long the time field lasts from the epoch, in milliseconds. */
  get lifetimeMillis(): bigint {
    return layoutHandle(this).lifetimeMillis;
  }
  /** The first Unix millisecond the layout cannot represent. */
  get expiresAtUnixMillis(): bigint {
    return layoutHandle(this).expiresAtUnixMillis;
  }
  /** Milliseconds left at `nowUnixMillis` (default `Date.now()`) before the time field runs out. */
  remainingMillis(nowUnixMillis: number | bigint = Date.now()): bigint {
    return layoutHandle(this).remainingMillis(toU64(nowUnixMillis, "nowUnixMillis"));
  }

  /**
   * The tick containing `unixMillis`.
   *
   * @throws SnowflakeError `snowflake.time_out_of_range`.
   */
  tickAt(unixMillis: number | bigint): bigint {
    const value = toU64(unixMillis, "unixMillis");
    return call(() => layoutHandle(this).tickAt(value));
  }

  /**
   * The whole worker field of `worker` within `datacenter`.
   *
   * @throws SnowflakeError `snowflake.worker_out_of_range`.
   */
  workerId(datacenter: number | bigint, worker: number | bigint): bigint {
    const d = toU64(datacenter, "datacenter");
    const w = toU64(worker, "worker");
    return call(() => layoutHandle(this).workerId(d, w));
  }

  /** `[datacenter, worker]` of a whole worker field. */
  splitWorkerId(workerId: number | bigint): [bigint, bigint] {
    const [datacenter = 0n, worker = 0n] = layoutHandle(this).splitWorkerId(toU64(workerId, "workerId"));
    return [datacenter, worker];
  }

  /**
   * The ID of `sequence` from `worker` at `unixMillis` (rounded down to its tick) or at `tick`.
   *
   * @throws SnowflakeError `snowflake.time_out_of_range`, `snowflake.worker_out_of_range` or `snowflake.sequence_out_of_range`.
   */
  compose(
    fields: { readonly worker: number | bigint; readonly sequence: number | bigint } & ({ readonly unixMillis: number | bigint } | { readonly tick: number | bigint }),
  ): bigint {
    const worker = toU64(fields.worker, "worker");
    const sequence = toU64(fields.sequence, "sequence");
    const handle = layoutHandle(this);
    if ("tick" in fields) {
      const tick = toU64(fields.tick, "tick");
      return call(() => handle.composeTick(tick, worker, sequence));
    }
    const unixMillis = toU64(fields.unixMillis, "unixMillis");
    return call(() => handle.compose(unixMillis, worker, sequence));
  }

  /**
   * The fields of `id`.
   *
   * @throws SnowflakeError `snowflake.id_out_of_range` (sign bit set, or bits the layout does not have).
   */
  decode(id: bigint): SnowflakeParts {
    const value = checkU64(id, "id");
    const [unixMillis = 0n, tick = 0n, worker = 0n, sequence = 0n] = call(() => layoutHandle(this).decode(value));
    return { unixMillis, tick, worker, sequence };
  }

  /** 41 ms / 10 worker / 12 sequence bits from 2025-01-01: 1024 workers, 4096 IDs per ms each. */
  static get CLASSIC(): SnowflakeLayout {
    return SnowflakeLayout.preset("classic");
  }
  /** Twitter's layout and epoch (41 / 5 + 5 / 12): decodes Twitter's and Hutool's IDs. */
  static get TWITTER(): SnowflakeLayout {
    return SnowflakeLayout.preset("twitter");
  }
  /** 41 / 5 + 5 / 12 from 2025-01-01: 32 datacenters of 32 workers. */
  static get DATACENTER_WORKER(): SnowflakeLayout {
    return SnowflakeLayout.preset("datacenter-worker");
  }
  /** Sonyflake's widths (39 bits of 10 ms / 16 worker / 8 sequence) from 2025-01-01. */
  static get SONYFLAKE_LIKE(): SnowflakeLayout {
    return SnowflakeLayout.preset("sonyflake-like");
  }
  /** IDs below 2^53 (41 / 6 / 6 from 2025-01-01): exact in a JS number. */
  static get JS_SAFE(): SnowflakeLayout {
    return SnowflakeLayout.preset("js-safe");
  }
}

function fromHandle(handle: wasm.LayoutHandle): SnowflakeLayout {
  const layout = Object.create(SnowflakeLayout.prototype) as SnowflakeLayout;
  setLayoutHandle(layout, handle);
  return layout;
}

function layoutOf(layout: SnowflakeLayout | string | undefined): SnowflakeLayout {
  if (layout === undefined) return SnowflakeLayout.preset("classic");
  return typeof layout === "string" ? SnowflakeLayout.preset(layout) : layout;
}

/** What a generator does when a tick's sequence numbers are used up. */
export type SequencePolicy = { readonly kind: "wait" } | { readonly kind: "borrowAhead"; readonly maxTicks: number | bigint };

/** Options of a {@link Snowflake} generator. */
export interface SnowflakeOptions {
  /** The worker id in every ID (at most the layout's `maxWorker`). */
  readonly worker: number | bigint;
  /** The layout or a preset name (default `"classic"`). */
  readonly layout?: SnowflakeLayout | SnowflakePreset;
  /** Clock rollback policy (default: wait out rollbacks of up to 5 ms). */
  readonly rollback?: RollbackPolicy;
  /** Used-up sequence policy (default: wait for the next tick). */
  readonly sequencePolicy?: SequencePolicy;
  /** Issue only IDs after this one (a saved {@link Snowflake.highWater}). */
  readonly startingAfterId?: bigint;
  /**
   * Issue only IDs from ticks after the one containing this Unix millisecond.
   */
  readonly startingAfterUnixMillis?: number | bigint;
  /** A manual clock instead of `Date.now()` (tests); IDs are then made one call at a time, never batched. */
  readonly clock?: ManualClock;
}

/**
 * A Snowflake generator for one worker. Every ID is unique and greater than
 * the one before; IDs are `bigint`s (or decimal strings), never JS numbers.
 */
export class Snowflake {
  readonly #source: wasm.SnowflakeSource;
  readonly #layout: SnowflakeLayout;
  readonly #worker: bigint;
  readonly #batched: boolean;
  #ids: BigUint64Array = new BigUint64Array(0);
  #next = 0;
  #freshUntil = 0;

  /**
   * A generator; see {@link SnowflakeOptions}.
   *
   * @throws SnowflakeError `snowflake.worker_out_of_range`, `snowflake.id_out_of_range`,
   * `snowflake.time_exhausted`, `snowflake.unknown_preset`.
   */
  constructor(options: SnowflakeOptions) {
    const layout = layoutOf(options.layout);
    const worker = toU64(options.worker, "worker");
    const [kind, maxMillis] = rollbackArgs(options.rollback);
    const borrow = borrowTicks(options.sequencePolicy);
    const afterId = options.startingAfterId === undefined ? undefined : checkU64(options.startingAfterId, "startingAfterId");
    const afterMillis = options.startingAfterUnixMillis === undefined ? undefined : toU64(options.startingAfterUnixMillis, "startingAfterUnixMillis");
    const clock = clockArg(options.clock);
    const handle = layoutHandle(layout);
    this.#source = call(() => new wasm.SnowflakeSource(handle, worker, kind, maxMillis, borrow, afterId, afterMillis, clock));
    this.#layout = layout;
    this.#worker = worker;
    this.#batched = options.clock === undefined;
  }

  /**
   * The next ID.
   *
   * @throws SnowflakeError `snowflake.epoch_in_future`, `snowflake.clock_rolled_back`,
   * `snowflake.time_exhausted` or `snowflake.wait_exceeded`.
   */
  nextId(): bigint {
    const index = this.#next;
    if (index < this.#ids.length && Date.now() <= this.#freshUntil) {
      this.#next = index + 1;
      return this.#ids[index] as bigint;
    }
    return this.#refill();
  }

  /** The next ID as decimal text (for JSON and other places a number would lose precision). */
  nextIdString(): string {
    return this.nextId().toString();
  }

  /** `count` consecutive new IDs, made in one wasm call. */
  nextBatch(count: number): BigUint64Array {
    checkIndex(count, MAX_BULK + 1, "count");
    this.#ids = new BigUint64Array(0);
    this.#next = 0;
    return call(() => this.#source.nextBatch(count));
  }

  /** The fields of an ID of this generator's layout. */
  decode(id: bigint): SnowflakeParts {
    return this.#layout.decode(id);
  }

  /** The layout of the IDs. */
  get layout(): SnowflakeLayout {
    return this.#layout;
  }

  /** The worker id in every ID. */
  get worker(): bigint {
    return this.#worker;
  }

  /**
   * The highest ID this generator has made (or was started after); the next
   * is greater. Save it and pass it as `startingAfterId` on restart. IDs made
   * in a batch count even when they were never handed out.
   */
  get highWater(): bigint | undefined {
    return this.#source.highWater;
  }

  /** The Unix millisecond at which the tick of {@link highWater} starts. */
  get highWaterUnixMillis(): bigint | undefined {
    return this.#source.highWaterUnixMillis;
  }

  /**
   * The value of a decimal ID text (digits only).
   *
   * @throws SnowflakeError `snowflake.invalid_text` or `snowflake.id_out_of_range`.
   */
  static parse(text: string): bigint {
    checkString(text, "text");
    return call(() => wasm.snowflakeIdFromDecimal(text));
  }

  /**
   * The value of a 13-character Crockford base32 ID text (case-insensitive).
   *
   * @throws SnowflakeError `snowflake.invalid_text` or `snowflake.id_out_of_range`.
   */
  static parseBase32(text: string): bigint {
    checkString(text, "text");
    return call(() => wasm.snowflakeIdFromBase32(text));
  }

  /**
   * The 13-character upper-case Crockford base32 text of an ID; text order is numeric order.
   *
   * @throws SnowflakeError `snowflake.id_out_of_range` (sign bit set).
   */
  static toBase32(id: bigint): string {
    const value = checkU64(id, "id");
    return call(() => wasm.snowflakeIdToBase32(value));
  }

  /** A new batch, sized and bounded by the core's ID buffer rule (one ID at a time on a manual clock). */
  #refill(): bigint {
    if (!this.#batched) return call(() => this.#source.nextBatch(1))[0] as bigint;
    const handedOut = Math.min(this.#next, this.#ids.length);
    this.#ids = call(() => this.#source.refill(handedOut));
    this.#freshUntil = this.#source.freshUntil;
    this.#next = 1;
    return this.#ids[0] as bigint;
  }
}

function borrowTicks(policy: SequencePolicy | undefined): bigint | undefined {
  if (policy === undefined || policy.kind === "wait") return undefined;
  if (policy.kind === "borrowAhead") return toU64(policy.maxTicks, "sequencePolicy.maxTicks");
  throw new TypeError(`sequencePolicy.kind must be "wait" or "borrowAhead"`);
}
