/**
 * The wire's codec (`docs/spec.md`, "The wire"), table-driven: the layout
 * below is the one description of every spec, input and step, and the
 * packing, the reading and the TypeScript types are all made from it. Held
 * by `tests/vectors/wire.json`. What each step means is the driver's.
 */

import type { DbErrorClass, Dialect, SqlValue } from "./driver.js";

/** The layout's version (`wireVersion()` of the wasm build). */
export const WIRE_VERSION = 1;

// --- the description language -----------------------------------------------------------------

/** A field's type: a scalar, an optional, a list, a name by its `u8` tag, an object, or a tagged union. */
type Type = Scalar | { readonly opt: Type } | { readonly list: Type } | { readonly names: readonly string[] } | Fields | Union;
/** The scalars: little-endian integers, a `0`/`1` flag, UTF-8 text and bytes (`u32` length first), 32 raw bytes, a SQL value. */
type Scalar = "u8" | "u32" | "u64" | "i64" | "flag" | "text" | "bytes" | "digest" | "value";
/** An object's fields, in packing order (no field is named `opt`, `list`, `names` or `cases`). */
type Fields = { readonly [name: string]: Type };
/** A `u8` tag from `first` naming one of `cases` (in their order), then that case's fields, in the same object. */
interface Union {
  readonly first: number;
  readonly cases: { readonly [name: string]: Fields };
}

/** What a type reads as. */
type Of<T> = T extends "u8" | "u32"
  ? number
  : T extends "u64" | "i64"
    ? bigint
    : T extends "flag"
      ? boolean
      : T extends "text"
        ? string
        : T extends "bytes" | "digest"
          ? Uint8Array
          : T extends "value"
            ? SqlValue
            : T extends { readonly opt: infer I }
              ? Of<I> | null
              : T extends { readonly list: infer I }
                ? readonly Of<I>[]
                : T extends { readonly names: readonly (infer N)[] }
                  ? N
                  : Obj<T>;
/** An object of fields; a union field merges its case's fields in. */
type Obj<F> = { readonly [P in keyof F as F[P] extends Union ? never : P]: Of<F[P]> } & Merged<
  { [P in keyof F]-?: F[P] extends Union ? Cases<P & string, F[P]["cases"]> : never }[keyof F]
>;
type Merged<U> = [U] extends [never] ? unknown : U;
type Cases<K extends string, C> = { [N in keyof C & string]: { readonly [P in K]: N } & Obj<C[N]> }[keyof C & string];

const opt = <const T extends Type>(type: T) => ({ opt: type });
const list = <const T extends Type>(type: T) => ({ list: type });
const names = <const N extends readonly string[]>(...all: N) => ({ names: all });
const union = <const C extends Union["cases"]>(cases: C, first = 0) => ({ first, cases });
const u64s = <const N extends readonly string[]>(...all: N) => Object.fromEntries(all.map((name) => [name, "u64"])) as { readonly [P in N[number]]: "u64" };
/** `cases`, each after the fields `head`. */
function after<const H extends Fields, const C extends Union["cases"]>(head: H, cases: C): { readonly [N in keyof C]: H & C[N] } {
  return Object.fromEntries(Object.entries(cases).map(([name, fields]) => [name, { ...head, ...fields }])) as never;
}

// --- the layout -------------------------------------------------------------------------------

const KEY = { kind: "text", scope: "text", id: "text" } as const;
const RESPONSE = { contentType: "text", body: "bytes" } as const;
const RECORD_POLICY = { leaseMillis: "u64", retentionMillis: "u64", storeErrors: "flag", ...u64s("retryAfterMillis", "maxWaitMillis", "pollMillis") } as const;
const CLAIM = { policy: RECORD_POLICY, key: KEY, ...u64s("token", "createdMillis", "leaseDeadlineMillis") } as const;
const DEADLINE = u64s("leaseDeadlineMillis");
const LAYOUT = { timeBits: "u8", workerBits: "u8", sequenceBits: "u8", datacenterBits: "u8", epochMillis: "u64", tickMillis: "u64" } as const;

