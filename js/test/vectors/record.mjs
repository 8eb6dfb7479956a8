// Runners for tests/vectors/record.json, by op.
import assert from "node:assert/strict";
import {
  applyClaim,
  completeRecord,
  decide,
  failRecord,
  formatFingerprint,
  httpConstants,
  isRemovable,
  parseFingerprint,
  parseRecordStatus,
  problemDetails,
  RecordPolicy,
  retryAfterSecs,
} from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

function policyOf(spec) {
  return new RecordPolicy({
    leaseMillis: BigInt(spec.lease_millis),
    retentionMillis: BigInt(spec.retention_millis),
    storeErrors: spec.store_errors,
    retryAfterMillis: BigInt(spec.retry_after_millis),
    maxWaitMillis: BigInt(spec.max_wait_millis),
    pollMillis: BigInt(spec.poll_millis),
  });
}

const fingerprintOf = (hex) => formatFingerprint(fromHex(hex));

function recordOf(spec) {
  return {
    status: spec.status,
    fingerprint: fingerprintOf(spec.fingerprint),
    token: BigInt(spec.token),
    leaseDeadlineMillis: BigInt(spec.lease_deadline),
    createdMillis: BigInt(spec.created),
    expiresMillis: BigInt(spec.expires),
  };
}

function specOf(record) {
  return {
    status: record.status,
    fingerprint: toHex(parseFingerprint(String(record.fingerprint))),
    token: String(record.token),
    lease_deadline: String(record.leaseDeadlineMillis),
    created: String(record.createdMillis),
    expires: String(record.expiresMillis),
  };
}

/** Runs `action`; an `expect` of `{error}` must be that error, else `"ok"`-like success. */
function expectOutcome(action, expect, where) {
  if (typeof expect === "object" && expect !== null && "error" in expect) {
    expectError(action, expect.error, where);
    return undefined;
  }
  return action();
}

function checkDecision(decision, expect, incomingFingerprint, where) {
  assert.equal(decision.kind, expect.decision, `${where}: decision`);
  assert.equal(decision.problem, expect.problem, `${where}: problem`);
  switch (decision.kind) {
    case "execute": {
      const { record, replaces } = decision.claim;
      assert.deepEqual(
        [record.status, String(record.fingerprint), String(record.token), String(record.leaseDeadlineMillis), String(record.createdMillis), String(record.expiresMillis)],
        ["pending", incomingFingerprint, expect.token, expect.lease_deadline, expect.created, expect.expires],
        `${where}: claim`,
      );
      const expected = replaces === null
        ? null
        : { token: String(replaces.fence.token), created: String(replaces.fence.createdMillis), status: replaces.status };
      assert.deepEqual(expected, expect.replaces, `${where}: replaces`);
      break;
    }
    case "replay":
      assert.equal(decision.outcome, expect.outcome, `${where}: outcome`);
      break;
    case "in_progress":
      assert.equal(String(decision.retryAfterMillis), expect.retry_after_millis, `${where}: retry after ms`);
      assert.equal(String(decision.retryAfterSecs), expect.retry_after_secs, `${where}: retry after s`);
      break;
    case "wait":
      assert.equal(String(decision.pollMillis), expect.poll_millis, `${where}: poll`);
      break;
    default:
  }
}

function runSequence(vector, where) {
  const policy = policyOf(vector.policy);
  let store = null;
  const claims = new Map();
  const fences = new Map();
  vector.steps.forEach((step, index) => {
    const at = `${where} step ${index} (${step.do})`;
    switch (step.do) {
      case "decide": {
        const fingerprint = fingerprintOf(step.fingerprint);
        const incoming = {
          fingerprint,
          ...(step.key_created === undefined ? {} : { keyCreatedMillis: BigInt(step.key_created) }),
          ...(step.waited === undefined ? {} : { waitedMillis: BigInt(step.waited) }),
        };
        const decision = expectOutcome(() => decide(store, incoming, BigInt(step.now), policy), step.expect, at);
        if (decision === undefined) break;
        checkDecision(decision, step.expect, fingerprint, at);
        if (decision.kind === "execute") claims.set(step.worker, decision.claim);
        break;
      }
      case "claim": {
        const claim = claims.get(step.worker);
        assert.ok(claim, `${at}: worker ${step.worker} has no claim`);
        const written = expectOutcome(() => applyClaim(claim, store, BigInt(step.now)), step.expect, at);
        if (written === undefined) break;
        assert.equal(step.expect, "ok", at);
        store = written;
        fences.set(step.worker, { token: written.token, createdMillis: written.createdMillis });
        break;
      }
      case "complete":
      case "fail": {
        const fence = fences.get(step.worker);
        assert.ok(fence && store, `${at}: worker ${step.worker} holds no fence`);
        const end = step.do === "complete"
          ? () => completeRecord(store, fence)
          : () => failRecord(store, fence, step.failure, policy);
        const ended = expectOutcome(end, step.expect, at);
        if (ended === undefined) break;
        assert.equal(step.expect, "ok", at);
        store = ended;
        break;
      }
      case "check":
        assert.deepEqual(store === null ? null : specOf(store), step.expect, at);
        break;
      case "store":
        store = recordOf(step.record);
        break;
      case "cleanup": {
        const removable = store !== null && isRemovable(store, BigInt(step.now));
        assert.equal(removable ? "removed" : "kept", step.expect, at);
        if (removable) store = null;
        break;
      }
      default:
        assert.fail(`${at}: no JS runner for step ${step.do}`);
    }
  });
}

export const recordRunners = {
  sequence: runSequence,
  status(vector, where) {
    if ("error" in vector) return expectError(() => parseRecordStatus(vector.text), vector.error, where);
    assert.equal(parseRecordStatus(vector.text), vector.expect, where);
  },
  policy(vector, where) {
    if ("error" in vector) return expectError(() => policyOf(vector.policy), vector.error, where);
    const policy = policyOf(vector.policy);
    assert.equal(vector.expect, "ok", where);
    assert.equal(String(policy.leaseMillis), vector.policy.lease_millis, where);
    assert.equal(policy.storeErrors, vector.policy.store_errors, where);
  },
  problem(vector, where) {
    assert.deepEqual(problemDetails(vector.problem), { status: vector.status, type: vector.type, title: vector.title }, where);
  },
  retry_after_secs(vector, where) {
    assert.equal(String(retryAfterSecs(BigInt(vector.millis))), vector.expect, where);
  },
  http_constants(vector, where) {
    assert.deepEqual(httpConstants(), {
      problemContentType: vector.problem_content_type,
      replayedHeader: vector.replayed_header,
      replayedValue: vector.replayed_value,
      retryAfterHeader: vector.retry_after_header,
    }, where);
  },
};
