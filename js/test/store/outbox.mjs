// The runner of tests/conformance/outbox.json against one database.
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { RelayPolicy } from "../../dist/full/node.js";
import { migrate, Outbox } from "../../dist/full/store/pg.js";
import { faultyDatabase } from "./databases.mjs";
import { StepClock, systemClock } from "./idempotency.mjs";

function policyOf(spec) {
  return new RelayPolicy({
    batchSize: BigInt(spec.batch_size),
    claimMillis: BigInt(spec.claim_millis),
    baseBackoffMillis: BigInt(spec.base_backoff_millis),
    maxBackoffMillis: BigInt(spec.max_backoff_millis),
    jitterPercent: spec.jitter_percent,
    maxAttempts: BigInt(spec.max_attempts),
  });
}

const encoder = new TextEncoder();
const ROLLBACK = Symbol("rollback");
const KNOWN_STEP_FIELDS = new Set(["do", "expect", "way", "message_id", "kind", "business_key", "payload", "now", "store", "relay", "draw", "sends", "sent_before", "batch_size", "messages", "relays", "send_millis", "second_after_millis", "lose_reply"]);
const KNOWN_SEND_FIELDS = new Set(["message_id", "outcome", "millis", "during", "mark_fails"]);
/** The outbox's marks, one after each send. */
const isMark = (name) => name.startsWith("outbox_mark_");

/** Enqueues in a business transaction that commits or rolls back; a store error as `{ error: code }`. */
async function enqueueIn(database, outbox, message, way) {
  assert.ok(way === "commit" || way === "rollback", `unknown way ${way}`);
  let result;
  try {
    await database.transaction(async (connection) => {
      result = await outbox.enqueue(connection, message);
      if (way === "rollback") throw ROLLBACK;
    });
  } catch (error) {
    if (error === ROLLBACK) return result;
    if (typeof error?.code !== "string") throw error;
    return { error: error.code };
  }
  return result;
}

function errorText(spec) {
  if (typeof spec === "string") return spec;
  assert.deepEqual(Object.keys(spec), ["fill"], `unknown error text ${JSON.stringify(spec)}`);
  return spec.fill.text.repeat(Number(spec.fill.length));
}

function reportOf(report) {
  return {
    sent: String(report.sent),
    retried: String(report.retried),
    dead: String(report.dead),
    given_up: String(report.givenUp),
    claim_lost: String(report.claimLost),
    released: String(report.released),
    mark_failed: String(report.markFailed),
  };
}

async function enqueueMany(admin, policy, count) {
  const live = new Outbox(admin, policy);
  for (let n = 1; n <= count; n += 1) {
    await enqueueIn(admin, live, { messageId: BigInt(n), kind: "order.created", businessKey: `order-${n}`, payload: encoder.encode("{}") }, "commit");
  }
}

function sentCounts(sends) {
  const twice = [...sends.values()].filter((n) => n > 1).length;
  return { sent: String(sends.size), sent_twice: String(twice) };
}

