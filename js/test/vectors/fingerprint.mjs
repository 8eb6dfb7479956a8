// Runners for tests/vectors/fingerprint.json, by op.
import assert from "node:assert/strict";
import { canonicalJson, fingerprintBytes, fingerprintJson, formatFingerprint, parseFingerprint } from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

export const fingerprintRunners = {
  fingerprint_json(vector, where) {
    const input = "input_hex" in vector ? fromHex(vector.input_hex) : vector.input;
    const selection = { include: vector.include ?? [], exclude: vector.exclude ?? [] };
    if ("error" in vector) {
      expectError(() => fingerprintJson(input, selection), vector.error, where, vector);
      expectError(() => canonicalJson(input, selection), vector.error, where, vector);
      return;
    }
    assert.equal(canonicalJson(input, selection), vector.canonical, `${where}: canonical`);
    assert.equal(fingerprintJson(input, selection).text, vector.fingerprint, `${where}: fingerprint`);
  },
  fingerprint_bytes(vector, where) {
    assert.equal(fingerprintBytes(fromHex(vector.input_hex)).text, vector.fingerprint, where);
  },
  parse_fingerprint(vector, where) {
    if ("error" in vector) return expectError(() => parseFingerprint(vector.text), vector.error, where, vector);
    const digest = parseFingerprint(vector.text);
    assert.equal(toHex(digest), vector.digest_hex, where);
    assert.equal(formatFingerprint(digest), vector.text, where);
  },
};
