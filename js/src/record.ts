/**
 * The idempotency record state machine. The core decides; the host stores:
 * load the key's record, {@link decide}, run the SQL the decision names (a
 * claim is an insert or a compare-and-set), run the operation, then
 * {@link completeRecord} or {@link failRecord} under the claim's fence.
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkString, toU64 } from "./check.js";
import { Fingerprint, fingerprintText } from "./fingerprint.js";
import { policyHandle as handleOf, setPolicyHandle } from "./handles.js";

/** Where a record is in its life. */
export type RecordStatus = "pending" | "succeeded" | "failed" | "failed_retryable";

/** One key's stored record: one row of the shared schema. */
export interface IdempotencyRecord {
  /** Where the record is in its life. */
  readonly status: RecordStatus;
  /**
   * The fingerprint of the payload that first used the key, as in every host
   * (a record passed in may still give its text `sha256:…`).
   */
  readonly fingerprint: Fingerprint;
  /** The fencing token of the latest claim (1, then one more per reclaim). */
  readonly token: bigint;
  /** While pending: when the holder's lease ends (Unix ms). */
  readonly leaseDeadlineMillis: bigint;
  /** When the key was first claimed (Unix ms). */
  readonly createdMillis: bigint;
  /** When the record leaves retention (Unix ms). */
  readonly expiresMillis: bigint;
}

/** What identifies one claim: guard completion writes with `token` and `createdMillis`. */
export interface Fence {
  /** The fencing token. */
  readonly token: bigint;
  /** The record's creation time (Unix ms). */
  readonly createdMillis: bigint;
}

/** A claim on a key: the row to write and, for a reclaim, what it must replace. */
export interface Claim {
  /** The record to write: pending, with the new token and lease. */
  readonly record: IdempotencyRecord;
  /** `null` to insert; otherwise compare-and-set on this fence and status. */
  readonly replaces: { readonly fence: Fence; readonly status: RecordStatus } | null;
}

/** The problem a refused request is answered with. */
export type ProblemName =
  | "missing_key"
  | "malformed_key"
  | "invalid_request_id"
  | "grant_expired"
  | "in_progress"
  | "fingerprint_mismatch"
  | "key_too_old"
  | "storage_unavailable"
  | "malformed_body";

/** What to do with an incoming request. */
export type Decision =
  | { readonly kind: "execute"; readonly claim: Claim }
  | { readonly kind: "replay"; readonly outcome: "succeeded" | "failed" }
  | { readonly kind: "in_progress"; readonly retryAfterMillis: bigint; readonly retryAfterSecs: bigint; readonly problem: ProblemName }
  | { readonly kind: "wait"; readonly pollMillis: bigint }
  | { readonly kind: "fingerprint_mismatch"; readonly problem: ProblemName }
  | { readonly kind: "key_too_old"; readonly problem: ProblemName };

/** The settings of a {@link RecordPolicy}; durations in milliseconds, each left out keeps the core's default. */
export interface RecordPolicyOptions {
  /** How long a claim holds the key before another request may reclaim it (default 60 000). */
  readonly leaseMillis?: number | bigint;
  /** How long a record is kept (and replayed); older keys are refused (default 24 h). */
  readonly retentionMillis?: number | bigint;
  /** Whether final failures are stored and replayed (default true). */
  readonly storeErrors?: boolean;
  /** The retry delay suggested while another request holds the key (default 1000). */
  readonly retryAfterMillis?: number | bigint;
  /** How long a duplicate waits for the first request (default 0: answer "in progress" at once). */
  readonly maxWaitMillis?: number | bigint;
  /** The pause between looks while waiting (default 50). */
  readonly pollMillis?: number | bigint;
}

function optionalU64(value: number | bigint | undefined, what: string): bigint | undefined {
  return value === undefined ? undefined : toU64(value, what);
}

/** Lease, retention and waiting rules; validated by the core (`record.invalid_policy`). */
export class RecordPolicy {
  /** A policy; see {@link RecordPolicyOptions}. */
  constructor(options: RecordPolicyOptions = {}) {
    const lease = optionalU64(options.leaseMillis, "leaseMillis");
    const retention = optionalU64(options.retentionMillis, "retentionMillis");
    if (options.storeErrors !== undefined && typeof options.storeErrors !== "boolean") {
      throw new TypeError("storeErrors must be a boolean");
    }
    const retryAfter = optionalU64(options.retryAfterMillis, "retryAfterMillis");
    const maxWait = optionalU64(options.maxWaitMillis, "maxWaitMillis");
    const poll = optionalU64(options.pollMillis, "pollMillis");
    setPolicyHandle(
      this,
      call(() => new wasm.RecordPolicyHandle(lease, retention, options.storeErrors, retryAfter, maxWait, poll)),
    );
  }

