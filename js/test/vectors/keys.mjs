// Runners for tests/vectors/keys.json, by op.
import assert from "node:assert/strict";
import { IdempotencyKey } from "mintid";
import { expectError, fromHex } from "./common.mjs";

/** Checks a built key against the vector and reads its text back. */
function checkKey(key, vector, where) {
  if ("id" in vector) assert.equal(key.id, vector.id, `${where}: id`);
  assert.equal(key.toString(), vector.text, `${where}: text`);
  assert.ok(IdempotencyKey.parse(vector.text).equals(key), `${where}: text reads back`);
}

function run(make, vector, where) {
  if ("error" in vector) return expectError(make, vector.error, where, vector);
  checkKey(make(), vector, where);
}

export const keysRunners = {
  new_key(vector, where) {
    run(() => new IdempotencyKey(vector.kind, vector.scope, vector.id), vector, where);
  },
  id_from_fields(vector, where) {
    run(() => IdempotencyKey.fromFields(vector.kind, vector.scope, vector.fields), vector, where);
  },
  derived_key(vector, where) {
    run(() => IdempotencyKey.derived(vector.kind, vector.scope, vector.fingerprint), vector, where);
  },
  parse_header(vector, where) {
    const header = "header_hex" in vector ? fromHex(vector.header_hex) : vector.header;
    if ("error" in vector) return expectError(() => IdempotencyKey.parseHeader(header), vector.error, where, vector);
    assert.equal(IdempotencyKey.parseHeader(header), vector.id, where);
  },
  parse_key_text(vector, where) {
    if ("error" in vector) return expectError(() => IdempotencyKey.parse(vector.text), vector.error, where, vector);
    const key = IdempotencyKey.parse(vector.text);
    assert.deepEqual([key.kind, key.scope, key.id], [vector.kind, vector.scope, vector.id], where);
    assert.equal(key.toString(), vector.text, where);
  },
};
