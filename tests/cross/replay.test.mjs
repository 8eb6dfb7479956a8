// Stored responses cross hosts: the Express integration (JS), a Rust server
// (axum behind mintid-store's IdempotencyLayer), the Python WSGI middleware and
// Kotlin's HttpIdempotency (from one JVM) share one SQLite file; the Rust server and each other host replay what the
// other stored under the same key (the same scope, the
// default kind of the same full path, the same body), with
// `Idempotent-Replayed: true` and the stored status, headers and body. See
// tests/cross/README.md.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import express from "../../js/node_modules/express/index.js";
import { idempotency } from "../../js/dist/full/http/express.js";
import { RecordPolicy } from "../../js/dist/full/node.js";
import { IdempotencyStore, migrate, sqliteDatabase } from "../../js/dist/full/store/sqlite.js";
import { kotlinParty } from "./parties/kotlin.mjs";
import { lineParty } from "./parties/lines.mjs";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RUST_SERVER = process.env.MINTID_RUST_SERVER ?? join(ROOT, "target/debug/examples/cross_party");
const PYTHON = process.env.MINTID_PYTHON ?? join(ROOT, ".venv/python-test/bin/python");
const SCOPE = "user:alice";
const BODY = JSON.stringify({ sku: "tea", qty: 2 });

const dir = mkdtempSync(join(tmpdir(), "mintid-replay-"));
const file = join(dir, "records.sqlite3");
let database;
let server;
let rust;
let python;
let kotlin;

before(async () => {
  database = sqliteDatabase(file);
  await migrate(database);
  const store = new IdempotencyStore(database, new RecordPolicy({ leaseMillis: 30_000, retentionMillis: 86_400_000 }));
  const app = express();
  let orders = 0;
  app.use(idempotency({ store, scope: (req) => `user:${req.headers["x-user"]}` }));
  app.post("/orders", (req, res) => {
    orders += 1;
    res.status(201).set("location", `/orders/js-${orders}`).json({ order: orders, by: "js" });
  });
  server = await new Promise((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  rust = lineParty("Rust server", RUST_SERVER, []);
  const replies = await rust.ask([
    ["key", "7", "11".repeat(32)],
    ["store", file],
  ]);
  assert.deepEqual(replies, [["ok"], ["ok"]]);
  python = lineParty("Python", PYTHON, [fileURLToPath(new URL("parties/python_party.py", import.meta.url))]);
  assert.deepEqual(await python.ask([["store", file]]), [["ok"]]);
  kotlin = kotlinParty();
  assert.deepEqual(await kotlin.ask([["store", file]]), [["ok"]]);
});

after(async () => {
  await rust?.close();
  await python?.close();
  await kotlin?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await database?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A POST /orders to the Express app: status, replay marker, location and body. */
async function postJs(key) {
  const response = await fetch(`http://127.0.0.1:${server.address().port}/orders`, {
    method: "POST",
    headers: { "x-user": "alice", "idempotency-key": key, "content-type": "application/json" },
    body: BODY,
  });
  return [String(response.status), response.headers.get("idempotent-replayed") ?? "false", response.headers.get("location") ?? "", await response.text()];
}

/** The same request to a line party's app (the Rust server, the Python WSGI app). */
async function postTo(party, key) {
  const [[status, ...reply]] = await party.ask([["post", SCOPE, key, BODY]]);
  assert.equal(status, "ok", reply.join(" "));
  return reply;
}

const postRust = (key) => postTo(rust, key);

test("the Rust server replays what the Express integration stored", async () => {
  const key = randomUUID();
  const [status, replayed, location, body] = await postJs(key);
  assert.deepEqual([status, replayed, location], ["201", "false", "/orders/js-1"]);
  assert.deepEqual(await postRust(key), ["201", "true", location, body]);
});

test("the Express integration replays what the Rust server stored", async () => {
  const key = randomUUID();
  const [status, replayed, location, body] = await postRust(key);
  assert.deepEqual([status, replayed, location, JSON.parse(body)], ["201", "false", "/orders/rust-1", { order: 1, by: "rust" }]);
  assert.deepEqual(await postJs(key), ["201", "true", location, body]);
});

for (const [host, party, prefix] of [
  ["the Python WSGI middleware", () => python, "py"],
  ["Kotlin's HttpIdempotency", () => kotlin, "kt"],
]) {
  test(`${host} replays what the Rust server stored`, async () => {
    const key = randomUUID();
    const [status, replayed, location, body] = await postRust(key);
    assert.deepEqual([status, replayed, JSON.parse(body).by], ["201", "false", "rust"]);
    assert.deepEqual(await postTo(party(), key), ["201", "true", location, body]);
  });

  test(`the Rust server replays what ${host} stored`, async () => {
    const key = randomUUID();
    const [status, replayed, location, body] = await postTo(party(), key);
    assert.deepEqual([status, replayed, location.replace(/\d+$/, "N")], ["201", "false", `/orders/${prefix}-N`]);
    assert.deepEqual(await postRust(key), ["201", "true", location, body]);
  });
}
