/** UUIDs: any version as {@link Uuid}, version 7 as {@link Uuid7}, and generators. */

import * as wasm from "./wasm/mintid_wasm.js";
import { MAX_BULK } from "./batch.js";
import { checkBytes, checkIndex, checkString, checkU64, toU64 } from "./check.js";
import { call } from "./call.js";
import { clockArg, entropyArg, rollbackArgs } from "./handles.js";
import type { FixedEntropy, ManualClock, RollbackPolicy } from "./sources.js";

/** The four text forms of a UUID. */
export type UuidTextForm = "hyphenated" | "simple" | "urn" | "base32";

/** The variant field of a UUID (RFC 9562 §4.1). */
export type UuidVariant = "ncs" | "rfc9562" | "microsoft" | "future";

const TEXT_FORMS: ReadonlySet<string> = new Set(["hyphenated", "simple", "urn", "base32"]);
const HYPHENATED_LEN = 36;

/** A UUID of any version: 16 bytes, most significant first. Immutable. */
export class Uuid {
  readonly #bytes: Uint8Array;

  /** Use {@link Uuid.parse}, {@link Uuid.fromBytes} or {@link Uuid.v8}. */
  protected constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  /**
   * Reads any of the four text forms (hyphenated, simple, URN, Crockford
   * base32), case-insensitively.
   *
   * @throws UuidParseError `uuid.invalid_length`, `uuid.invalid_character` or `uuid.base32_overflow`.
   */
  static parse(text: string): Uuid {
    checkString(text, "text");
    return new Uuid(call(() => wasm.uuidParse(text)));
  }

  /** A UUID from 16 bytes, most significant first (any bytes are a UUID). */
  static fromBytes(bytes: Uint8Array): Uuid {
    return new Uuid(checkBytes(bytes, "bytes", 16).slice());
  }

  /** A version 8 (custom) UUID: `custom` with the version and variant bits set. */
  static v8(custom: Uint8Array): Uuid {
    checkBytes(custom, "custom", 16);
    return new Uuid(call(() => wasm.uuidNewV8(custom)));
  }

