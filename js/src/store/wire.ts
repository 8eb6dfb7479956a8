/**
 * The wire's codec (`docs/spec.md`, "The wire"): a driver's spec and the
 * inputs pushed to it packed as bytes, the steps it answers read back, with
 * a `DataView` and a `TextEncoder`. Held by `tests/vectors/wire.json`. What
 * each step means is the driver's, unchanged: this module only reads and
 * writes the layout.
 */

import type { DbErrorClass, Dialect, SqlValue } from "./driver.js";

/** The layout's version (`wireVersion()` of the wasm build). */
export const WIRE_VERSION = 1;

/** How a store's SQL writes its placeholders. */
export type Placeholder = "question" | "numbered" | "format";
/** How a request came in. */
export type Way = "run_once" | "same_transaction" | "lease";

/** An idempotency key's three parts. */
export interface KeyParts {
  readonly kind: string;
  readonly scope: string;
  readonly id: string;
}

/** A record policy's fields, as the core reads them. */
export interface RecordPolicyFields {
  readonly leaseMillis: bigint;
  readonly retentionMillis: bigint;
  readonly storeErrors: boolean;
  readonly retryAfterMillis: bigint;
  readonly maxWaitMillis: bigint;
  readonly pollMillis: bigint;
}

/** A relay policy's fields, as the core reads them. */
export interface RelayPolicyFields {
  readonly batchSize: bigint;
  readonly claimMillis: bigint;
  readonly baseBackoffMillis: bigint;
  readonly maxBackoffMillis: bigint;
  readonly jitterPercent: number;
  readonly maxAttempts: bigint;
}

/** A segment policy's fields, as the core reads them (`SegmentPolicy`). */
export interface SegmentPolicyFields {
  readonly initialStep: bigint;
  readonly minStep: bigint;
  readonly maxStep: bigint;
  readonly fetchAtPercent: number;
  readonly growBelowMillis: bigint;
  readonly shrinkAboveMillis: bigint;
}

/** A lease policy's fields, as the core reads them: the layout's, then the lease durations (`LeasePolicy`). */
export interface LeasePolicyFields {
  readonly timeBits: number;
  readonly workerBits: number;
  readonly sequenceBits: number;
  readonly datacenterBits: number;
  readonly epochMillis: bigint;
  readonly tickMillis: bigint;
  readonly leaseMillis: bigint;
  readonly renewIntervalMillis: bigint;
  readonly safetyMarginMillis: bigint;
  readonly renewRetryMillis: bigint;
  readonly maxSkewMillis: bigint;
  readonly maxStartWaitMillis: bigint;
}

/** A response as the driver stores and replays it. */
export interface WireResponse {
  readonly contentType: string;
  readonly body: Uint8Array;
}

/** What makes a driver: its kind, the manifest, the kind's fields. */
export type WireSpec = { readonly dialect: Dialect; readonly placeholder: Placeholder } & (
  | {
      readonly kind: "record";
      readonly policy: RecordPolicyFields;
      readonly way: Way;
      readonly fast: { readonly ttlMillis: bigint | null } | null;
      readonly key: KeyParts;
      readonly digest: Uint8Array;
      readonly keyCreatedMillis: bigint | null;
    }
  | { readonly kind: "relay"; readonly policy: RelayPolicyFields; readonly seed: bigint }
  | {
      readonly kind: "record_renewal";
      readonly policy: RecordPolicyFields;
      readonly key: KeyParts;
      readonly token: bigint;
      readonly createdMillis: bigint;
      readonly leaseDeadlineMillis: bigint;
    }
  | { readonly kind: "record_cleanup"; readonly batchSize: bigint }
  | { readonly kind: "outbox_cleanup"; readonly sentBeforeMillis: bigint; readonly batchSize: bigint }
  | { readonly kind: "record_load"; readonly key: KeyParts }
  | { readonly kind: "outbox_load"; readonly messageKind: string; readonly businessKey: string }
  | { readonly kind: "enqueue"; readonly messageId: bigint; readonly messageKind: string; readonly businessKey: string; readonly payload: Uint8Array }
  /** The dialect's migrations: applied (`pending` false) or listed (`pending` true). */
  | { readonly kind: "migrations"; readonly pending: boolean }
  | {
      readonly kind: "heartbeat";
      readonly policy: RecordPolicyFields;
      readonly key: KeyParts;
      readonly token: bigint;
      readonly createdMillis: bigint;
      readonly leaseDeadlineMillis: bigint;
      readonly renewEveryMillis: bigint | null;
    }
  | { readonly kind: "segment"; readonly tag: string; readonly policy: SegmentPolicyFields }
  | { readonly kind: "lease_acquire"; readonly policy: LeasePolicyFields; readonly owner: string; readonly timeoutMillis: bigint | null }
  /** A live guard by its serial in the guard registry (`LeaseGuardHandle.wireId`). */
  | { readonly kind: "lease_renew" | "lease_release"; readonly guard: bigint }
);

