// The runner of tests/conformance/leases.json against one database.
import assert from "node:assert/strict";
import { LeaseError, LeasePolicy, ManualClock, Snowflake, SnowflakeLayout } from "../../dist/full/node.js";
import { LeasedSnowflake, migrate, WorkerLeases } from "../../dist/full/store/pg.js";
import { StepClock, systemClock } from "./idempotency.mjs";

function layoutOf(spec) {
  if (typeof spec === "string") return SnowflakeLayout.preset(spec);
  return new SnowflakeLayout({
    timeBits: spec.time_bits,
    workerBits: spec.worker_bits,
    sequenceBits: spec.sequence_bits,
    epochMillis: BigInt(spec.epoch_millis),
    tickMillis: BigInt(spec.tick_millis),
  });
}

function policyOf(spec, layout) {
  return new LeasePolicy({
    layout,
    leaseMillis: BigInt(spec.lease_millis),
    renewIntervalMillis: BigInt(spec.renew_interval_millis),
    safetyMarginMillis: BigInt(spec.safety_margin_millis),
    renewRetryMillis: BigInt(spec.renew_retry_millis),
    maxSkewMillis: BigInt(spec.max_skew_millis),
    maxStartWaitMillis: BigInt(spec.max_start_wait_millis),
  });
}

/** `"ok"`, or `{error: code}` for a mintid error. */
async function outcome(action) {
  try {
    const value = await action();
    return value === undefined ? "ok" : value;
  } catch (error) {
    if (typeof error?.code !== "string") throw error;
    return { error: error.code };
  }
}

const KNOWN_STEP_FIELDS = new Set(["do", "expect", "host", "owner", "now", "count", "high_water", "worker_id", "hosts", "timeout"]);

const timeoutOf = (step) => (step.timeout === undefined ? undefined : BigInt(step.timeout));

