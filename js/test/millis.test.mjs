// One name per concept in every host (issue 15): times carry `Millis`, as in
// Python, Kotlin and Rust. `acquireLease` takes the time before the policy,
// and a record's fingerprint is a `Fingerprint`.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as mintid from "mintid";

const { Snowflake, SnowflakeLayout, Uuid7, ManualClock, LeasePolicy } = mintid;

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

const policy = new LeasePolicy();
const freeRow = { workerId: 3n, fencingToken: 0n, leaseDeadlineMillis: 0n, highWaterMillis: 0n, held: false };

test("acquireLease takes (row, nowMillis, policy), as every host does", () => {
  const acquisition = mintid.acquireLease(freeRow, 1_800_000_000_000, policy);
  assert.equal(acquisition.acquiredMillis, 1_800_000_000_000n);
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