/** The kinds of driver. */
export type WireKind = WireSpec["kind"];

/** What an operation came to, for the record driver's `finish`. */
export type Outcome =
  | { readonly outcome: "succeeded"; readonly response: WireResponse }
  | { readonly outcome: "failed"; readonly retryable: boolean; readonly message: string; readonly response: WireResponse | null }
  | { readonly outcome: "not_a_response"; readonly typeName: string }
  | { readonly outcome: "raised"; readonly typeName: string; readonly message: string };

/** What Redis answered to a Redis step. */
export type RedisAnswer =
  | { readonly answer: "nil" }
  | { readonly answer: "fields"; readonly fields: readonly (Uint8Array | null)[] }
  | { readonly answer: "failed"; readonly message: string }
  | { readonly answer: "noscript" };

/** One input pushed to a driver, at `nowMillis`. */
export type WireInput = { readonly nowMillis: bigint } & (
  | { readonly tag: "start" | "resume" | "sent" | "report" | "stop" | "take" | "fetch" | "abandon" | "forked" }
  | { readonly tag: "mark"; readonly highWaterMillis: bigint }
  | { readonly tag: "rows"; readonly rows: readonly (readonly SqlValue[])[] }
  | { readonly tag: "affected"; readonly count: bigint }
  | { readonly tag: "failed"; readonly class: DbErrorClass; readonly message: string }
  | { readonly tag: "finish"; readonly outcome: Outcome }
  | { readonly tag: "send_failed"; readonly error: string }
  | { readonly tag: "redis"; readonly answer: RedisAnswer }
);

/** How a record protocol ended, with the core's decision name. */
export type RecordEnd = { readonly decision: string } & (
  | { readonly finished: "executed" | "fingerprint_mismatch" | "key_too_old" }
  | { readonly finished: "operation_failed"; readonly stored: boolean }
  | { readonly finished: "replay"; readonly outcome: "succeeded" | "failed"; readonly response: WireResponse | null; readonly error: string | null }
  | { readonly finished: "in_progress"; readonly retryAfterMillis: bigint }
  | { readonly finished: "operation_failed_unrecorded"; readonly storeCode: string; readonly storeMessage: string }
);

/** A stored record, as `record_load` reads it. */
export interface WireRecord {
  readonly status: string;
  readonly fingerprint: Uint8Array;
  readonly token: bigint;
  readonly leaseDeadlineMillis: bigint;
  readonly createdMillis: bigint;
  readonly expiresMillis: bigint;
  readonly response: WireResponse | null;
  readonly error: string | null;
}

/** A message to send, as the relay yields it. */
export interface WireSend {
  readonly messageId: bigint;
  readonly messageKind: string;
  readonly businessKey: string;
  readonly payload: Uint8Array;
  readonly attempts: bigint;
  readonly createdMillis: bigint;
}

