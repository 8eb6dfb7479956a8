// The runner of tests/conformance/idempotency.json against one database.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { formatFingerprint, IdempotencyKey, MintidError, RecordPolicy } from "../../dist/full/node.js";
import { readdirSync } from "node:fs";
import { IdempotencyStore, migrate, OperationError, pendingMigrations, StoreError } from "../../dist/full/store/pg.js";
import { faultyDatabase, sql } from "./databases.mjs";

const decoder = new TextDecoder();
const hex = (bytes) => Buffer.from(bytes).toString("hex");

/** A manual clock that advances on pause, set to each step's `now`. */
export class StepClock {
  constructor(now = 0n) {
    this.current = now;
  }
  now() {
    return this.current;
  }
  async pause(millis) {
    this.current += millis;
  }
}

export const systemClock = { now: () => BigInt(Date.now()), pause: (millis) => new Promise((resolve) => setTimeout(resolve, Number(millis))) };

export function policyOf(policy) {
  return new RecordPolicy({
    leaseMillis: BigInt(policy.lease_millis),
    retentionMillis: BigInt(policy.retention_millis),
    storeErrors: policy.store_errors,
    retryAfterMillis: BigInt(policy.retry_after_millis),
    maxWaitMillis: BigInt(policy.max_wait_millis),
    pollMillis: BigInt(policy.poll_millis),
  });
}

function responseOf(spec) {
  if ("text" in spec) return { contentType: spec.content_type, body: new TextEncoder().encode(spec.text) };
  if ("hex" in spec) return { contentType: spec.content_type, body: Buffer.from(spec.hex, "hex") };
  if ("fill" in spec) return { contentType: spec.content_type, body: Buffer.alloc(Number(spec.fill.length), Number.parseInt(spec.fill.byte, 16)) };
  throw new Error(`unknown response ${JSON.stringify(spec)}`);
}

/** A stored response in the shape of the expected one. */
function responseLike(response, expected) {
  if (response === null || expected === null || expected === undefined) return response === null ? null : { content_type: response.contentType, hex: hex(response.body) };
  if ("text" in expected) return { content_type: response.contentType, text: decoder.decode(response.body) };
  if ("hex" in expected) return { content_type: response.contentType, hex: hex(response.body) };
  const bytes = Buffer.from(response.body);
  const byte = bytes.length > 0 && bytes.every((b) => b === bytes[0]) ? hex(bytes.subarray(0, 1)) : "mixed";
  return { content_type: response.contentType, fill: { byte, length: String(bytes.length) } };
}

/** A request outcome in the vocabulary of the conformance file. */
function outcomeOf(result, expected) {
  switch (result.decision) {
    case "execute":
      return { decision: "execute", response: responseLike(result.response, expected?.response) };
    case "replay":
      return result.outcome === "succeeded"
        ? { decision: "replay", outcome: "succeeded", response: responseLike(result.response, expected?.response) }
        : { decision: "replay", outcome: "failed", error: result.error };
    case "in_progress":
      return { decision: "in_progress", problem: result.problem, retry_after_millis: String(result.retryAfterMillis) };
    default:
      return { decision: result.decision, problem: result.problem };
  }
}

/** The core's errors for an operation that ran but whose result cannot be stored. */
const RAN_ERRORS = new Set(["store.response_too_large", "store.response_not_storable", "store.not_a_response"]);

function errorOutcome(error) {
  if (error instanceof OperationError) {
    const { storeError } = error;
    if (storeError === undefined) return { decision: "execute", error: error.message };
    // An attached store error: the operation's failure was not recorded (docs/spec.md, "Which error the caller sees").
    assert.ok(storeError instanceof MintidError && /^(store|record)\./.test(storeError.code), `the attached error is not the store's: ${storeError}`);
    return { decision: "execute", error: error.message, not_recorded: true };
  }
  if (error instanceof StoreError && RAN_ERRORS.has(error.code)) return { decision: "execute", error: error.code };
  if (error instanceof MintidError) return { error: error.code, ...(error.problem === undefined ? {} : { problem: error.problem }) };
  throw error;
}

