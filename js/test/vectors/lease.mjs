// Runners for tests/vectors/lease.json, by op.
import assert from "node:assert/strict";
import { acquireLease, LeaseGuard, LeasePolicy, SnowflakeLayout, whenNoLeaseFound } from "mintid";
import { expectError } from "./common.mjs";

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

function policyOf(spec) {
  return new LeasePolicy({
    layout: layoutOf(spec.layout),
    leaseMillis: BigInt(spec.lease_millis),
    renewIntervalMillis: BigInt(spec.renew_interval_millis),
    safetyMarginMillis: BigInt(spec.safety_margin_millis),
    renewRetryMillis: BigInt(spec.renew_retry_millis),
    maxSkewMillis: BigInt(spec.max_skew_millis),
    maxStartWaitMillis: BigInt(spec.max_start_wait_millis),
  });
}

const rowOf = (spec) => ({
  workerId: BigInt(spec.worker_id),
  fencingToken: BigInt(spec.fencing_token),
  leaseDeadlineMillis: BigInt(spec.lease_deadline),
  highWaterMillis: BigInt(spec.high_water),
  held: spec.held,
});

const specOf = (row) => ({
  worker_id: String(row.workerId),
  fencing_token: String(row.fencingToken),
  lease_deadline: String(row.leaseDeadlineMillis),
  high_water: String(row.highWaterMillis),
  held: row.held,
});

const isError = (expect) => typeof expect === "object" && expect !== null && "error" in expect;

/** Runs `action` against an `"ok"` / `{error}` expectation. */
function expectOk(action, expect, where) {
  if (isError(expect)) return expectError(action, expect.error, where);
  assert.equal(expect, "ok", where);
  action();
}

function runGuard(vector, where) {
  const policy = policyOf(vector.policy);
  const guard = new LeaseGuard(acquireLease(rowOf(vector.row), BigInt(vector.now), policy), policy);
  let latestRenewal;
  vector.steps.forEach((step, index) => {
    const at = `${where} step ${index} (${step.do})`;
    switch (step.do) {
      case "check":
        return expectOk(() => guard.check(BigInt(step.now)), step.expect, at);
      case "admit":
        return expectOk(() => guard.admit(BigInt(step.id)), step.expect, at);
      case "admit_all":
        return expectOk(() => guard.admitAll(step.ids.map(BigInt)), step.expect, at);
      case "renew_due":
        return assert.equal(guard.renewDue(BigInt(step.now)), step.expect, at);
      case "renewal": {
        const make = () => guard.renewal(BigInt(step.now), BigInt(step.high_water));
        if (isError(step.expect)) return expectError(make, step.expect.error, at);
        latestRenewal = make();
        assert.equal(latestRenewal.workerId, guard.workerId, at);
        assert.equal(latestRenewal.fencingToken, guard.fencingToken, at);
        assert.equal(latestRenewal.nowMillis, BigInt(step.now), at);
        return assert.deepEqual(
          { lease_deadline: String(latestRenewal.leaseDeadlineMillis), high_water: String(latestRenewal.highWaterMillis) },
          step.expect,
          at,
        );
      }
      case "renewed":
        assert.ok(latestRenewal, `${at}: no renewal made yet`);
        return expectOk(() => guard.renewed(latestRenewal, BigInt(step.rows)), step.expect, at);
      case "renewal_failed":
        return guard.renewalFailed(BigInt(step.now));
      case "release": {
        const release = guard.release(BigInt(step.now), BigInt(step.high_water));
        return assert.deepEqual({ high_water: String(release.highWaterMillis) }, step.expect, at);
      }
      case "state":
        return assert.deepEqual(
          {
            lease_deadline: String(guard.leaseDeadlineMillis),
            stop_at: String(guard.stopAtMillis),
            next_renewal_at: String(guard.nextRenewalAtMillis),
            live: guard.isLive,
          },
          step.expect,
          at,
        );
      default:
        return assert.fail(`${at}: no JS runner for step ${step.do}`);
    }
  });
}

export const leaseRunners = {
  policy(vector, where) {
    if ("error" in vector) return expectError(() => policyOf(vector.policy), vector.error, where);
    assert.equal(String(policyOf(vector.policy).maxWorker), vector.expect.max_worker, where);
  },
  acquire(vector, where) {
    const acquire = () => acquireLease(rowOf(vector.row), BigInt(vector.now), policyOf(vector.policy));
    if ("error" in vector) return expectError(acquire, vector.error, where);
    const acquisition = acquire();
    assert.deepEqual(
      {
        lease: specOf(acquisition.lease),
        expected_token: String(acquisition.expectedToken),
        start_after: String(acquisition.startAfterMillis),
        ready_at: String(acquisition.readyAtMillis),
      },
      vector.expect,
      where,
    );
    assert.equal(acquisition.acquiredMillis, BigInt(vector.now), where);
  },
  none_found(vector, where) {
    const decide = () => whenNoLeaseFound({ present: BigInt(vector.present), free: BigInt(vector.free) }, policyOf(vector.policy));
    if ("error" in vector) return expectError(decide, vector.error, where);
    assert.equal(decide(), vector.expect, where);
  },
  guard: runGuard,
};
