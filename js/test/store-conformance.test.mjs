// The storage conformance suite (tests/conformance/*.json) against the JS stores on
// SQLite (better-sqlite3), PostgreSQL (pg) and MariaDB (mysql2). Every case of every file
// runs on every database, each on a fresh database; an unknown file, case op or step fails.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { dialects, freshDatabase } from "./store/databases.mjs";
import { checkIdempotencyReports, runIdempotencyCase } from "./store/idempotency.mjs";
import { runLeaseCase } from "./store/leases.mjs";
import { runOutboxCase } from "./store/outbox.mjs";
import { inMemoryRecorder } from "./store/otel.mjs";
import { runSegmentCase } from "./store/segments.mjs";

const CONFORMANCE_DIR = new URL("../../tests/conformance/", import.meta.url);

/**
 * The idempotency cases, their stores reporting to an OpenTelemetry SDK in memory: what
 * it read must be what the steps expect (decisions by way, completions, spans, errors).
 */
async function runReportedIdempotencyCase(testCase, db) {
  const recorder = inMemoryRecorder();
  await runIdempotencyCase(testCase, db, { metrics: recorder.metrics });
  await checkIdempotencyReports(testCase, recorder);
}

/** For each scenario file, the runner of one case on one fresh database. */
const RUNNERS = {
  "idempotency.json": runReportedIdempotencyCase,
  "leases.json": runLeaseCase,
  "outbox.json": runOutboxCase,
  "segments.json": runSegmentCase,
};

const files = readdirSync(CONFORMANCE_DIR).filter((name) => name.endsWith(".json")).sort();

for (const { dialect, skip } of dialects()) {
  describe(`conformance on ${dialect}`, { skip }, () => {
    for (const file of files) {
      const run = RUNNERS[file];
      const { cases } = JSON.parse(readFileSync(new URL(file, CONFORMANCE_DIR), "utf8"));
      test(`${file} has a runner and cases`, () => {
        assert.ok(run, `no JS runner for tests/conformance/${file}`);
        assert.ok(Array.isArray(cases) && cases.length > 0, `${file} has no cases`);
      });
      if (!run) continue;
      for (const testCase of cases) {
        test(`${file}: ${testCase.name}`, async () => {
          const db = await freshDatabase(dialect);
          try {
            await run(testCase, db);
          } finally {
            await db.close();
          }
        });
      }
    }
  });
}