/** `actual` without `retry_after_millis` when `expected` leaves it out (an `overlap` on the system clock). */
function withoutRetryAfter(actual, expected) {
  if (actual?.decision !== "in_progress" || expected === undefined || "retry_after_millis" in expected) return actual;
  const { retry_after_millis: _, ...rest } = actual;
  return rest;
}

const KNOWN_STEP_FIELDS = new Set(["do", "expect", "way", "worker", "fingerprint", "operation", "now", "key", "key_created", "store", "response", "failure", "error", "batch_size", "workers", "keys",
  "in_forked_child", "first", "second_after_millis", "second", "lose_reply",
  "unavailable_after_operation"]);
const KNOWN_OPERATION_FIELDS = new Set(["outcome", "response", "failure", "error", "sleep_millis", "kill_connections", "outage_millis"]);

/** The statements of a completion and a renewal: away for a step with `unavailable_after_operation`. */
const COMPLETION_STATEMENTS = ["complete", "fail", "release", "renew"];

/** The workers of a case whose operation meets an outage: their stores reach the database through the case's fault. */
function outageWorkers(testCase) {
  const names = new Set();
  for (const step of testCase.steps) if (step.operation?.outage_millis !== undefined) names.add(step.worker);
  return names;
}
const KNOWN_STORES = new Set([undefined, "unavailable", "found_rows"]);

