/**
 * Worker-id leases over `worker_lease`: acquire a free or expired worker id,
 * renew it, release it with the high-water mark; and {@link LeasedSnowflake},
 * a generator that issues IDs only while its lease is safe. The rules are the
 * core's lease drivers and `LeaseGuard`; this module runs the `lease_*`
 * statements they name.
 */

import { toU64 } from "../check.js";
import { leaseGuardHandle, leasePolicyHandle } from "../handles.js";
import { LeaseGuard, LeasePolicy, Snowflake } from "../node.js";
import { type StoreClock, systemClock, waitAtMostShutdown } from "./clock.js";
import type { Database } from "./database.js";
import { type SqlValue, storeCall } from "./driver.js";
import { type DriveContext, runWire, type Use } from "./loop.js";
import { Reporter, type StoreMetrics } from "./metrics.js";
import { defaultMetrics } from "./otel.js";
import type { LeasePolicyFields } from "./wire.js";

/** A row of `worker_lease`. */
export interface WorkerLeaseRow {
  /** The worker id. */
  readonly workerId: bigint;
  /** The holder's identity, or `null` when free. */
  readonly owner: string | null;
  /** The latest holder's fencing token. */
  readonly fencingToken: bigint;
  /** When the lease ends (Unix ms). */
  readonly leaseDeadlineMillis: bigint;
  /** The latest time IDs were issued up to (Unix ms). */
  readonly highWaterMillis: bigint;
}

/** Worker-id leases in one database, under one {@link LeasePolicy}: acquire, renew and release are drivers of the core. */
export class WorkerLeases {
  /** The database. */
  readonly database: Database;
  /** The lease policy (its layout names the worker ids). */
  readonly policy: LeasePolicy;
  /** The clock every decision and statement uses. */
  readonly clock: StoreClock;
  readonly #context: DriveContext;

  /** Leases over `database`; `options.metrics` gets their database errors (default as in `IdempotencyStoreOptions.metrics`). */
  constructor(database: Database, policy: LeasePolicy, options: { readonly clock?: StoreClock; readonly metrics?: StoreMetrics } = {}) {
    if (!(policy instanceof LeasePolicy)) throw new TypeError("policy must be a LeasePolicy");
    this.database = database;
    this.policy = policy;
    this.clock = options.clock ?? systemClock;
    const use: Use = (action) => this.database.withConnection(action);
    this.#context = { clock: this.clock, reporter: new Reporter(options.metrics ?? defaultMetrics()), dialect: database.dialect, use };
  }

