/**
 * The lane: the core's record driver and outbox relay with their steps,
 * answers and outcomes as packed bytes (`docs/spec.md`, "The lane"), read
 * here with a `DataView` and written with a `TextEncoder`. One wasm call per step and no
 * object built field by field across the boundary; what each step means is
 * the driver's, unchanged. This module only reads and writes the layout.
 */

import { errorOf } from "../errors.js";
import { retryAfterSecs } from "../wasm/mintid_wasm.js";
import type { Answered, DbErrorClass, Held, SqlValue, StoreQuery, StoreResponse } from "./driver.js";
import type { FastPathVerdict } from "./metrics.js";
import type { ClaimedMessage, RelayReport } from "./outbox.js";

export { RecordLane, RelayLaneDriver } from "../wasm/mintid_wasm.js";

/** What the operation came to. */
export type OperationOutcome =
  | { readonly kind: "succeeded"; readonly response: StoreResponse }
  | { readonly kind: "failed"; readonly message: string; readonly retryable: boolean; readonly response: StoreResponse | null }
  | { readonly kind: "raised"; readonly message: string }
  | { readonly kind: "not_a_response"; readonly typeName: string };

/** How a record protocol ended. */
export type Finished =
  | { readonly kind: "executed" }
  | { readonly kind: "operation_failed"; readonly stored: boolean }
  | { readonly kind: "replay"; readonly outcome: "succeeded"; readonly response: StoreResponse; readonly error: null }
  | { readonly kind: "replay"; readonly outcome: "failed"; readonly response: StoreResponse | null; readonly error: string }
  | { readonly kind: "in_progress"; readonly problem: "in_progress"; readonly retryAfterMillis: bigint; readonly retryAfterSecs: bigint }
  | { readonly kind: "fingerprint_mismatch"; readonly problem: "fingerprint_mismatch" }
  | { readonly kind: "key_too_old"; readonly problem: "key_too_old" };

/** A step every driver on the lane asks for: run a query, pause. */
type HostStep = { readonly kind: "run"; readonly query: StoreQuery } | { readonly kind: "pause"; readonly millis: bigint };

/**
 * A script the record driver runs on Redis (its fast path): by `EVAL` with
 * the source when `eval`, else by `EVALSHA` with the SHA-1 (`code` is that
 * source or SHA-1 text), on `keys` with `args`.
 */
export interface RedisCall {
  readonly eval: boolean;
  /** The script's name (`check`, `settle`, `forget`). */
  readonly script: string;
  readonly code: Uint8Array;
  readonly keys: readonly string[];
  readonly args: readonly Uint8Array[];
}

/** A step of the record protocol; a failure is thrown. */
export type RecordStep =
  | HostStep
  | { readonly kind: "redis"; readonly call: RedisCall }
  | { readonly kind: "execute"; readonly held: Held }
  | { readonly kind: "done"; readonly finished: Finished };

/** A step of a relay run; a failure is thrown. */
export type RelayStep = HostStep | { readonly kind: "send"; readonly message: ClaimedMessage } | { readonly kind: "done"; readonly report: RelayReport };

const RUN = 1;
const PAUSE = 2;
const YIELD = 3;
const DONE = 4;
const REDIS = 6;
const NULL = 0;
const INT = 1;
const TEXT = 2;
const BYTES = 3;
const CLASSES: Readonly<Record<DbErrorClass, number>> = { unique_violation: 0, serialization: 1, connection_lost: 2, constraint: 3, other: 4, schema_missing: 5 };
const ENDS = ["executed", "operation_failed", "replay", "in_progress", "fingerprint_mismatch", "key_too_old"] as const;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** A cursor over a packed step. */
export class Reader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  at = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  u8(): number {
    return this.#bytes[this.at++] ?? 0;
  }

  u32(): number {
    const value = this.#view.getUint32(this.at, true);
    this.at += 4;
    return value;
  }

  u64(): bigint {
    const value = this.#view.getBigUint64(this.at, true);
    this.at += 8;
    return value;
  }

  i64(): bigint {
    const value = this.#view.getBigInt64(this.at, true);
    this.at += 8;
    return value;
  }

  bytes(length: number): Uint8Array {
    // The step is a fresh array of this reader's alone: views of it are safe.
    const bytes = this.#bytes.subarray(this.at, this.at + length);
    this.at += length;
    return bytes;
  }

  text(length: number): string {
    const text = utf8.decode(this.#bytes.subarray(this.at, this.at + length));
    this.at += length;
    return text;
  }

  lengthText(): string {
    return this.text(this.u32());
  }

  optionalText(): string | null {
    return this.u8() === 0 ? null : this.lengthText();
  }

  response(): StoreResponse {
    const contentType = this.lengthText();
    return { contentType, body: this.bytes(this.u32()) };
  }
}

