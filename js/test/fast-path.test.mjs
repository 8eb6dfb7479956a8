// The Redis fast path (RedisFastPath) on the real Redis Cluster of scripts/db/with-db.sh
// (MINTID_REDIS_CLUSTER) in front of SQLite, PostgreSQL and MariaDB, through ioredis's
// Cluster: the cases of tests/redis/fast_path.json, the scripts flushed and the entries
// flushed on every primary, and the fault tests (a primary killed, a primary asleep) with 32
// workers racing on 100 keys, on PostgreSQL.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Cluster, Redis } from "ioredis";
import { fingerprint, IdempotencyKey, RecordPolicy } from "mintid";
import { IdempotencyStore, migrate, OperationError, RedisFastPath } from "mintid/store/sqlite";
import { dialects, freshDatabase } from "./store/databases.mjs";

const ROOT = new URL("../../", import.meta.url);
const CASES = JSON.parse(readFileSync(new URL("tests/redis/fast_path.json", ROOT), "utf8")).cases;
const NODE_SCRIPT = new URL("scripts/db/redis-node.sh", ROOT).pathname;
// The fault tests' command and connect timeout (ms): well under a request's, so a paused or
// killed primary falls back to the database at once.
const TIMEOUT = 200;
// The shared cases' timeout (ms): they count hits, misses and fallbacks exactly, so a Redis
// that is only slow on a loaded machine must not turn a miss into a fallback.
const CASE_TIMEOUT = 2000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function clusterSkip() {
  if (process.env.MINTID_REDIS_CLUSTER) return undefined;
  if (process.env.CI === "true") throw new Error("MINTID_REDIS_CLUSTER must be set under CI=true");
  return "MINTID_REDIS_CLUSTER not set (run under scripts/db/with-db.sh)";
}

function nodes() {
  return (process.env.MINTID_REDIS_CLUSTER ?? "").split(",").map((node) => {
    const at = node.lastIndexOf(":");
    return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
  });
}