/** Runs one case on a fresh database (`db` from freshDatabase); every store reports to `options.metrics` when given. */
export async function runIdempotencyCase(testCase, db, options = {}) {
  const reporting = options.metrics === undefined ? {} : { metrics: options.metrics };
  assert.equal(testCase.op, "scenario", `unknown op ${testCase.op}`);
  const policy = policyOf(testCase.policy);
  assert.ok(["manual", "system"].includes(testCase.clock), `unknown clock ${testCase.clock}`);
  const clock = testCase.clock === "manual" ? new StepClock() : systemClock;
  const admin = db.open();
  const cut = outageWorkers(testCase);
  // The fault proxy's listener (PostgreSQL, MariaDB) or another thread's lock (SQLite).
  const outage = cut.size === 0 ? undefined : await db.outage();
  const workers = new Map();
  const workerOf = (name, storeKind) => {
    const id = `${name}/${storeKind ?? "up"}`;
    let worker = workers.get(id);
    if (worker === undefined) {
      assert.ok(KNOWN_STORES.has(storeKind), `unknown store ${storeKind}`);
      const opened = storeKind === "unavailable" ? db.unavailable() : (cut.has(name) ? outage : db).open({ foundRows: storeKind === "found_rows" });
      const database = faultyDatabase(opened);
      worker = { name, database, store: new IdempotencyStore(database, policy, { clock, ...reporting }), lease: undefined };
      workers.set(id, worker);
    }
    return worker;
  };
  const keyOf = (step) => {
    const { scope, kind, id } = step.key ?? testCase.key;
    return new IdempotencyKey(kind, scope, id);
  };
  const requestOf = (step) => ({
    fingerprint: formatFingerprint(Buffer.from(step.fingerprint, "hex")),
    ...(step.key_created === undefined ? {} : { keyCreatedMillis: BigInt(step.key_created) }),
  });
  const sideEffect = (connection, key, worker) =>
    connection.run(sql(db.dialect, "side_effect", "INSERT INTO conformance_side_effect (scope, kind, key_id, worker) VALUES (?, ?, ?, ?)", "execrows"),
      [key.scope, key.kind, key.id, worker]);
  const operationOf = (spec, key, worker, awayAfter) => async (connection) => {
    try {
      return await runOperation(spec, key, worker, connection);
    } finally {
      // `unavailable_after_operation`: from the operation's end, the completion meets no database.
      if (awayAfter) worker.database.awayFrom(COMPLETION_STATEMENTS);
    }
  };
  const runOperation = async (spec, key, worker, connection) => {
    for (const field of Object.keys(spec)) assert.ok(KNOWN_OPERATION_FIELDS.has(field), `unknown operation field ${field}`);
    if (connection === undefined) await worker.database.withConnection((c) => sideEffect(c, key, worker.name));
    else await sideEffect(connection, key, worker.name);
    if (spec.outcome === "not_a_response") return { status: 201, body: "created" };
    if (spec.outcome === "succeed") {
      if (spec.sleep_millis !== undefined) await sleep(Number(spec.sleep_millis));
      if (spec.kill_connections === true) await db.killConnections();
      // The database goes away for the completion; the operation returns at once.
      if (spec.outage_millis !== undefined) await outage.cut(Number(spec.outage_millis));
      return responseOf(spec.response);
    }
    assert.equal(spec.outcome, "fail", `unknown operation outcome ${spec.outcome}`);
    throw new OperationError(spec.error, { retryable: spec.failure === "retryable" });
  };
  const request = async (worker, way, key, incoming, spec, awayAfter = false) => {
    const operation = operationOf(spec, key, worker, awayAfter);
    if (way === "run_once") return worker.store.runOnce(key, incoming, () => operation(undefined));
    assert.equal(way, "same_transaction", `unknown way ${way}`);
    return worker.database.transaction((connection) => worker.store.inTransaction(connection, key, incoming, operation));
  };
  /** Runs `action` with the reply to the worker's first statement `name` lost (when a step names one): the fault must fire. */
  const losingReply = async (worker, name, action) => {
    if (name === undefined) return action();
    worker.database.loseReply(name);
    try {
      return await action();
    } finally {
      assert.equal(worker.database.armed(), 0, `the step ran no ${name} statement whose reply could be lost`);
    }
  };
  /** One request (`run` and each side of an `overlap`): its outcome in the file's vocabulary. */
  const runStep = async (step, expected = step.expect) => {
    const worker = workerOf(step.worker, step.store);
    assert.ok([undefined, true].includes(step.unavailable_after_operation), "unavailable_after_operation");
    const away = step.unavailable_after_operation === true;
    const warnings = [];
    const warned = (warning) => warnings.push(warning);
    process.on("warning", warned);
    try {
      const outcome = await losingReply(worker, step.lose_reply, async () => {
        try {
          const key = keyOf(step);
          return outcomeOf(await request(worker, step.way, key, requestOf(step), step.operation, away), expected);
        } catch (error) {
          return errorOutcome(error);
        }
      });
      // The store error of a failure not recorded is logged: a process warning (emitted on the next tick).
      await new Promise(setImmediate);
      const logged = warnings.some((warning) => warning.code === "MINTID_NOT_RECORDED");
      assert.equal(logged, outcome?.not_recorded === true, `a failure not recorded is logged, and only then (${warnings.map(String)})`);
      return outcome;
    } finally {
      process.off("warning", warned);
      worker.database.back();
    }
  };
  const count = async (text, params) => {
    const rows = await admin.withConnection(async (c) => (await c.run(sql(db.dialect, "count", text), params)).rows);
    return String(rows[0][0]);
  };

  try {
    for (const [index, step] of testCase.steps.entries()) {
      for (const field of Object.keys(step)) assert.ok(KNOWN_STEP_FIELDS.has(field), `step ${index}: unknown field ${field}`);
      if (step.now !== undefined && clock instanceof StepClock) clock.current = BigInt(step.now);
      const where = `step ${index} (${step.do})`;
      switch (step.do) {
        case "migrate":
          await migrate(admin);
          await admin.withConnection((c) => c.execute(db.sideEffectTable));
          assert.equal(step.expect, "ok", where);
          break;
        case "migrations": {
          // The versions applied: the dialect's, less the pending ones.
          const pending = new Set(await pendingMigrations(admin));
          // The dialect's versions: those of schema/<dialect>/NNNN_*.sql.
          const files = readdirSync(new URL(`../../../schema/${admin.dialect}/`, import.meta.url)).filter((name) => /^\d{4}_.*\.sql$/.test(name));
          const applied = files.map((name) => Number.parseInt(name.slice(0, 4), 10)).sort((a, b) => a - b).filter((version) => !pending.has(version));
          assert.deepEqual(applied.map(String), step.expect, where);
          break;
        }
        case "run":
          // `in_forked_child`: Node has no fork(), so nothing is inherited: the step runs here.
          assert.ok([undefined, true].includes(step.in_forked_child), `${where}: in_forked_child`);
          assert.deepEqual(await runStep(step), step.expect, where);
          break;
        case "overlap": {
          assert.ok(clock === systemClock, `${where}: an overlap runs on the system clock`);
          const first = runStep(step.first, step.expect.first);
          await sleep(Number(step.second_after_millis));
          const second = await runStep(step.second, step.expect.second);
          const actual = { first: await first, second: withoutRetryAfter(second, step.expect.second) };
          assert.deepEqual(actual, { first: step.expect.first, second: step.expect.second }, where);
          break;
        }
        case "renew": {
          const worker = workerOf(step.worker);
          assert.ok(worker.lease, `${where}: worker ${step.worker} holds no lease`);
          let outcome;
          try {
            await worker.lease.renew();
            outcome = { lease_deadline: String(worker.lease.leaseDeadlineMillis) };
          } catch (error) {
            if (!(error instanceof MintidError)) throw error;
            outcome = { error: error.code };
          }
          assert.deepEqual(outcome, step.expect, where);
          break;
        }
        case "claim": {
          const worker = workerOf(step.worker);
          const result = await worker.store.claimLease(keyOf(step), requestOf(step));
          if (result.decision === "execute") {
            worker.lease = result.lease;
            assert.deepEqual({ decision: "execute", token: String(result.lease.token), lease_deadline: String(result.lease.leaseDeadlineMillis) }, step.expect, where);
          } else {
            assert.deepEqual(outcomeOf(result, step.expect), step.expect, where);
          }
          break;
        }
        case "complete":
        case "fail": {
          const worker = workerOf(step.worker);
          assert.ok(worker.lease, `${where}: worker ${step.worker} holds no lease`);
          let outcome = "ok";
          await losingReply(worker, step.lose_reply, async () => {
            try {
              if (step.do === "complete") await worker.lease.complete(responseOf(step.response));
              else await worker.lease.fail(step.error, { retryable: step.failure === "retryable" });
            } catch (error) {
              if (typeof error?.code !== "string") throw error;
              outcome = { error: error.code };
            }
          });
          assert.deepEqual(outcome, step.expect, where);
          break;
        }
        case "check": {
          const stored = await new IdempotencyStore(admin, policy, { clock, ...reporting }).load(keyOf(step));
          const record = stored?.record;
          const actual = stored === null ? null : {
            status: record.status,
            fingerprint: hex(Buffer.from(record.fingerprint.text.slice("sha256:".length), "base64url")),
            token: String(record.token),
            lease_deadline: String(record.leaseDeadlineMillis),
            created: String(record.createdMillis),
            expires: String(record.expiresMillis),
            response: responseLike(stored.response, step.expect?.response),
            error: stored.error,
          };
          assert.deepEqual(actual, step.expect, where);
          break;
        }
        case "side_effects": {
          const key = keyOf(step);
          assert.equal(await count("SELECT COUNT(*) AS n FROM conformance_side_effect WHERE scope = ? AND kind = ? AND key_id = ?",
            [key.scope, key.kind, key.id]), step.expect, where);
          break;
        }
        case "records":
          assert.equal(await count("SELECT COUNT(*) AS n FROM idempotency_record", []), step.expect, where);
          break;
        case "cleanup": {
          const deleted = await new IdempotencyStore(admin, policy, { clock, ...reporting }).cleanup(Number(step.batch_size));
          assert.deepEqual({ deleted: String(deleted) }, step.expect, where);
          break;
        }
        case "concurrent":
          await runConcurrent(step, testCase, { db, policy, request, count, where, reporting });
          break;
        default:
          assert.fail(`${where}: unknown step`);
      }
    }
  } finally {
    for (const worker of workers.values()) await worker.database.close();
  }
}

