// Runners for tests/vectors/api.json, by op: each case is one public call.
import assert from "node:assert/strict";
import {
  fingerprint,
  fingerprintBytes,
  fingerprintJson,
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

export const apiRunners = {
  fingerprint: apiCase((vector) =>
    fingerprint("value_bytes" in vector ? fromHex(vector.value_bytes) : vector.value, selection(vector))),
  fingerprint_json: apiCase((vector) =>
    fingerprintJson("text_bytes" in vector ? fromHex(vector.text_bytes) : vector.text, selection(vector))),
  fingerprint_bytes: apiCase((vector) => fingerprintBytes(fromHex(vector.raw))),
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
  lease_policy: policyCase(LeasePolicy, ["max_worker", "lease_millis", "renew_interval_millis"]),
};
