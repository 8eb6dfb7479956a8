// The JS stores beyond the shared scenarios: the named-query loader, the driver checks,
// the Snowflake generator on a leased worker id (heartbeat, loss, release), the segment
// allocator's steady state, and the run-once way's handling of unexpected errors.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";
import { fingerprint, IdempotencyKey, LeaseError, LeasePolicy, RecordPolicy, SegmentPolicy } from "mintid";
import { IdempotencyStore, LeasedSnowflake, migrate, SegmentIds, StoreError, WorkerLeases } from "mintid/store/sqlite";
import { mysqlDatabase } from "mintid/store/mysql";
import { loadMigrations, loadQueries, parseQueries, splitStatements } from "../dist/full/store/sql.js";
import { dialects, freshDatabase } from "./store/databases.mjs";

describe("named queries", () => {
  const text = [
    "-- name: pick :one",
    "-- A documentation line with :not_a_parameter.",
    "SELECT a FROM t",
    "WHERE b = :b AND c = :c AND d = CAST(:b AS BIGINT);",
    "",
    "-- name: bump :execrows",
    "UPDATE t SET a = a + 1;",
  ].join("\n");

  test("parameters become each driver's placeholders", () => {
    assert.deepEqual(parseQueries(text, "numbered").get("pick"), {
      name: "pick", kind: "one", sql: "SELECT a FROM t\nWHERE b = $1 AND c = $2 AND d = CAST($1 AS BIGINT)", params: ["b", "c"],
    });
    const positional = parseQueries(text, "positional").get("pick");
    assert.equal(positional.sql, "SELECT a FROM t\nWHERE b = ? AND c = ? AND d = CAST(? AS BIGINT)");
    assert.deepEqual(positional.params, ["b", "c", "b"]);
    const named = parseQueries(text, "named").get("pick");
    assert.equal(named.sql, "SELECT a FROM t\nWHERE b = :b AND c = :c AND d = CAST(:b AS BIGINT)");
    assert.deepEqual(parseQueries(text, "named").get("bump"), { name: "bump", kind: "execrows", sql: "UPDATE t SET a = a + 1", params: [] });
  });

  test("a query named twice or without its semicolon is refused", () => {
    assert.throws(() => parseQueries("-- name: a :one\nSELECT 1;\n-- name: a :one\nSELECT 2;\n", "named"), /named twice/);
    assert.throws(() => parseQueries("-- name: a :one\nSELECT 1\n", "named"), /does not end/);
  });

  test("migrations split at a semicolon ending a line, comments dropped", () => {
    assert.deepEqual(splitStatements("-- c;\nCREATE TABLE a (\n  x int -- y\n);\nINSERT INTO a VALUES (1);\n"), ["CREATE TABLE a (\n  x int -- y\n)", "INSERT INTO a VALUES (1)"]);
    assert.throws(() => splitStatements("SELECT 1"), /without/);
  });

  test("every dialect ships the same queries, parameters and migrations", () => {
    const shapes = ["postgres", "mysql", "sqlite"].map((dialect) => {
      const queries = loadQueries(dialect, "named");
      return {
        names: [...queries.keys()].sort(),
        params: Object.fromEntries([...queries].map(([name, q]) => [name, [...q.params].sort()])),
        migrations: loadMigrations(dialect).map((m) => m.version),
      };
    });
    assert.ok(shapes[0].names.includes("claim") && shapes[0].names.includes("outbox_claim"));
    assert.deepEqual(shapes[1], shapes[0]);
    assert.deepEqual(shapes[2], shapes[0]);
  });
});

test("a mysql2 pool reporting found rows or rounding big numbers is refused", async () => {
  const found = mysql.createPool({ host: "127.0.0.1", supportBigNumbers: true, bigNumberStrings: true });
  const rounding = mysql.createPool({ host: "127.0.0.1", flags: ["-FOUND_ROWS"] });
  const right = mysql.createPool({ host: "127.0.0.1", flags: ["-FOUND_ROWS"], supportBigNumbers: true, bigNumberStrings: true });
  try {
    assert.throws(() => mysqlDatabase(found), /FOUND_ROWS/);
    assert.throws(() => mysqlDatabase(rounding), /supportBigNumbers/);
    assert.equal(mysqlDatabase(right).dialect, "mysql");
  } finally {
    await Promise.all([found.end(), rounding.end(), right.end()]);
  }
});

const LEASE_POLICY = new LeasePolicy({ layout: "classic", leaseMillis: 1500, renewIntervalMillis: 300, safetyMarginMillis: 300, renewRetryMillis: 100, maxSkewMillis: 20, maxStartWaitMillis: 100 });