function query(reader: Reader): StoreQuery {
  const name = reader.text(reader.u8());
  const count = reader.u8();
  const params: SqlValue[] = [];
  for (let n = 0; n < count; n += 1) {
    const kind = reader.u8();
    if (kind === INT) params.push(reader.i64());
    else if (kind === TEXT) params.push(reader.lengthText());
    else if (kind === BYTES) params.push(reader.bytes(reader.u32()));
    else params.push(null);
  }
  return { name, params };
}

/** A record end packed after its tag (`ENDS`), as a {@link Finished}. */
export function finished(reader: Reader): Finished {
  const end = ENDS[reader.u8()];
  switch (end) {
    case "operation_failed":
      return { kind: end, stored: reader.u8() !== 0 };
    case "replay": {
      const failed = reader.u8() !== 0;
      const response = reader.u8() === 0 ? null : reader.response();
      const error = reader.optionalText();
      if (failed) return { kind: end, outcome: "failed", response, error: error ?? "" };
      if (response === null) throw new TypeError("the core replayed a success without its response");
      return { kind: end, outcome: "succeeded", response, error: null };
    }
    case "in_progress": {
      const retryAfterMillis = reader.u64();
      return { kind: end, problem: end, retryAfterMillis, retryAfterSecs: retryAfterSecs(retryAfterMillis) };
    }
    case "fingerprint_mismatch":
      return { kind: end, problem: end };
    case "key_too_old":
      return { kind: end, problem: end };
    default:
      return { kind: "executed" };
  }
}

