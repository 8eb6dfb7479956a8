// Runners for tests/vectors/snowflake.json, by op.
import assert from "node:assert/strict";
import { ManualClock, Snowflake, SnowflakeLayout } from "mintid";
import { expectError } from "./common.mjs";

function layoutOf(spec) {
  if (typeof spec === "string") return SnowflakeLayout.preset(spec);
  return new SnowflakeLayout({
    timeBits: spec.time_bits,
    workerBits: spec.worker_bits,
    sequenceBits: spec.sequence_bits,
    epochMillis: BigInt(spec.epoch_millis),
    tickMillis: BigInt(spec.tick_millis),
    ...(spec.datacenter_bits === undefined ? {} : { datacenterBits: spec.datacenter_bits }),
  });
}

const LAYOUT_FIELDS = {
  time_bits: (l) => l.timeBits,
  worker_bits: (l) => l.workerBits,
  sequence_bits: (l) => l.sequenceBits,
  datacenter_bits: (l) => l.datacenterBits,
  epoch_millis: (l) => l.epochMillis.toString(),
  tick_millis: (l) => l.tickMillis.toString(),
  max_worker: (l) => l.maxWorker.toString(),
  max_sequence: (l) => l.maxSequence.toString(),
  max_id: (l) => l.maxId.toString(),
  js_safe: (l) => l.isJsSafe,
  lifetime_millis: (l) => l.lifetimeMillis.toString(),
  expires_at_unix_millis: (l) => l.expiresAtUnixMillis.toString(),
};

function rollbackOf(spec) {
  if (spec === undefined) return undefined;
  return spec.policy === "fail" ? { kind: "fail" } : { kind: spec.policy, maxMillis: BigInt(spec.max_millis) };
}

function sequencePolicyOf(spec) {
  if (spec === undefined) return undefined;
  return spec.policy === "wait" ? { kind: "wait" } : { kind: "borrowAhead", maxTicks: BigInt(spec.max_ticks) };
}

export const snowflakeRunners = {
  layout(vector, where) {
    const layout = layoutOf(vector.layout);
    for (const [field, expected] of Object.entries(vector.expect)) {
      if (field === "remaining_millis") {
        assert.equal(layout.remainingMillis(BigInt(vector.now_unix_millis)).toString(), expected, `${where}: ${field}`);
        continue;
      }
      const read = LAYOUT_FIELDS[field];
      assert.ok(read, `${where}: no JS reader for layout field ${field}`);
      assert.equal(read(layout), expected, `${where}: ${field}`);
    }
  },
  layout_invalid(vector, where) {
    expectError(() => layoutOf(vector.layout), vector.error, where);
  },
  compose(vector, where) {
    const compose = () => {
      const layout = layoutOf(vector.layout);
      const at = "tick" in vector ? { tick: BigInt(vector.tick) } : { unixMillis: BigInt(vector.unix_millis) };
      return layout.compose({ ...at, worker: BigInt(vector.worker), sequence: BigInt(vector.sequence) });
    };
    if ("error" in vector) return expectError(compose, vector.error, where);
    const id = compose();
    assert.equal(id.toString(), vector.id, where);
    assert.equal(Snowflake.toBase32(id), vector.base32, where);
  },
  decode(vector, where) {
    const layout = layoutOf(vector.layout);
    const decode = () => layout.decode(BigInt(vector.id));
    if ("error" in vector) return expectError(decode, vector.error, where);
    const parts = decode();
    for (const field of ["tick", "worker", "sequence"]) {
      assert.equal(parts[field].toString(), vector[field], `${where}: ${field}`);
    }
    assert.equal(parts.unixMillis.toString(), vector.unix_millis, `${where}: unix_millis`);
  },
  worker_id(vector, where) {
    const layout = layoutOf(vector.layout);
    const join = () => layout.workerId(BigInt(vector.datacenter), BigInt(vector.worker));
    if ("error" in vector) return expectError(join, vector.error, where);
    const workerId = join();
    assert.equal(workerId.toString(), vector.worker_id, where);
    assert.deepEqual(layout.splitWorkerId(workerId), [BigInt(vector.datacenter), BigInt(vector.worker)], where);
  },
  parse_decimal(vector, where) {
    if ("error" in vector) return expectError(() => Snowflake.parse(vector.text), vector.error, where);
    const id = Snowflake.parse(vector.text);
    assert.equal(id.toString(), vector.id, where);
    assert.equal(Snowflake.toBase32(id), vector.base32, where);
  },
  parse_base32(vector, where) {
    if ("error" in vector) return expectError(() => Snowflake.parseBase32(vector.text), vector.error, where);
    const id = Snowflake.parseBase32(vector.text);
    assert.equal(id.toString(), vector.id, where);
    assert.equal(Snowflake.toBase32(id), vector.base32, where);
  },
  generate(vector, where) {
    const clock = new ManualClock(BigInt(vector.clock.start_millis), { advanceOnPause: vector.clock.advance_on_pause });
    const build = () => new Snowflake({
      worker: BigInt(vector.worker),
      layout: layoutOf(vector.layout),
      rollback: rollbackOf(vector.rollback),
      sequencePolicy: sequencePolicyOf(vector.sequence_policy),
      ...(vector.starting_after_id === undefined ? {} : { startingAfterId: BigInt(vector.starting_after_id) }),
      ...(vector.starting_after_unix_millis === undefined ? {} : { startingAfterUnixMillis: BigInt(vector.starting_after_unix_millis) }),
      clock,
    });
    if ("error" in vector) return expectError(build, vector.error, where);
    const generator = build();
    vector.steps.forEach((step, index) => {
      const at = `${where} step ${index}`;
      if ("clock_millis" in step) clock.set(BigInt(step.clock_millis));
      const make = () => (step.call === "batch"
        ? Array.from(generator.nextBatch(step.count))
        : Array.from({ length: step.count }, () => generator.nextId()));
      assert.ok(step.call === "batch" || step.call === "next", `${at}: unknown call ${step.call}`);
      if ("error" in step) {
        expectError(make, step.error, at);
      } else {
        const ids = make();
        assert.deepEqual(ids.map(String), step.ids, at);
        assert.deepEqual(ids.map((id) => Snowflake.toBase32(id)), step.base32, at);
      }
      if ("clock_after_millis" in step) assert.equal(clock.now().toString(), step.clock_after_millis, `${at}: clock after`);
      if ("high_water" in step) assert.equal(generator.highWater?.toString(), step.high_water, `${at}: high water`);
    });
  },
};