/** What makes a driver: its kind, the manifest, the kind's fields. */
const SPEC = {
  kind: union(
    after({ dialect: names("postgres", "mysql", "sqlite"), placeholder: names("question", "numbered", "format") } as const, {
      record: {
        policy: RECORD_POLICY,
        way: names("run_once", "same_transaction", "lease"),
        fast: opt({ ttlMillis: opt("u64") }),
        key: KEY,
        digest: "digest",
        keyCreatedMillis: opt("u64"),
      },
      relay: { policy: { ...u64s("batchSize", "claimMillis", "baseBackoffMillis", "maxBackoffMillis"), jitterPercent: "u8", ...u64s("maxAttempts") }, seed: "u64" },
      record_renewal: CLAIM,
      record_cleanup: u64s("batchSize"),
      outbox_cleanup: u64s("sentBeforeMillis", "batchSize"),
      record_load: { key: KEY },
      outbox_load: { messageKind: "text", businessKey: "text" },
      enqueue: { messageId: "u64", messageKind: "text", businessKey: "text", payload: "bytes" },
      /** The dialect's migrations: applied (`pending` false) or listed (`pending` true). */
      migrations: { pending: "flag" },
      heartbeat: { ...CLAIM, renewEveryMillis: opt("u64") },
      segment: { tag: "text", policy: { ...u64s("initialStep", "minStep", "maxStep"), fetchAtPercent: "u8", ...u64s("growBelowMillis", "shrinkAboveMillis") } },
      lease_acquire: {
        policy: { ...LAYOUT, ...u64s("leaseMillis", "renewIntervalMillis", "safetyMarginMillis", "renewRetryMillis", "maxSkewMillis", "maxStartWaitMillis") },
        owner: "text",
        timeoutMillis: opt("u64"),
      },
      /** A live guard by its serial in the guard registry (`LeaseGuardHandle.wireId`). */
      lease_renew: u64s("guard"),
      lease_release: u64s("guard"),
    }),
    1,
  ),
} as const;

/** What an operation came to, for the record driver's `finish`. */
const OUTCOME = {
  outcome: union({
    succeeded: { response: RESPONSE },
    failed: { retryable: "flag", message: "text", response: opt(RESPONSE) },
    not_a_response: { typeName: "text" },
    raised: { typeName: "text", message: "text" },
  }),
} as const;

/** What Redis answered to a Redis step. */
const REDIS_ANSWER = { answer: union({ nil: {}, fields: { fields: list(opt("bytes")) }, failed: { message: "text" }, noscript: {} }) } as const;

/** One input pushed to a driver, at `nowMillis`. */
const INPUT = {
  tag: union(
    after(u64s("nowMillis"), {
      start: {},
      rows: { rows: list(list("value")) },
      affected: u64s("count"),
      failed: { class: names("unique_violation", "serialization", "connection_lost", "constraint", "other", "schema_missing"), message: "text" },
      resume: {},
      finish: { outcome: OUTCOME },
      sent: {},
      send_failed: { error: "text" },
      redis: { answer: REDIS_ANSWER },
      report: {},
      stop: {},
      take: {},
      fetch: {},
      abandon: {},
      forked: {},
      mark: u64s("highWaterMillis"),
    }),
    1,
  ),
} as const;

