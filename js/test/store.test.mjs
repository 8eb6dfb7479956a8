// The JS stores beyond the shared scenarios: the core's manifest and limits, the executors'
// error classes, not-a-response, renewal and a lost lease, the error-text limit,
// the Snowflake generator on a leased worker id (heartbeat, loss, release), the segment
// allocator's steady state, and the run-once way's handling of unexpected errors.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fingerprint, IdempotencyKey, LeaseError, LeasePolicy, RecordPolicy, RelayPolicy, SegmentPolicy } from "mintid";
import { DbError, IdempotencyStore, LeasedSnowflake, MAX_RESPONSE_BYTES, migrate, OperationError, pendingMigrations, Outbox, SegmentIds, StoreError, StoreSchemaMissingError, storeLimits, WorkerLeases } from "mintid/store/sqlite";
import { statementsOf } from "../dist/full/store/driver.js";
import { shutdownWaitMillis } from "../dist/full/wasm/mintid_wasm.js";
import { aroundStatements, dialects, faultyDatabase, freshDatabase, sql } from "./store/databases.mjs";

describe("the core's manifest", () => {
  test("every dialect has the same statements and parameters, in each executor's placeholder style", () => {
    const shapes = ["postgres", "mysql", "sqlite"].map((dialect) => {
      const statements = statementsOf(dialect);
      return {
        names: [...statements.keys()].sort(),
        params: Object.fromEntries([...statements].map(([name, statement]) => [name, [...new Set(statement.params)].sort()])),
      };
    });
    assert.ok(shapes[0].names.includes("claim") && shapes[0].names.includes("renew") && shapes[0].names.includes("outbox_claim"));
    assert.deepEqual(shapes[1], shapes[0]);
    assert.deepEqual(shapes[2], shapes[0]);
    const load = (dialect) => statementsOf(dialect).get("load");
    assert.match(load("postgres").sql, /scope = \$1 AND kind = \$2 AND key_id = \$3$/);
    assert.match(load("sqlite").sql, /scope = \? AND kind = \? AND key_id = \?$/);
    assert.match(load("mysql").sql, /scope = \? AND kind = \? AND key_id = \?$/);
    for (const dialect of ["postgres", "mysql", "sqlite"]) assert.ok(![...statementsOf(dialect).values()].some((statement) => /(?<![:\w]):[a-z]/.test(statement.sql)), dialect);
  });

  test("the limits are the core's", () => {
    const limits = Object.fromEntries(storeLimits().map(({ name, maxBytes }) => [name, maxBytes]));
    assert.equal(limits["record.response_body"], 1_048_576);
    assert.equal(limits["record.response_content_type"], 255);
    assert.equal(limits["record.error"], 1024);
    assert.equal(MAX_RESPONSE_BYTES, 1_048_576);
  });
});

/**
 * Runs `body` with a fresh migrated database of `dialect`: the database, a store on it
 * under `policy`, a key and a request.
 */
async function withStore(dialect, policy, body, { poolSize = 1 } = {}) {
  const db = await freshDatabase(dialect, { poolSize });
  try {
    const database = db.open();
    await migrate(database);
    const key = new IdempotencyKey("order.create", "tenant-1", "k1");
    await body({ db, database, store: new IdempotencyStore(database, policy), key, request: { fingerprint: fingerprint({ sku: "x" }) } });
  } finally {
    await db.close();
  }
}

const LEASE_POLICY = new LeasePolicy({ layout: "classic", leaseMillis: 1500, renewIntervalMillis: 300, safetyMarginMillis: 300, renewRetryMillis: 100, maxSkewMillis: 20, maxStartWaitMillis: 100 });