/** A stored message, as `outbox_load` reads it. */
export interface WireMessage {
  readonly messageId: bigint;
  readonly messageKind: string;
  readonly businessKey: string;
  readonly payload: Uint8Array;
  readonly status: string;
  readonly attempts: bigint;
  readonly nextAttemptMillis: bigint;
  readonly lastError: string | null;
  readonly createdMillis: bigint;
  readonly updatedMillis: bigint;
}

/** A relay run's report. */
export interface WireRelayReport {
  readonly sent: bigint;
  readonly retried: bigint;
  readonly dead: bigint;
  readonly givenUp: bigint;
  readonly claimLost: bigint;
  readonly released: bigint;
  readonly markFailed: bigint;
}

/** The record's hand-over before its end: run the operation. */
export interface WireExecute {
  readonly decision: string;
  readonly token: bigint;
  readonly createdMillis: bigint;
  readonly leaseDeadlineMillis: bigint;
  readonly renewEveryMillis: bigint | null;
}

/** A driver's failure: the core's typed error, by its fields. */
export interface WireFail {
  readonly tag: "fail";
  readonly code: string;
  readonly detail: string;
  readonly part: string | null;
  readonly position: bigint | null;
  readonly problem: string | null;
  readonly concern: string;
}

/** A Redis script to run (record with a fast path). */
export interface WireRedis {
  readonly tag: "redis";
  /** `EVAL` with the source, else `EVALSHA` with the SHA-1 (`code` is that source or SHA-1). */
  readonly eval: boolean;
  readonly script: string;
  readonly code: string;
  readonly keys: readonly string[];
  readonly args: readonly Uint8Array[];
}

/** What a segment's `take` answered: a run of IDs (maybe empty), and what to do about the next segment. */
export interface WireTaken {
  readonly tag: "taken";
  readonly first: bigint;
  readonly count: bigint;
  readonly action: (typeof ACTIONS)[number];
  readonly waitMillis: bigint;
}

/** A lease acquisition, as the core wrote it. */
export interface WireAcquisition {
  readonly workerId: bigint;
  readonly fencingToken: bigint;
  readonly leaseDeadlineMillis: bigint;
  readonly startAfterMillis: bigint;
  readonly readyAtMillis: bigint;
  readonly acquiredMillis: bigint;
  readonly highWaterMillis: bigint;
  readonly expectedToken: bigint;
}

/** What every kind may ask of its host. */
export type CommonStep =
  | { readonly tag: "run"; readonly name: string; readonly params: readonly SqlValue[] }
  | { readonly tag: "pause"; readonly millis: bigint }
  | { readonly tag: "begin"; readonly write: boolean }
  | { readonly tag: "commit" | "rollback" }
  | WireFail;

/** The hand-overs and ends of each kind. */
export interface KindSteps {
  record:
    | ({ readonly tag: "yield" } & WireExecute)
    | ({ readonly tag: "done" } & RecordEnd)
    | WireRedis
    | { readonly tag: "report"; readonly lookup: string | null; readonly writeFailures: number };
  relay: ({ readonly tag: "yield" } & WireSend) | ({ readonly tag: "done" } & WireRelayReport);
  record_renewal: { readonly tag: "done"; readonly leaseDeadlineMillis: bigint };
  record_cleanup: { readonly tag: "done"; readonly deleted: bigint };
  outbox_cleanup: { readonly tag: "done"; readonly deleted: bigint };
  record_load: { readonly tag: "done"; readonly record: WireRecord | null };
  outbox_load: { readonly tag: "done"; readonly message: WireMessage | null };
  enqueue: { readonly tag: "done"; readonly enqueued: "new" | "already_enqueued" };
  /** A statement of migration `version` to execute as it is; the versions applied (or pending). */
  migrations: { readonly tag: "yield"; readonly version: number; readonly sql: string } | { readonly tag: "done"; readonly versions: readonly number[] };
  /** Pause `millis`, then resume (or stop); stopped. Each with the lease's deadline as last renewed. */
  heartbeat: { readonly tag: "yield"; readonly millis: bigint; readonly leaseDeadlineMillis: bigint } | { readonly tag: "done"; readonly leaseDeadlineMillis: bigint };
  /** A take's answer; the wire idle again (after `abandon`, `forked`); a fetch that installed a segment. */
  segment: WireTaken | { readonly tag: "yield" } | { readonly tag: "done"; readonly maxId: bigint; readonly step: bigint };
  lease_acquire: { readonly tag: "done" } & WireAcquisition;
  lease_renew: { readonly tag: "done"; readonly leaseDeadlineMillis: bigint };
  lease_release: { readonly tag: "done"; readonly released: boolean };
}