for (const { dialect, skip } of dialects()) {
  describe(`stores on ${dialect}`, { skip }, () => {
    test("a leased Snowflake renews in the background, releases with its high-water mark, and the next holder starts after it", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        const leases = new WorkerLeases(database, LEASE_POLICY);
        const first = await LeasedSnowflake.acquire(leases, "host-a", "classic");
        const deadline = first.guard.leaseDeadlineMillis;
        const ids = [first.nextId()];
        await sleep(700);
        ids.push(first.nextId());
        assert.ok(first.guard.leaseDeadlineMillis > deadline, "the heartbeat renewed the lease");
        assert.ok((await leases.load(first.workerId)).leaseDeadlineMillis > deadline);
        assert.equal(await first.close(), true);
        const row = await leases.load(first.workerId);
        assert.equal(row.owner, null);
        assert.ok(row.highWaterMillis >= BigInt(Date.now() - 1000));
        assert.throws(() => first.nextId(), (error) => error instanceof LeaseError && error.code === "lease.released");
        const second = await LeasedSnowflake.acquire(leases, "host-b", "classic");
        assert.equal(second.workerId, first.workerId);
        assert.ok(second.guard.startAfterMillis >= row.highWaterMillis);
        const next = second.nextId();
        assert.ok(ids.every((id) => next > id), "IDs stay increasing across holders");
        await second.close();
      } finally {
        await db.close();
      }
    });

    test("a leased Snowflake whose lease was taken stops issuing", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        const leases = new WorkerLeases(database, LEASE_POLICY);
        const holder = await LeasedSnowflake.acquire(leases, "host-a", "classic");
        holder.nextId();
        // Another holder's takeover: the row's token moves on.
        await database.withConnection((c) => c.execute(`UPDATE worker_lease SET fencing_token = fencing_token + 1 WHERE worker_id = ${holder.workerId}`));
        await sleep(800);
        assert.throws(() => holder.nextId(), (error) => error instanceof LeaseError && error.code === "lease.lost");
        assert.equal(await holder.close(), false);
      } finally {
        await db.close();
      }
    });

    test("segment IDs come from memory in the steady state", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        let fetches = 0;
        const counting = { ...database, dialect: database.dialect, query: (n) => database.query(n), withConnection: (a) => database.withConnection(a), close: () => database.close(),
          transaction: (action, options) => {
            fetches += 1;
            return database.transaction(action, options);
          } };
        const ids = new SegmentIds(counting, new SegmentPolicy({ initialStep: 1000, minStep: 1000, maxStep: 10000 }), "orders");
        let previous = 0n;
        assert.equal(ids.nextIdNow(), undefined, "nothing in memory before the first fetch");
        let waits = 0;
        for (let n = 0; n < 20000; n += 1) {
          // A service between requests: the event loop runs, and with it the background fetch.
          if (n % 100 === 0) await sleep(2);
          let id = ids.nextIdNow();
          if (id === undefined) {
            waits += 1;
            id = await ids.nextId();
          }
          assert.ok(id > previous);
          previous = id;
        }
        await ids.settled();
        assert.ok(fetches <= 8, `${fetches} fetches for 20000 IDs`);
        assert.equal(waits, 1, "only the first ID waits on the database");
      } finally {
        await db.close();
      }
    });

    test("run once: an unexpected error releases the key and is rethrown; the next request runs", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        const store = new IdempotencyStore(database, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }));
        const key = new IdempotencyKey("order.create", "tenant-1", "k1");
        const request = { fingerprint: fingerprint({ sku: "x" }) };
        const boom = new Error("network down");
        await assert.rejects(store.runOnce(key, request, async () => {
          throw boom;
        }), (error) => error === boom);
        assert.equal((await store.load(key)).status, "failed_retryable");
        const body = new TextEncoder().encode("ok");
        const result = await store.runOnce(key, request, async () => ({ contentType: "text/plain", body }));
        assert.equal(result.decision, "execute");
        const replay = await store.runOnce(key, request, async () => assert.fail("ran twice"));
        assert.equal(replay.decision, "replay");
        assert.deepEqual(Buffer.from(replay.response.body), Buffer.from(body));
      } finally {
        await db.close();
      }
    });

    test("a claim in an old MySQL snapshot is store.stale_snapshot, and nothing runs", { skip: dialect !== "mysql" && "only MySQL/MariaDB REPEATABLE READ keeps a snapshot across statements" }, async () => {
      const db = await freshDatabase(dialect);
      try {
        // Two pools of one connection: the caller's transaction, and the store's own.
        const database = db.open();
        const pooled = db.open();
        await migrate(database);
        const store = new IdempotencyStore(pooled, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }));
        const key = new IdempotencyKey("order.create", "tenant-1", "k1");
        const request = { fingerprint: fingerprint({ sku: "x" }) };
        const text = (value) => async () => ({ contentType: "text/plain", body: new TextEncoder().encode(value) });
        let ran = 0;
        await assert.rejects(database.transaction(async (connection) => {
          await connection.execute("SELECT COUNT(*) FROM idempotency_record");
          await store.runOnce(key, request, text("first"));
          await store.inTransaction(connection, key, request, async () => {
            ran += 1;
            return text("second")();
          });
        }), (error) => error instanceof StoreError && error.code === "store.stale_snapshot");
        assert.equal(ran, 0);
        assert.equal((await store.runOnce(key, request, text("third"))).decision, "replay");
      } finally {
        await db.close();
      }
    });

    test("an error that is not the connection's is the driver's own", async () => {
      const db = await freshDatabase(dialect);
      try {
        const store = new IdempotencyStore(db.open(), new RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 }));
        await assert.rejects(store.load(new IdempotencyKey("a", "b", "c")),
          (error) => !(error instanceof StoreError) && /idempotency_record/.test(error.message));
      } finally {
        await db.close();
      }
    });

    test("an unreachable database is store.unavailable", async () => {
      const db = await freshDatabase(dialect);
      try {
        const store = new IdempotencyStore(db.unavailable(), new RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 }));
        await assert.rejects(store.load(new IdempotencyKey("a", "b", "c")),
          (error) => error instanceof StoreError && error.code === "store.unavailable" && error.problem === "storage_unavailable");
      } finally {
        await db.close();
      }
    });
  });
}

