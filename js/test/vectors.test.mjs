// Runs every shared vector file in tests/vectors/ against the JS API.
// A file or an `op` without a JS runner fails: no vector is skipped silently.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import { apiRunners } from "./vectors/api.mjs";
import { dbErrorRunners } from "./vectors/db_error.mjs";
import { fingerprintRunners } from "./vectors/fingerprint.mjs";
import { httpRunners } from "./vectors/http.mjs";
import { idBufferRunners } from "./vectors/id_buffer.mjs";
import { keysRunners } from "./vectors/keys.mjs";
import { leaseRunners } from "./vectors/lease.mjs";
import { limitsRunners } from "./vectors/limits.mjs";
import { outboxRunners } from "./vectors/outbox.mjs";
import { recordRunners } from "./vectors/record.mjs";
import { requestIdRunners } from "./vectors/request_id.mjs";
import { segmentRunners } from "./vectors/segment.mjs";
import { snowflakeRunners } from "./vectors/snowflake.mjs";
import { storableTextRunners } from "./vectors/storable_text.mjs";
import { uuid7Runners } from "./vectors/uuid7.mjs";
import { checkWireGrowth, checkWireTables, wireRunners } from "./vectors/wire.mjs";

const VECTOR_DIR = new URL("../../tests/vectors/", import.meta.url);

/** For each vector file, its runners by `op`. */
const RUNNERS = {
  "api.json": apiRunners,
  "db_error.json": dbErrorRunners,
  "fingerprint.json": fingerprintRunners,
  "http.json": httpRunners,
  "id_buffer.json": idBufferRunners,
  "keys.json": keysRunners,
  "lease.json": leaseRunners,
  "limits.json": limitsRunners,
  "outbox.json": outboxRunners,
  "record.json": recordRunners,
  "request_id.json": requestIdRunners,
  "segment.json": segmentRunners,
  "snowflake.json": snowflakeRunners,
  "storable_text.json": storableTextRunners,
  "uuid7.json": uuid7Runners,
  "wire.json": wireRunners,
};

const files = readdirSync(VECTOR_DIR).filter((name) => name.endsWith(".json")).sort();

for (const file of files) {
  test(`vectors: ${file}`, async () => {
    const runners = RUNNERS[file];
    assert.ok(runners, `no JS runner for tests/vectors/${file}`);
    const { cases } = JSON.parse(readFileSync(new URL(file, VECTOR_DIR), "utf8"));
    assert.ok(Array.isArray(cases) && cases.length > 0, `${file} has no cases`);
    for (const vector of cases) {
      const run = runners[vector.op];
      assert.ok(run, `${file}: case ${vector.name}: no JS runner for op ${vector.op}`);
      await run(vector, `${file}: ${vector.name}`);
    }
  });
}

test("vectors: wire.json's version and tag tables are the JS codec's", checkWireTables);

test("the wire's codec: a packing larger than the writer's first buffer", checkWireGrowth);

test("vectors: every file in tests/vectors/ has a runner", () => {
  assert.deepEqual(files.filter((file) => !(file in RUNNERS)), []);
});
