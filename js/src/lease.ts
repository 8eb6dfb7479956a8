/**
 * Worker-id leases: a process leases a Snowflake worker id from the shared
 * table, renews it, and admits an ID only while the lease makes it safe. The
 * core decides; the host runs the named queries (`lease_find`, `lease_take`,
 * `lease_renew`, `lease_release`).
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkU64, toU64 } from "./check.js";
import { layoutHandle, leaseGuardHandle, leasePolicyHandle, setLeaseGuardHandle, setLeasePolicyHandle } from "./handles.js";
import { SnowflakeLayout, type SnowflakePreset } from "./snowflake.js";

/** One row of the lease table. */
export interface WorkerLease {
  /** The worker id. */
  readonly workerId: bigint;
  /** The fencing token of the latest holder. */
  readonly fencingToken: bigint;
  /** When the lease ends (Unix ms). */
  readonly leaseDeadlineMillis: bigint;
  /** The latest time the holder issued IDs up to (Unix ms). */
  readonly highWaterMillis: bigint;
  /** Whether a holder has it. */
  readonly held: boolean;
}

/** The settings of a {@link LeasePolicy}; durations in milliseconds, defaults from the core. */
export interface LeasePolicyOptions {
  /** The layout whose worker ids are leased (default `"classic"`). */
  readonly layout?: SnowflakeLayout | SnowflakePreset;
  /** How long a lease lasts. */
  readonly leaseMillis?: number | bigint;
  /** How often it is renewed. */
  readonly renewIntervalMillis?: number | bigint;
  /** How long before the deadline the holder stops issuing. */
  readonly safetyMarginMillis?: number | bigint;
  /** The pause before retrying a failed renewal. */
  readonly renewRetryMillis?: number | bigint;
  /** The clock skew allowed between hosts. */
  readonly maxSkewMillis?: number | bigint;
  /** The longest a new holder waits before it may issue. */
  readonly maxStartWaitMillis?: number | bigint;
}

const optional = (value: number | bigint | undefined, what: string): bigint | undefined => (value === undefined ? undefined : toU64(value, what));

/** Lease rules for one layout; validated by the core (`lease.invalid_policy`). */
export class LeasePolicy {
  /** A policy; see {@link LeasePolicyOptions}. */
  constructor(options: LeasePolicyOptions = {}) {
    const layout = options.layout === undefined || typeof options.layout === "string" ? SnowflakeLayout.preset(options.layout ?? "classic") : options.layout;
    const args = [
      optional(options.leaseMillis, "leaseMillis"),
      optional(options.renewIntervalMillis, "renewIntervalMillis"),
      optional(options.safetyMarginMillis, "safetyMarginMillis"),
      optional(options.renewRetryMillis, "renewRetryMillis"),
      optional(options.maxSkewMillis, "maxSkewMillis"),
      optional(options.maxStartWaitMillis, "maxStartWaitMillis"),
    ] as const;
    const handle = layoutHandle(layout);
    setLeasePolicyHandle(
      this,
      call(() => new wasm.LeasePolicyHandle(handle, ...args)),
    );
    this.layout = layout;
  }

  /** The layout whose worker ids are leased: every leased generator's layout. */
  readonly layout: SnowflakeLayout;

  /** The largest worker id leased. */
  get maxWorker(): bigint {
    return policyOf(this).maxWorker;
  }
  /** How long a lease lasts, in ms. */
  get leaseMillis(): bigint {
    return policyOf(this).millis()[0] ?? 0n;
  }
  /** How often it is renewed, in ms. */
  get renewIntervalMillis(): bigint {
    return policyOf(this).millis()[1] ?? 0n;
  }
}

function policyOf(policy: LeasePolicy): wasm.LeasePolicyHandle {
  return leasePolicyHandle(policy);
}

function rowArgs(row: WorkerLease): BigUint64Array {
  if (typeof row !== "object" || row === null) throw new TypeError("row must be a WorkerLease");
  if (typeof row.held !== "boolean") throw new TypeError("row.held must be a boolean");
  return BigUint64Array.from([
    toU64(row.workerId, "row.workerId"),
    toU64(row.fencingToken, "row.fencingToken"),
    toU64(row.leaseDeadlineMillis, "row.leaseDeadlineMillis"),
    toU64(row.highWaterMillis, "row.highWaterMillis"),
    row.held ? 1n : 0n,
  ]);
}

