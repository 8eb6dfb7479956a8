// Runners for tests/vectors/wire.json, by op: the package's codec (js/src/store/wire.ts)
// decodes each hex to its meaning and encodes each meaning to its hex. The package only packs
// specs and inputs and only reads steps; the other direction of each is written here, on the
// codec's own Reader and Writer, so both directions are pinned (tests/vectors/README.md).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  ACTIONS,
  ANSWERS,
  CLASSES,
  DIALECTS,
  ENQUEUED,
  FINISHED,
  INPUTS,
  KINDS,
  OUTCOMES,
  PLACEHOLDERS,
  packInput,
  packSpec,
  Reader,
  readStep,
  STEPS,
  WAYS,
  WIRE_VERSION,
  Writer,
} from "../../dist/full/store/wire.js";
import { fromHex, toHex } from "./common.mjs";

// The meaning's fields that are u64/i64 decimal strings, and those that are hex bytes.
const U64 = new Set(
  (
    "lease_millis retention_millis retry_after_millis max_wait_millis poll_millis ttl_millis key_created_millis batch_size " +
    "claim_millis base_backoff_millis max_backoff_millis max_attempts seed token created_millis lease_deadline_millis " +
    "sent_before_millis message_id now_millis count millis position renew_every_millis sent retried dead given_up " +
    "claim_lost released mark_failed deleted attempts next_attempt_millis updated_millis expires_millis " +
    "initial_step min_step max_step grow_below_millis shrink_above_millis epoch_millis tick_millis renew_interval_millis " +
    "safety_margin_millis renew_retry_millis max_skew_millis max_start_wait_millis timeout_millis guard high_water_millis " +
    "first wait_millis max_id step worker_id fencing_token start_after_millis ready_at_millis acquired_millis expected_token"
  ).split(" "),
);
const BYTES = new Set(["digest", "payload", "body", "fingerprint"]);
const camel = (name) => name.replace(/_(.)/g, (_, letter) => letter.toUpperCase());
const snake = (name) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

const valueOf = (v) => (v.type === "null" ? null : v.type === "int" ? BigInt(v.value) : v.type === "text" ? v.value : fromHex(v.value));
const meaningOfValue = (v) =>
  v === null ? { type: "null" } : typeof v === "bigint" ? { type: "int", value: String(v) } : typeof v === "string" ? { type: "text", value: v } : { type: "bytes", value: toHex(v) };

/** A meaning as the codec's objects: camelCase names, bigints, Uint8Arrays, SQL values. */
function fromMeaning(value, name) {
  if (value === null) return null;
  if (name === "params") return value.map(valueOf);
  if (name === "rows") return value.map((row) => row.map(valueOf));
  if (name === "fields" || name === "args") return value.map((item) => (item === null ? null : fromHex(item)));
  if (Array.isArray(value)) return value.map((item) => fromMeaning(item));
  if (typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [camel(key), fromMeaning(item, key)]));
  if (typeof value === "string" && U64.has(name)) return BigInt(value);
  if (typeof value === "string" && BYTES.has(name)) return fromHex(value);
  return value;
}

/** The codec's objects as a meaning. */
function toMeaning(value, name) {
  if (value === null) return null;
  if (name === "params") return value.map(meaningOfValue);
  if (name === "rows") return value.map((row) => row.map(meaningOfValue));
  if (typeof value === "bigint") return String(value);
  if (value instanceof Uint8Array) return toHex(value);
  if (Array.isArray(value)) return value.map((item) => toMeaning(item, name === "args" || name === "fields" ? "item" : undefined));
  if (typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [snake(key), toMeaning(item, snake(key))]));
  return value;
}

// --- the directions the package does not need -------------------------------------------------

const key = (r) => ({ kind: r.text(), scope: r.text(), id: r.text() });
const recordPolicy = (r) => ({
  leaseMillis: r.u64(),
  retentionMillis: r.u64(),
  storeErrors: r.flag(),
  retryAfterMillis: r.u64(),
  maxWaitMillis: r.u64(),
  pollMillis: r.u64(),
});

