// Runners for tests/vectors/api.json, by op: each case is one public call.
import assert from "node:assert/strict";
import {
  decide,
  fingerprint,
  fingerprintBytes,
  fingerprintJson,
  Fingerprint,
  Grant,
  KeyRing,
  LeasePolicy,
  RecordPolicy,
  RelayPolicy,
  SegmentPolicy,
} from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

/** The vectors' snake_case name in JS's camelCase. */
const camel = (name) => name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());

/** A call's result (or its error code) checked against the case. */
const apiCase = (made) => (vector, where) => {
  if ("error" in vector) return expectError(() => made(vector), vector.error, where, vector);
  assert.deepEqual(made(vector), vector.expect, where);
};

/** A `Fingerprint`'s text, checked to be the same object shape as in the other hosts. */
const textOf = (made) => {
  assert.ok(made instanceof Fingerprint);
  assert.equal(String(made), made.text);
  assert.ok(made.equals(Fingerprint.parse(made.text)));
  return made.text;
};

const selection = (vector) => ({ include: vector.include ?? [], exclude: vector.exclude ?? [] });

/** A policy built from the case's arguments only (numbers, as JS callers pass them), read back. */
const policyCase = (Policy, fields) =>
  apiCase((vector) => {
    const options = Object.fromEntries(Object.entries(vector.args).map(([name, value]) => [camel(name), Number(value)]));
    const policy = new Policy(options);
    return Object.fromEntries(fields.map((name) => {
      const value = policy[camel(name)];
      return [name, typeof value === "bigint" ? String(value) : value];
    }));
  });

/** A vector's stored record (snake_case, numbers as text) as JS's `IdempotencyRecord`, or `null`. */
const storedRecord = (record) =>
  record === null
    ? null
    : {
        status: record.status,
        fingerprint: record.fingerprint,
        token: BigInt(record.token),
        leaseDeadlineMillis: BigInt(record.lease_deadline_millis),
        createdMillis: BigInt(record.created_millis),
        expiresMillis: BigInt(record.expires_millis),
      };

/** A decision as the vectors write it: its kind and, for `execute`, the claimed record. */
const decisionOf = (decision) => {
  if (decision.kind !== "execute") return { decision: decision.kind };
  const record = decision.claim.record;
  return {
    decision: decision.kind,
    token: String(record.token),
    lease_deadline_millis: String(record.leaseDeadlineMillis),
    created_millis: String(record.createdMillis),
    expires_millis: String(record.expiresMillis),
  };
};

export const apiRunners = {
  fingerprint: apiCase((vector) =>
    textOf(fingerprint("value_bytes" in vector ? fromHex(vector.value_bytes) : vector.value, selection(vector)))),
  fingerprint_json: apiCase((vector) =>
    textOf(fingerprintJson("text_bytes" in vector ? fromHex(vector.text_bytes) : vector.text, selection(vector)))),
  fingerprint_bytes: apiCase((vector) => textOf(fingerprintBytes(fromHex(vector.raw)))),
  issue_grant: apiCase((vector) => {
    const ring = new KeyRing({ id: vector.key_id, secret: fromHex(vector.secret) });
    const grant = ring.issueGrant(vector.scope, BigInt(vector.expires_millis));
    assert.ok(grant instanceof Grant);
    assert.equal(String(grant), grant.text);
    return { text: grant.text, key_id: grant.keyId, expires_millis: String(grant.expiresMillis), grant_key: toHex(grant.grantKey) };
  }),
  record_policy: policyCase(RecordPolicy, ["lease_millis", "retention_millis", "store_errors", "retry_after_millis", "max_wait_millis", "poll_millis"]),
  segment_policy: policyCase(SegmentPolicy, ["initial_step", "min_step", "max_step", "fetch_at_percent", "grow_below_millis", "shrink_above_millis"]),
  relay_policy: policyCase(RelayPolicy, ["batch_size", "claim_millis", "base_backoff_millis", "max_backoff_millis", "jitter_percent", "max_attempts"]),
  decide: apiCase((vector) => {
    const options = Object.fromEntries(Object.entries(vector.args).map(([name, value]) => [camel(name), Number(value)]));
    return decisionOf(decide(storedRecord(vector.existing), { fingerprint: vector.fingerprint }, Number(vector.now_millis), new RecordPolicy(options)));
  }),
  lease_policy: policyCase(LeasePolicy, ["max_worker", "lease_millis", "renew_interval_millis"]),
};
