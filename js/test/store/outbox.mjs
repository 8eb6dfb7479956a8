// The runner of tests/conformance/outbox.json against one database.
import assert from "node:assert/strict";
import { RelayPolicy } from "../../dist/full/node.js";
import { migrate, Outbox } from "../../dist/full/store/pg.js";
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
const KNOWN_STEP_FIELDS = new Set(["do", "expect", "way", "message_id", "kind", "business_key", "payload", "now", "relay", "draw", "outcome", "sent_before", "batch_size", "messages", "relays"]);

/** Enqueues in a business transaction that commits or rolls back. */
async function enqueueIn(database, outbox, message, way) {
  assert.ok(way === "commit" || way === "rollback", `unknown way ${way}`);
  let result;
  try {
    await database.transaction(async (connection) => {
      result = await outbox.enqueue(connection, message);
      if (way === "rollback") throw ROLLBACK;
    });
  } catch (error) {
    if (error !== ROLLBACK) throw error;
  }
  return result;
}

export async function runOutboxCase(testCase, db) {
  assert.equal(testCase.op, "scenario", `unknown op ${testCase.op}`);
  const policy = policyOf(testCase.policy);
  assert.ok(["manual", "system"].includes(testCase.clock), `unknown clock ${testCase.clock}`);
  const clock = testCase.clock === "manual" ? new StepClock() : systemClock;
  const admin = db.open();
  const outbox = new Outbox(admin, policy, { clock });
  const relays = new Map();
  const relayOf = (name) => {
    let relay = relays.get(name);
    if (relay === undefined) {
      relay = { outbox: new Outbox(db.open(), policy, { clock }), batch: undefined };
      relays.set(name, relay);
    }
    return relay;
  };
  for (const [index, step] of testCase.steps.entries()) {
    for (const field of Object.keys(step)) assert.ok(KNOWN_STEP_FIELDS.has(field), `step ${index}: unknown field ${field}`);
    const where = `step ${index} (${step.do})`;
    if (step.now !== undefined && clock instanceof StepClock) clock.current = BigInt(step.now);
    switch (step.do) {
      case "migrate":
        await migrate(admin);
        assert.equal(step.expect, "ok", where);
        break;
      case "enqueue": {
        const message = { messageId: BigInt(step.message_id), kind: step.kind, businessKey: step.business_key, payload: encoder.encode(step.payload) };
        assert.equal(await enqueueIn(admin, outbox, message, step.way), step.expect, where);
        break;
      }
      case "claim": {
        const relay = relayOf(step.relay);
        relay.batch = await relay.outbox.claim(BigInt(step.draw));
        assert.deepEqual(relay.batch.messages.map((m) => String(m.messageId)), step.expect, where);
        break;
      }
      case "send": {
        const relay = relayOf(step.relay);
        const message = relay.batch?.messages.find((m) => String(m.messageId) === step.message_id);
        assert.ok(message, `${where}: relay ${step.relay} did not claim message ${step.message_id}`);
        const failed = step.outcome === "delivered" ? undefined : step.outcome.failed;
        assert.ok(step.outcome === "delivered" || typeof failed === "string", `${where}: unknown outcome`);
        const send = async () => {
          if (failed !== undefined) throw new Error(failed);
        };
        let actual;
        try {
          const result = await relay.outbox.relayMessage(relay.batch, message, send, failed === undefined ? undefined : BigInt(step.outcome.draw));
          actual = typeof result === "string" ? result : { retry: String(result.retryAtMillis) };
        } catch (error) {
          if (typeof error?.code !== "string") throw error;
          actual = { error: error.code };
        }
        assert.deepEqual(actual, step.expect, where);
        break;
      }
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
        const live = new Outbox(admin, policy);
        const count = Number(step.messages);
        for (let n = 1; n <= count; n += 1) {
          await enqueueIn(admin, live, { messageId: BigInt(n), kind: "order.created", businessKey: `order-${n}`, payload: encoder.encode("{}") }, "commit");
        }
        const sends = new Map();
        const send = async (message) => {
          sends.set(message.messageId, (sends.get(message.messageId) ?? 0) + 1);
          await new Promise((resolve) => setImmediate(resolve));
        };
        const outboxes = Array.from({ length: Number(step.relays) }, () => new Outbox(db.open(), policy));
        await Promise.all(outboxes.map((relay) => relay.relay(send)));
        const twice = [...sends.values()].filter((n) => n > 1).length;
        assert.deepEqual({ sent: String(sends.size), sent_twice: String(twice) }, step.expect, where);
        break;
      }
      default:
        assert.fail(`${where}: unknown step`);
    }
  }
}