async function runConcurrent(step, testCase, { db, policy, request, count, where, reporting }) {
  const workerCount = Number(step.workers);
  const keyCount = Number(step.keys);
  const workers = Array.from({ length: workerCount }, (_, index) => {
    const database = db.open();
    return { name: `w${index}`, database, store: new IdempotencyStore(database, policy, { clock: systemClock, ...reporting }) };
  });
  const keys = Array.from({ length: keyCount }, (_, index) =>
    new IdempotencyKey(testCase.key.kind, testCase.key.scope, `${testCase.key.id}-${index}`));
  const incoming = { fingerprint: formatFingerprint(Buffer.from(step.fingerprint, "hex")) };
  let executed = 0;
  const others = new Set();
  let start;
  const started = new Promise((resolve) => {
    start = resolve;
  });
  const runs = workers.map(async (worker) => {
    await started;
    for (const key of keys) {
      const result = await request(worker, step.way, key, incoming, step.operation);
      if (result.decision === "execute") executed += 1;
      else others.add(result.decision);
    }
  });
  start();
  try {
    await Promise.all(runs);
  } finally {
    for (const worker of workers) await worker.database.close();
  }
  const perKey = new Set();
  for (const key of keys) {
    perKey.add(await count("SELECT COUNT(*) AS n FROM conformance_side_effect WHERE scope = ? AND kind = ? AND key_id = ?",
      [key.scope, key.kind, key.id]));
  }
  assert.equal(String(executed), step.expect.executed, `${where}: executed`);
  assert.deepEqual([...perKey], [step.expect.side_effects_per_key], `${where}: side effects per key`);
  for (const decision of others) assert.ok(step.expect.others.includes(decision), `${where}: unexpected decision ${decision}`);
}

