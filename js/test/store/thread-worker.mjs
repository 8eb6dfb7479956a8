// A worker thread for store.test.mjs: its own better-sqlite3 connection to a shared file,
// so SQLite's file locks (BEGIN IMMEDIATE, the busy timeout) decide between threads.
import { parentPort, workerData } from "node:worker_threads";
import { fingerprint, IdempotencyKey, RecordPolicy, SegmentPolicy } from "mintid";
import { IdempotencyStore, SegmentIds, sqliteDatabase } from "mintid/store/sqlite";
import { sql } from "./databases.mjs";

const { file, task, name } = workerData;
const database = sqliteDatabase(file);

if (task === "run_once") {
  const store = new IdempotencyStore(database, new RecordPolicy({ leaseMillis: 60_000, retentionMillis: 86_400_000, maxWaitMillis: 30_000, pollMillis: 2 }));
  const insert = sql("sqlite", "side_effect", "INSERT INTO conformance_side_effect (scope, kind, key_id, worker) VALUES (?, ?, ?, ?)", "execrows");
  const decisions = [];
  for (let n = 0; n < workerData.keys; n += 1) {
    const key = new IdempotencyKey("order.create", "tenant-1", `k-${n}`);
    const result = await store.runOnce(key, { fingerprint: fingerprint({ n }) }, async () => {
      await database.withConnection((c) => c.run(insert, [key.scope, key.kind, key.id, name]));
      return { contentType: "text/plain", body: new TextEncoder().encode(name) };
    });
    decisions.push(result.decision);
  }
  parentPort.postMessage({ decisions });
} else {
  const ids = new SegmentIds(database, "orders", new SegmentPolicy({ initialStep: 10, minStep: 5, maxStep: 40 }));
  const drawn = [];
  for (let n = 0; n < workerData.count; n += 1) drawn.push(String(await ids.nextId()));
  await ids.settled();
  parentPort.postMessage({ drawn });
}
await database.close();
