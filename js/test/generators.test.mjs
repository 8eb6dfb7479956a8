// The guarantees of the batched generators: IDs handed out are unique and
// increasing, and an ID's timestamp is never more than 1 ms behind
// Date.now() when it is handed out, however the calls are spaced (checked
// against the clock read just before each call).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock, Snowflake, Uuid7, Uuid7Generator, uuid7 } from "mintid";

/** Busy-waits `ms` milliseconds (a JS thread cannot sleep synchronously). */
function spin(ms) {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Call patterns: bursts, single calls spaced by pauses, mixed with bulk calls. */
function* pattern() {
  for (let round = 0; round < 40; round++) {
    yield { burst: 1 + ((round * 37) % 700), pause: (round % 5) * 0.7 };
  }
}

test("uuid7(): unique, increasing, never more than 1 ms stale", () => {
  let last = "";
  for (const { burst, pause } of pattern()) {
    for (let i = 0; i < burst; i++) {
      const before = Date.now();
      const id = uuid7();
      assert.ok(id > last, `${id} after ${last}`);
      last = id;
      const behind = before - Uuid7.parse(id).unixMillis;
      assert.ok(behind <= 1, `${id} is ${behind} ms behind the clock read before the call`);
    }
    spin(pause);
  }
});

test("Snowflake.nextId(): unique, increasing, never more than 1 ms stale, bulk calls in between", () => {
  const generator = new Snowflake({ worker: 9 });
  let last = -1n;
  for (const { burst, pause } of pattern()) {
    for (let i = 0; i < burst; i++) {
      const before = BigInt(Date.now());
      const id = generator.nextId();
      assert.ok(id > last, `${id} after ${last}`);
      last = id;
      const behind = before - generator.decode(id).unixMillis;
      assert.ok(behind <= 1n, `${id} is ${behind} ms behind the clock read before the call`);
    }
    if (burst % 3 === 0) {
      for (const id of generator.nextBatch(burst)) {
        assert.ok(id > last);
        last = id;
      }
    }
    spin(pause);
  }
  assert.ok(generator.highWater >= last, "the high water covers every ID handed out");
});

test("Snowflake.nextId(): sustained past the 4096 IDs per ms of 12 sequence bits, still unique and ordered", () => {
  const generator = new Snowflake({ worker: 1 });
  const ids = Array.from({ length: 20_000 }, () => generator.nextId());
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
  const perTick = new Map();
  for (const id of ids) {
    const { tick } = generator.decode(id);
    perTick.set(tick, (perTick.get(tick) ?? 0) + 1);
  }
  assert.ok(Math.max(...perTick.values()) <= 4096);
});

test("a generator on a manual clock makes IDs one call at a time (no batches to go stale)", () => {
  const clock = new ManualClock(1_735_689_700_000);
  const generator = new Snowflake({ worker: 2, clock });
  const first = generator.nextId();
  clock.advance(5);
  const second = generator.nextId();
  assert.equal(generator.decode(second).unixMillis - generator.decode(first).unixMillis, 5n);
  assert.equal(generator.decode(second).sequence, 0n);
  const uuids = new Uuid7Generator({ clock });
  const a = Uuid7.parse(uuids.next());
  clock.advance(3);
  assert.equal(Uuid7.parse(uuids.next()).unixMillis - a.unixMillis, 3);
});

test("IDs never pass through a JS number", () => {
  const generator = new Snowflake({ worker: 1023 });
  const id = generator.nextId();
  assert.equal(typeof id, "bigint");
  assert.ok(id > BigInt(Number.MAX_SAFE_INTEGER), "classic IDs are above 2^53 today");
  const next = generator.nextIdString();
  assert.match(next, /^[0-9]+$/);
  assert.ok(BigInt(next) > id, "the decimal form is the next, larger ID");
  assert.equal(generator.nextBatch(3).constructor, BigUint64Array);
});

test("every UUIDv7 entry point draws from one sequence: alternated, strictly increasing", () => {
  // uuid7() is the module's one generator; a Uuid7Generator's entry points share its own sequence.
  const generator = new Uuid7Generator();
  const own = [];
  const made = [];
  for (let i = 0; i < 6000; i++) {
    own.push(uuid7());
    switch (i % 3) {
      case 0: made.push(generator.next()); break;
      case 1: made.push(generator.nextUuid().toString()); break;
      default: made.push(...generator.nextBatch(2));
    }
  }
  for (const ids of [own, made]) {
    for (let n = 1; n < ids.length; n++) assert.ok(ids[n] > ids[n - 1], `${ids[n]} after ${ids[n - 1]}`);
  }
});

test("every Snowflake entry point of one generator draws from one sequence: alternated, strictly increasing", () => {
  const generator = new Snowflake({ worker: 11 });
  const made = [];
  for (let i = 0; i < 6000; i++) {
    switch (i % 3) {
      case 0: made.push(generator.nextId()); break;
      case 1: made.push(BigInt(generator.nextIdString())); break;
      default: made.push(...generator.nextBatch(3));
    }
  }
  for (let n = 1; n < made.length; n++) assert.ok(made[n] > made[n - 1], `${made[n]} after ${made[n - 1]}`);
});
