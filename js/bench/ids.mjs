// `make bench-js`: mintid's IDs beside the npm peers, in one run (Node, one thread).
// Prints mitata's report, then a table of average and median ns per ID.
import { randomBytes, randomUUID } from "node:crypto";
import { bench, do_not_optimize, group, run } from "mitata";
import { monotonicFactory } from "ulid";
import { v7 as uuidV7 } from "uuid";
import { uuidv7 } from "uuidv7";
import { KeyRing, Snowflake, SnowflakeLayout, fingerprint, mintRequestId, uuid7 } from "mintid";
import { PlainSnowflake } from "./plain-snowflake.mjs";

const ulid = monotonicFactory();
// 2^18 IDs per ms: the per-call cost without the 4096-per-ms cap of 12 sequence bits.
const WIDE = { timeBits: 41, workerBits: 4, sequenceBits: 18, epochMillis: 1735689600000 };
const classic = new Snowflake({ worker: 1 });
const wide = new Snowflake({ worker: 1, layout: new SnowflakeLayout(WIDE) });
const plainClassic = new PlainSnowflake({ worker: 1 });
const plainWide = new PlainSnowflake({ worker: 1, workerBits: 4n, sequenceBits: 18n });
const ring = new KeyRing({ id: 1, secret: randomBytes(32) });
const grant = ring.issueGrant("user:42", Date.now() + 3_600_000);
const requestId = mintRequestId(grant);
const payload = { order: "A-1001", amount: 12.5, currency: "EUR", items: [{ sku: "x", n: 2 }, { sku: "y", n: 1 }] };

group("UUIDv7 as a string", () => {
  bench("mintid uuid7()", () => do_not_optimize(uuid7()));
  bench("uuidv7 uuidv7()", () => do_not_optimize(uuidv7()));
  bench("uuid v7()", () => do_not_optimize(uuidV7()));
  bench("ulid monotonic (ULID, not UUID)", () => do_not_optimize(ulid()));
  bench("crypto.randomUUID() (v4, reference)", () => do_not_optimize(randomUUID()));
});

group("Snowflake ID as a bigint", () => {
  bench("mintid Snowflake.nextId(), classic 41/10/12", () => do_not_optimize(classic.nextId()));
  bench("plain JS snowflake, 41/10/12", () => do_not_optimize(plainClassic.nextId()));
  bench("mintid Snowflake.nextId(), 41/4/18", () => do_not_optimize(wide.nextId()));
  bench("plain JS snowflake, 41/4/18", () => do_not_optimize(plainWide.nextId()));
});

group("request IDs and fingerprints", () => {
  bench("mintid mintRequestId(grant)", () => do_not_optimize(mintRequestId(grant)));
  bench("mintid KeyRing.verify()", () => do_not_optimize(ring.verify(requestId, "user:42")));
  bench("mintid fingerprint(small order)", () => do_not_optimize(fingerprint(payload)));
});

const { benchmarks } = await run({ colors: false });
console.log("\n| benchmark | avg ns | p50 ns |\n|---|---:|---:|");
for (const trial of benchmarks) {
  for (const { name, stats } of trial.runs) {
    if (stats) console.log(`| ${name} | ${stats.avg.toFixed(0)} | ${stats.p50.toFixed(0)} |`);
  }
}