function rowOf(fields: BigUint64Array | bigint[]): WorkerLease {
  const [workerId = 0n, fencingToken = 0n, leaseDeadlineMillis = 0n, highWaterMillis = 0n, held = 0n] = fields;
  return { workerId, fencingToken, leaseDeadlineMillis, highWaterMillis, held: held !== 0n };
}

/** What acquiring a row means: the row to write (compare-and-set on `expectedToken`) and when to start. */
export interface Acquisition {
  /** The row to write. */
  readonly lease: WorkerLease;
  /** The fencing token the row must still have. */
  readonly expectedToken: bigint;
  /** When it was acquired (Unix ms). */
  readonly acquiredMillis: bigint;
  /** Issue only IDs after this time (Unix ms): the previous holder's high-water mark. */
  readonly startAfterMillis: bigint;
  /** The first time the new holder may issue (Unix ms). */
  readonly readyAtMillis: bigint;
}

/**
 * The acquisition of `row`, the row `lease_find` returned, at `nowMillis`
 * (Unix ms) under `policy`: the argument order of every host
 * (`acquire_lease(row, now_millis, policy)`).
 *
 * @throws LeaseError `lease.worker_out_of_range`, `lease.still_held`, `lease.token_exhausted`,
 * `lease.time_overflow`, `lease.high_water_ahead`.
 */
export function acquireLease(row: WorkerLease, nowMillis: number | bigint, policy: LeasePolicy): Acquisition {
  const found = rowArgs(row);
  const at = toU64(nowMillis, "nowMillis");
  const fields = call(() => wasm.leaseAcquire(policyOf(policy), found, at));
  const [expectedToken = 0n, acquiredMillis = 0n, startAfterMillis = 0n, readyAtMillis = 0n] = fields.slice(5);
  return { lease: rowOf(fields.slice(0, 5)), expectedToken, acquiredMillis, startAfterMillis, readyAtMillis };
}

/**
 * What to do after `lease_find` found no row, from `lease_count`: seed the
 * missing rows, or retry in a moment.
 *
 * @throws LeaseError `lease.no_worker_free`.
 */
export function whenNoLeaseFound(count: { readonly present: number | bigint; readonly free: number | bigint }, policy: LeasePolicy): "seed" | "retry" {
  const present = toU64(count.present, "present");
  const free = toU64(count.free, "free");
  return call(() => wasm.leaseNoneFound(policyOf(policy), present, free)) as "seed" | "retry";
}

/** A renewal to write with `lease_renew`. */
export interface LeaseRenewal {
  /** The worker id. */
  readonly workerId: bigint;
  /** The holder's fencing token. */
  readonly fencingToken: bigint;
  /** The new deadline (Unix ms). */
  readonly leaseDeadlineMillis: bigint;
  /** The high-water mark to store (Unix ms). */
  readonly highWaterMillis: bigint;
  /** When the renewal was made (Unix ms). */
  readonly nowMillis: bigint;
}

/** A release to write with `lease_release`. */
export interface LeaseRelease {
  /** The worker id. */
  readonly workerId: bigint;
  /** The holder's fencing token. */
  readonly fencingToken: bigint;
  /** The high-water mark to store (Unix ms). */
  readonly highWaterMillis: bigint;
  /** When it was released (Unix ms). */
  readonly nowMillis: bigint;
}

function stateOf(guard: LeaseGuard, index: number): bigint {
  return leaseGuardHandle(guard).state()[index] ?? 0n;
}

/**
 * Guards a written acquisition: admits IDs only between the start point and
 * the stop point (the deadline of the last renewal known written, minus the
 * safety margin).
 *
 * @throws LeaseError from `check`, `admit`, `admitAll`, `renewal`, `renewed`:
 * `lease.expired`, `lease.foreign_id`, `lease.lost`, … (see docs/spec.md).
 */