  /** The version field (7 for a UUIDv7). */
  get version(): number {
    return wasm.uuidVersion(this.#bytes);
  }

  /** The variant field. */
  get variant(): UuidVariant {
    return wasm.uuidVariant(this.#bytes) as UuidVariant;
  }

  /** A copy of the 16 bytes, most significant first. */
  toBytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** The UUID in text form `form` (default hyphenated lower case). */
  format(form: UuidTextForm = "hyphenated"): string {
    if (!TEXT_FORMS.has(form)) throw new TypeError(`form must be one of ${[...TEXT_FORMS].join(", ")}`);
    return wasm.uuidFormat(this.#bytes, form);
  }

  /** The hyphenated lower-case form. */
  toString(): string {
    return this.format("hyphenated");
  }

  /** The hyphenated lower-case form, so `JSON.stringify` writes the usual text. */
  toJSON(): string {
    return this.toString();
  }

  /** Whether `other` is a UUID with the same bytes. */
  equals(other: Uuid): boolean {
    return other instanceof Uuid && compareBytes(this.#bytes, other.#bytes) === 0;
  }

  /** Orders UUIDs by their bytes (the order of every text form): negative, zero or positive. */
  compare(other: Uuid): number {
    return compareBytes(this.#bytes, other.#bytes);
  }
}

/** Lexicographic order of two 16-byte arrays. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < 16; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * A UUID that is version 7 with the RFC 9562 variant: a 48-bit Unix
 * millisecond timestamp, then 74 bits that mintid's generators fill with a
 * 16-bit counter and 58 random bits.
 */
export class Uuid7 extends Uuid {
  /**
   * Reads any of the four text forms and requires version 7 with the RFC 9562 variant.
   *
   * @throws Uuid7Error `uuid7.invalid_text`, `uuid7.wrong_version` or `uuid7.wrong_variant`.
   */
  static override parse(text: string): Uuid7 {
    checkString(text, "text");
    return new Uuid7(call(() => wasm.uuid7Parse(text)));
  }

  /**
   * Accepts 16 bytes holding a UUIDv7.
   *
   * @throws Uuid7Error `uuid7.wrong_version` or `uuid7.wrong_variant`.
   */
  static override fromBytes(bytes: Uint8Array): Uuid7 {
    const copy = checkBytes(bytes, "bytes", 16).slice();
    call(() => wasm.uuid7Check(copy));
    return new Uuid7(copy);
  }

  /**
   * The UUIDv7 with these fields: `unixMillis` below 2^48, `randA` below 2^12, `randB` below 2^62.
   *
   * @throws Uuid7Error `uuid7.timestamp_out_of_range`, `uuid7.rand_a_out_of_range` or `uuid7.rand_b_out_of_range`.
   */
  static fromFields(fields: { readonly unixMillis: number | bigint; readonly randA: number; readonly randB: bigint }): Uuid7 {
    const unixMillis = toU64(fields.unixMillis, "unixMillis");
    const randA = checkIndex(fields.randA, 1 << 16, "randA");
    const randB = checkU64(fields.randB, "randB");
    return new Uuid7(call(() => wasm.uuid7FromFields(unixMillis, randA, randB)));
  }

  /** Milliseconds since the Unix epoch (48 bits: exact in a number). */
  get unixMillis(): number {
    return wasm.uuid7UnixMillis(this.toBytes());
  }

  /** The 12 bits after the version field. */
  get randA(): number {
    return wasm.uuid7RandA(this.toBytes());
  }

  /** The 62 bits after the variant field. */
  get randB(): bigint {
    return wasm.uuid7RandB(this.toBytes());
  }

  /** The 16-bit counter of mintid's generators (`randA` and the top 4 bits of `randB`). */
  get counter(): number {
    return wasm.uuid7Counter(this.toBytes());
  }

  /** The timestamp as a `Date`. */
  toDate(): Date {
    return new Date(this.unixMillis);
  }
}

/** Options of a {@link Uuid7Generator}. */
export interface Uuid7GeneratorOptions {
  /** Clock rollback policy; default: keep counting from the last timestamp while the clock is at most 10 s behind. */
  readonly rollback?: RollbackPolicy;
  /** A manual clock instead of `Date.now()` (tests); IDs are then made one call at a time, never batched. */
  readonly clock?: ManualClock;
  /** Fixed bytes instead of `crypto.getRandomValues` (tests and vectors only). */
  readonly entropy?: FixedEntropy;
}

/**
 * A UUIDv7 generator: every ID is greater than the one before (RFC 9562
 * method 1, a 16-bit counter seeded at random each millisecond, then 58
 * random bits).
 */
export class Uuid7Generator {
  readonly #source: wasm.Uuid7Source;
  readonly #batched: boolean;
  #text = "";
  #next = 0;
  #end = 0;
  #freshUntil = 0;

  /** A generator; see {@link Uuid7GeneratorOptions}. */
  constructor(options: Uuid7GeneratorOptions = {}) {
    const [kind, maxMillis] = rollbackArgs(options.rollback);
    const clock = clockArg(options.clock);
    const entropy = entropyArg(options.entropy);
    this.#source = call(() => new wasm.Uuid7Source(kind, maxMillis, clock, entropy));
    this.#batched = options.clock === undefined;
  }

  /**
   * The next ID as hyphenated lower-case text.
   *
   * @throws Uuid7Error `uuid7.clock_rollback` or `uuid7.timestamp_overflow`.
   */
  next(): string {
    const start = this.#next;
    if (start < this.#end && Date.now() <= this.#freshUntil) {
      this.#next = start + HYPHENATED_LEN;
      return this.#text.slice(start, start + HYPHENATED_LEN);
    }
    return this.#refill();
  }

  /** The next ID as a {@link Uuid7}. */
  nextUuid(): Uuid7 {
    return Uuid7.parse(this.next());
  }

  /** `count` consecutive new IDs as hyphenated text, made in one wasm call. */
  nextBatch(count: number): string[] {
    checkIndex(count, MAX_BULK + 1, "count");
    this.#drop();
    const text = call(() => this.#source.nextText(count));
    const ids = new Array<string>(count);
    for (let i = 0; i < count; i++) ids[i] = text.slice(i * HYPHENATED_LEN, (i + 1) * HYPHENATED_LEN);
    return ids;
  }

  /** `count` consecutive new IDs as `16 × count` bytes (most significant first), for binary storage. */
  nextBytes(count: number): Uint8Array {
    checkIndex(count, MAX_BULK + 1, "count");
    this.#drop();
    return call(() => this.#source.nextBytes(count));
  }

  #drop(): void {
    this.#next = this.#end = 0;
  }

  /** A new batch, sized and bounded by the core's ID buffer rule (one ID at a time on a manual clock). */
  #refill(): string {
    if (!this.#batched) return call(() => this.#source.nextText(1));
    const handedOut = Math.min(this.#next, this.#end) / HYPHENATED_LEN;
    this.#text = call(() => this.#source.refillText(handedOut));
    this.#freshUntil = this.#source.freshUntil;
    this.#end = this.#text.length;
    this.#next = HYPHENATED_LEN;
    return this.#text.slice(0, HYPHENATED_LEN);
  }
}

let defaultGenerator: Uuid7Generator | undefined;

/**
 * A new UUIDv7 as hyphenated lower-case text, from one generator shared by
 * the whole module: every call returns a greater ID than the call before.
 */
export function uuid7(): string {
  defaultGenerator ??= new Uuid7Generator();
  return defaultGenerator.next();
}