export async function runLeaseCase(testCase, db) {
  assert.equal(testCase.op, "scenario", `unknown op ${testCase.op}`);
  const layout = layoutOf(testCase.policy.layout);
  const policy = policyOf(testCase.policy, layout);
  assert.ok(["manual", "system"].includes(testCase.clock), `unknown clock ${testCase.clock}`);
  const clock = testCase.clock === "manual" ? new StepClock() : systemClock;
  const admin = db.open();
  const leases = new WorkerLeases(admin, policy, { clock });
  const hosts = new Map();
  const leased = new Map();
  const issued = [];
  const hostOf = (name) => {
    const host = hosts.get(name);
    assert.ok(host, `host ${name} holds no lease`);
    return host;
  };
  for (const [index, step] of testCase.steps.entries()) {
    for (const field of Object.keys(step)) assert.ok(KNOWN_STEP_FIELDS.has(field), `step ${index}: unknown field ${field}`);
    const where = `step ${index} (${step.do})`;
    if (step.now !== undefined && clock instanceof StepClock) clock.current = BigInt(step.now);
    switch (step.do) {
      case "migrate":
        await migrate(admin);
        assert.equal(step.expect, "ok", where);
        break;
      case "acquire": {
        const result = await outcome(async () => {
          const guard = await leases.acquire(step.owner, timeoutOf(step));
          const snowflakeClock = new ManualClock(clock.current);
          const snowflake = new Snowflake({ worker: guard.workerId, layout, startingAfterUnixMillis: guard.startAfterMillis, clock: snowflakeClock });
          hosts.set(step.host, { guard, snowflake, snowflakeClock });
          return {
            worker_id: String(guard.workerId),
            fencing_token: String(guard.fencingToken),
            start_after: String(guard.startAfterMillis),
            ready_at: String(guard.readyAtMillis),
          };
        });
        assert.deepEqual(result, step.expect, where);
        break;
      }
      case "check":
        assert.deepEqual(await outcome(() => hostOf(step.host).guard.check(clock.current)), step.expect, where);
        break;
      case "generate": {
        const host = hostOf(step.host);
        host.snowflakeClock.set(clock.current);
        const result = await outcome(() => {
          for (let n = 0; n < Number(step.count); n += 1) {
            host.guard.check(clock.current);
            const id = host.snowflake.nextId();
            host.guard.admit(id);
            issued.push(id);
          }
          return { admitted: step.count };
        });
        assert.deepEqual(result, step.expect, where);
        break;
      }
      case "renew":
        assert.deepEqual(await outcome(() => leases.renew(hostOf(step.host).guard, BigInt(step.high_water))), step.expect, where);
        break;
      case "renew_unreachable": {
        const { guard } = hostOf(step.host);
        guard.renewalFailed(clock.current);
        assert.deepEqual({ next_renewal_at: String(guard.nextRenewalAtMillis) }, step.expect, where);
        break;
      }
      case "release": {
        const released = await leases.release(hostOf(step.host).guard, BigInt(step.high_water));
        assert.deepEqual({ released }, step.expect, where);
        break;
      }
      case "row": {
        const row = await leases.load(BigInt(step.worker_id));
        const actual = row === null ? null : {
          owner: row.owner,
          fencing_token: String(row.fencingToken),
          lease_deadline: String(row.leaseDeadlineMillis),
          high_water: String(row.highWaterMillis),
        };
        assert.deepEqual(actual, step.expect, where);
        break;
      }
      case "guard": {
        const { guard } = hostOf(step.host);
        const actual = {
          lease_deadline: String(guard.leaseDeadlineMillis),
          stop_at: String(guard.stopAtMillis),
          next_renewal_at: String(guard.nextRenewalAtMillis),
        };
        assert.deepEqual(actual, step.expect, where);
        break;
      }
      case "leased_acquire": {
        const generator = await LeasedSnowflake.acquire(new WorkerLeases(admin, policy), step.owner, timeoutOf(step));
        leased.set(step.host, generator);
        assert.deepEqual({ worker_id: String(generator.workerId) }, step.expect, where);
        break;
      }
      case "leased_generate": {
        const generator = leased.get(step.host);
        assert.ok(generator, `${where}: no leased generator`);
        for (let n = 0; n < Number(step.count); n += 1) issued.push(generator.nextId());
        assert.deepEqual({ admitted: step.count }, step.expect, where);
        break;
      }
      case "leased_release": {
        const generator = leased.get(step.host);
        assert.ok(generator, `${where}: no leased generator`);
        leased.delete(step.host);
        const released = await generator.release();
        // Once: the idiomatic close and `await using` call release, which answers false from then on.
        assert.equal(await generator.close(), false, where);
        await generator[Symbol.asyncDispose]();
        const row = await leases.load(generator.workerId);
        const last = layout.decode(issued.at(-1)).unixMillis;
        const actual = {
          released,
          high_water_is_generators: row.highWaterMillis === generator.highWaterMillis,
          high_water_covers_last_id: row.highWaterMillis >= last,
        };
        assert.deepEqual(actual, step.expect, where);
        break;
      }
      case "ids_increasing":
        assert.ok(issued.every((id, n) => n === 0 || issued[n - 1] < id), `${where}: an ID was not larger than the one before`);
        assert.equal(step.expect, "ok", where);
        break;
      case "ids_unique":
        assert.equal(new Set(issued).size, issued.length, `${where}: an ID was issued twice`);
        assert.equal(step.expect, "ok", where);
        break;
      case "concurrent_acquire": {
        const count = Number(step.hosts);
        const databases = Array.from({ length: count }, () => db.open());
        const results = await Promise.all(databases.map(async (database, n) => {
          try {
            return (await new WorkerLeases(database, policy).acquire(`host-${n}`)).workerId;
          } catch (error) {
            if (error instanceof LeaseError && error.code === "lease.no_worker_free") return "no_worker_free";
            throw error;
          }
        }));
        for (const database of databases) await database.close();
        const ids = results.filter((result) => result !== "no_worker_free");
        assert.equal(new Set(ids).size, ids.length, `${where}: a worker id was acquired twice`);
        assert.deepEqual({ acquired: String(ids.length), no_worker_free: String(count - ids.length) }, step.expect, where);
        break;
      }
      default:
        assert.fail(`${where}: unknown step`);
    }
  }
}