function decodeSpec(bytes) {
  const r = new Reader(bytes);
  const kind = r.name(KINDS, 1);
  const spec = { kind, dialect: r.name(DIALECTS), placeholder: r.name(PLACEHOLDERS) };
  if (kind === "record") {
    Object.assign(spec, { policy: recordPolicy(r), way: r.name(WAYS), fast: r.optional((o) => ({ ttlMillis: o.optional((p) => p.u64()) })) });
    Object.assign(spec, { key: key(r), digest: r.raw(32), keyCreatedMillis: r.optional((o) => o.u64()) });
  } else if (kind === "relay") {
    const [batchSize, claimMillis, baseBackoffMillis, maxBackoffMillis, jitterPercent, maxAttempts] = [r.u64(), r.u64(), r.u64(), r.u64(), r.u8(), r.u64()];
    Object.assign(spec, { policy: { batchSize, claimMillis, baseBackoffMillis, maxBackoffMillis, jitterPercent, maxAttempts }, seed: r.u64() });
  } else if (kind === "record_renewal") {
    Object.assign(spec, { policy: recordPolicy(r), key: key(r), token: r.u64(), createdMillis: r.u64(), leaseDeadlineMillis: r.u64() });
  } else if (kind === "record_cleanup") spec.batchSize = r.u64();
  else if (kind === "outbox_cleanup") Object.assign(spec, { sentBeforeMillis: r.u64(), batchSize: r.u64() });
  else if (kind === "record_load") spec.key = key(r);
  else if (kind === "outbox_load") Object.assign(spec, { messageKind: r.text(), businessKey: r.text() });
  else if (kind === "migrations") spec.pending = r.flag();
  else if (kind === "heartbeat") {
    Object.assign(spec, { policy: recordPolicy(r), key: key(r), token: r.u64(), createdMillis: r.u64(), leaseDeadlineMillis: r.u64() });
    spec.renewEveryMillis = r.optional((o) => o.u64());
  } else if (kind === "segment") {
    const tag = r.text();
    const [initialStep, minStep, maxStep, fetchAtPercent, growBelowMillis, shrinkAboveMillis] = [r.u64(), r.u64(), r.u64(), r.u8(), r.u64(), r.u64()];
    Object.assign(spec, { tag, policy: { initialStep, minStep, maxStep, fetchAtPercent, growBelowMillis, shrinkAboveMillis } });
  } else if (kind === "lease_acquire") {
    const [timeBits, workerBits, sequenceBits, datacenterBits, epochMillis, tickMillis] = [r.u8(), r.u8(), r.u8(), r.u8(), r.u64(), r.u64()];
    const [leaseMillis, renewIntervalMillis, safetyMarginMillis, renewRetryMillis, maxSkewMillis, maxStartWaitMillis] = [r.u64(), r.u64(), r.u64(), r.u64(), r.u64(), r.u64()];
    const policy = { timeBits, workerBits, sequenceBits, datacenterBits, epochMillis, tickMillis, leaseMillis, renewIntervalMillis, safetyMarginMillis, renewRetryMillis, maxSkewMillis, maxStartWaitMillis };
    Object.assign(spec, { policy, owner: r.text(), timeoutMillis: r.optional((o) => o.u64()) });
  } else if (kind === "lease_renew" || kind === "lease_release") spec.guard = r.u64();
  else Object.assign(spec, { messageId: r.u64(), messageKind: r.text(), businessKey: r.text(), payload: r.bytes() });
  r.end();
  return spec;
}