  /** The lease, in milliseconds. */
  get leaseMillis(): bigint {
    return this.#millis(0);
  }
  /** The retention, in milliseconds. */
  get retentionMillis(): bigint {
    return this.#millis(1);
  }
  /** The suggested retry delay, in milliseconds. */
  get retryAfterMillis(): bigint {
    return this.#millis(2);
  }
  /** The longest wait for a concurrent duplicate, in milliseconds. */
  get maxWaitMillis(): bigint {
    return this.#millis(3);
  }
  /** The pause between looks while waiting, in milliseconds. */
  get pollMillis(): bigint {
    return this.#millis(4);
  }
  /** Whether final failures are stored and replayed. */
  get storeErrors(): boolean {
    return handleOf(this).storeErrors;
  }

  #millis(index: number): bigint {
    return handleOf(this).millis()[index] ?? 0n;
  }
}

function toFields(record: IdempotencyRecord): wasm.RecordFields {
  if (typeof record !== "object" || record === null) throw new TypeError("record must be an IdempotencyRecord");
  return new wasm.RecordFields(
    checkString(record.status, "record.status"),
    fingerprintText(record.fingerprint, "record.fingerprint"),
    toU64(record.token, "record.token"),
    toU64(record.leaseDeadlineMillis, "record.leaseDeadlineMillis"),
    toU64(record.createdMillis, "record.createdMillis"),
    toU64(record.expiresMillis, "record.expiresMillis"),
  );
}

function optionalFields(record: IdempotencyRecord | null | undefined): wasm.RecordFields | undefined {
  return record === null || record === undefined ? undefined : toFields(record);
}

function fromFields(fields: wasm.RecordFields): IdempotencyRecord {
  return {
    status: fields.status as RecordStatus,
    fingerprint: Fingerprint.ofText(fields.fingerprint),
    token: fields.token,
    leaseDeadlineMillis: fields.leaseDeadlineMillis,
    createdMillis: fields.createdMillis,
    expiresMillis: fields.expiresMillis,
  };
}

function fromDecision(fields: wasm.DecisionFields): Decision {
  const problem = fields.problem as ProblemName;
  switch (fields.name) {
    case "execute": {
      const claim = fields.claim as wasm.RecordFields;
      const [token = 0n, createdMillis = 0n] = fields.expectedFence ?? [];
      const replaces = fields.expectedStatus === undefined ? null : { fence: { token, createdMillis }, status: fields.expectedStatus as RecordStatus };
      return { kind: "execute", claim: { record: fromFields(claim), replaces } };
    }
    case "replay":
      return { kind: "replay", outcome: fields.outcome as "succeeded" | "failed" };
    case "in_progress":
      return { kind: "in_progress", retryAfterMillis: fields.retryAfterMillis ?? 0n, retryAfterSecs: fields.retryAfterSecs ?? 0n, problem };
    case "wait":
      return { kind: "wait", pollMillis: fields.pollMillis ?? 0n };
    case "fingerprint_mismatch":
      return { kind: "fingerprint_mismatch", problem };
    default:
      return { kind: "key_too_old", problem };
  }
}

/** What the core needs to know about an incoming request. */
export interface Incoming {
  /** The fingerprint of the request's payload (a {@link Fingerprint} or its text `sha256:…`). */
  readonly fingerprint: Fingerprint | string;
  /** When the key was created (Unix ms), if known: a verified request ID's UUIDv7 timestamp. */
  readonly keyCreatedMillis?: number | bigint;
  /** How long this request already waited for a concurrent duplicate (ms; default 0). */
  readonly waitedMillis?: number | bigint;
}

/**
 * The decision for `incoming`, given the stored record of its key
 * (`existing`, `null` when there is none) at `nowMillis` (Unix ms) under
 * `policy`: the argument order of every host (`decide(existing, incoming,
 * now_millis, policy)`).
 *
 * @throws RecordError `record.time_overflow`, `record.token_exhausted`,
 * `record.unknown_status`; FingerprintError `fingerprint.invalid_text`.
 */
export function decide(existing: IdempotencyRecord | null, incoming: Incoming, nowMillis: number | bigint, policy: RecordPolicy): Decision {
  const fields = optionalFields(existing);
  const fingerprint = fingerprintText(incoming.fingerprint, "incoming.fingerprint");
  const created = optionalU64(incoming.keyCreatedMillis, "incoming.keyCreatedMillis");
  const waited = toU64(incoming.waitedMillis ?? 0, "incoming.waitedMillis");
  const at = toU64(nowMillis, "nowMillis");
  const handle = handleOf(policy);
  return fromDecision(call(() => wasm.recordDecide(fields, fingerprint, created, waited, at, handle)));
}