/** The steps every kind may take, in their tag order from 1 (`yield` and `done` are the kind's). */
const COMMON = {
  run: { name: "text", params: list("value") },
  pause: u64s("millis"),
  yield: {},
  done: {},
  fail: { code: "text", detail: "text", part: opt("text"), position: opt("u64"), problem: opt("text"), concern: "text" },
  /** A Redis script to run: `EVAL` with the source (`code`), else `EVALSHA` with its SHA-1. */
  redis: { eval: "flag", script: "text", code: "text", keys: list("text"), args: list("bytes") },
  begin: { write: "flag" },
  commit: {},
  rollback: {},
  /** What the fast path came to since the last report. */
  report: { lookup: opt("text"), writeFailures: "u32" },
  /** A segment take: a run of IDs (maybe empty) and what to do about the next segment. */
  taken: { ...u64s("first", "count"), action: names("hand_out", "fetch_beside", "fetch_now", "wait"), ...u64s("waitMillis") },
} as const;

/** The hand-over (`yield`) of each kind that has one. */
const YIELDS = {
  /** Run the operation. */
  record: { decision: "text", ...u64s("token", "createdMillis", "leaseDeadlineMillis"), renewEveryMillis: opt("u64") },
  /** A message to send. */
  relay: { messageId: "u64", messageKind: "text", businessKey: "text", payload: "bytes", ...u64s("attempts", "createdMillis") },
  /** A statement of migration `version` to execute as it is. */
  migrations: { version: "u32", sql: "text" },
  /** The wire idle again (after `abandon`, `forked`). */
  segment: {},
  /** Pause `millis`, then `resume` (or `stop`): the lease's deadline as last renewed. */
  heartbeat: u64s("millis", "leaseDeadlineMillis"),
} as const;

/** The end (`done`) of each kind. */
const DONES = {
  record: {
    decision: "text",
    finished: union({
      executed: {},
      operation_failed: { stored: "flag" },
      replay: { outcome: names("succeeded", "failed"), response: opt(RESPONSE), error: opt("text") },
      in_progress: u64s("retryAfterMillis"),
      fingerprint_mismatch: {},
      key_too_old: {},
      operation_failed_unrecorded: { storeCode: "text", storeMessage: "text" },
    }),
  },
  relay: u64s("sent", "retried", "dead", "givenUp", "claimLost", "released", "markFailed"),
  record_renewal: DEADLINE,
  record_cleanup: u64s("deleted"),
  outbox_cleanup: u64s("deleted"),
  record_load: {
    record: opt({ status: "text", fingerprint: "digest", ...u64s("token", "leaseDeadlineMillis", "createdMillis", "expiresMillis"), response: opt(RESPONSE), error: opt("text") }),
  },
  outbox_load: {
    message: opt({
      ...{ messageId: "u64", messageKind: "text", businessKey: "text", payload: "bytes", status: "text" },
      ...{ ...u64s("attempts", "nextAttemptMillis"), lastError: opt("text"), ...u64s("createdMillis", "updatedMillis") },
    }),
  },
  enqueue: { enqueued: names("new", "already_enqueued") },
  migrations: { versions: list("u32") },
  /** Stopped: the lease's deadline as last renewed. */
  heartbeat: DEADLINE,
  /** A fetch that installed a segment. */
  segment: u64s("maxId", "step"),
  lease_acquire: u64s("workerId", "fencingToken", "leaseDeadlineMillis", "startAfterMillis", "readyAtMillis", "acquiredMillis", "highWaterMillis", "expectedToken"),
  lease_renew: DEADLINE,
  lease_release: { released: "flag" },
} as const;

/** The steps of `kind`, by tag in their numeric order from 1; a kind without a hand-over takes no `yield`. */
function stepCases(kind: WireKind): Union["cases"] {
  const yielded: Fields | undefined = (YIELDS as Partial<Record<WireKind, Fields>>)[kind];
  return { ...COMMON, yield: yielded ?? { "": { names: [] } }, done: DONES[kind] };
}

// --- the types the stores use -------------------------------------------------------------------