export async function runOutboxCase(testCase, db) {
  assert.equal(testCase.op, "scenario", `unknown op ${testCase.op}`);
  const policy = policyOf(testCase.policy);
  assert.ok(["manual", "system"].includes(testCase.clock), `unknown clock ${testCase.clock}`);
  const clock = testCase.clock === "manual" ? new StepClock() : systemClock;
  const admin = db.open();
  const outbox = new Outbox(admin, policy, { clock });
  const foundRowsDb = db.open({ foundRows: true });
  const foundRows = new Outbox(foundRowsDb, policy, { clock });

  const relay = async (step) => {
    const script = [...step.sends];
    const own = faultyDatabase(db.open());
    if (step.lose_reply !== undefined) {
      assert.ok(isMark(step.lose_reply), `lose_reply names no mark: ${step.lose_reply}`);
      own.loseReply(step.lose_reply);
    }
    const relayOutbox = new Outbox(own, policy, { clock, draw: () => BigInt(step.draw) });
    const send = async (message) => {
      assert.ok(script.length > 0, `an unscripted send of message ${message.messageId}`);
      const entry = script.shift();
      for (const field of Object.keys(entry)) assert.ok(KNOWN_SEND_FIELDS.has(field), `unknown send field ${field}`);
      assert.equal(String(message.messageId), entry.message_id, "the send order");
      const start = clock.current;
      for (const inner of entry.during ?? []) await run(inner);
      clock.current = start + BigInt(entry.millis);
      // The mark after this call fails, unrun.
      if (entry.mark_fails !== undefined) own.failNext(isMark, entry.mark_fails);
      if (entry.outcome === "delivered") return;
      assert.deepEqual(Object.keys(entry.outcome), ["failed"], `unknown outcome ${JSON.stringify(entry.outcome)}`);
      throw new Error(errorText(entry.outcome.failed));
    };
    const report = await relayOutbox.relay(send);
    assert.deepEqual(script, [], "scripted sends never made");
    assert.equal(own.armed(), 0, "a mark the step names never ran");
    return reportOf(report);
  };

  const run = async (step) => {
    for (const field of Object.keys(step)) assert.ok(KNOWN_STEP_FIELDS.has(field), `unknown field ${field}`);
    const where = `${step.do} ${step.relay ?? ""}`;
    if (step.now !== undefined && clock instanceof StepClock) clock.current = BigInt(step.now);
    switch (step.do) {
      case "migrate":
        await migrate(admin);
        assert.equal(step.expect, "ok", where);
        break;
      case "enqueue": {
        assert.ok(step.store === undefined || step.store === "found_rows", `unknown store ${step.store}`);
        const message = { messageId: BigInt(step.message_id), kind: step.kind, businessKey: step.business_key, payload: encoder.encode(step.payload) };
        const [database, store] = step.store === "found_rows" ? [foundRowsDb, foundRows] : [admin, outbox];
        assert.deepEqual(await enqueueIn(database, store, message, step.way), step.expect, where);
        break;
      }
      case "relay":
        assert.deepEqual(await relay(step), step.expect, where);
        break;
      case "message": {
        const stored = await outbox.load(step.kind, step.business_key);
        const actual = stored === null ? null : {
          status: stored.status,
          attempts: String(stored.attempts),
          next_attempt: String(stored.nextAttemptMillis),
          last_error: stored.lastError,
        };
        assert.deepEqual(actual, step.expect, where);
        break;
      }
      case "cleanup": {
        const deleted = await outbox.cleanup(BigInt(step.sent_before), Number(step.batch_size));
        assert.deepEqual({ deleted: String(deleted) }, step.expect, where);
        break;
      }
      case "concurrent_relays": {
        await enqueueMany(admin, policy, Number(step.messages));
        const sends = new Map();
        const send = async (message) => {
          sends.set(message.messageId, (sends.get(message.messageId) ?? 0) + 1);
          await new Promise((resolve) => setImmediate(resolve));
        };
        const outboxes = Array.from({ length: Number(step.relays) }, () => new Outbox(db.open(), policy));
        await Promise.all(outboxes.map((each) => each.relay(send)));
        assert.deepEqual(sentCounts(sends), step.expect, where);
        break;
      }
      case "slow_relays": {
        await enqueueMany(admin, policy, Number(step.messages));
        const sends = new Map();
        const send = async (message) => {
          await sleep(Number(step.send_millis));
          sends.set(message.messageId, (sends.get(message.messageId) ?? 0) + 1);
        };
        const first = new Outbox(db.open(), policy).relay(send);
        await sleep(Number(step.second_after_millis));
        const second = new Outbox(db.open(), policy).relay(send);
        await Promise.all([first, second]);
        assert.deepEqual(sentCounts(sends), step.expect, where);
        break;
      }
      default:
        assert.fail(`${where}: unknown step`);
    }
  };
  for (const step of testCase.steps) await run(step);
}