test("the package ships the schema and the store entry points, with types", async () => {
  const { execFileSync } = await import("node:child_process");
  const [{ files }] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" }));
  const paths = new Set(files.map((file) => file.path));
  for (const dialect of ["postgres", "mysql", "sqlite"]) {
    assert.ok(paths.has(`dist/schema/${dialect}/queries.sql`), `dist/schema/${dialect}/queries.sql`);
    assert.ok(paths.has(`dist/schema/${dialect}/0001_idempotency_record.sql`));
  }
  const { exports } = JSON.parse((await import("node:fs")).readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  for (const entry of ["sqlite", "pg", "mysql"]) {
    const conditions = exports[`./store/${entry}`];
    assert.deepEqual(Object.keys(conditions), ["types", "node"], "types first; Node only, so browsers never resolve a driver");
    assert.ok(paths.has(conditions.types.slice(2)) && paths.has(conditions.node.slice(2)));
  }
});

test("four threads, each with its own SQLite connection to one file: each side effect once, segment IDs disjoint", async () => {
  const { Worker } = await import("node:worker_threads");
  const db = await freshDatabase("sqlite");
  try {
    const database = db.open();
    await migrate(database);
    await database.withConnection((c) => c.execute(db.sideEffectTable));
    const { file } = db;
    const run = (task, extra) => Promise.all(Array.from({ length: 4 }, (_, n) => new Promise((resolve, reject) => {
      const worker = new Worker(new URL("./store/thread-worker.mjs", import.meta.url), { workerData: { file, task, name: `t${n}`, ...extra } });
      worker.once("message", resolve);
      worker.once("error", reject);
    })));
    const runs = await run("run_once", { keys: 50 });
    const executed = runs.flatMap((r) => r.decisions).filter((d) => d === "execute").length;
    assert.equal(executed, 50);
    assert.ok(runs.flatMap((r) => r.decisions).every((d) => d === "execute" || d === "replay"));
    const counts = await database.withConnection(async (c) => (await c.run({ name: "n", kind: "many", sql: "SELECT key_id, COUNT(*) AS n FROM conformance_side_effect GROUP BY key_id", params: [] }, {})).rows);
    assert.equal(counts.length, 50);
    assert.ok(counts.every((row) => row.n === 1n), "every key's side effect happened once");
    const draws = await run("segments", { count: 2000 });
    const all = draws.flatMap((d) => d.drawn);
    assert.equal(new Set(all).size, all.length, "no segment ID twice");
    for (const { drawn } of draws) assert.ok(drawn.every((id, n) => n === 0 || BigInt(id) > BigInt(drawn[n - 1])));
  } finally {
    await db.close();
  }
});