/**
 * The record a claim writes over `current` (the record storage holds now,
 * or `null`), as the adapter's SQL does: for in-memory stores and tests.
 *
 * @throws RecordError `record.claim_expired`, `record.claim_conflict`.
 */
export function applyClaim(claim: Claim, current: IdempotencyRecord | null, now: number | bigint = Date.now()): IdempotencyRecord {
  const record = toFields(claim.record);
  const fence = claim.replaces === null ? undefined : [toU64(claim.replaces.fence.token, "fence.token"), toU64(claim.replaces.fence.createdMillis, "fence.createdMillis")];
  const status = claim.replaces === null ? undefined : checkString(claim.replaces.status, "replaces.status");
  const existing = optionalFields(current);
  const at = toU64(now, "now");
  return fromFields(call(() => wasm.recordApplyClaim(record, fence === undefined ? undefined : BigUint64Array.from(fence), status, existing, at)));
}

/**
 * The record after the holder of `fence` completed the operation.
 *
 * @throws RecordError `record.stale_token`, `record.not_pending`.
 */
export function completeRecord(record: IdempotencyRecord, fence: Fence): IdempotencyRecord {
  const fields = toFields(record);
  const token = toU64(fence.token, "fence.token");
  const created = toU64(fence.createdMillis, "fence.createdMillis");
  return fromFields(call(() => wasm.recordComplete(fields, token, created)));
}

/**
 * The record after the holder of `fence` failed: `final` failures are stored
 * (replayed) when the policy stores errors, otherwise the key is released.
 *
 * @throws RecordError `record.stale_token`, `record.not_pending`.
 */
export function failRecord(record: IdempotencyRecord, fence: Fence, failure: "retryable" | "final", policy: RecordPolicy): IdempotencyRecord {
  if (failure !== "retryable" && failure !== "final") throw new TypeError(`failure must be "retryable" or "final"`);
  const fields = toFields(record);
  const token = toU64(fence.token, "fence.token");
  const created = toU64(fence.createdMillis, "fence.createdMillis");
  const handle = handleOf(policy);
  return fromFields(call(() => wasm.recordFail(fields, token, created, failure === "retryable", handle)));
}

/** Whether cleanup may delete the record at `now` (default `Date.now()`). */
export function isRemovable(record: IdempotencyRecord, now: number | bigint = Date.now()): boolean {
  const fields = toFields(record);
  const at = toU64(now, "now");
  return call(() => wasm.recordIsRemovable(fields, at));
}

/**
 * A record status read from storage.
 *
 * @throws RecordError `record.unknown_status`.
 */
export function parseRecordStatus(text: string): RecordStatus {
  checkString(text, "text");
  return call(() => wasm.recordStatus(text)) as RecordStatus;
}

/** An HTTP problem (RFC 9457) to answer a refused request with. */
export interface ProblemDetails {
  /** The HTTP status code. */
  readonly status: number;
  /** The problem type URI. */
  readonly type: string;
  /** The short title. */
  readonly title: string;
}

/** The details of the problem named `name`, or `undefined` for an unknown name. */
export function problemDetails(name: ProblemName | string): ProblemDetails | undefined {
  checkString(name, "name");
  const details = wasm.problemDetails(name);
  if (details === undefined) return undefined;
  const [status = "0", type = "", title = ""] = details;
  return { status: Number(status), type, title };
}

/** The `Retry-After` seconds for a delay in milliseconds (rounded up, at least 1). */
export function retryAfterSecs(millis: number | bigint): bigint {
  return wasm.retryAfterSecs(toU64(millis, "millis"));
}

/** The HTTP names and values every mintid server uses. */
export interface HttpConstants {
  /** `application/problem+json`. */
  readonly problemContentType: string;
  /** The header marking a replayed response. */
  readonly replayedHeader: string;
  /** Its value. */
  readonly replayedValue: string;
  /** `Retry-After`. */
  readonly retryAfterHeader: string;
}

/** The HTTP names and values every mintid server uses. */
export function httpConstants(): HttpConstants {
  const [problemContentType = "", replayedHeader = "", replayedValue = "", retryAfterHeader = ""] = wasm.httpConstants();
  return { problemContentType, replayedHeader, replayedValue, retryAfterHeader };
}