/** A step of a driver of kind `K`. */
export type WireStep<K extends WireKind> = CommonStep | KindSteps[K];

/** The tags and enumerations of the layout, in their numeric order (kinds, inputs and steps from 1, the others from 0). */
export const KINDS: readonly WireKind[] = [
  "record",
  "relay",
  "record_renewal",
  "record_cleanup",
  "outbox_cleanup",
  "record_load",
  "outbox_load",
  "enqueue",
  "migrations",
  "heartbeat",
  "segment",
  "lease_acquire",
  "lease_renew",
  "lease_release",
];
export const DIALECTS: readonly Dialect[] = ["postgres", "mysql", "sqlite"];
export const PLACEHOLDERS: readonly Placeholder[] = ["question", "numbered", "format"];
export const WAYS: readonly Way[] = ["run_once", "same_transaction", "lease"];
export const INPUTS: readonly WireInput["tag"][] = [
  "start",
  "rows",
  "affected",
  "failed",
  "resume",
  "finish",
  "sent",
  "send_failed",
  "redis",
  "report",
  "stop",
  "take",
  "fetch",
  "abandon",
  "forked",
  "mark",
];
export const STEPS = ["run", "pause", "yield", "done", "fail", "redis", "begin", "commit", "rollback", "report", "taken"] as const;
/** A segment take's action (`Taken::action()`). */
export const ACTIONS = ["hand_out", "fetch_beside", "fetch_now", "wait"] as const;
export const CLASSES: readonly DbErrorClass[] = ["unique_violation", "serialization", "connection_lost", "constraint", "other", "schema_missing"];
export const OUTCOMES: readonly Outcome["outcome"][] = ["succeeded", "failed", "not_a_response", "raised"];
export const ANSWERS: readonly RedisAnswer["answer"][] = ["nil", "fields", "failed", "noscript"];
export const FINISHED: readonly RecordEnd["finished"][] = [
  "executed",
  "operation_failed",
  "replay",
  "in_progress",
  "fingerprint_mismatch",
  "key_too_old",
  "operation_failed_unrecorded",
];
export const ENQUEUED = ["new", "already_enqueued"] as const;
const VALUE_NULL = 0;
const VALUE_INT = 1;
const VALUE_TEXT = 2;
const VALUE_BYTES = 3;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** The tag of `name` in `names`, whose first tag is `first`. */
function tagOf<T>(names: readonly T[], name: T, first: number): number {
  const at = names.indexOf(name);
  if (at < 0) throw new TypeError(`not in the wire's layout: ${String(name)}`);
  return first + at;
}

