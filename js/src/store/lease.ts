/**
 * Worker-id leases over `worker_lease`: acquire a free or expired worker id,
 * renew it, release it with the high-water mark; and {@link LeasedSnowflake},
 * a generator that issues IDs only while its lease is safe. The rules are the
 * core's `LeaseGuard`; this module runs `lease_find`, `lease_take`, … .
 */

import { acquireLease, LeaseGuard, LeasePolicy, Snowflake, type SnowflakeLayout, type SnowflakePreset, whenNoLeaseFound } from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { type Database, execRows, int, one, text } from "./database.js";
import { storeCall } from "./driver.js";

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

/** Worker-id leases in one database, under one {@link LeasePolicy}. */
export class WorkerLeases {
  /** The database. */
  readonly database: Database;
  /** The lease policy (its layout names the worker ids). */
  readonly policy: LeasePolicy;
  readonly #clock: StoreClock;

  /** Leases over `database`. */
  constructor(database: Database, policy: LeasePolicy, options: { readonly clock?: StoreClock } = {}) {
    if (!(policy instanceof LeasePolicy)) throw new TypeError("policy must be a LeasePolicy");
    this.database = database;
    this.policy = policy;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Takes the lowest free or expired worker id for `owner` (host/pod/process).
   *
   * @throws LeaseError `lease.no_worker_free`; StoreError `store.unavailable`.
   */
  async acquire(owner: string): Promise<LeaseGuard> {
    return storeCall(() => this.#acquire(owner));
  }

  async #acquire(owner: string): Promise<LeaseGuard> {
    for (;;) {
      const now = this.#clock.now();
      const guard = await this.database.transaction(async (connection) => {
        const row = await one(connection, this.database.statement("lease_find"), { max_worker: this.policy.maxWorker, now_millis: now });
        if (row === undefined) return undefined;
        const acquisition = acquireLease({
          workerId: int(row["worker_id"]),
          fencingToken: int(row["fencing_token"]),
          leaseDeadlineMillis: int(row["lease_deadline_millis"]),
          highWaterMillis: int(row["high_water_millis"]),
          held: row["owner"] !== null && row["owner"] !== undefined,
        }, this.policy, now);
        const { lease } = acquisition;
        const taken = await execRows(connection, this.database.statement("lease_take"), {
          worker_id: lease.workerId,
          owner,
          fencing_token: lease.fencingToken,
          lease_deadline_millis: lease.leaseDeadlineMillis,
          high_water_millis: lease.highWaterMillis,
          expected_token: acquisition.expectedToken,
          now_millis: acquisition.acquiredMillis,
        });
        return taken === 1 ? new LeaseGuard(acquisition, this.policy) : null;
      }, { writeLock: true });
      if (guard instanceof LeaseGuard) return guard;
      if (guard === null) continue;
      await this.#noneFound(now);
    }
  }

  async #noneFound(now: bigint): Promise<void> {
    const params = { max_worker: this.policy.maxWorker, now_millis: now };
    const count = await this.database.withConnection((connection) => one(connection, this.database.statement("lease_count"), params));
    const next = whenNoLeaseFound({ present: int(count?.["present_count"] ?? 0n), free: int(count?.["free_count"] ?? 0n) }, this.policy);
    if (next === "seed") await this.database.withConnection((connection) => execRows(connection, this.database.statement("lease_seed"), params));
  }

  /**
   * Renews `guard`'s lease, storing `highWaterMillis`; the guard learns the
   * outcome (a lost lease makes it stop admitting IDs).
   *
   * @throws LeaseError `lease.lost`, …; StoreError `store.unavailable` (the guard
   * then counts a failed renewal).
   */
  async renew(guard: LeaseGuard, highWaterMillis: bigint): Promise<void> {
    const now = this.#clock.now();
    const renewal = guard.renewal(now, highWaterMillis);
    let rows: number;
    try {
      rows = await storeCall(() => this.database.withConnection((connection) => execRows(connection, this.database.statement("lease_renew"), {
        worker_id: renewal.workerId,
        fencing_token: renewal.fencingToken,
        lease_deadline_millis: renewal.leaseDeadlineMillis,
        high_water_millis: renewal.highWaterMillis,
        now_millis: renewal.nowMillis,
      })));
    } catch (error) {
      guard.renewalFailed(now);
      throw error;
    }
    guard.renewed(renewal, rows);
  }

