// The stores' metrics and spans through OpenTelemetry (issue 19), read with the SDK's
// in-memory readers: the instruments are the core's registry (names, units, descriptions);
// a relay counts sent/retried/dead; the HTTP middleware counts a refused request ID by
// code; a fast-path replay counts a hit (on the Redis Cluster of scripts/db/with-db.sh);
// a lost renewal counts; without an SDK, or without @opentelemetry/api at all, nothing
// breaks. The conformance cases' counts are checked in store-conformance.test.mjs.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { metrics as otelMetrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { Cluster } from "ioredis";
import express from "express";
import { fingerprint, IdempotencyKey, KeyRing, LeasePolicy, mintRequestId, RecordPolicy, RelayPolicy, SegmentPolicy } from "mintid";
import { idempotency } from "mintid/http/express";
import { IdempotencyStore, migrate, OpenTelemetryMetrics, Outbox, RedisFastPath, SegmentIds, sqliteDatabase, WorkerLeases } from "mintid/store/sqlite";
import { metricBuckets, metrics as registryMetrics } from "../dist/full/wasm/mintid_wasm.js";
import { dialects, freshDatabase } from "./store/databases.mjs";
import { StepClock } from "./store/idempotency.mjs";
import { inMemoryRecorder, pointsOf, total } from "./store/otel.mjs";

const json = (value) => ({ contentType: "application/json", body: new TextEncoder().encode(JSON.stringify(value)) });
const policy = new RecordPolicy({ leaseMillis: 30_000, retentionMillis: 86_400_000 });

/** A fresh migrated SQLite database (closed after the test). */
async function sqlite(t) {
  const db = await freshDatabase("sqlite");
  t.after(() => db.close());
  const database = db.open();
  t.after(() => database.close());
  await migrate(database);
  return database;
}

/** The core's registry, as the wasm module lists it. */
function registry() {
  const flat = registryMetrics();
  const entries = [];
  for (let at = 0; at < flat.length; at += 5) entries.push({ name: flat[at], kind: flat[at + 1], unit: flat[at + 2], description: flat[at + 3] });
  return entries;
}

test("every instrument is the registry's: its name, kind, unit and description", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const store = new IdempotencyStore(database, policy, { metrics: recorder.metrics });
  const key = new IdempotencyKey("order.create", "user:1", randomUUID());
  await store.runOnce(key, { fingerprint: fingerprint({ a: 1 }) }, async () => json({ ok: true }));
  const m = recorder.metrics;
  m.storeError("connection_lost");
  m.recordLost();
  m.relayed(1, 1, 1);
  m.requestIdRejected("request_id.bad_tag");
  m.fastPathLookup("miss");
  m.fastPathWriteFailed();
  const descriptors = await recorder.descriptors();
  const expected = registry();
  assert.deepEqual(descriptors.map((d) => d.name).sort(), expected.map((e) => e.name).sort());
  for (const entry of expected) {
    const descriptor = descriptors.find((d) => d.name === entry.name);
    assert.equal(descriptor.unit, entry.unit, entry.name);
    assert.equal(descriptor.description, entry.description, entry.name);
    assert.equal(descriptor.type, entry.kind === "counter" ? "COUNTER" : "HISTOGRAM", entry.name);
  }
});