/** `SpanStatusCode.ERROR`. */
const SPAN_ERROR = 2;

/** An error of a request whose operation ran but whose completion failed: no completion is reported. */
const completionFailed = (expect) => typeof expect.error === "string" && /^(store|record)\./.test(expect.error);

/**
 * What the steps of `testCase` say its stores report: claims by `decision|way`, completions
 * by way, and, for a concurrent step, the claims and executions of its way.
 */
function expectedReports(testCase) {
  const claims = new Map();
  const completions = new Map();
  const add = (map, key, n = 1) => map.set(key, (map.get(key) ?? 0) + n);
  // A claim of the lease way is completed by its own step.
  const request = (way, expect) => {
    if (typeof expect !== "object" || expect === null || expect.decision === undefined) return; // refused before the store
    add(claims, `${expect.decision}|${way}`);
    if (expect.decision === "execute" && way !== "lease" && !completionFailed(expect)) add(completions, way);
  };
  const concurrent = [];
  for (const step of testCase.steps) {
    if (step.do === "run") request(step.way, step.expect);
    else if (step.do === "overlap") {
      request(step.first.way, step.expect.first);
      request(step.second.way, step.expect.second);
    } else if (step.do === "claim") request("lease", step.expect);
    else if ((step.do === "complete" || step.do === "fail") && step.expect === "ok") add(completions, "lease");
    else if (step.do === "concurrent") concurrent.push(step);
  }
  return { claims, completions, concurrent };
}

