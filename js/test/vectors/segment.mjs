// Runners for tests/vectors/segment.json, by op.
import assert from "node:assert/strict";
import { SegmentAllocator, SegmentPolicy } from "mintid";
import { expectError } from "./common.mjs";

function policyOf(spec) {
  return new SegmentPolicy({
    initialStep: BigInt(spec.initial_step),
    minStep: BigInt(spec.min_step),
    maxStep: BigInt(spec.max_step),
    fetchAtPercent: spec.fetch_at_percent,
    growBelowMillis: BigInt(spec.grow_below_millis),
    shrinkAboveMillis: BigInt(spec.shrink_above_millis),
  });
}

const text = (value) => (value === undefined ? null : String(value));

function runAllocator(vector, where) {
  const allocator = new SegmentAllocator(policyOf(vector.policy));
  vector.steps.forEach((step, index) => {
    const at = `${where} step ${index} (${step.do})`;
    switch (step.do) {
      case "next":
        return assert.deepEqual(step.expect.map(() => text(allocator.nextId())), step.expect, at);
      case "fill":
        return assert.deepEqual(Array.from(allocator.fill(Number(step.count)), String), step.expect, at);
      case "fetch_due":
        return assert.equal(text(allocator.fetchDue(BigInt(step.now))), step.expect, at);
      case "fetched": {
        const take = () => allocator.fetched({ maxId: BigInt(step.max_id), step: BigInt(step.step) }, BigInt(step.now));
        if (typeof step.expect === "object" && step.expect !== null) return expectError(take, step.expect.error, at);
        assert.equal(step.expect, "ok", at);
        return take();
      }
      case "fetch_failed":
        return allocator.fetchFailed();
      case "state":
        return assert.deepEqual(
          { remaining: String(allocator.remaining), step: String(allocator.step), in_flight: allocator.fetchInFlight },
          step.expect,
          at,
        );
      default:
        return assert.fail(`${at}: no JS runner for step ${step.do}`);
    }
  });
}

export const segmentRunners = {
  policy(vector, where) {
    if ("error" in vector) return expectError(() => policyOf(vector.policy), vector.error, where);
    policyOf(vector.policy);
    assert.equal(vector.expect, "ok", where);
  },
  adapt(vector, where) {
    assert.equal(String(policyOf(vector.policy).adapt(BigInt(vector.step), BigInt(vector.lasted))), vector.expect, where);
  },
  allocator: runAllocator,
};