test("a run once reports its decisions, times, response size and three spans without secrets", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const store = new IdempotencyStore(database, policy, { metrics: recorder.metrics });
  assert.equal(store.metrics, recorder.metrics);
  const key = new IdempotencyKey("order.create", "user:secret-scope", `id-${randomUUID()}`);
  const request = { fingerprint: fingerprint({ card: "4111-secret" }) };
  const response = json({ order: "secret-response" });
  assert.equal((await store.runOnce(key, request, async () => response)).decision, "execute");
  assert.equal((await store.runOnce(key, request, async () => response)).decision, "replay");
  assert.equal((await store.runOnce(key, { fingerprint: fingerprint({ other: 1 }) }, async () => response)).decision, "fingerprint_mismatch");
  const points = await recorder.points();
  assert.equal(points.get("mintid.record.decisions{decision=execute,way=run_once}"), 1);
  assert.equal(points.get("mintid.record.decisions{decision=replay,way=run_once}"), 1);
  assert.equal(points.get("mintid.record.decisions{decision=fingerprint_mismatch,way=run_once}"), 1);
  assert.equal(points.get("mintid.record.claim.duration{way=run_once}").count, 3);
  assert.equal(points.get("mintid.record.complete.duration{way=run_once}").count, 1);
  assert.deepEqual(points.get("mintid.record.response.size{way=run_once}"), { count: 1, sum: response.body.byteLength });
  // The histograms' buckets are the core's registry's (tests/vectors/limits.json), none of the recorder's own.
  const boundaries = await recorder.boundaries();
  assert.deepEqual([...boundaries.keys()].sort(), ["mintid.record.claim.duration", "mintid.record.complete.duration", "mintid.record.response.size"]);
  for (const [name, bounds] of boundaries) assert.deepEqual(bounds, Array.from(metricBuckets(name)), name);
  const spans = recorder.spans().map((span) => ({ name: span.name, attributes: span.attributes }));
  assert.deepEqual(spans, [
    { name: "mintid.claim", attributes: { way: "run_once", decision: "execute" } },
    { name: "mintid.operation", attributes: { way: "run_once" } },
    { name: "mintid.complete", attributes: { way: "run_once", decision: "execute" } },
    { name: "mintid.claim", attributes: { way: "run_once", decision: "replay" } },
    { name: "mintid.claim", attributes: { way: "run_once", decision: "fingerprint_mismatch" } },
  ]);
  const text = JSON.stringify(recorder.spans().map((span) => [span.name, span.attributes, span.status, span.events]));
  for (const secret of ["secret", key.id, String(request.fingerprint)]) assert.ok(!text.includes(secret), `a span carries ${secret}`);
});

test("an operation's error ends its spans with the error status and no message", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const store = new IdempotencyStore(database, policy, { metrics: recorder.metrics });
  const key = new IdempotencyKey("order.create", "user:1", randomUUID());
  await assert.rejects(
    store.runOnce(key, { fingerprint: fingerprint({}) }, async () => {
      throw new Error("secret upstream text");
    }),
    /secret upstream text/,
  );
  const operation = recorder.spans().find((span) => span.name === "mintid.operation");
  assert.deepEqual(operation.status, { code: 2 });
  assert.equal(operation.events.length, 0);
  assert.ok(!JSON.stringify(recorder.spans().map((span) => [span.attributes, span.status])).includes("secret"));
});

test("a relay counts its messages sent, retried and dead", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const clock = new StepClock(1_000_000n);
  const outbox = new Outbox(database, new RelayPolicy({ maxAttempts: 2, baseBackoffMillis: 60_000, maxBackoffMillis: 60_000, jitterPercent: 0 }), { clock, metrics: recorder.metrics });
  await database.transaction(async (connection) => {
    for (const [id, key] of [
      [1n, "ok"],
      [2n, "late"],
      [3n, "never"],
    ])
      await outbox.enqueue(connection, { messageId: id, kind: "order.created", businessKey: key, payload: new Uint8Array([1]) });
  });
  const failing = new Set(["late", "never"]);
  const send = async (message) => {
    if (failing.has(message.businessKey)) throw new Error("broker down");
  };
  const first = await outbox.relay(send);
  assert.deepEqual([first.sent, first.retried, first.dead], [1, 2, 0]);
  failing.delete("late");
  clock.current += 120_000n;
  const second = await outbox.relay(send);
  assert.deepEqual([second.sent, second.retried, second.dead], [1, 0, 1]);
  const points = await recorder.points();
  assert.equal(points.get("mintid.outbox.deliveries{result=sent}"), 2);
  assert.equal(points.get("mintid.outbox.deliveries{result=retried}"), 2);
  assert.equal(points.get("mintid.outbox.deliveries{result=dead}"), 1);
});

test("a renewal that finds the key taken over counts a lost record", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const clock = new StepClock(1_000_000n);
  const store = new IdempotencyStore(database, policy, { clock, metrics: recorder.metrics });
  const key = new IdempotencyKey("payment.capture", "user:1", randomUUID());
  const request = { fingerprint: fingerprint({}) };
  const first = await store.claimLease(key, request);
  assert.equal(first.decision, "execute");
  clock.current += 60_000n;
  const second = await store.claimLease(key, request);
  assert.equal(second.decision, "execute");
  await assert.rejects(first.lease.renew(), { code: "store.record_lost" });
  const points = await recorder.points();
  assert.equal(points.get("mintid.record.lost{}"), 1);
  assert.equal(points.get("mintid.record.decisions{decision=execute,way=lease}"), 2);
});

