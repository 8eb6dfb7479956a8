// `make bench-js` (second part): the JS stores on SQLite (better-sqlite3, a WAL file) and
// PostgreSQL (pg) — and MariaDB (mysql2) when its variables are set — run under
// scripts/db/with-db.sh. Per database: run-once claim + complete of fresh keys (one
// client, then 8 concurrent clients, each with its own connection), a replay, segment IDs
// per second next to a Snowflake, a worker-id lease acquisition + release, and an outbox
// relayed by 4 relays. Each run-once figure has its floor beside it: the same two statements
// with fixed values through the same executor, with as many clients. Each figure is measured
// for about DURATION_MS.
import { Snowflake, fingerprint, IdempotencyKey, LeasePolicy, RecordPolicy, RelayPolicy, SegmentPolicy } from "mintid";
import { IdempotencyStore, migrate, Outbox, SegmentIds, WorkerLeases } from "mintid/store/sqlite";
import { dialects, freshDatabase } from "../test/store/databases.mjs";

const DURATION_MS = Number(process.env.MINTID_BENCH_MS ?? 2000);
const POLICY = new RecordPolicy({ leaseMillis: 60_000, retentionMillis: 86_400_000 });
const REQUEST = { fingerprint: fingerprint({ order: "A-1001", amount: 12.5 }) };
const RESPONSE = { contentType: "application/json", body: new TextEncoder().encode('{"order":"A-1001","state":"created"}') };
let keySerial = 0;
const freshKey = () => new IdempotencyKey("order.create", "tenant-1", `k-${process.pid}-${(keySerial += 1)}`);

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Runs `op` on `clients` concurrent loops for DURATION_MS; ops/s and latency quantiles (ms). */
async function measure(clients, op) {
  const latencies = [];
  const start = performance.now();
  const end = start + DURATION_MS;
  await Promise.all(clients.map(async (client) => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await op(client);
      latencies.push(performance.now() - t0);
    }
  }));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { ops: latencies.length / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const row = (what, { ops, p50, p99 }) =>
  console.log(`| ${what} | ${ops.toFixed(0)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} |`);

async function benchDialect(dialect) {
  const db = await freshDatabase(dialect);
  try {
    const admin = db.open();
    await migrate(admin);
    const stores = (n) => Array.from({ length: n }, () => new IdempotencyStore(db.open(), POLICY));
    const runOnce = (store) => store.runOnce(freshKey(), REQUEST, async () => RESPONSE);
    console.log(`\n${dialect}\n\n| operation | ops/s | p50 ms | p99 ms |\n|---|---:|---:|---:|`);
    const [single] = stores(1);
    await measure([single], runOnce); // warm-up
    row("run once, fresh key (claim + complete), 1 client", await measure([single], runOnce));
    // The floor: the same two statements with fixed values, no core decisions, no load.
    const claim = single.database.statement("claim");
    const complete = single.database.statement("complete");
    const fp = new Uint8Array(32);
    const floor = async (database) => {
      const key = freshKey();
      const now = BigInt(Date.now());
      const values = { scope: key.scope, kind: key.kind, key_id: key.id, fencing_token: 1n, created_millis: now, now_millis: now, fingerprint: fp, lease_deadline_millis: now + 60_000n, expires_millis: now + 86_400_000n, response_body: RESPONSE.body, response_content_type: RESPONSE.contentType };
      const bind = (statement) => statement.params.map((name) => values[name]);
      await database.withConnection((c) => c.run(claim, bind(claim)));
      await database.withConnection((c) => c.run(complete, bind(complete)));
    };
    row("floor: the claim and complete statements alone, 1 client", await measure([single.database], floor));
    row("run once, fresh key, 8 clients", await measure(stores(8), runOnce));
    row("floor: the claim and complete statements alone, 8 clients", await measure(stores(8).map((store) => store.database), floor));
    const replayed = freshKey();
    await runOnce(single).catch(() => {});
    await single.runOnce(replayed, REQUEST, async () => RESPONSE);
    row("run once, replay, 1 client", await measure([single], (store) => store.runOnce(replayed, REQUEST, async () => RESPONSE)));

    const leases = new WorkerLeases(admin, new LeasePolicy({ layout: "classic" }));
    row("worker-id lease acquire + release", await measure([leases], async (l) => {
      const guard = await l.acquire("bench");
      await l.release(guard, BigInt(Date.now()));
    }));

    const relayPolicy = new RelayPolicy({ batchSize: 100, claimMillis: 60_000 });
    const outbox = new Outbox(admin, relayPolicy);
    const messages = 2000;
    for (let n = 0; n < messages; n += 100) {
      await admin.transaction(async (connection) => {
        for (let m = n; m < n + 100; m += 1) {
          await outbox.enqueue(connection, { messageId: BigInt(m + 1), kind: "order.created", businessKey: `o-${m}`, payload: RESPONSE.body });
        }
      });
    }
    const t0 = performance.now();
    const relays = Array.from({ length: 4 }, () => new Outbox(db.open(), relayPolicy));
    const sent = (await Promise.all(relays.map((relay) => relay.relay(async () => {})))).reduce((total, report) => total + report.sent, 0);
    console.log(`| outbox relay, 4 relays, batches of 100 (messages/s) | ${(sent / ((performance.now() - t0) / 1000)).toFixed(0)} | | |`);

    const segments = new SegmentIds(db.open(), "bench", new SegmentPolicy({ initialStep: 10_000, minStep: 1000, maxStep: 1_000_000 }));
    const snowflake = new Snowflake({ worker: 1 });
    const perId = async (what, count, loop) => {
      const start = performance.now();
      await loop(count);
      console.log(`| ${what}: ns per ID | ${(((performance.now() - start) * 1e6) / count).toFixed(0)} | | |`);
    };
    await perId("segment ID, `await nextId()`", 200_000, async (count) => {
      for (let n = 0; n < count; n += 1) await segments.nextId();
    });
    await perId("segment ID, `nextIdNow() ?? await nextId()`", 1_000_000, async (count) => {
      for (let n = 0; n < count; n += 1) segments.nextIdNow() ?? (await segments.nextId());
    });
    await perId("Snowflake.nextId(), classic layout (same run)", 1_000_000, async (count) => {
      for (let n = 0; n < count; n += 1) snowflake.nextId();
    });
    await segments.settled();
  } finally {
    await db.close();
  }
}

for (const { dialect, skip } of dialects()) {
  if (skip) console.log(`\n${dialect}: skipped (${skip})`);
  else await benchDialect(dialect);
}