/**
 * Checks what `recorder` (test/store/otel.mjs) got from the stores of one case: the claims
 * and completions the steps expect, by decision and way, one `mintid.claim` span per claim
 * and one `mintid.complete` per completion, and spans with no attribute but `way` and
 * `decision`; an unreachable database counts `connection_lost`.
 */
export async function checkIdempotencyReports(testCase, recorder) {
  const points = await recorder.points();
  const { claims, completions, concurrent } = expectedReports(testCase);
  const actual = new Map();
  let claimCount = 0;
  for (const [key, value] of points) {
    const match = /^mintid\.record\.decisions\{decision=([a-z_]+),way=([a-z_]+)\}$/.exec(key);
    if (match) {
      actual.set(`${match[1]}|${match[2]}`, value);
      claimCount += value;
    }
  }
  let completionCount = 0;
  for (const way of ["run_once", "same_transaction", "lease"]) {
    const claimed = points.get(`mintid.record.claim.duration{way=${way}}`)?.count ?? 0;
    const decided = [...actual].filter(([key]) => key.endsWith(`|${way}`)).reduce((sum, [, n]) => sum + n, 0);
    assert.equal(claimed, decided, `claim times of ${way}`);
    completionCount += points.get(`mintid.record.complete.duration{way=${way}}`)?.count ?? 0;
  }
  if (concurrent.length === 0) {
    assert.deepEqual(Object.fromEntries([...actual].sort()), Object.fromEntries([...claims].sort()), "claims by decision|way");
    for (const way of ["run_once", "same_transaction", "lease"]) {
      assert.equal(points.get(`mintid.record.complete.duration{way=${way}}`)?.count ?? 0, completions.get(way) ?? 0, `completions of ${way}`);
    }
  } else {
    for (const step of concurrent) {
      const all = Number(step.workers) * Number(step.keys);
      const executed = Number(step.expect.executed);
      assert.equal(actual.get(`execute|${step.way}`), executed, "concurrent executions");
      const others = [...actual].filter(([key]) => key.endsWith(`|${step.way}`) && !key.startsWith("execute|"));
      for (const [key] of others) assert.ok(step.expect.others.includes(key.split("|")[0]), `concurrent: ${key}`);
      assert.equal(others.reduce((sum, [, n]) => sum + n, 0), all - executed, "concurrent duplicates");
      assert.equal(points.get(`mintid.record.complete.duration{way=${step.way}}`)?.count, executed, "concurrent completions");
    }
  }
  const spans = recorder.spans();
  // A span whose step threw ends with the error status (and no message); only the others are reported as metrics.
  const named = (name) => spans.filter((span) => span.name === name && span.status.code !== SPAN_ERROR);
  assert.equal(named("mintid.claim").length, claimCount, "claim spans");
  assert.equal(named("mintid.complete").length, completionCount, "complete spans");
  for (const span of spans) if (span.status.code === SPAN_ERROR) assert.equal(span.status.message, undefined, "an error span's status has no message");
  for (const span of spans) {
    assert.ok(["mintid.claim", "mintid.operation", "mintid.complete"].includes(span.name), span.name);
    const allowed = span.name === "mintid.operation" ? ["way"] : ["way", "decision"];
    for (const attribute of Object.keys(span.attributes)) assert.ok(allowed.includes(attribute), `${span.name} carries ${attribute}`);
    assert.ok(["run_once", "same_transaction", "lease"].includes(span.attributes.way), `${span.name} way ${span.attributes.way}`);
  }
  for (const span of named("mintid.claim")) assert.equal(typeof span.attributes.decision, "string", "a claim span names its decision");
  // A connection killed while idle in the pool may be replaced before a statement meets it: test/metrics.test.mjs kills one in use.
  if (testCase.steps.some((step) => step.store === "unavailable")) assert.ok((points.get("mintid.store.errors{class=connection_lost}") ?? 0) >= 1, "an unreachable database is a connection_lost store error");
}