test("the HTTP middleware counts a refused request ID by its code", async (t) => {
  const recorder = inMemoryRecorder();
  const database = await sqlite(t);
  const store = new IdempotencyStore(database, policy, { metrics: recorder.metrics });
  const keyRing = new KeyRing({ id: 1, secret: randomBytes(32) });
  const forger = new KeyRing({ id: 1, secret: randomBytes(32) });
  const scope = () => "user:1";
  const app = express();
  app.use(idempotency({ store, scope, keyRing, onError: () => {} }));
  app.post("/orders", (req, res) => res.status(201).json({ ok: true }));
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  t.after(() => new Promise((resolve) => server.close(resolve)));
  const post = (id) =>
    fetch(`http://127.0.0.1:${server.address().port}/orders`, { method: "POST", headers: { "content-type": "application/json", "mintid-request-id": id }, body: "{}" });
  const grant = (ring) => ring.issueGrant("user:1", Date.now() + 60_000);
  assert.equal((await post(mintRequestId(grant(forger)))).status, 400);
  assert.equal((await post(mintRequestId(grant(forger)))).status, 400);
  assert.equal((await post("not a request id")).status, 400);
  assert.equal((await post(mintRequestId(grant(keyRing)))).status, 201);
  const points = await recorder.points();
  assert.equal(points.get("mintid.request_id.rejected{code=request_id.bad_tag}"), 2);
  assert.equal(total(points, "mintid.request_id.rejected"), 3);
  assert.equal(points.get("mintid.record.decisions{decision=execute,way=run_once}"), 1);
});

for (const { dialect, skip } of dialects().filter((d) => d.dialect !== "sqlite")) {
  test(`a connection killed under a statement counts connection_lost on ${dialect}`, { skip }, async (t) => {
    const db = await freshDatabase(dialect);
    t.after(() => db.close());
    const database = db.open();
    await migrate(database);
    const recorder = inMemoryRecorder();
    const store = new IdempotencyStore(database, policy, { metrics: recorder.metrics });
    const key = new IdempotencyKey("order.create", "user:1", randomUUID());
    // The caller's connection, killed by the server before the claim's first statement.
    await assert.rejects(
      database.withConnection(async (connection) => {
        await db.killConnections();
        return store.inTransaction(connection, key, { fingerprint: fingerprint({}) }, async () => json(1));
      }),
      { code: "store.unavailable" },
    );
    const points = await recorder.points();
    assert.ok(points.get("mintid.store.errors{class=connection_lost}") >= 1, JSON.stringify([...points]));
    assert.equal(total(points, "mintid.record.decisions"), 0);
    const claim = recorder.spans().find((span) => span.name === "mintid.claim");
    assert.deepEqual([claim.status, claim.attributes], [{ code: 2 }, { way: "same_transaction" }]);
  });
}

for (const { dialect, skip } of dialects()) {
  test(`every store counts the errors of an unreachable database on ${dialect}`, { skip }, async (t) => {
    const db = await freshDatabase(dialect);
    t.after(() => db.close());
    const down = db.unavailable();
    t.after(() => down.close());
    const cases = [
      ["record", (metrics) => new IdempotencyStore(down, policy, { metrics }).runOnce(new IdempotencyKey("a.b", "s", "k"), { fingerprint: fingerprint({}) }, async () => json(1))],
      ["leases", (metrics) => new WorkerLeases(down, new LeasePolicy({ layout: "classic" }), { metrics }).acquire("owner")],
      ["segments", (metrics) => new SegmentIds(down, "orders", new SegmentPolicy({ initialStep: 10, minStep: 10, maxStep: 100 }), { metrics }).nextId()],
      ["outbox", (metrics) => new Outbox(down, new RelayPolicy(), { metrics }).relay(async () => {})],
    ];
    for (const [name, use] of cases) {
      const recorder = inMemoryRecorder();
      await assert.rejects(use(recorder.metrics), { code: "store.unavailable" }, name);
      const points = await recorder.points();
      assert.ok(points.get("mintid.store.errors{class=connection_lost}") >= 1, `${name}: ${JSON.stringify([...points])}`);
      assert.equal(total(points, "mintid.store.errors"), points.get("mintid.store.errors{class=connection_lost}"), name);
    }
  });
}