/** What makes a driver. */
export type WireSpec = Of<typeof SPEC>;
/** The kinds of driver. */
export type WireKind = WireSpec["kind"];
/** One input pushed to a driver. */
export type WireInput = Of<typeof INPUT>;
/** What an operation came to. */
export type Outcome = Of<typeof OUTCOME>;
/** What Redis answered. */
export type RedisAnswer = Of<typeof REDIS_ANSWER>;
/** An idempotency key's three parts. */
export type KeyParts = Of<typeof KEY>;
/** A record policy's fields, as the core reads them. */
export type RecordPolicyFields = Of<typeof RECORD_POLICY>;
/** A lease policy's fields, as the core reads them. */
export type LeasePolicyFields = Extract<WireSpec, { kind: "lease_acquire" }>["policy"];
type Step<C> = Cases<"tag", C>;
/** A step of a driver of kind `K`. */
export type WireStep<K extends WireKind> = Step<
  Omit<typeof COMMON, "yield" | "done"> & { done: (typeof DONES)[K] } & (K extends keyof typeof YIELDS ? { yield: (typeof YIELDS)[K] } : unknown)
>;
/** A driver's failure: the core's typed error, by its fields. */
export type WireFail = Step<Pick<typeof COMMON, "fail">>;
/** A Redis script to run. */
export type WireRedis = Step<Pick<typeof COMMON, "redis">>;
/** A segment take's answer. */
export type WireTaken = Step<Pick<typeof COMMON, "taken">>;
/** The record's hand-over before its end: run the operation. */
export type WireExecute = Obj<typeof YIELDS.record>;
/** How a record protocol ended, with the core's decision name. */
export type RecordEnd = Obj<typeof DONES.record>;

// --- the engine ------------------------------------------------------------------------------