/** The core's typed error of a `FAIL` step, with `cause` behind it. */
function failure(reader: Reader, cause: unknown): Error {
  const code = reader.lengthText();
  const detail = reader.lengthText();
  const part = reader.optionalText();
  const position = reader.u8() === 0 ? undefined : Number(reader.u64());
  const problem = reader.optionalText();
  return errorOf(code, detail, {
    ...(part === null ? {} : { part }),
    ...(position === undefined ? {} : { position }),
    ...(problem === null ? {} : { problem }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A packed step: a query or a pause, or what `handOver` reads after a
 * driver's own tag (`YIELD` or `DONE`); a `FAIL` step is thrown, `cause`
 * behind it.
 */
function laneStep<S>(packed: Uint8Array, cause: unknown, handOver: (tag: typeof YIELD | typeof DONE, reader: Reader) => S): HostStep | S {
  const reader = new Reader(packed);
  const tag = reader.u8();
  switch (tag) {
    case RUN:
      return { kind: "run", query: query(reader) };
    case PAUSE:
      return { kind: "pause", millis: reader.u64() };
    case YIELD:
    case DONE:
      return handOver(tag, reader);
    default:
      throw failure(reader, cause);
  }
}

function list(reader: Reader): Uint8Array[] {
  const count = reader.u8();
  const items: Uint8Array[] = [];
  for (let n = 0; n < count; n += 1) items.push(reader.bytes(reader.u32()));
  return items;
}

/** A packed Redis step (after its tag) as a {@link RedisCall}. */
function redisCall(reader: Reader): RedisCall {
  const byEval = reader.u8() === 1;
  const script = reader.text(reader.u8());
  const code = reader.bytes(reader.u32());
  const keys = list(reader).map((key) => utf8.decode(key));
  return { eval: byEval, script, code, keys, args: list(reader) };
}

/** A packed record step as a {@link RecordStep}. */
export function recordStep(packed: Uint8Array, cause?: unknown): RecordStep {
  if (packed[0] === REDIS) {
    const reader = new Reader(packed);
    reader.at = 1;
    return { kind: "redis", call: redisCall(reader) };
  }
  return laneStep(packed, cause, (tag, reader) => {
    if (tag === DONE) return { kind: "done", finished: finished(reader) } as const;
    const token = reader.u64();
    const createdMillis = reader.u64();
    const leaseDeadlineMillis = reader.u64();
    const every = reader.i64();
    return { kind: "execute", held: { token, createdMillis, leaseDeadlineMillis, renewEveryMillis: every < 0n ? null : every } } as const;
  });
}

/** A packed relay step as a {@link RelayStep}. */
export function relayStep(packed: Uint8Array, cause?: unknown): RelayStep {
  return laneStep(packed, cause, (tag, reader) => {
    if (tag === DONE) {
      const [sent, retried, dead, givenUp, claimLost, released, markFailed] = Array.from({ length: 7 }, () => Number(reader.u64()));
      return { kind: "done", report: { sent, retried, dead, givenUp, claimLost, released, markFailed } } as RelayStep;
    }
    const messageId = reader.u64();
    const kind = reader.lengthText();
    const businessKey = reader.lengthText();
    const payload = reader.bytes(reader.u32());
    return { kind: "send", message: { messageId, kind, businessKey, payload, attempts: reader.u64(), createdMillis: reader.u64() } } as const;
  });
}

/**
 * A growable byte buffer for answers and outcomes, one per module: each
 * packing is copied into wasm by the call it is made for, before the next.
 */
export class Writer {
  #bytes = new Uint8Array(1024);
  #view = new DataView(this.#bytes.buffer);
  #at = 0;

  /** Empty, to pack anew. */
  reset(): this {
    this.#at = 0;
    return this;
  }

  #room(count: number): void {
    if (this.#at + count <= this.#bytes.length) return;
    const bigger = new Uint8Array(Math.max(this.#bytes.length * 2, this.#at + count));
    bigger.set(this.#bytes.subarray(0, this.#at));
    this.#bytes = bigger;
    this.#view = new DataView(bigger.buffer);
  }

  u8(value: number): void {
    this.#room(1);
    this.#bytes[this.#at++] = value;
  }

  u32(value: number): void {
    this.#room(4);
    this.#view.setUint32(this.#at, value, true);
    this.#at += 4;
  }

  i64(value: bigint): void {
    this.#room(8);
    this.#view.setBigInt64(this.#at, value, true);
    this.#at += 8;
  }

  u64(value: bigint): void {
    this.#room(8);
    this.#view.setBigUint64(this.#at, value, true);
    this.#at += 8;
  }

  bytes(bytes: Uint8Array): void {
    this.u32(bytes.length);
    this.#room(bytes.length);
    this.#bytes.set(bytes, this.#at);
    this.#at += bytes.length;
  }

  text(text: string): void {
    // At most 3 bytes per UTF-16 unit; the length is written once known.
    this.#room(4 + text.length * 3);
    const { written } = encoder.encodeInto(text, this.#bytes.subarray(this.#at + 4));
    this.#view.setUint32(this.#at, written, true);
    this.#at += 4 + written;
  }

  response(response: StoreResponse): void {
    this.text(response.contentType);
    this.bytes(response.body);
  }

  done(): Uint8Array {
    return this.#bytes.subarray(0, this.#at);
  }
}

const shared = new Writer();

function value(writer: Writer, item: unknown): void {
  if (item === null || item === undefined) writer.u8(NULL);
  else if (typeof item === "bigint") {
    writer.u8(INT);
    writer.i64(item);
  } else if (typeof item === "string") {
    writer.u8(TEXT);
    writer.text(item);
  } else if (item instanceof Uint8Array) {
    writer.u8(BYTES);
    writer.bytes(item);
  } else {
    throw new TypeError(`a column value must be null, a bigint, a string or a Uint8Array, got ${typeof item}`);
  }
}

/** Rows (arrays of column values in `SELECT` order), packed (valid until the next packing). */
export function packRows(rows: readonly (readonly unknown[])[]): Uint8Array {
  const writer = shared.reset();
  writer.u32(rows.length);
  for (const row of rows) {
    writer.u8(row.length);
    for (const item of row) value(writer, item);
  }
  return writer.done();
}

/** An operation's outcome, packed (valid until the next packing). */
export function packOutcome(outcome: OperationOutcome): Uint8Array {
  const writer = shared.reset();
  switch (outcome.kind) {
    case "succeeded":
      writer.u8(0);
      writer.response(outcome.response);
      break;
    case "failed":
      writer.u8(1);
      writer.u8(outcome.retryable ? 1 : 0);
      writer.text(outcome.message);
      if (outcome.response === null) writer.u8(0);
      else {
        writer.u8(1);
        writer.response(outcome.response);
      }
      break;
    case "not_a_response":
      writer.u8(2);
      writer.text(outcome.typeName);
      break;
    case "raised":
      writer.u8(3);
      writer.text(outcome.message);
      break;
  }
  return writer.done();
}

/**
 * Redis failed (an error reply other than `NOSCRIPT`, a timeout, a lost
 * connection, a reply of another shape) with `message`, packed. Each Redis
 * answer has a writer of its own: it is awaited before it is pushed, while
 * other requests pack theirs.
 */
export function failedReply(message: string): Uint8Array {
  const out = new Writer();
  out.u8(2);
  out.text(message);
  return out.done();
}

/** The node does not have the script (`NOSCRIPT`), packed. */
export const NO_SCRIPT = Uint8Array.of(3);

/**
 * What Redis answered, packed: nil, an array (its elements nil, bytes or
 * integers), an integer (one field, its decimal text), or a failure (a
 * reply of another shape).
 */
export function packReply(answer: unknown): Uint8Array {
  if (answer === null || answer === undefined) return Uint8Array.of(0);
  const fields = Array.isArray(answer) ? (answer as unknown[]) : typeof answer === "number" || typeof answer === "bigint" ? [answer] : undefined;
  if (fields === undefined) return failedReply(`a reply of type ${typeName(answer)}`);
  const out = new Writer();
  out.u8(1);
  out.u32(fields.length);
  for (const field of fields) {
    if (field === null || field === undefined) out.u8(0);
    else if (field instanceof Uint8Array) {
      out.u8(1);
      out.bytes(field);
    } else if (typeof field === "number" || typeof field === "bigint") {
      out.u8(1);
      out.bytes(encoder.encode(String(field)));
    } else {
      return failedReply(`an element of type ${typeName(field)}`);
    }
  }
  return out.done();
}

function typeName(value: unknown): string {
  return value instanceof Uint8Array ? "bytes" : Array.isArray(value) ? "array" : typeof value;
}

/** What the record driver's fast path came to since its last report. */
export interface FastReport {
  /** The check's verdict, if one was answered. */
  readonly lookup: FastPathVerdict | null;
  /** The writes to Redis after the database path that failed. */
  readonly writeFailures: number;
}

/** A packed fast report (the lookup's name, the failed writes) as a {@link FastReport}. */
export function fastReport(packed: Uint8Array): FastReport {
  const reader = new Reader(packed);
  const lookup = reader.text(reader.u8());
  return { lookup: lookup === "" ? null : (lookup as FastPathVerdict), writeFailures: reader.u32() };
}

/** What every driver on the lane takes: a database answer, packed. */
interface AnswerTaker {
  pushRows(rows: Uint8Array, now: bigint): Uint8Array;
  pushAffected(count: bigint, now: bigint): Uint8Array;
  pushFailed(errorClass: number, message: string, now: bigint): Uint8Array;
}

/** Pushes a database answer to `driver`: its next step, packed. */
export function pushAnswer(driver: AnswerTaker, { answer }: Answered, now: bigint): Uint8Array {
  switch (answer.kind) {
    case "rows":
      return driver.pushRows(packRows(answer.rows), now);
    case "affected":
      return driver.pushAffected(answer.count, now);
    case "failed":
      return driver.pushFailed(CLASSES[answer.class], answer.message, now);
  }
}