describe("the fast path", { skip: process.env.MINTID_REDIS_CLUSTER ? undefined : "MINTID_REDIS_CLUSTER not set (run under scripts/db/with-db.sh)" }, () => {
  test("a replay from Redis counts a hit, the first request a miss", async (t) => {
    const nodes = process.env.MINTID_REDIS_CLUSTER.split(",").map((node) => ({ host: node.split(":")[0], port: Number(node.split(":")[1]) }));
    const client = new Cluster(nodes, { enableOfflineQueue: false, redisOptions: { commandTimeout: 2000, connectTimeout: 2000, maxRetriesPerRequest: 0 } });
    client.on("error", () => {});
    t.after(() => client.disconnect());
    if (client.status !== "ready") await new Promise((resolve) => client.once("ready", resolve));
    const recorder = inMemoryRecorder();
    const database = await sqlite(t);
    const store = new IdempotencyStore(database, policy, { fastPath: new RedisFastPath(client), metrics: recorder.metrics });
    const key = new IdempotencyKey("order.create", "user:1", randomUUID());
    const request = { fingerprint: fingerprint({ sku: "tea" }) };
    assert.equal((await store.runOnce(key, request, async () => json({ order: 1 }))).decision, "execute");
    assert.equal((await store.runOnce(key, request, async () => json({ order: 2 }))).decision, "replay");
    const points = await recorder.points();
    assert.equal(points.get("mintid.fast_path.lookups{verdict=miss}"), 1);
    assert.equal(points.get("mintid.fast_path.lookups{verdict=hit}"), 1);
    assert.equal(points.get("mintid.fast_path.write_failures{}"), undefined);
    // The replay from Redis is a decision like the database's: one execute, one replay.
    assert.equal(points.get("mintid.record.decisions{decision=replay,way=run_once}"), 1);
    assert.equal(total(points, "mintid.record.decisions"), 2);
  });
});

test("the recorder refuses what is not a provider", () => {
  assert.throws(() => new OpenTelemetryMetrics({ meterProvider: {} }), TypeError);
  assert.throws(() => new OpenTelemetryMetrics({ tracerProvider: 1 }), TypeError);
  assert.throws(() => new IdempotencyStore(sqliteDatabase(":memory:"), policy, { metrics: 1 }), TypeError);
});

describe("the default: OpenTelemetry's global providers", () => {
  after(() => otelMetrics.disable());

  test("no-ops until the application registers an SDK, then records there", async (t) => {
    const database = await sqlite(t);
    const store = new IdempotencyStore(database, policy);
    assert.ok(store.metrics instanceof OpenTelemetryMetrics);
    const request = { fingerprint: fingerprint({}) };
    const key = () => new IdempotencyKey("order.create", "user:1", randomUUID());
    assert.equal((await store.runOnce(key(), request, async () => json(1))).decision, "execute");
    class Reader extends MetricReader {
      async onForceFlush() {}
      async onShutdown() {}
    }
    const reader = new Reader();
    assert.ok(otelMetrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] })));
    assert.equal((await store.runOnce(key(), request, async () => json(2))).decision, "execute");
    const points = pointsOf((await reader.collect()).resourceMetrics);
    assert.equal(points.get("mintid.record.decisions{decision=execute,way=run_once}"), 1);
  });
});

test("without @opentelemetry/api the stores record nothing and work", () => {
  // A child process in which the package does not resolve (as in an application without it).
  const dir = tmpdir();
  const hide = join(dir, `mintid-no-otel-${process.pid}.cjs`);
  writeFileSync(
    hide,
    `const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request.startsWith("@opentelemetry/")) throw Object.assign(new Error("Cannot find module " + request), { code: "MODULE_NOT_FOUND" });
  return resolve.call(this, request, ...rest);
};`,
  );
  const script = `
import { fingerprint, IdempotencyKey, RecordPolicy } from "mintid";
import { IdempotencyStore, migrate, OpenTelemetryMetrics, sqliteDatabase } from "mintid/store/sqlite";
const database = sqliteDatabase(":memory:");
await migrate(database);
const store = new IdempotencyStore(database, new RecordPolicy());
const key = new IdempotencyKey("order.create", "user:1", "k1");
const run = () => store.runOnce(key, { fingerprint: fingerprint({}) }, async () => ({ contentType: "text/plain", body: new Uint8Array([1]) }));
console.log(store.metrics instanceof OpenTelemetryMetrics, (await run()).decision, (await run()).decision);
`;
  const output = execFileSync("node", ["--require", hide, "--input-type=module", "-e", script], { cwd: new URL("..", import.meta.url).pathname, encoding: "utf8" });
  assert.equal(output.trim(), "false execute replay");
});