/** A cursor over packed bytes; reading past the end throws. */
export class Reader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #at = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  #take(count: number): number {
    const at = this.#at;
    if (at + count > this.#bytes.length) throw new TypeError("a packed step ended early");
    this.#at += count;
    return at;
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (this.#at !== this.#bytes.length) throw new TypeError(`${this.#bytes.length - this.#at} bytes left after a packed step`);
  }

  u8(): number {
    return this.#bytes[this.#take(1)] ?? 0;
  }
  flag(): boolean {
    return this.u8() !== 0;
  }
  u32(): number {
    return this.#view.getUint32(this.#take(4), true);
  }
  u64(): bigint {
    return this.#view.getBigUint64(this.#take(8), true);
  }
  i64(): bigint {
    return this.#view.getBigInt64(this.#take(8), true);
  }
  /** `count` bytes, a view of the step (a fresh array of this reader's alone). */
  raw(count: number): Uint8Array {
    const at = this.#take(count);
    return this.#bytes.subarray(at, at + count);
  }
  bytes(): Uint8Array {
    return this.raw(this.u32());
  }
  text(): string {
    return utf8.decode(this.bytes());
  }
  /** An optional: `null`, or what `read` reads. */
  optional<T>(read: (reader: this) => T): T | null {
    return this.flag() ? read(this) : null;
  }
  /** A list of what `read` reads. */
  list<T>(read: (reader: this) => T): T[] {
    const count = this.u32();
    const items: T[] = [];
    for (let n = 0; n < count; n += 1) items.push(read(this));
    return items;
  }
  /** The name at this tag in `names`, whose first tag is `first`. */
  name<T>(names: readonly T[], first = 0): T {
    const tag = this.u8();
    const name = names[tag - first];
    if (name === undefined) throw new TypeError(`tag ${tag} is not in the wire's layout`);
    return name;
  }
  value(): SqlValue {
    const type = this.u8();
    if (type === VALUE_INT) return this.i64();
    if (type === VALUE_TEXT) return this.text();
    if (type === VALUE_BYTES) return this.bytes();
    if (type === VALUE_NULL) return null;
    throw new TypeError(`value type ${type} is not in the wire's layout`);
  }
  response(): WireResponse {
    const contentType = this.text();
    return { contentType, body: this.bytes() };
  }
}

/** A growable buffer to pack into. */
export class Writer {
  #bytes = new Uint8Array(256);
  #view = new DataView(this.#bytes.buffer);
  #at = 0;

  #room(count: number): number {
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

  /** The bytes packed so far (a view, valid until the next write). */
  done(): Uint8Array {
    return this.#bytes.subarray(0, this.#at);
  }

