// One name per concept in every host (issue 15): times carry `Millis`, as in
// Python, Kotlin and Rust; the old `Ms` names still work behind a one-time
// warning each. `acquireLease` takes the time before the policy, and a
// record's fingerprint is a `Fingerprint`.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as mintid from "mintid";

const { Snowflake, SnowflakeLayout, Uuid7, ManualClock, LeasePolicy } = mintid;

/** The messages of the deprecation warnings `action` gives. */
async function warningsOf(action) {
  const messages = [];
  const listen = (warning) => {
    if (warning.code === "MINTID_DEPRECATED") messages.push(warning.message);
  };
  process.on("warning", listen);
  const result = action();
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", listen);
  return { result, messages };
}

const FIELDS = { timeBits: 41, workerBits: 10, sequenceBits: 12 };

test("the layout, its parts and the generators say Millis", () => {
  const layout = new SnowflakeLayout({ ...FIELDS, epochMillis: 1000, tickMillis: 2 });
  assert.equal(layout.epochMillis, 1000n);
  assert.equal(layout.tickMillis, 2n);
  assert.equal(layout.withEpochMillis(5000).epochMillis, 5000n);
  assert.equal(layout.expiresAtUnixMillis, 1000n + 2n * 2n ** 41n);
  const id = layout.compose({ unixMillis: 1010, worker: 1, sequence: 2 });
  assert.deepEqual(layout.decode(id), { unixMillis: 1010n, tick: 5n, worker: 1n, sequence: 2n });
  const snowflake = new Snowflake({ worker: 1, layout, startingAfterUnixMillis: 1010, clock: new ManualClock(2000) });
  snowflake.nextId();
  assert.equal(snowflake.highWaterUnixMillis, 2000n);
  const uuid = Uuid7.fromFields({ unixMillis: 1234, randA: 0, randB: 0n });
  assert.equal(uuid.unixMillis, 1234);
});

test("the old Ms names give the same values, each with one deprecation warning", async () => {
  const layout = new SnowflakeLayout({ ...FIELDS, epochMillis: 1000, tickMillis: 2 });
  const id = layout.compose({ unixMillis: 1010, worker: 1, sequence: 2 });
  const { result, messages } = await warningsOf(() => {
    const old = new SnowflakeLayout({ ...FIELDS, epochMs: 1000, tickMs: 2 });
    const parts = old.decode(id);
    const snowflake = new Snowflake({ worker: 1, layout: old, startingAfterUnixMs: 1010, clock: new ManualClock(2000) });
    snowflake.nextId();
    return [
      old.epochMs,
      old.tickMs,
      old.withEpochMs(5000).epochMillis,
      old.expiresAtUnixMs,
      old.compose({ unixMs: 1010, worker: 1, sequence: 2 }),
      parts.unixMs,
      Object.keys(parts).includes("unixMs"),
      snowflake.highWaterUnixMs,
      Uuid7.fromFields({ unixMs: 1234, randA: 0, randB: 0n }).unixMs,
    ];
  });
  assert.deepEqual(result, [1000n, 2n, 5000n, layout.expiresAtUnixMillis, id, 1010n, false, 2000n, 1234]);
  const names = [
    "SnowflakeLayout option epochMs",
    "SnowflakeLayout option tickMs",
    "SnowflakeLayout.epochMs",
    "SnowflakeLayout.tickMs",
    "SnowflakeLayout.withEpochMs",
    "SnowflakeLayout.expiresAtUnixMs",
    "SnowflakeLayout.compose option unixMs",
    "SnowflakeParts.unixMs",
    "Snowflake option startingAfterUnixMs",
    "Snowflake.highWaterUnixMs",
    "Uuid7.fromFields option unixMs",
    "Uuid7.unixMs",
  ];
  assert.deepEqual(messages.map((message) => message.split(" is deprecated")[0]).sort(), names.sort());
  assert.ok(messages.every((message) => message.includes("Millis now")), messages.join("; "));
  const again = await warningsOf(() => new SnowflakeLayout({ ...FIELDS, epochMs: 0 }).epochMs);
  assert.deepEqual(again.messages, [], "each warning is given once per process");
});

const policy = new LeasePolicy();
const freeRow = { workerId: 3n, fencingToken: 0n, leaseDeadlineMillis: 0n, highWaterMillis: 0n, held: false };

test("acquireLease takes (row, nowMillis, policy), as every host does; the old order warns once", async () => {
  const acquisition = mintid.acquireLease(freeRow, 1_800_000_000_000, policy);
  assert.equal(acquisition.acquiredMillis, 1_800_000_000_000n);
  const { result, messages } = await warningsOf(() => mintid.acquireLease(freeRow, policy, 1_800_000_000_000));
  assert.deepEqual(result, acquisition);
  assert.equal(messages.length, 1);
  assert.match(messages[0], /acquireLease\(row, nowMillis, policy\)/);
});

test("a record's fingerprint is a Fingerprint, as in the other hosts; its text is still accepted", () => {
  const recordPolicy = new mintid.RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 });
  const made = mintid.fingerprint({ a: 1 });
  const decision = mintid.decide(null, { fingerprint: made }, 5000, recordPolicy);
  const { record } = decision.claim;
  assert.ok(record.fingerprint instanceof mintid.Fingerprint);
  assert.ok(record.fingerprint.equals(made));
  assert.equal(String(record.fingerprint), made.text);
  const asText = { ...record, fingerprint: made.text };
  assert.deepEqual(mintid.decide(asText, { fingerprint: made }, 5500, recordPolicy), mintid.decide(record, { fingerprint: made }, 5500, recordPolicy));
});