/** Reads and writes one type. */
interface Codec {
  read(r: Reader): unknown;
  write(w: Writer, value: unknown): void;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();
const VALUES = ["null", "int", "text", "bytes"] as const;

/** A cursor over packed bytes; reading past the end throws. */
export class Reader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #at = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The offset of `count` bytes, consumed. */
  take(count: number): number {
    const at = this.#at;
    if (at + count > this.#bytes.length) throw new TypeError("a packed step ended early");
    this.#at += count;
    return at;
  }

  /** `count` bytes (a view of the packing). */
  raw(count: number): Uint8Array {
    const at = this.take(count);
    return this.#bytes.subarray(at, at + count);
  }

  /** A little-endian integer of `size` bytes. */
  int(size: 1 | 4 | 8, signed = false): number | bigint {
    const at = this.take(size);
    if (size === 1) return this.#view.getUint8(at);
    if (size === 4) return this.#view.getUint32(at, true);
    return signed ? this.#view.getBigInt64(at, true) : this.#view.getBigUint64(at, true);
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (this.#at !== this.#bytes.length) throw new TypeError(`${this.#bytes.length - this.#at} bytes left after a packed step`);
  }
}

/** A growable buffer to pack into. */
export class Writer {
  #bytes = new Uint8Array(256);
  #view = new DataView(this.#bytes.buffer);
  #at = 0;

  /** The offset of `count` more bytes, the buffer grown to hold them. */
  room(count: number): number {
    const at = this.#at;
    if (at + count > this.#bytes.length) {
      const bigger = new Uint8Array(Math.max(this.#bytes.length * 2, at + count));
      bigger.set(this.#bytes.subarray(0, at));
      this.#bytes = bigger;
      this.#view = new DataView(bigger.buffer);
    }
    this.#at += count;
    return at;
  }

  /** Appends `bytes`. */
  raw(bytes: Uint8Array): void {
    const at = this.room(bytes.length); // first: it may grow the buffer
    this.#bytes.set(bytes, at);
  }

  /** Appends a little-endian integer of `size` bytes. */
  int(size: 1 | 4 | 8, value: number | bigint, signed = false): void {
    const at = this.room(size);
    if (size === 1) this.#view.setUint8(at, Number(value));
    else if (size === 4) this.#view.setUint32(at, Number(value), true);
    else if (signed) this.#view.setBigInt64(at, BigInt(value), true);
    else this.#view.setBigUint64(at, BigInt(value), true);
  }

  /** Appends `text` as UTF-8 after its `u32` length (at most 3 bytes per UTF-16 unit; the length written once known). */
  text(text: string): void {
    const at = this.room(4 + text.length * 3);
    const { written } = encoder.encodeInto(text, this.#bytes.subarray(at + 4));
    this.#view.setUint32(at, written, true);
    this.#at = at + 4 + written;
  }

  /** The bytes packed so far (a view, valid until the next write). */
  done(): Uint8Array {
    return this.#bytes.subarray(0, this.#at);
  }
}

const bytesOf = (r: Reader) => r.raw(r.int(4) as number);
const integer = (size: 1 | 4 | 8, signed = false): Codec => ({ read: (r) => r.int(size, signed), write: (w, v) => w.int(size, v as number | bigint, signed) });
/** `value`'s index in `all`, which must hold it. */
function indexIn(all: readonly unknown[], value: unknown): number {
  const at = all.indexOf(value);
  if (at < 0) throw new TypeError(`not in the wire's layout: ${String(value)}`);
  return at;
}
/** The name at a `u8` tag read from `r`. */
function nameAt<T>(r: Reader, all: readonly T[], first: number): T {
  const tag = r.int(1) as number;
  const name = all[tag - first];
  if (name === undefined) throw new TypeError(`tag ${tag} is not in the wire's layout`);
  return name;
}

const SCALARS: Readonly<Record<Scalar, Codec>> = {
  u8: integer(1),
  u32: integer(4),
  u64: integer(8),
  i64: integer(8, true),
  flag: { read: (r) => r.int(1) !== 0, write: (w, v) => w.int(1, v === true ? 1 : 0) },
  text: { read: (r) => utf8.decode(bytesOf(r)), write: (w, v) => w.text(v as string) },
  bytes: {
    read: bytesOf,
    write: (w, v) => {
      w.int(4, (v as Uint8Array).length);
      w.raw(v as Uint8Array);
    },
  },
  digest: {
    read: (r) => r.raw(32),
    write: (w, v) => {
      if ((v as Uint8Array).length !== 32) throw new TypeError("a digest is 32 bytes");
      w.raw(v as Uint8Array);
    },
  },
  value: {
    read: (r) => {
      const type = nameAt(r, VALUES, 0);
      return type === "null" ? null : SCALARS[type === "int" ? "i64" : type].read(r);
    },
    write: (w, v) => {
      const type = v === null ? "null" : typeof v === "bigint" ? "int" : typeof v === "string" ? "text" : v instanceof Uint8Array ? "bytes" : undefined;
      if (type === undefined) throw new TypeError(`a column value must be null, a bigint, a string or a Uint8Array, got ${typeof v}`);
      w.int(1, VALUES.indexOf(type));
      if (type !== "null") SCALARS[type === "int" ? "i64" : type].write(w, v);
    },
  },
};

const compiled = new WeakMap<object, Codec>();

/** The codec of `type`, made once per description. */
function codecOf(type: Type): Codec {
  if (typeof type === "string") return SCALARS[type];
  let codec = compiled.get(type);
  if (codec === undefined) {
    codec = compile(type);
    compiled.set(type, codec);
  }
  return codec;
}

function isUnion(type: Type): type is Union {
  return typeof type === "object" && "cases" in type;
}

/** A union's codec over the object it is a field of: its tag at `name`, its case's fields beside. */
function unionOf(name: string, union: Union): Codec {
  const all = Object.keys(union.cases);
  const cases = new Map(all.map((tag) => [tag, objectOf(union.cases[tag] ?? {})] as const));
  return {
    read: (r) => {
      const tag = nameAt(r, all, union.first);
      return { [name]: tag, ...(cases.get(tag)?.read(r) as object) };
    },
    write: (w, v) => {
      const tag = (v as Record<string, unknown>)[name];
      w.int(1, indexIn(all, tag) + union.first);
      cases.get(tag as string)?.write(w, v);
    },
  };
}

/** An object's codec. */
function objectOf(fields: Fields): Codec {
  const parts = Object.entries(fields).map(([name, type]) => ({ name, merged: isUnion(type), codec: isUnion(type) ? unionOf(name, type) : codecOf(type) }));
  return {
    read: (r) => {
      const out: Record<string, unknown> = {};
      for (const { name, merged, codec } of parts) {
        if (merged) Object.assign(out, codec.read(r));
        else out[name] = codec.read(r);
      }
      return out;
    },
    write: (w, v) => {
      const object = v as Record<string, unknown>;
      for (const { name, merged, codec } of parts) codec.write(w, merged ? object : object[name]);
    },
  };
}

function compile(type: Exclude<Type, Scalar>): Codec {
  if ("opt" in type) {
    const inner = codecOf(type.opt);
    return {
      read: (r) => (r.int(1) === 0 ? null : inner.read(r)),
      write: (w, v) => {
        w.int(1, v === null || v === undefined ? 0 : 1);
        if (v !== null && v !== undefined) inner.write(w, v);
      },
    };
  }
  if ("list" in type) {
    const inner = codecOf(type.list);
    return {
      read: (r) => Array.from({ length: r.int(4) as number }, () => inner.read(r)),
      write: (w, v) => {
        const items = v as readonly unknown[];
        w.int(4, items.length);
        for (const item of items) inner.write(w, item);
      },
    };
  }
  if ("names" in type) {
    const all = type.names as readonly string[];
    return { read: (r) => nameAt(r, all, 0), write: (w, v) => w.int(1, indexIn(all, v)) };
  }
  if (isUnion(type)) throw new TypeError("a union is a field of an object");
  return objectOf(type);
}

const stepCodecs = new Map<WireKind, Codec>();

/** The tags of the layout in their numeric order: kinds, inputs and steps from 1. */
export const KINDS = Object.keys(SPEC.kind.cases) as WireKind[];
export const INPUTS = Object.keys(INPUT.tag.cases) as WireInput["tag"][];
export const STEPS = Object.keys(COMMON);

/** `spec`, packed for `new Wire(…)`. */
export function packSpec(spec: WireSpec): Uint8Array {
  return pack(codecOf(SPEC), spec, new Writer());
}

/** `input`, packed for `Wire.call` (a view of `out`, valid until its next packing). */
export function packInput(input: WireInput, out: Writer = new Writer()): Uint8Array {
  return pack(codecOf(INPUT), input, out);
}

/** A packed step of a driver of kind `kind`. */
export function readStep<K extends WireKind>(kind: K, packed: Uint8Array): WireStep<K> {
  return unpack(stepCodec(kind), packed) as WireStep<K>;
}

/** The steps' codec of `kind`, made once. */
function stepCodec(kind: WireKind): Codec {
  let codec = stepCodecs.get(kind);
  if (codec === undefined) {
    codec = codecOf({ tag: union(stepCases(kind), 1) });
    stepCodecs.set(kind, codec);
  }
  return codec;
}

function pack(codec: Codec, value: unknown, out: Writer): Uint8Array {
  codec.write(out, value);
  return out.done();
}

function unpack(codec: Codec, packed: Uint8Array): unknown {
  const r = new Reader(packed);
  const value = codec.read(r);
  r.end();
  return value;
}

/** The other directions, for the vector runners: a spec or input read back, a step packed. */
export const unpackSpec = (packed: Uint8Array): WireSpec => unpack(codecOf(SPEC), packed) as WireSpec;
export const unpackInput = (packed: Uint8Array): WireInput => unpack(codecOf(INPUT), packed) as WireInput;
export const packStep = <K extends WireKind>(kind: K, step: WireStep<K>): Uint8Array => pack(stepCodec(kind), step, new Writer());

export type { DbErrorClass, Dialect };
