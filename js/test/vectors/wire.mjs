// Runners for tests/vectors/wire.json, by op: the package's codec (js/src/store/wire.ts)
// decodes each hex to its meaning and encodes each meaning to its hex. The package only packs
// specs and inputs and only reads steps; its codec is table-driven, so the other direction of
// each comes from the same table and both are pinned by the vectors (tests/vectors/README.md).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { INPUTS, KINDS, packInput, packSpec, packStep, readStep, STEPS, unpackInput, unpackSpec, WIRE_VERSION } from "../../dist/full/store/wire.js";
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
    both(vector, where, unpackSpec, packSpec);
  },
  input(vector, where) {
    kindsOf(vector, where);
    both(vector, where, unpackInput, (input) => packInput(input));
  },
  step(vector, where) {
    for (const kind of kindsOf(vector, where)) {
      both(
        vector,
        `${where} as ${kind}`,
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
  assert.deepEqual(unpackInput(packInput(input)), input);
  // Growth at every kind of field: the rows' counts (u32), value tags (u8) and integers (i64).
  const rows = Array.from({ length: 400 }, (_, n) => Array.from({ length: (n % 7) + 1 }, (__, m) => (m % 3 === 0 ? BigInt(n * m) : m % 3 === 1 ? null : "x".repeat(n % 5))));
  const packed = { tag: "rows", nowMillis: 9n, rows };
  assert.deepEqual(unpackInput(packInput(packed)), packed);
}
