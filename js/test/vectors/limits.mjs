// Runners for tests/vectors/limits.json: each argument as the package passes it, through the
// API (a lease's owner as stored, a message id as enqueued, on a SQLite file) or the wire (a
// cleanup's first statement: its batch size is the last parameter); the shutdown wait and the
// histograms' buckets as the wasm build gives them to the package.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LeasePolicy, MintidError, RelayPolicy } from "mintid";
import { migrate, Outbox, sqliteDatabase, WorkerLeases } from "../../dist/full/store/sqlite.js";
import { packInput, packSpec, readStep } from "../../dist/full/store/wire.js";
import { metricBuckets, shutdownWaitMillis, Wire } from "../../dist/full/wasm/mintid_wasm.js";

/** `use` on a migrated SQLite file of its own, removed afterwards. */
async function onSqlite(use) {
  const dir = mkdtempSync(join(tmpdir(), "mintid-limits-"));
  const database = sqliteDatabase(join(dir, "db.sqlite"));
  try {
    await migrate(database);
    await use(database);
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The parameters of the first statement of a driver made from `spec`. */
function firstParams(spec) {
  const wire = new Wire(packSpec(spec));
  try {
    const step = readStep(spec.kind, wire.call(packInput({ tag: "start", nowMillis: 0n })));
    assert.equal(step.tag, "run", `the first step is ${step.tag}`);
    return step.params;
  } finally {
    wire.free();
  }
}

const ARGUMENTS = {
  async "lease.owner"(vector) {
    await onSqlite(async (database) => {
      const leases = new WorkerLeases(database, new LeasePolicy());
      const guard = await leases.acquire(vector.value);
      const row = await leases.load(guard.workerId);
      assert.equal(row?.owner, vector.expect);
    });
  },
  async "outbox.message_id"(vector, where) {
    await onSqlite(async (database) => {
      const outbox = new Outbox(database, new RelayPolicy());
      const message = { messageId: BigInt(vector.value), kind: "order.created", businessKey: "order-7", payload: new Uint8Array([123, 125]) };
      const enqueue = database.transaction((connection) => outbox.enqueue(connection, message));
      if ("error" in vector) {
        await assert.rejects(enqueue, (error) => error instanceof MintidError && error.code === vector.error, `${where}: expected ${vector.error}`);
        return;
      }
      await enqueue;
      const stored = await outbox.load("order.created", "order-7");
      assert.equal(stored?.messageId, BigInt(vector.expect));
    });
  },
  "record_cleanup.batch_size"(vector) {
    const params = firstParams({ kind: "record_cleanup", dialect: "sqlite", placeholder: "question", batchSize: BigInt(vector.value) });
    assert.equal(params.at(-1), BigInt(vector.expect));
  },
  "outbox_cleanup.batch_size"(vector) {
    const params = firstParams({ kind: "outbox_cleanup", dialect: "sqlite", placeholder: "question", sentBeforeMillis: 0n, batchSize: BigInt(vector.value) });
    assert.equal(params.at(-1), BigInt(vector.expect));
  },
};

const BOUNDS = { shutdown_wait_millis: shutdownWaitMillis };

export const limitsRunners = {
  async argument(vector, where) {
    const run = ARGUMENTS[vector.argument];
    assert.ok(run, `${where}: no JS runner for argument ${vector.argument}`);
    await run(vector, where);
  },
  bound(vector, where) {
    const bound = BOUNDS[vector.bound];
    assert.ok(bound, `${where}: no JS runner for bound ${vector.bound}`);
    assert.equal(bound(), Number(vector.value), where);
  },
  histogram(vector, where) {
    assert.deepEqual(Array.from(metricBuckets(vector.metric)), vector.buckets, where);
  },
};