function decodeInput(bytes) {
  const r = new Reader(bytes);
  const input = { tag: r.name(INPUTS, 1), nowMillis: r.u64() };
  const response = (o) => o.response();
  if (input.tag === "rows") input.rows = r.list((o) => o.list((p) => p.value()));
  else if (input.tag === "affected") input.count = r.u64();
  else if (input.tag === "failed") Object.assign(input, { class: r.name(CLASSES), message: r.text() });
  else if (input.tag === "send_failed") input.error = r.text();
  else if (input.tag === "mark") input.highWaterMillis = r.u64();
  else if (input.tag === "finish") {
    const outcome = { outcome: r.name(OUTCOMES) };
    if (outcome.outcome === "succeeded") outcome.response = r.response();
    else if (outcome.outcome === "failed") Object.assign(outcome, { retryable: r.flag(), message: r.text(), response: r.optional(response) });
    else if (outcome.outcome === "not_a_response") outcome.typeName = r.text();
    else Object.assign(outcome, { typeName: r.text(), message: r.text() });
    input.outcome = outcome;
  } else if (input.tag === "redis") {
    const answer = { answer: r.name(ANSWERS) };
    if (answer.answer === "fields") answer.fields = r.list((o) => o.optional((p) => p.bytes()));
    else if (answer.answer === "failed") answer.message = r.text();
    input.answer = answer;
  }
  r.end();
  return input;
}

const RELAY_COUNTS = ["sent", "retried", "dead", "givenUp", "claimLost", "released", "markFailed"];

function packStep(kind, s) {
  const w = new Writer().name(STEPS, s.tag, 1);
  const text = (o, t) => o.text(t);
  const response = (o, r) => o.response(r);
  switch (s.tag) {
    case "run":
      return w.text(s.name).list(s.params, (o, v) => o.value(v)).done();
    case "pause":
      return w.u64(s.millis).done();
    case "fail":
      w.text(s.code).text(s.detail).optional(s.part, text).optional(s.position, (o, p) => o.u64(p));
      return w.optional(s.problem, text).text(s.concern).done();
    case "redis":
      return w.flag(s.eval).text(s.script).text(s.code).list(s.keys, text).list(s.args, (o, a) => o.bytes(a)).done();
    case "begin":
      return w.flag(s.write).done();
    case "report":
      return w.optional(s.lookup, text).u32(s.writeFailures).done();
    case "taken":
      return w.u64(s.first).u64(s.count).name(ACTIONS, s.action).u64(s.waitMillis).done();
    case "yield":
      if (kind === "segment") return w.done();
      if (kind === "migrations") return w.u32(s.version).text(s.sql).done();
      if (kind === "heartbeat") return w.u64(s.millis).u64(s.leaseDeadlineMillis).done();
      if (kind === "record") return w.text(s.decision).u64(s.token).u64(s.createdMillis).u64(s.leaseDeadlineMillis).optional(s.renewEveryMillis, (o, e) => o.u64(e)).done();
      return w.u64(s.messageId).text(s.messageKind).text(s.businessKey).bytes(s.payload).u64(s.attempts).u64(s.createdMillis).done();
    case "done":
      break;
    default:
      return w.done();
  }
  if (kind === "record") {
    w.text(s.decision).name(FINISHED, s.finished);
    if (s.finished === "operation_failed") w.flag(s.stored);
    else if (s.finished === "replay") w.u8(s.outcome === "succeeded" ? 0 : 1).optional(s.response, response).optional(s.error, text);
    else if (s.finished === "in_progress") w.u64(s.retryAfterMillis);
    else if (s.finished === "operation_failed_unrecorded") w.text(s.storeCode).text(s.storeMessage);
    return w.done();
  }
  if (kind === "relay") {
    for (const count of RELAY_COUNTS) w.u64(s[count]);
    return w.done();
  }
  if (kind === "record_renewal" || kind === "heartbeat" || kind === "lease_renew") return w.u64(s.leaseDeadlineMillis).done();
  if (kind === "segment") return w.u64(s.maxId).u64(s.step).done();
  if (kind === "lease_release") return w.flag(s.released).done();
  if (kind === "lease_acquire") {
    const fields = ["workerId", "fencingToken", "leaseDeadlineMillis", "startAfterMillis", "readyAtMillis", "acquiredMillis", "highWaterMillis", "expectedToken"];
    for (const field of fields) w.u64(s[field]);
    return w.done();
  }
  if (kind === "migrations") return w.list(s.versions, (o, v) => o.u32(v)).done();
  if (kind === "record_cleanup" || kind === "outbox_cleanup") return w.u64(s.deleted).done();
  if (kind === "record_load") {
    return w
      .optional(s.record, (o, c) =>
        o.text(c.status).raw(c.fingerprint).u64(c.token).u64(c.leaseDeadlineMillis).u64(c.createdMillis).u64(c.expiresMillis).optional(c.response, response).optional(c.error, text),
      )
      .done();
  }
  if (kind === "outbox_load") {
    return w
      .optional(s.message, (o, m) =>
        o
          .u64(m.messageId)
          .text(m.messageKind)
          .text(m.businessKey)
          .bytes(m.payload)
          .text(m.status)
          .u64(m.attempts)
          .u64(m.nextAttemptMillis)
          .optional(m.lastError, text)
          .u64(m.createdMillis)
          .u64(m.updatedMillis),
      )
      .done();
  }
  return w.name(ENQUEUED, s.enqueued).done();
}