for (const { dialect, skip } of dialects()) {
  describe(`stores on ${dialect}`, { skip }, () => {
    test("a leased Snowflake renews in the background, releases with its high-water mark, and the next holder starts after it", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        const leases = new WorkerLeases(database, LEASE_POLICY);
        const first = await LeasedSnowflake.acquire(leases, "host-a");
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
        const second = await LeasedSnowflake.acquire(leases, "host-b");
        assert.equal(second.workerId, first.workerId);
        assert.ok(second.guard.startAfterMillis >= row.highWaterMillis);
        const next = second.nextId();
        assert.ok(ids.every((id) => next > id), "IDs stay increasing across holders");
        await second.close();
      } finally {
        await db.close();
      }
    });

    test("a leased Snowflake's release waits for a renewal that hangs at most the core's shutdown bound, then releases", { timeout: 60_000, skip: dialect === "sqlite" && "a statement of better-sqlite3 runs synchronously: none hangs while the release waits" }, async () => {
      const db = await freshDatabase(dialect, { poolSize: 2 }); // one for the renewal that hangs
      try {
        const database = db.open();
        await migrate(database);
        // Every renewal hangs for 30 s (its reply late), unless the test ends it sooner.
        const hang = new AbortController();
        const late = sleep(30_000, undefined, { signal: hang.signal }).catch(() => undefined);
        let renewed = false;
        const hanging = aroundStatements(database, (statement, run) =>
          statement.name === "lease_renew"
            ? late.then(run).finally(() => {
                renewed = true;
              })
            : run(),
        );
        const holder = await LeasedSnowflake.acquire(new WorkerLeases(hanging, LEASE_POLICY), "host-a");
        await sleep(700); // past the renewal interval: a renewal is in flight
        const started = Date.now();
        assert.equal(await holder.close(), true);
        const waited = Date.now() - started;
        assert.equal(renewed, false, "the release went on without the renewal in flight");
        hang.abort();
        assert.ok(waited >= shutdownWaitMillis() - 100, `waited ${waited} ms for the renewal in flight, not the core's bound`);
        assert.equal((await new WorkerLeases(database, LEASE_POLICY).load(holder.workerId)).owner, null);
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
        const holder = await LeasedSnowflake.acquire(leases, "host-a");
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

    test("a relay keeps one connection from send to send where the executor can hold one, a fresh one after a lost connection", async () => {
      const db = await freshDatabase(dialect);
      try {
        const admin = db.open();
        await migrate(admin);
        const faulty = faultyDatabase(admin);
        let checkouts = 0;
        const counting = { ...faulty, withConnection: (action) => ((checkouts += 1), faulty.withConnection(action)) };
        const outbox = new Outbox(counting, new RelayPolicy({ batchSize: 2n }));
        const payload = new TextEncoder().encode("{}");
        for (let n = 1n; n <= 5n; n += 1n) {
          await admin.transaction((connection) => outbox.enqueue(connection, { messageId: n, kind: "order.created", businessKey: `order-${n}`, payload }));
        }
        checkouts = 0;
        const sent = [];
        assert.equal((await outbox.relay(async (message) => void sent.push(message.messageId))).sent, 5);
        assert.deepEqual(sent, [1n, 2n, 3n, 4n, 5n]);
        // SQLite's executor queues every connection to a file: it gives the connection back for each send.
        const held = dialect !== "sqlite";
        assert.equal(checkouts, held ? 1 : 6, "five sends in three batches");
        await admin.transaction((connection) => outbox.enqueue(connection, { messageId: 6n, kind: "order.created", businessKey: "order-6", payload }));
        faulty.failNext((name) => name.startsWith("outbox_mark_"), "connection_lost");
        checkouts = 0;
        const report = await outbox.relay(async () => {});
        assert.equal(report.sent, 1);
        assert.equal(checkouts, held ? 2 : 3, "the mark that lost its connection is tried again on a fresh one");
      } finally {
        await db.close();
      }
    });

    test("segment IDs' close waits for a fetch that hangs at most the core's shutdown bound", { timeout: 60_000, skip: dialect === "sqlite" && "a statement of better-sqlite3 runs synchronously: none hangs while close waits" }, async () => {
      const db = await freshDatabase(dialect, { poolSize: 2 });
      try {
        const database = db.open();
        await migrate(database);
        const hang = new AbortController();
        const late = sleep(30_000, undefined, { signal: hang.signal }).catch(() => undefined);
        let fetched = false;
        const hanging = aroundStatements(database, (statement, run) =>
          statement.name === "segment_fetch"
            ? late.then(run).finally(() => {
                fetched = true;
              })
            : run(),
        );
        const ids = new SegmentIds(hanging, "orders", new SegmentPolicy({ initialStep: 10n, minStep: 10n }));
        assert.equal(ids.nextIdNow(), undefined); // the first fetch starts and hangs
        const started = Date.now();
        await ids.close();
        const waited = Date.now() - started;
        assert.equal(fetched, false, "close went on without the fetch under way");
        hang.abort();
        assert.ok(waited >= shutdownWaitMillis() - 100, `waited ${waited} ms for the fetch under way, not the core's bound`);
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
        // Each fetch runs its steps on one connection.
        const counting = { ...database, dialect: database.dialect, statement: (n) => database.statement(n), close: () => database.close(),
          transaction: (action, options) => database.transaction(action, options),
          withConnection: (action) => {
            fetches += 1;
            return database.withConnection(action);
          } };
        const ids = new SegmentIds(counting, "orders", new SegmentPolicy({ initialStep: 1000, minStep: 1000, maxStep: 10000 }));
        let previous = 0n;
        assert.equal(ids.nextIdNow(), undefined, "nothing in memory before the first fetch (which this starts)");
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
        assert.ok(fetches >= 2 && fetches <= 8, `${fetches} fetches for 20000 IDs`);
        assert.ok(waits <= 1, `${waits} waits: only the first ID may wait on the database`);
      } finally {
        await db.close();
      }
    });

    test("run once: an unexpected error releases the key and is rethrown; the next request runs", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ store, key, request }) => {
        const boom = new Error("network down");
        await assert.rejects(store.runOnce(key, request, async () => {
          throw boom;
        }), (error) => error === boom);
        const released = await store.load(key);
        assert.equal(released.record.status, "failed_retryable");
        assert.equal(released.error, "Error: network down", "the core composes the stored text from the error's name and message");
        const body = new TextEncoder().encode("ok");
        const result = await store.runOnce(key, request, async () => ({ contentType: "text/plain", body }));
        assert.equal(result.decision, "execute");
        const replay = await store.runOnce(key, request, async () => assert.fail("ran twice"));
        assert.equal(replay.decision, "replay");
        assert.deepEqual(Buffer.from(replay.response.body), Buffer.from(body));
      }));

    test("run once with an AbortSignal: honoured before the operation (nothing claimed, or the claim released), ignored once it ran (recorded, then the reason)", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ database, store, key, request }) => {
        const body = new TextEncoder().encode("ok");
        const respond = async () => ({ contentType: "text/plain", body });
        // Aborted before the call: nothing is claimed.
        const early = new AbortController();
        const gone = new Error("the client went away");
        early.abort(gone);
        await assert.rejects(store.runOnce(key, request, async () => assert.fail("ran after an abort"), { signal: early.signal }), (error) => error === gone);
        assert.equal(await store.load(key), null);
        // Aborted once the claim was written, before the operation: it does not run, the key is released.
        const claimed = new AbortController();
        const aborting = aroundStatements(database, async (statement, run) => {
          const result = await run();
          if (statement.name === "claim") claimed.abort(gone);
          return result;
        });
        await assert.rejects(new IdempotencyStore(aborting, store.policy).runOnce(key, request, async () => assert.fail("ran after an abort"), { signal: claimed.signal }), (error) => error === gone);
        assert.equal(claimed.signal.aborted, true, "the claim statement ran");
        assert.equal((await store.load(key)).record.status, "failed_retryable");
        // Aborted while the operation runs: its response is recorded, then the call rejects with the reason.
        const late = new AbortController();
        await assert.rejects(store.runOnce(key, request, async () => {
          late.abort(gone);
          return respond();
        }, { signal: late.signal }), (error) => error === gone);
        const stored = await store.load(key);
        assert.equal(stored.record.status, "succeeded");
        assert.deepEqual(Buffer.from(stored.response.body), Buffer.from(body));
        const replay = await store.runOnce(key, request, async () => assert.fail("ran twice"), { signal: new AbortController().signal });
        assert.equal(replay.decision, "replay");
      }));

    test("an operation error holding a lone surrogate is stored and replayed with U+FFFD in its place; the caller gets its own error", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ store, key, request }) => {
        // TextEncoder (which carries JS strings into wasm) turns a lone surrogate into U+FFFD: UTF-8 cannot hold one.
        assert.deepEqual([...new TextEncoder().encode("\uD800")], [0xef, 0xbf, 0xbd]);
        const declined = new OperationError("card declined \uD800 ref=\uDFFF7");
        await assert.rejects(store.runOnce(key, request, async () => {
          throw declined;
        }), (error) => error === declined);
        const stored = await store.load(key);
        assert.equal(stored.record.status, "failed");
        assert.equal(stored.error, "card declined \uFFFD ref=\uFFFD7");
        const replay = await store.runOnce(key, request, async () => assert.fail("ran twice"));
        assert.deepEqual({ decision: replay.decision, outcome: replay.outcome, error: replay.error }, { decision: "replay", outcome: "failed", error: "card declined \uFFFD ref=\uFFFD7" });
      }));

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

    test("migrate applies each of the core's migrations once, two migrators at once under its lock; then none is pending", async () => {
      const db = await freshDatabase(dialect, { poolSize: 2 });
      try {
        const database = db.open();
        // The versions of schema/<dialect>/NNNN_*.sql, every one pending on a fresh database.
        const files = readdirSync(new URL(`../../schema/${dialect}/`, import.meta.url)).filter((name) => /^\d{4}_.*\.sql$/.test(name));
        const versions = files.map((name) => Number(name.slice(0, 4))).sort((a, b) => a - b);
        assert.deepEqual(await pendingMigrations(database), versions);
        const [first, second] = await Promise.all([migrate(database), migrate(db.open())]);
        assert.deepEqual([...first, ...second].sort((a, b) => a - b), versions);
        assert.deepEqual(await migrate(database), []);
        assert.deepEqual(await pendingMigrations(database), []);
      } finally {
        await db.close();
      }
    });

    test("a database never migrated is store.schema_missing naming migrate, the driver's error its cause", async () => {
      const db = await freshDatabase(dialect);
      try {
        const store = new IdempotencyStore(db.open(), new RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 }));
        await assert.rejects(store.load(new IdempotencyKey("a", "b", "c")), (error) => error instanceof StoreSchemaMissingError && error.code === "store.schema_missing"
          && /await migrate\(database\)/.test(error.message)
          && error.part === "schema_missing" && error.problem === "storage_unavailable" && !/idempotency_record/.test(error.message)
          && error.cause instanceof Error && !(error.cause instanceof DbError) && /idempotency_record/.test(error.cause.message));
      } finally {
        await db.close();
      }
    });

    test("the executor classifies the database's errors", async () => {
      const db = await freshDatabase(dialect);
      try {
        const database = db.open();
        await migrate(database);
        await database.withConnection((c) => c.execute(db.sideEffectTable));
        const insert = sql(dialect, "insert", "INSERT INTO worker_lease (worker_id, owner, fencing_token, lease_deadline_millis, high_water_millis, acquired_millis, updated_millis) VALUES (?, NULL, 0, 0, 0, 0, 0)", "execrows");
        const classOf = (action) => database.withConnection(action).then(() => "none", (error) => {
          assert.ok(error instanceof DbError && error.cause instanceof Error && error.message === error.cause.message);
          return error.errorClass;
        });
        assert.equal(await classOf((c) => c.run(insert, [1n])), "none");
        assert.equal(await classOf((c) => c.run(insert, [1n])), "unique_violation");
        assert.equal(await classOf((c) => c.run(sql(dialect, "null", "INSERT INTO conformance_side_effect (scope, kind, key_id, worker) VALUES (?, ?, ?, NULL)", "execrows"), ["s", "k", "i"])), "constraint");
        assert.equal(await classOf((c) => c.execute("SELECT * FROM no_such_table")), "schema_missing");
        assert.equal(await db.unavailable().withConnection(async () => "ran").catch((error) => error instanceof DbError && error.errorClass), "connection_lost");
      } finally {
        await db.close();
      }
    });

    test("an operation that returns something that is not a response is store.not_a_response, and the claim is released", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ store, key, request }) => {
        await assert.rejects(store.runOnce(key, request, async () => ({ status: 201, body: "created" })),
          (error) => error instanceof StoreError && error.code === "store.not_a_response" && /Object/.test(error.message));
        assert.equal((await store.load(key)).record.status, "failed_retryable");
        const body = new TextEncoder().encode("ok");
        assert.equal((await store.runOnce(key, request, async () => ({ contentType: "text/plain", body }))).decision, "execute");
      }));

    test("run once renews the lease while the operation runs: a duplicate after the first lease is still in progress", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 1500, retentionMillis: 86_400_000 }), async ({ db, store, key, request }) => {
        const other = new IdempotencyStore(db.open(), store.policy);
        let duplicate;
        const first = await store.runOnce(key, request, async (lease) => {
          assert.equal(lease.renewEveryMillis, 500n);
          const deadline = lease.leaseDeadlineMillis;
          await sleep(2500);
          const stored = (await other.load(key)).record.leaseDeadlineMillis;
          assert.ok(stored > deadline + 1000n, "renewed in the background");
          assert.ok(lease.leaseDeadlineMillis > deadline + 1000n && lease.leaseDeadlineMillis <= stored, "the lease's deadline moves with each beat");
          duplicate = await other.runOnce(key, request, async () => assert.fail("ran twice"));
          assert.equal(lease.signal.aborted, false);
          return { contentType: "text/plain", body: new TextEncoder().encode("ok") };
        });
        assert.equal(first.decision, "execute");
        assert.equal(duplicate.decision, "in_progress");
        assert.equal((await store.load(key)).record.status, "succeeded");
      }, { poolSize: 2 }));

    test("a lease taken over is lost: the operation's signal aborts with store.record_lost and its completion is refused", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 60_000, retentionMillis: 86_400_000 }), async ({ database, store, key, request }) => {
        await assert.rejects(store.runOnce(key, request, async (lease) => {
          await database.withConnection((c) => c.execute("UPDATE idempotency_record SET fencing_token = fencing_token + 1"));
          await assert.rejects(lease.renew(), (error) => error instanceof StoreError && error.code === "store.record_lost");
          assert.equal(lease.signal.aborted, true);
          assert.equal(lease.signal.reason.code, "store.record_lost");
          return { contentType: "text/plain", body: new Uint8Array() };
        }), (error) => error.code === "record.stale_token");
      }, { poolSize: 2 }));

    test("the background renewals find a lease taken over: the operation's signal aborts with store.record_lost", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 1500, retentionMillis: 86_400_000 }), async ({ database, store, key, request }) => {
        await assert.rejects(store.runOnce(key, request, async (lease) => {
          await database.withConnection((c) => c.execute("UPDATE idempotency_record SET fencing_token = fencing_token + 1"));
          for (let waited = 0; !lease.signal.aborted && waited < 5000; waited += 100) await sleep(100);
          assert.equal(lease.signal.reason?.code, "store.record_lost");
          return { contentType: "text/plain", body: new Uint8Array() };
        }), (error) => error.code === "record.stale_token");
      }, { poolSize: 2 }));

    test("same transaction on connections that report found rows (mysql2's default): a duplicate replays, a retry reclaims", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ db, key, request }) => {
        const found = db.open({ foundRows: true });
        const store = new IdempotencyStore(found, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }));
        let ran = 0;
        const run = (fail) => found.transaction((connection) => store.inTransaction(connection, key, request, async () => {
          ran += 1;
          if (fail) throw new OperationError("declined", { retryable: true });
          return { contentType: "text/plain", body: new TextEncoder().encode("ok") };
        }));
        await assert.rejects(run(true), OperationError);
        assert.equal(await store.load(key), null, "rolled back with the caller's transaction");
        assert.equal((await run(false)).decision, "execute");
        assert.equal((await run(false)).decision, "replay");
        assert.equal(ran, 2);
      }));

    test("an operation error with a message over the limit is stored cut to 1024 bytes with a marker", () =>
      withStore(dialect, new RecordPolicy({ leaseMillis: 10_000, retentionMillis: 86_400_000 }), async ({ store, key, request }) => {
        await assert.rejects(store.runOnce(key, request, async () => {
          throw new OperationError("é".repeat(2000));
        }), OperationError);
        const { record: { status }, error } = await store.load(key);
        assert.equal(status, "failed");
        assert.ok(Buffer.byteLength(error) <= 1024 && error.endsWith("… [truncated]"));
      }));

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

test("the package ships the store entry points, with types, and no SQL files (the core has them)", async () => {
  const { execFileSync } = await import("node:child_process");
  const [{ files }] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" }));
  const paths = new Set(files.map((file) => file.path));
  assert.ok(![...paths].some((path) => path.endsWith(".sql")), "no .sql file in the package");
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
    const counts = await database.withConnection(async (c) => (await c.run(sql("sqlite", "n", "SELECT key_id, COUNT(*) AS n FROM conformance_side_effect GROUP BY key_id"), [])).rows);
    assert.equal(counts.length, 50);
    assert.ok(counts.every((row) => row[1] === 1n), "every key's side effect happened once");
    const draws = await run("segments", { count: 2000 });
    const all = draws.flatMap((d) => d.drawn);
    assert.equal(new Set(all).size, all.length, "no segment ID twice");
    for (const { drawn } of draws) assert.ok(drawn.every((id, n) => n === 0 || BigInt(id) > BigInt(drawn[n - 1])));
  } finally {
    await db.close();
  }
});