  u8(value: number): this {
    const at = this.#room(1); // first: it may grow the buffer
    this.#bytes[at] = value;
    return this;
  }
  flag(value: boolean): this {
    return this.u8(value ? 1 : 0);
  }
  u32(value: number): this {
    const at = this.#room(4);
    this.#view.setUint32(at, value, true);
    return this;
  }
  u64(value: bigint): this {
    const at = this.#room(8);
    this.#view.setBigUint64(at, value, true);
    return this;
  }
  i64(value: bigint): this {
    const at = this.#room(8);
    this.#view.setBigInt64(at, value, true);
    return this;
  }
  /** Bytes without their length. */
  raw(bytes: Uint8Array): this {
    const at = this.#room(bytes.length);
    this.#bytes.set(bytes, at);
    return this;
  }
  bytes(bytes: Uint8Array): this {
    return this.u32(bytes.length).raw(bytes);
  }
  text(text: string): this {
    // At most 3 bytes per UTF-16 unit; the length is written once known.
    const at = this.#room(4 + text.length * 3);
    const { written } = encoder.encodeInto(text, this.#bytes.subarray(at + 4));
    this.#view.setUint32(at, written, true);
    this.#at = at + 4 + written;
    return this;
  }
  optional<T>(value: T | null, write: (writer: this, value: T) => unknown): this {
    if (value === null) return this.u8(0);
    write(this.u8(1), value);
    return this;
  }
  list<T>(values: readonly T[], write: (writer: this, value: T) => unknown): this {
    this.u32(values.length);
    for (const value of values) write(this, value);
    return this;
  }
  /** The tag of `name` in `names`, whose first tag is `first`. */
  name<T>(names: readonly T[], name: T, first = 0): this {
    return this.u8(tagOf(names, name, first));
  }
  value(value: SqlValue): this {
    if (value === null || value === undefined) return this.u8(VALUE_NULL);
    if (typeof value === "bigint") return this.u8(VALUE_INT).i64(value);
    if (typeof value === "string") return this.u8(VALUE_TEXT).text(value);
    if (value instanceof Uint8Array) return this.u8(VALUE_BYTES).bytes(value);
    throw new TypeError(`a column value must be null, a bigint, a string or a Uint8Array, got ${typeof value}`);
  }
  response(response: WireResponse): this {
    return this.text(response.contentType).bytes(response.body);
  }
  key(key: KeyParts): this {
    return this.text(key.kind).text(key.scope).text(key.id);
  }
  recordPolicy(p: RecordPolicyFields): this {
    return this.u64(p.leaseMillis).u64(p.retentionMillis).flag(p.storeErrors).u64(p.retryAfterMillis).u64(p.maxWaitMillis).u64(p.pollMillis);
  }
}

/** `spec`, packed for `new Wire(…)`. */
export function packSpec(spec: WireSpec): Uint8Array {
  const out = new Writer().name(KINDS, spec.kind, 1).name(DIALECTS, spec.dialect).name(PLACEHOLDERS, spec.placeholder);
  switch (spec.kind) {
    case "record":
      out.recordPolicy(spec.policy).name(WAYS, spec.way);
      out.optional(spec.fast, (w, fast) => w.optional(fast.ttlMillis, (v, ttl) => v.u64(ttl)));
      if (spec.digest.length !== 32) throw new TypeError("a record's digest is 32 bytes");
      return out
        .key(spec.key)
        .raw(spec.digest)
        .optional(spec.keyCreatedMillis, (w, created) => w.u64(created))
        .done();
    case "relay": {
      const p = spec.policy;
      return out.u64(p.batchSize).u64(p.claimMillis).u64(p.baseBackoffMillis).u64(p.maxBackoffMillis).u8(p.jitterPercent).u64(p.maxAttempts).u64(spec.seed).done();
    }
    case "record_renewal":
      return out.recordPolicy(spec.policy).key(spec.key).u64(spec.token).u64(spec.createdMillis).u64(spec.leaseDeadlineMillis).done();
    case "record_cleanup":
      return out.u64(spec.batchSize).done();
    case "outbox_cleanup":
      return out.u64(spec.sentBeforeMillis).u64(spec.batchSize).done();
    case "record_load":
      return out.key(spec.key).done();
    case "outbox_load":
      return out.text(spec.messageKind).text(spec.businessKey).done();
    case "enqueue":
      return out.u64(spec.messageId).text(spec.messageKind).text(spec.businessKey).bytes(spec.payload).done();
    case "migrations":
      return out.flag(spec.pending).done();
    case "heartbeat":
      return out
        .recordPolicy(spec.policy)
        .key(spec.key)
        .u64(spec.token)
        .u64(spec.createdMillis)
        .u64(spec.leaseDeadlineMillis)
        .optional(spec.renewEveryMillis, (w, every) => w.u64(every))
        .done();
    case "segment": {
      const p = spec.policy;
      return out.text(spec.tag).u64(p.initialStep).u64(p.minStep).u64(p.maxStep).u8(p.fetchAtPercent).u64(p.growBelowMillis).u64(p.shrinkAboveMillis).done();
    }
    case "lease_acquire": {
      const p = spec.policy;
      out.u8(p.timeBits).u8(p.workerBits).u8(p.sequenceBits).u8(p.datacenterBits).u64(p.epochMillis).u64(p.tickMillis);
      out.u64(p.leaseMillis).u64(p.renewIntervalMillis).u64(p.safetyMarginMillis).u64(p.renewRetryMillis).u64(p.maxSkewMillis).u64(p.maxStartWaitMillis);
      return out
        .text(spec.owner)
        .optional(spec.timeoutMillis, (w, timeout) => w.u64(timeout))
        .done();
    }
    case "lease_renew":
    case "lease_release":
      return out.u64(spec.guard).done();
  }
}

/** `input`, packed for `Wire.call` (a view of `out`, valid until its next packing). */
export function packInput(input: WireInput, out: Writer = new Writer()): Uint8Array {
  out.name(INPUTS, input.tag, 1).u64(input.nowMillis);
  switch (input.tag) {
    case "rows":
      return out.list(input.rows, (w, row) => w.list(row, (v, value) => v.value(value))).done();
    case "affected":
      return out.u64(input.count).done();
    case "failed":
      return out.name(CLASSES, input.class).text(input.message).done();
    case "finish": {
      const outcome = input.outcome;
      out.name(OUTCOMES, outcome.outcome);
      if (outcome.outcome === "succeeded") return out.response(outcome.response).done();
      if (outcome.outcome === "failed")
        return out
          .flag(outcome.retryable)
          .text(outcome.message)
          .optional(outcome.response, (w, r) => w.response(r))
          .done();
      if (outcome.outcome === "not_a_response") return out.text(outcome.typeName).done();
      return out.text(outcome.typeName).text(outcome.message).done();
    }
    case "send_failed":
      return out.text(input.error).done();
    case "mark":
      return out.u64(input.highWaterMillis).done();
    case "redis": {
      const answer = input.answer;
      out.name(ANSWERS, answer.answer);
      if (answer.answer === "fields") return out.list(answer.fields, (w, field) => w.optional(field, (v, bytes) => v.bytes(bytes))).done();
      if (answer.answer === "failed") return out.text(answer.message).done();
      return out.done();
    }
    default:
      return out.done();
  }
}

function recordEnd(r: Reader): RecordEnd {
  const decision = r.text();
  const finished = r.name(FINISHED);
  switch (finished) {
    case "operation_failed":
      return { decision, finished, stored: r.flag() };
    case "replay": {
      const outcome = r.u8() === 0 ? "succeeded" : "failed";
      const response = r.optional((o) => o.response());
      return { decision, finished, outcome, response, error: r.optional((o) => o.text()) };
    }
    case "in_progress":
      return { decision, finished, retryAfterMillis: r.u64() };
    case "operation_failed_unrecorded":
      return { decision, finished, storeCode: r.text(), storeMessage: r.text() };
    default:
      return { decision, finished };
  }
}

function storedRecord(r: Reader): WireRecord {
  const status = r.text();
  const fingerprint = r.raw(32);
  const [token, leaseDeadlineMillis, createdMillis, expiresMillis] = [r.u64(), r.u64(), r.u64(), r.u64()];
  const response = r.optional((o) => o.response());
  return { status, fingerprint, token, leaseDeadlineMillis, createdMillis, expiresMillis, response, error: r.optional((o) => o.text()) };
}

function storedMessage(r: Reader): WireMessage {
  const [messageId, messageKind, businessKey, payload, status] = [r.u64(), r.text(), r.text(), r.bytes(), r.text()];
  const [attempts, nextAttemptMillis, lastError] = [r.u64(), r.u64(), r.optional((o) => o.text())];
  return { messageId, messageKind, businessKey, payload, status, attempts, nextAttemptMillis, lastError, createdMillis: r.u64(), updatedMillis: r.u64() };
}

/** The hand-over (`yield`) of `kind`, after its tag. */
function kindYield(kind: WireKind, r: Reader): KindSteps[WireKind] {
  if (kind === "record") {
    const [decision, token, createdMillis, leaseDeadlineMillis] = [r.text(), r.u64(), r.u64(), r.u64()];
    return { tag: "yield", decision, token, createdMillis, leaseDeadlineMillis, renewEveryMillis: r.optional((o) => o.u64()) };
  }
  if (kind === "migrations") return { tag: "yield", version: r.u32(), sql: r.text() };
  if (kind === "segment") return { tag: "yield" };
  if (kind === "heartbeat") return { tag: "yield", millis: r.u64(), leaseDeadlineMillis: r.u64() };
  if (kind !== "relay") throw new TypeError(`a ${kind} driver has no yield`);
  const [messageId, messageKind, businessKey, payload] = [r.u64(), r.text(), r.text(), r.bytes()];
  return { tag: "yield", messageId, messageKind, businessKey, payload, attempts: r.u64(), createdMillis: r.u64() };
}

/** The end (`done`) of `kind`, after its tag. */
function kindDone(kind: WireKind, r: Reader): KindSteps[WireKind] {
  switch (kind) {
    case "record":
      return { tag: "done", ...recordEnd(r) };
    case "relay": {
      const [sent, retried, dead, givenUp, claimLost, released, markFailed] = [r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()];
      return { tag: "done", sent, retried, dead, givenUp, claimLost, released, markFailed };
    }
    case "record_renewal":
      return { tag: "done", leaseDeadlineMillis: r.u64() };
    case "record_cleanup":
    case "outbox_cleanup":
      return { tag: "done", deleted: r.u64() };
    case "record_load":
      return { tag: "done", record: r.optional(storedRecord) };
    case "outbox_load":
      return { tag: "done", message: r.optional(storedMessage) };
    case "enqueue":
      return { tag: "done", enqueued: r.name(ENQUEUED) };
    case "migrations":
      return { tag: "done", versions: r.list((o) => o.u32()) };
    case "heartbeat":
    case "lease_renew":
      return { tag: "done", leaseDeadlineMillis: r.u64() };
    case "segment":
      return { tag: "done", maxId: r.u64(), step: r.u64() };
    case "lease_acquire": {
      const [workerId, fencingToken, leaseDeadlineMillis, startAfterMillis, readyAtMillis, acquiredMillis] = [r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()];
      return { tag: "done", workerId, fencingToken, leaseDeadlineMillis, startAfterMillis, readyAtMillis, acquiredMillis, highWaterMillis: r.u64(), expectedToken: r.u64() };
    }
    case "lease_release":
      return { tag: "done", released: r.flag() };
  }
}

/** A packed step of a driver of kind `kind`. */
export function readStep<K extends WireKind>(kind: K, packed: Uint8Array): WireStep<K> {
  const r = new Reader(packed);
  const step = stepOf(kind, r);
  r.end();
  return step as WireStep<K>;
}

function stepOf(kind: WireKind, r: Reader): WireStep<WireKind> {
  const tag = r.name(STEPS, 1);
  switch (tag) {
    case "run":
      return { tag, name: r.text(), params: r.list((o) => o.value()) };
    case "pause":
      return { tag, millis: r.u64() };
    case "yield":
      return kindYield(kind, r);
    case "done":
      return kindDone(kind, r);
    case "fail": {
      const [code, detail, part, position, problem] = [r.text(), r.text(), r.optional((o) => o.text()), r.optional((o) => o.u64()), r.optional((o) => o.text())];
      return { tag, code, detail, part, position, problem, concern: r.text() };
    }
    case "redis": {
      const [byEval, script, code] = [r.flag(), r.text(), r.text()];
      return { tag, eval: byEval, script, code, keys: r.list((o) => o.text()), args: r.list((o) => o.bytes()) };
    }
    case "begin":
      return { tag, write: r.flag() };
    case "report":
      return { tag, lookup: r.optional((o) => o.text()), writeFailures: r.u32() };
    case "taken": {
      if (kind !== "segment") throw new TypeError(`a ${kind} driver has no taken`);
      const [first, count, action] = [r.u64(), r.u64(), r.name(ACTIONS)];
      return { tag, first, count, action, waitMillis: r.u64() };
    }
    default:
      return { tag };
  }
}