// --- the runners ----------------------------------------------------------------------------

const WIRE_JSON = JSON.parse(readFileSync(new URL("../../../tests/vectors/wire.json", import.meta.url), "utf8"));

/** The kinds a case is for: every kind for `any`, else the one it names (which the codec must know). */
function kindsOf(vector, where) {
  if (vector.kind === "any") return KINDS;
  assert.ok(KINDS.includes(vector.kind), `${where}: kind ${vector.kind} is not in the JS codec`);
  return [vector.kind];
}

/** Each direction: decoded, the bytes mean `meaning`; encoded, `meaning` gives the bytes. */
function both(vector, where, decode, encode) {
  assert.deepEqual(toMeaning(decode(fromHex(vector.hex))), vector.meaning, `${where}: decoded`);
  assert.equal(toHex(encode(fromMeaning(vector.meaning))), vector.hex, `${where}: encoded`);
}

export const wireRunners = {
  spec(vector, where) {
    kindsOf(vector, where);
    both(vector, `${where} (package encoder, runner decoder)`, decodeSpec, packSpec);
  },
  input(vector, where) {
    kindsOf(vector, where);
    both(vector, `${where} (package encoder, runner decoder)`, decodeInput, (input) => packInput(input));
  },
  step(vector, where) {
    for (const kind of kindsOf(vector, where)) {
      both(
        vector,
        `${where} as ${kind} (package decoder, runner encoder)`,
        (bytes) => readStep(kind, bytes),
        (step) => packStep(kind, step),
      );
    }
  },
};

/** The file's tag tables and version are the codec's. */
export function checkWireTables() {
  assert.equal(WIRE_JSON.version, WIRE_VERSION);
  assert.deepEqual(Object.keys(WIRE_JSON.kinds), KINDS);
  assert.deepEqual(
    Object.values(WIRE_JSON.kinds),
    KINDS.map((_, n) => n + 1),
  );
  assert.deepEqual(Object.entries(WIRE_JSON.inputs), INPUTS.map((name, n) => [name, n + 1]));
  assert.deepEqual(Object.entries(WIRE_JSON.steps), STEPS.map((name, n) => [name, n + 1]));
}

/** A packing that outgrows the writer's first buffer reads back whole (every field after the growth too). */
export function checkWireGrowth() {
  const body = Uint8Array.from({ length: 70_000 }, (_, n) => n % 251);
  const input = {
    tag: "finish",
    nowMillis: 7n,
    outcome: { outcome: "failed", retryable: true, message: "é".repeat(300), response: { contentType: "application/octet-stream", body } },
  };
  assert.deepEqual(decodeInput(packInput(input)), input);
  // Growth at every kind of field: the rows' counts (u32), value tags (u8) and integers (i64).
  const rows = Array.from({ length: 400 }, (_, n) => Array.from({ length: (n % 7) + 1 }, (__, m) => (m % 3 === 0 ? BigInt(n * m) : m % 3 === 1 ? null : "x".repeat(n % 5))));
  const packed = { tag: "rows", nowMillis: 9n, rows };
  assert.deepEqual(decodeInput(packInput(packed)), packed);
}