/** A Cluster client as an application should make it for the fast path: short timeouts, no retries, no offline queue. */
async function cluster(timeout = TIMEOUT) {
  const client = new Cluster(nodes(), {
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 0,
    redisOptions: { commandTimeout: timeout, connectTimeout: timeout, maxRetriesPerRequest: 0 },
  });
  client.on("error", () => {});
  if (client.status !== "ready") await new Promise((resolve, reject) => client.once("ready", resolve).once("end", reject));
  return client;
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A client whose Redis is unreachable (a free port, no retries). */
async function unreachable() {
  const client = new Redis({ host: "127.0.0.1", port: await freePort(), commandTimeout: TIMEOUT, connectTimeout: TIMEOUT, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  client.on("error", () => {});
  return client;
}

/** One node of the cluster, for the test's own commands. */
function node(port, timeout = 5000) {
  const client = new Redis({ host: "127.0.0.1", port, commandTimeout: timeout, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => {});
  return client;
}

const request = (payload) => ({ fingerprint: fingerprint({ payload }) });
const text = (body) => ({ contentType: "text/plain", body: encoder.encode(body) });
const scopeOf = (prefix) => `${prefix}${Math.random().toString(16).slice(2, 14)}`;

/** A store with the fast path on a case's fresh database. */
async function made(dialect, policy, { down = false, poolSize = 1, timeout = TIMEOUT } = {}) {
  const db = await freshDatabase(dialect, { poolSize });
  const database = db.open();
  await migrate(database);
  const client = down ? await unreachable() : await cluster(timeout);
  const fast = new RedisFastPath(client, {});
  return {
    store: new IdempotencyStore(database, policy, { fastPath: fast }),
    fast,
    db,
    close: async () => {
      client.disconnect();
      await db.close();
    },
  };
}

/** Runs `command` on every primary (the topology as it is now, after the fault tests); their replies. */
async function onPrimaries(command) {
  const client = await cluster();
  try {
    return await Promise.all(client.nodes("master").map((primary) => command(primary)));
  } finally {
    client.disconnect();
  }
}

const flush = () => onPrimaries((primary) => primary.flushall());

const skipRedis = clusterSkip();

for (const { dialect, skip } of dialects()) {
  describe(`the fast path's cases on ${dialect}`, { skip: skip ?? skipRedis }, () => {
    for (const testCase of CASES) {
      test(testCase.name, async () => {
        const { store, fast, close } = await made(dialect, new RecordPolicy(), { down: testCase.redis === "down", timeout: CASE_TIMEOUT });
        const scope = scopeOf("s");
        let lease;
        try {
          for (const step of testCase.steps) {
            if (step.do === "run") {
              let ran = false;
              const operation = async () => {
                ran = true;
                if ("fail" in step) throw new OperationError(step.fail, { retryable: step.retryable ?? false });
                return text(step.respond);
              };
              let result;
              let decision;
              try {
                result = await store.runOnce(new IdempotencyKey("order", scope, step.key), request(step.payload), operation);
                decision = result.decision;
              } catch (error) {
                if (!(error instanceof OperationError)) throw error;
                decision = "operation_failed";
              }
              assert.equal(decision, step.expect, JSON.stringify(step));
              assert.equal(ran, step.ran, JSON.stringify(step));
              if ("text" in step) assert.equal(decoder.decode(result.response.body), step.text);
              if ("error" in step) assert.equal(result.error, step.error);
            } else if (step.do === "lease") {
              const claimed = await store.claimLease(new IdempotencyKey("order", scope, step.key), request(step.payload));
              if (claimed.decision === "execute") {
                assert.equal(step.expect, "lease", JSON.stringify(step));
                lease = claimed.lease;
              } else {
                assert.equal(claimed.decision, step.expect, JSON.stringify(step));
              }
            } else if (step.do === "complete") {
              await lease.complete(text(step.text));
            } else if (step.do === "flush") {
              await flush();
            } else if (step.do === "flush_scripts") {
              await onPrimaries((primary) => primary.script("FLUSH"));
            } else if (step.do === "metrics") {
              const { hits, misses, fallbacks } = fast.metrics;
              assert.deepEqual({ hits, misses, fallbacks }, step.expect, testCase.name);
            } else {
              throw new Error(`unknown step ${step.do}`);
            }
          }
        } finally {
          await close();
        }
      });
    }
  });
}

/** The SHA-1 of each of the core's scripts (schema/redis/*.lua), as EVALSHA names them. */
const SHAS = ["check", "settle", "forget"].map((name) => createHash("sha1").update(readFileSync(new URL(`schema/redis/${name}.lua`, ROOT))).digest("hex"));

/** A store hook that counts the fast path's lookups and failed writes, and the claims reported (every request, a hit from Redis included). */
function counting() {
  const counts = { lookups: {}, writeFailures: 0, claims: 0 };
  return {
    counts,
    metrics: {
      fastPathLookup: (verdict) => {
        counts.lookups[verdict] = (counts.lookups[verdict] ?? 0) + 1;
      },
      fastPathWriteFailed: () => {
        counts.writeFailures += 1;
      },
      claimed: () => {
        counts.claims += 1;
      },
    },
  };
}

for (const { dialect, skip } of dialects()) {
  describe(`the fast path after a flush on ${dialect}`, { skip: skip ?? skipRedis }, () => {
    test("after SCRIPT FLUSH on every primary, requests are sent again by EVAL: no fallback, no failed write", async () => {
      const { store, db, close } = await made(dialect, new RecordPolicy(), { timeout: CASE_TIMEOUT });
      const { counts, metrics } = counting();
      const client = await cluster(CASE_TIMEOUT);
      const fast = new RedisFastPath(client);
      const flushed = new IdempotencyStore(db.open(), new RecordPolicy(), { fastPath: fast, metrics });
      const scope = scopeOf("n");
      const run = (name, body) => flushed.runOnce(new IdempotencyKey("order", scope, name), request(name), async () => text(body));
      try {
        assert.equal((await store.runOnce(new IdempotencyKey("order", scope, "k1"), request("k1"), async () => text("r1"))).decision, "execute");
        await onPrimaries((primary) => primary.script("FLUSH"));
        for (const exists of await onPrimaries((primary) => primary.script("EXISTS", ...SHAS))) assert.deepEqual(exists, [0, 0, 0]);
        const replay = await run("k1", "other");
        assert.equal(replay.decision, "replay");
        assert.equal(decoder.decode(replay.response.body), "r1");
        assert.equal((await run("k2", "r2")).decision, "execute");
        const again = await run("k2", "other");
        assert.equal(again.decision, "replay");
        assert.equal(decoder.decode(again.response.body), "r2");
        assert.deepEqual(fast.metrics, { hits: 2, misses: 1, fallbacks: 0, writeFailures: 0 });
        assert.deepEqual(counts, { lookups: { hit: 2, miss: 1 }, writeFailures: 0, claims: 3 });
        // Only EVAL loads a script: the nodes the requests reached have them again.
        const loaded = (await onPrimaries((primary) => primary.script("EXISTS", ...SHAS))).filter((exists) => exists[0] === 1);
        assert.ok(loaded.length > 0, "no primary got the check script back");
      } finally {
        client.disconnect();
        await close();
      }
    });

    test("after FLUSHALL on every primary, a duplicate replays from the database and is written back", async () => {
      const { store, db, close } = await made(dialect, new RecordPolicy(), { timeout: CASE_TIMEOUT });
      const { counts, metrics } = counting();
      const client = await cluster(CASE_TIMEOUT);
      const fast = new RedisFastPath(client);
      const key = new IdempotencyKey("order", scopeOf("w"), "k1");
      const replayed = async (database) => {
        const result = await new IdempotencyStore(database, new RecordPolicy(), { fastPath: fast, metrics }).runOnce(key, request("k1"), async () => text("other"));
        assert.equal(result.decision, "replay");
        assert.equal(decoder.decode(result.response.body), "r1");
      };
      try {
        assert.equal((await store.runOnce(key, request("k1"), async () => text("r1"))).decision, "execute");
        await flush();
        await replayed(db.open());
        assert.deepEqual(fast.metrics, { hits: 0, misses: 1, fallbacks: 0, writeFailures: 0 });
        // Written back: the next duplicate is answered by Redis, its database down.
        await replayed(db.unavailable());
        assert.deepEqual(fast.metrics, { hits: 1, misses: 1, fallbacks: 0, writeFailures: 0 });
        assert.deepEqual(counts, { lookups: { hit: 1, miss: 1 }, writeFailures: 0, claims: 2 });
      } finally {
        client.disconnect();
        await close();
      }
    });
  });
}

async function roles() {
  return Promise.all(
    nodes().map(async ({ port }) => {
      const client = node(port, 1000);
      try {
        const cluster = String(await client.cluster("INFO"));
        const replication = String(await client.info("replication"));
        const primary = replication.includes("role:master");
        // A replica that has not synced with its primary yet cannot take over from it.
        return { port, ok: cluster.includes("cluster_state:ok") && (primary || replication.includes("master_link_status:up")), primary };
      } catch {
        return undefined;
      } finally {
        client.disconnect();
      }
    }),
  );
}

async function primaryPorts() {
  return (await roles()).filter((role) => role?.primary).map((role) => role.port);
}

/** `count` nodes up, each saying the cluster is ok (a replica: in sync), three of them primaries. */
async function waitHealthy(count, deadlineMillis = 10_000) {
  const end = Date.now() + deadlineMillis;
  let up = [];
  while (Date.now() < end) {
    up = (await roles()).filter((role) => role !== undefined);
    if (up.length === count && up.every((role) => role.ok) && up.filter((role) => role.primary).length === 3) return;
    await sleep(50);
  }
  throw new Error(`the Redis Cluster did not come back: ${JSON.stringify(up)}`);
}

/** The nodes killed, to start again. */
const killed = [];

async function kill(port) {
  const client = node(port);
  const info = String(await client.info("server"));
  const [, dir] = await client.config("GET", "dir");
  client.disconnect();
  process.kill(Number(/process_id:(\d+)/.exec(info)[1]), "SIGKILL");
  killed.push({ port, dir });
}

function restart() {
  while (killed.length > 0) {
    const { port, dir } = killed.pop();
    execFileSync(NODE_SCRIPT, [String(port), dir]);
  }
}

async function asleep(port) {
  const client = node(port);
  try {
    await client.call("DEBUG", "SLEEP", "1.2");
  } finally {
    client.disconnect();
  }
}

/**
 * 32 workers race on rounds of 100 fresh keys (each worker on 20 of them) for about two
 * seconds while `fault` strikes a primary: every key's operation runs exactly once, every
 * duplicate gets the stored response or `in_progress`, nothing is lost.
 */
async function race(fault) {
  await waitHealthy(6);
  const { store, fast, close } = await made("postgres", new RecordPolicy({ leaseMillis: 2000 }), { poolSize: 8 });
  const scope = scopeOf("f");
  const effects = new Map();
  const problems = [];
  const operation = (name) => async () => {
    effects.set(name, (effects.get(name) ?? 0) + 1);
    return text(`done ${name}`);
  };
  const worker = async (names) => {
    const mine = [...names].sort(() => Math.random() - 0.5).slice(0, 20);
    for (const name of mine) {
      try {
        const result = await store.runOnce(new IdempotencyKey("order", scope, name), request(name), operation(name));
        if (result.decision === "replay" && decoder.decode(result.response.body) !== `done ${name}`) problems.push(`${name}: replayed ${decoder.decode(result.response.body)}`);
        else if (!["execute", "replay", "in_progress"].includes(result.decision)) problems.push(`${name}: ${result.decision}`);
      } catch (error) {
        problems.push(`${name}: ${error}`);
      }
    }
  };
  try {
    const all = [];
    let struck;
    const deadline = Date.now() + 2000;
    for (let round = 0; Date.now() < deadline; round += 1) {
      const names = Array.from({ length: 100 }, (_, n) => `r${round}-${n}`);
      all.push(...names);
      const workers = Array.from({ length: 32 }, () => worker(names));
      if (round === 0) {
        const ports = await primaryPorts();
        struck = fault(ports[Math.floor(Math.random() * ports.length)]);
      }
      await Promise.all(workers);
    }
    await struck;
    assert.deepEqual(problems, []);
    assert.ok(all.every((name) => (effects.get(name) ?? 0) <= 1), "a side effect ran twice");
    // Nothing lost: a key nobody saw run is one whose every request was in progress; its
    // next request runs it, and every key replays its one response. A claiming marker whose
    // forget or settle was lost to the fault answers in progress until its lease-long life
    // ends (docs/spec.md, "The fast path").
    const giveUp = Date.now() + 4000;
    for (const name of all) {
      const key = new IdempotencyKey("order", scope, name);
      let result = await store.runOnce(key, request(name), operation(name));
      while (result.decision === "in_progress" && Date.now() < giveUp) {
        await sleep(100);
        result = await store.runOnce(key, request(name), operation(name));
      }
      assert.ok(["replay", "execute"].includes(result.decision), name);
      assert.equal(decoder.decode(result.response.body), `done ${name}`);
    }
    assert.ok(all.every((name) => effects.get(name) === 1));
    const { hits, fallbacks } = fast.metrics;
    assert.ok(hits > 0, "nothing was answered from Redis");
    assert.ok(fallbacks > 0, "the fault never reached a request");
  } finally {
    await close();
  }
}

// The fault tests run on PostgreSQL only, to stay within the suite's budget: what they test
// is Redis's failure, and the database's part is the same driver on every dialect (the cases
// above run on all three).
const postgres = dialects().find((entry) => entry.dialect === "postgres");
describe("the fast path under faults on postgres", { skip: postgres.skip ?? skipRedis }, () => {
  after(() => restart());

  test("a primary killed mid-run", async () => {
    try {
      await race(kill);
    } finally {
      await waitHealthy(6 - killed.length);
      restart();
      await waitHealthy(6);
    }
  });

  test("a primary asleep mid-run", async () => {
    try {
      await race(asleep);
    } finally {
      await waitHealthy(6);
    }
  });
});