  /** Releases `guard`'s lease with the high-water mark; whether the row was still this holder's. */
  async release(guard: LeaseGuard, highWaterMillis: bigint): Promise<boolean> {
    const release = guard.release(this.#clock.now(), highWaterMillis);
    const rows = await storeCall(() => this.database.withConnection((connection) => execRows(connection, this.database.statement("lease_release"), {
      worker_id: release.workerId,
      fencing_token: release.fencingToken,
      high_water_millis: release.highWaterMillis,
      now_millis: release.nowMillis,
    })));
    return rows === 1;
  }

  /** The row of `workerId`, or `null`. */
  async load(workerId: bigint): Promise<WorkerLeaseRow | null> {
    const row = await storeCall(() => this.database.withConnection((connection) => one(connection, this.database.statement("lease_load"), { worker_id: workerId })));
    if (row === undefined) return null;
    const owner = row["owner"];
    return {
      workerId: int(row["worker_id"]),
      owner: owner === null || owner === undefined ? null : text(owner),
      fencingToken: int(row["fencing_token"]),
      leaseDeadlineMillis: int(row["lease_deadline_millis"]),
      highWaterMillis: int(row["high_water_millis"]),
    };
  }
}

/**
 * A Snowflake generator on a leased worker id: it starts after the previous
 * holder's high-water mark, renews the lease from a timer (`unref`ed: it never
 * keeps the process alive), and refuses to issue (a `LeaseError`) once the
 * lease is lost or could not be renewed before its stop point.
 */
export class LeasedSnowflake {
  /** The lease's guard. */
  readonly guard: LeaseGuard;
  readonly #leases: WorkerLeases;
  readonly #snowflake: Snowflake;
  readonly #timer: ReturnType<typeof setInterval>;
  #renewing: Promise<void> | undefined;
  #highWaterMillis: bigint;
  #closed = false;

  private constructor(leases: WorkerLeases, guard: LeaseGuard, layout: SnowflakeLayout | SnowflakePreset) {
    this.#leases = leases;
    this.guard = guard;
    this.#highWaterMillis = guard.startAfterMillis;
    this.#snowflake = new Snowflake({ worker: guard.workerId, layout, startingAfterUnixMs: guard.startAfterMillis });
    const tick = Math.max(1, Math.min(1000, Number(leases.policy.renewIntervalMillis) / 10));
    this.#timer = setInterval(() => this.#heartbeat(), tick);
    this.#timer.unref();
  }

  /**
   * Acquires a worker id for `owner` and waits until the new holder may
   * issue (the previous holder's clock-skew bound). `layout` must be the
   * leases' policy's layout.
   *
   * @throws LeaseError `lease.no_worker_free`; StoreError `store.unavailable`.
   */
  static async acquire(leases: WorkerLeases, owner: string, layout: SnowflakeLayout | SnowflakePreset = "classic"): Promise<LeasedSnowflake> {
    const guard = await leases.acquire(owner);
    const wait = Number(guard.readyAtMillis) - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return new LeasedSnowflake(leases, guard, layout);
  }

  /** The leased worker id. */
  get workerId(): bigint {
    return this.guard.workerId;
  }

  /**
   * The next ID, admitted by the lease's guard.
   *
   * @throws LeaseError `lease.expired`, `lease.lost`, `lease.released`, …
   */
  nextId(): bigint {
    const now = BigInt(Date.now());
    this.guard.check(now);
    const id = this.#snowflake.nextId();
    this.guard.admit(id);
    if (now > this.#highWaterMillis) this.#highWaterMillis = now;
    return id;
  }

  #heartbeat(): void {
    if (this.#closed || this.#renewing !== undefined || !this.guard.isLive || !this.guard.renewDue(Date.now())) return;
    this.#renewing = this.#leases.renew(this.guard, this.#highWater())
      .catch(() => undefined)
      .finally(() => {
        this.#renewing = undefined;
      });
  }

  /** No ID issued so far has a later time than this (Unix ms). */
  #highWater(): bigint {
    return this.#highWaterMillis;
  }

  /** Stops the heartbeat and releases the lease, storing the high-water mark; whether the row was still ours. */
  async close(): Promise<boolean> {
    if (this.#closed) return false;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#renewing;
    if (!this.guard.isLive) return false;
    return this.#leases.release(this.guard, this.#highWater());
  }
}