export class LeaseGuard {
  /** The guard of an acquisition the host has written. */
  constructor(acquisition: Acquisition, policy: LeasePolicy) {
    const fields = BigUint64Array.from([
      ...rowArgs(acquisition.lease),
      toU64(acquisition.expectedToken, "expectedToken"),
      toU64(acquisition.acquiredMillis, "acquiredMillis"),
      toU64(acquisition.startAfterMillis, "startAfterMillis"),
      toU64(acquisition.readyAtMillis, "readyAtMillis"),
    ]);
    setLeaseGuardHandle(
      this,
      call(() => new wasm.LeaseGuardHandle(policyOf(policy), fields)),
    );
  }

  /** Throws once the lease can no longer be trusted at `now`. */
  check(now: number | bigint = Date.now()): void {
    const at = toU64(now, "now");
    call(() => leaseGuardHandle(this).check(at));
  }

  /** Throws unless `id` is this worker's and inside the lease's safe window. */
  admit(id: bigint): void {
    const value = checkU64(id, "id");
    call(() => leaseGuardHandle(this).admit(value));
  }

  /** {@link admit} for a batch. */
  admitAll(ids: readonly bigint[] | BigUint64Array): void {
    const values = BigUint64Array.from(ids, (id) => checkU64(id, "ids[]"));
    call(() => leaseGuardHandle(this).admitAll(values));
  }

  /** Whether a renewal is due. */
  renewDue(now: number | bigint = Date.now()): boolean {
    return leaseGuardHandle(this).renewDue(toU64(now, "now"));
  }

  /** The renewal to write now, carrying the generator's high-water mark. */
  renewal(now: number | bigint, highWaterMillis: number | bigint): LeaseRenewal {
    const at = toU64(now, "now");
    const highWater = toU64(highWaterMillis, "highWaterMillis");
    const [workerId = 0n, fencingToken = 0n, leaseDeadlineMillis = 0n, high = 0n, nowMillis = 0n] = call(() => leaseGuardHandle(this).renewal(at, highWater));
    return { workerId, fencingToken, leaseDeadlineMillis, highWaterMillis: high, nowMillis };
  }

  /** Records the affected-row count of the written `renewal`. */
  renewed(renewal: LeaseRenewal, rows: number | bigint): void {
    const fields = BigUint64Array.from([
      toU64(renewal.workerId, "workerId"),
      toU64(renewal.fencingToken, "fencingToken"),
      toU64(renewal.leaseDeadlineMillis, "leaseDeadlineMillis"),
      toU64(renewal.highWaterMillis, "highWaterMillis"),
      toU64(renewal.nowMillis, "nowMillis"),
    ]);
    const count = toU64(rows, "rows");
    call(() => leaseGuardHandle(this).renewed(fields, count));
  }

  /** Records that a renewal could not be written. */
  renewalFailed(now: number | bigint = Date.now()): void {
    leaseGuardHandle(this).renewalFailed(toU64(now, "now"));
  }

  /** The release to write; the guard admits nothing afterwards. */
  release(now: number | bigint, highWaterMillis: number | bigint): LeaseRelease {
    const [workerId = 0n, fencingToken = 0n, high = 0n, nowMillis = 0n] = leaseGuardHandle(this).release(toU64(now, "now"), toU64(highWaterMillis, "highWaterMillis"));
    return { workerId, fencingToken, highWaterMillis: high, nowMillis };
  }

  /** The leased worker id. */
  get workerId(): bigint {
    return stateOf(this, 0);
  }
  /** The holder's fencing token. */
  get fencingToken(): bigint {
    return stateOf(this, 1);
  }
  /** Issue only IDs after this time (Unix ms). */
  get startAfterMillis(): bigint {
    return stateOf(this, 2);
  }
  /** The first time IDs may be issued (Unix ms). */
  get readyAtMillis(): bigint {
    return stateOf(this, 3);
  }
  /** The deadline of the last renewal known written (Unix ms). */
  get leaseDeadlineMillis(): bigint {
    return stateOf(this, 4);
  }
  /** When the guard stops admitting IDs (Unix ms). */
  get stopAtMillis(): bigint {
    return stateOf(this, 5);
  }
  /** When the next renewal is due (Unix ms). */
  get nextRenewalAtMillis(): bigint {
    return stateOf(this, 6);
  }
  /** Whether the lease is live (not lost, not released). */
  get isLive(): boolean {
    return leaseGuardHandle(this).isLive;
  }
}
