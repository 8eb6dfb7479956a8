// Runners for tests/vectors/outbox.json, by op.
import assert from "node:assert/strict";
import { checkMarked, checkOutboxMessage, enqueuedFromRows, parseOutboxStatus, RelayPolicy } from "mintid";
import { expectError } from "./common.mjs";

function policyOf(spec) {
  return new RelayPolicy({
    batchSize: BigInt(spec.batch_size),
    claimMillis: BigInt(spec.claim_millis),
    baseBackoffMillis: BigInt(spec.base_backoff_millis),
    maxBackoffMillis: BigInt(spec.max_backoff_millis),
    jitterPercent: spec.jitter_percent,
    maxAttempts: BigInt(spec.max_attempts),
  });
}

/** Runs `make` and compares its (converted) result with `expect`, or expects the error. */
function run(make, vector, where, convert = (value) => value) {
  if ("error" in vector) return expectError(make, vector.error, where);
  assert.deepEqual(convert(make()), vector.expect, where);
}

export const outboxRunners = {
  status: (vector, where) => run(() => parseOutboxStatus(vector.text), vector, where),
  policy: (vector, where) => run(() => policyOf(vector.policy) && "ok", vector, where),
  backoff: (vector, where) =>
    run(() => policyOf(vector.policy).backoffMillis(BigInt(vector.attempts), BigInt(vector.draw)), vector, where, String),
  claim: (vector, where) =>
    run(() => policyOf(vector.policy).claim(BigInt(vector.now), BigInt(vector.draw)), vector, where, (claim) => ({
      claim_token: String(claim.claimToken),
      claimed_until: String(claim.claimedUntilMillis),
      batch_size: String(claim.batchSize),
    })),
  delivery: (vector, where) => run(() => policyOf(vector.policy).delivery(BigInt(vector.attempts)), vector, where),
  after_failure: (vector, where) =>
    run(
      () => policyOf(vector.policy).afterFailure(BigInt(vector.attempts), BigInt(vector.now), BigInt(vector.draw)),
      vector,
      where,
      (next) => (next === "dead" ? "dead" : { retry: String(next.retryAtMillis) }),
    ),
  enqueued: (vector, where) => run(() => enqueuedFromRows(BigInt(vector.rows)), vector, where),
  marked: (vector, where) =>
    run(() => checkMarked(BigInt(vector.rows), BigInt(vector.message_id), BigInt(vector.claim_token)) ?? "ok", vector, where),
  message: (vector, where) =>
    run(() => checkOutboxMessage(vector.kind, vector.business_key, Number(vector.payload_len)) ?? "ok", vector, where),
};
