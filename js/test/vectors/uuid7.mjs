// Runners for tests/vectors/uuid7.json, by op.
import assert from "node:assert/strict";
import { FixedEntropy, ManualClock, Uuid, Uuid7, Uuid7Generator } from "mintid";
import { expectError, fromHex, toHex } from "./common.mjs";

function checkFields(id, vector, where) {
  assert.equal(id.unixMillis, Number(vector.unix_millis), `${where}: unix_millis`);
  assert.equal(id.randA, vector.rand_a, `${where}: rand_a`);
  assert.equal(id.randB, BigInt(vector.rand_b), `${where}: rand_b`);
  assert.equal(id.counter, vector.counter, `${where}: counter`);
}

function policyOf({ kind, max_millis }) {
  return kind === "fail" ? { kind } : { kind, maxMillis: BigInt(max_millis) };
}

/** Runs a generate case with `make(generator, count)` making `count` IDs at once. */
function runGenerate(vector, where, make) {
  const clock = new ManualClock(0);
  const generator = new Uuid7Generator({
    rollback: policyOf(vector.policy),
    clock,
    entropy: new FixedEntropy(fromHex(vector.entropy)),
  });
  let last = "";
  vector.steps.forEach((step, index) => {
    const at = `${where} step ${index}`;
    clock.set(BigInt(step.clock_millis));
    if ("error" in step) {
      expectError(() => generator.next(), step.error, at);
      return;
    }
    const ids = make(generator, (step.skip ?? 0) + step.expect.length);
    for (const id of ids) {
      assert.ok(id > last, `${at}: ${id} must be greater than ${last}`);
      last = id;
    }
    assert.deepEqual(ids.slice(step.skip ?? 0), step.expect, at);
  });
}

export const uuid7Runners = {
  from_fields(vector, where) {
    const make = () => Uuid7.fromFields({ unixMillis: BigInt(vector.unix_millis), randA: vector.rand_a, randB: BigInt(vector.rand_b) });
    if ("error" in vector) return expectError(make, vector.error, where);
    const id = make();
    assert.equal(toHex(id.toBytes()), vector.bytes, where);
    for (const form of ["hyphenated", "simple", "urn", "base32"]) {
      assert.equal(id.format(form), vector[form], `${where}: ${form}`);
      assert.equal(toHex(Uuid7.parse(vector[form]).toBytes()), vector.bytes, `${where}: parse ${form}`);
    }
    assert.equal(id.counter, vector.counter, `${where}: counter`);
  },
  parse(vector, where) {
    if ("error" in vector) return expectError(() => Uuid7.parse(vector.text), vector.error, where);
    const id = Uuid7.parse(vector.text);
    assert.equal(toHex(id.toBytes()), vector.bytes, where);
    checkFields(id, vector, where);
  },
  parse_uuid(vector, where) {
    if ("error" in vector) return expectError(() => Uuid.parse(vector.text), vector.error, where);
    const id = Uuid.parse(vector.text);
    assert.equal(toHex(id.toBytes()), vector.bytes, where);
    assert.equal(id.version, vector.version, `${where}: version`);
    assert.equal(id.variant, vector.variant, `${where}: variant`);
  },
  from_bytes(vector, where) {
    const make = () => Uuid7.fromBytes(fromHex(vector.bytes));
    if ("error" in vector) return expectError(make, vector.error, where);
    const id = make();
    checkFields(id, vector, where);
    assert.equal(id.toString(), vector.hyphenated, where);
  },
  new_v8(vector, where) {
    const id = Uuid.v8(fromHex(vector.custom));
    assert.equal(toHex(id.toBytes()), vector.bytes, where);
    assert.equal(id.toString(), vector.hyphenated, where);
    assert.equal(id.version, 8, where);
  },
  generate(vector, where) {
    runGenerate(vector, `${where} (one by one)`, (generator, count) => Array.from({ length: count }, () => generator.next()));
    runGenerate(vector, `${where} (batch)`, (generator, count) => generator.nextBatch(count));
    runGenerate(vector, `${where} (bytes)`, (generator, count) => {
      const bytes = generator.nextBytes(count);
      return Array.from({ length: count }, (_, i) => Uuid7.fromBytes(bytes.subarray(i * 16, i * 16 + 16)).toString());
    });
  },
};


