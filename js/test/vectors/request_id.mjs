// Runners for tests/vectors/request_id.json, by op.
import assert from "node:assert/strict";
import { grantFields, inspectRequestId, KeyRing, mintRequestId, verifyRequestId, verifyUnsignedRequestId } from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

const keyOf = ({ id, secret }) => ({ id: Number(id), secret: fromHex(secret) });

function freshness(vector) {
  return { now: BigInt(vector.now), maxAgeMillis: BigInt(vector.max_age), maxSkewMillis: BigInt(vector.max_skew) };
}

export const requestIdRunners = {
  issue_grant(vector, where) {
    const issue = () => new KeyRing(keyOf(vector.key)).issueGrant(vector.scope, BigInt(vector.expires));
    if ("error" in vector) return expectError(issue, vector.error, where);
    const grant = issue();
    assert.equal(grant.text, vector.grant, where);
    assert.equal(toHex(grant.grantKey), vector.grant_key, `${where}: grant key`);
    assert.equal(toHex(grantFields(grant.text).grantKey), vector.grant_key, `${where}: grant key`);
  },
  parse_grant(vector, where) {
    if ("error" in vector) return expectError(() => grantFields(vector.text), vector.error, where);
    const { keyId, expiresMillis } = grantFields(vector.text);
    assert.equal(String(keyId), vector.key_id, where);
    assert.equal(String(expiresMillis), vector.expires, where);
    assert.equal(toHex(grantFields(vector.text).grantKey), vector.grant_key, `${where}: grant key`);
  },
  mint(vector, where) {
    const requestId = mintRequestId(vector.grant, vector.uuid);
    assert.equal(requestId, vector.request_id, where);
    const inspected = inspectRequestId(requestId);
    assert.equal(toHex(inspected.tag), vector.tag, `${where}: tag`);
    assert.equal(inspected.uuid, vector.uuid, `${where}: uuid`);
  },
  verify(vector, where) {
    const verify = () => {
      const current = vector.keys.find((key) => key.id === vector.current);
      const ring = new KeyRing(keyOf(current));
      for (const key of vector.keys) if (key !== current) ring.add(keyOf(key));
      return verifyRequestId(ring, vector.request_id, vector.scope, freshness(vector));
    };
    if ("error" in vector) return expectError(verify, vector.error, where);
    assert.equal(verify(), vector.expect, where);
  },
  verify_unsigned(vector, where) {
    const verify = () => verifyUnsignedRequestId(vector.text, freshness(vector));
    if ("error" in vector) return expectError(verify, vector.error, where);
    assert.equal(verify(), vector.expect, where);
  },
  key_ring(vector, where) {
    let ring;
    vector.steps.forEach((step, index) => {
      const at = `${where} step ${index} (${step.do})`;
      const actions = {
        new: () => { ring = new KeyRing(keyOf(step.key)); },
        add: () => ring.add(keyOf(step.key)),
        rotate: () => ring.rotate(keyOf(step.key)),
        retire: () => ring.retire(Number(step.id)),
      };
      const action = actions[step.do];
      assert.ok(action, `${at}: no JS runner for step ${step.do}`);
      if ("error" in step) expectError(action, step.error, at);
      else {
        assert.equal(step.expect, "ok", at);
        action();
      }
      if ("current" in step) assert.equal(String(ring?.currentId), step.current, `${at}: current`);
      else assert.equal(ring, undefined, `${at}: no ring yet`);
    });
  },
};