  /**
   * Takes the lowest usable free or expired worker id for `owner`
   * (host/pod/process), seeding the table on first use, and resolves once
   * the new holder may issue (after an expired lease: the previous holder's
   * clock-skew bound). A free row whose high-water mark lies too far ahead of
   * this clock is skipped for the next one. With `timeoutMillis`, it waits
   * up to that long for a worker id to become usable.
   *
   * @throws LeaseError `lease.no_worker_free`, `lease.high_water_ahead` (both
   * without `timeoutMillis`), `lease.acquire_timeout`; StoreError `store.unavailable`.
   */
  async acquire(owner: string, timeoutMillis?: number | bigint): Promise<LeaseGuard> {
    if (typeof owner !== "string") throw new TypeError("owner must be a string");
    const timeout = timeoutMillis === undefined ? null : toU64(timeoutMillis, "timeoutMillis");
    const spec = { kind: "lease_acquire", policy: leasePolicyFields(this.policy), owner, timeoutMillis: timeout } as const;
    const { workerId, fencingToken, leaseDeadlineMillis, highWaterMillis, ...acquired } = await runWire(this.#context, spec);
    const { expectedToken, acquiredMillis, startAfterMillis, readyAtMillis } = acquired;
    const lease = { workerId, fencingToken, leaseDeadlineMillis, highWaterMillis, held: true };
    return new LeaseGuard({ lease, expectedToken, acquiredMillis, startAfterMillis, readyAtMillis }, this.policy);
  }

  /**
   * Renews `guard`'s lease, storing `highWaterMillis`; the guard learns the
   * outcome. A renewal the clock refuses (`lease.clock_behind`,
   * `lease.expired`) or the database does not answer counts as a failed
   * attempt: the next one is due after the policy's retry delay.
   *
   * @throws LeaseError `lease.lost`, `lease.clock_behind`, `lease.expired`, …;
   * StoreError `store.unavailable`.
   */
  async renew(guard: LeaseGuard, highWaterMillis: number | bigint): Promise<void> {
    const mark = toU64(highWaterMillis, "highWaterMillis");
    await runWire(this.#context, { kind: "lease_renew", guard: leaseGuardHandle(guard).wireId }, () => ({ tag: "mark", highWaterMillis: mark }));
  }

  /**
   * Releases `guard`'s lease with the high-water mark; whether the row was
   * still this holder's. `guard` stops issuing first; `highWaterMillis` may
   * be a function, read after that (the generator's own high-water time).
   *
   * @throws StoreError `store.unavailable`: the lease then ends at its deadline.
   */
  async release(guard: LeaseGuard, highWaterMillis: number | bigint | (() => bigint)): Promise<boolean> {
    // Making the driver stops the guard issuing; the mark is read after it.
    const read = typeof highWaterMillis === "function" ? highWaterMillis : () => highWaterMillis;
    const mark = () => ({ tag: "mark", highWaterMillis: toU64(read(), "highWaterMillis") }) as const;
    return (await runWire(this.#context, { kind: "lease_release", guard: leaseGuardHandle(guard).wireId }, mark)).released;
  }

  /** The row of `workerId`, or `null`. */
  async load(workerId: bigint): Promise<WorkerLeaseRow | null> {
    const statement = this.database.statement("lease_load");
    const { columns, rows } = await storeCall(() => this.database.withConnection((connection) => connection.run(statement, [workerId])));
    const row = rows[0];
    if (row === undefined) return null;
    const at = (name: string): SqlValue => row[columns.indexOf(name)] ?? null;
    // MySQL returns `VARBINARY` text as bytes.
    const owner = at("owner");
    return {
      workerId: at("worker_id") as bigint,
      owner: owner === null ? null : typeof owner === "string" ? owner : new TextDecoder().decode(owner as Uint8Array),
      fencingToken: at("fencing_token") as bigint,
      leaseDeadlineMillis: at("lease_deadline_millis") as bigint,
      highWaterMillis: at("high_water_millis") as bigint,
    };
  }
}

/** A lease policy's fields as the wire packs them: its layout's, then its durations. */
function leasePolicyFields(policy: LeasePolicy): LeasePolicyFields {
  const { timeBits, workerBits, sequenceBits, datacenterBits, epochMillis, tickMillis } = policy.layout;
  const [leaseMillis = 0n, renewIntervalMillis = 0n, renewRetryMillis = 0n, safetyMarginMillis = 0n, maxSkewMillis = 0n, maxStartWaitMillis = 0n] =
    leasePolicyHandle(policy).millis();
  const layout = { timeBits, workerBits, sequenceBits, datacenterBits, epochMillis, tickMillis };
  return { ...layout, leaseMillis, renewIntervalMillis, safetyMarginMillis, renewRetryMillis, maxSkewMillis, maxStartWaitMillis };
}

/**
 * A Snowflake generator on a leased worker id, on the leases' policy's
 * layout: it starts after the previous holder's high-water mark, renews the
 * lease from a timer (`unref`ed: it never keeps the process alive) when the
 * guard says the next renewal is due, and refuses to issue (a `LeaseError`)
 * once the lease is lost or could not be renewed before its stop point.
 */
export class LeasedSnowflake {
  /** The lease's guard. */
  readonly guard: LeaseGuard;
  readonly #leases: WorkerLeases;
  readonly #snowflake: Snowflake;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #renewing: Promise<void> | undefined;
  #closed = false;

  private constructor(leases: WorkerLeases, guard: LeaseGuard) {
    this.#leases = leases;
    this.guard = guard;
    this.#snowflake = new Snowflake({ worker: guard.workerId, layout: leases.policy.layout, startingAfterUnixMillis: guard.startAfterMillis });
    this.#schedule();
  }

  /**
   * Acquires a worker id for `owner` and resolves once the new holder may
   * issue, waiting up to `timeoutMillis` for a usable worker id.
   *
   * @throws LeaseError `lease.no_worker_free`, `lease.acquire_timeout`, …;
   * StoreError `store.unavailable`.
   */
  static async acquire(leases: WorkerLeases, owner: string, timeoutMillis?: number | bigint): Promise<LeasedSnowflake> {
    return new LeasedSnowflake(leases, await leases.acquire(owner, timeoutMillis));
  }

  /** The leased worker id. */
  get workerId(): bigint {
    return this.guard.workerId;
  }

  /**
   * No ID issued so far carries a later time (Unix ms): the generator's own
   * high-water time, or the lease's start point before the first ID.
   */
  get highWaterMillis(): bigint {
    const issued = this.#snowflake.highWaterUnixMillis;
    const start = this.guard.startAfterMillis;
    return issued !== undefined && issued > start ? issued : start;
  }

  /**
   * The next ID, admitted by the lease's guard.
   *
   * @throws LeaseError `lease.expired`, `lease.lost`, `lease.released`, …
   */
  nextId(): bigint {
    this.guard.check(this.#leases.clock.now());
    const id = this.#snowflake.nextId();
    this.guard.admit(id);
    return id;
  }

  /** The next beat, when the guard says the next renewal is due (none once the lease is over). */
  #schedule(): void {
    if (this.#closed || !this.guard.isLive) return;
    const wait = this.guard.nextRenewalAtMillis - this.#leases.clock.now();
    this.#timer = setTimeout(() => this.#beat(), Number(wait > 0n ? wait : 0n));
    this.#timer.unref();
  }

  #beat(): void {
    this.#renewing = this.#leases
      .renew(this.guard, this.highWaterMillis)
      .catch(() => undefined) // counted by the core; nextId reports it
      .finally(() => {
        this.#renewing = undefined;
        this.#schedule();
      });
  }

  /**
   * Stops the heartbeat and releases the lease, storing the generator's
   * high-water time read after it stopped issuing, once: whether the row was
   * still this holder's (false when the lease was lost, or on a second
   * call), as `release()` in every host. A renewal in flight is waited for
   * at most the core's shutdown bound (`shutdownWaitMillis()`, 10 s), then
   * left behind.
   */
  async release(): Promise<boolean> {
    if (this.#closed) return false;
    this.#closed = true;
    clearTimeout(this.#timer);
    await waitAtMostShutdown(this.#renewing);
    return this.#leases.release(this.guard, () => this.highWaterMillis);
  }

  /** {@link release}, under the name of a closable resource. */
  close(): Promise<boolean> {
    return this.release();
  }

  /** {@link release} at the end of an `await using` block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}
