// Bad input for every entry point: the core's rejections carry its stable
// code (a MintidError subclass), wrong JS types throw TypeError and
// out-of-range numbers or bigints throw RangeError before reaching wasm.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import * as mintid from "mintid";

const {
  FixedEntropy, IdempotencyKey, KeyRing, ManualClock, RecordPolicy, Snowflake, SnowflakeLayout, Uuid, Uuid7, Uuid7Generator,
} = mintid;

const secret = randomBytes(32);
const ring = new KeyRing({ id: 1, secret });
const grant = ring.issueGrant("user:42", Date.now() + 60_000).text;
const policy = new RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 });
const FP = mintid.fingerprint({ a: 1 });
const record = { status: "pending", fingerprint: FP, token: 1n, leaseDeadlineMillis: 2000n, createdMillis: 1000n, expiresMillis: 101_000n };
const leasePolicy = new mintid.LeasePolicy();
const heldRow = { workerId: 1n, fencingToken: 2n, leaseDeadlineMillis: 50_000n, highWaterMillis: 0n, held: true };
const leaseGuard = () => new mintid.LeaseGuard(mintid.acquireLease({ ...heldRow, held: false }, 1_800_000_000_000, leasePolicy), leasePolicy);
const cyclic = {};
cyclic.self = cyclic;

/** [entry point, call, expected]: a code string, or TypeError / RangeError. */
const CASES = [
  ["Uuid.parse", () => Uuid.parse("f81d4fae"), "uuid.invalid_length", mintid.UuidParseError],
  ["Uuid.parse", () => Uuid.parse("f81d4fae-7dec-41d0-a765-00a0c91e6bgx"), "uuid.invalid_character", mintid.UuidParseError],
  ["Uuid.parse", () => Uuid.parse(5), TypeError],
  ["Uuid.fromBytes", () => Uuid.fromBytes(new Uint8Array(15)), RangeError],
  ["Uuid.v8", () => Uuid.v8([1, 2]), TypeError],
  ["Uuid.format", () => Uuid.parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf6").format("hex"), TypeError],
  ["Uuid7.parse", () => Uuid7.parse("f81d4fae-7dec-41d0-a765-00a0c91e6bf6"), "uuid7.wrong_version", mintid.Uuid7Error],
  ["Uuid7.parse", () => Uuid7.parse("nope"), "uuid7.invalid_text", mintid.Uuid7Error],
  ["Uuid7.fromBytes", () => Uuid7.fromBytes(new Uint8Array(16)), "uuid7.wrong_version", mintid.Uuid7Error],
  ["Uuid7.fromFields", () => Uuid7.fromFields({ unixMillis: 2 ** 48, randA: 0, randB: 0n }), "uuid7.timestamp_out_of_range", mintid.Uuid7Error],
  ["Uuid7.fromFields", () => Uuid7.fromFields({ unixMillis: 0, randA: 4096, randB: 0n }), "uuid7.rand_a_out_of_range", mintid.Uuid7Error],
  ["Uuid7.fromFields", () => Uuid7.fromFields({ unixMillis: 0, randA: 0, randB: 1n << 62n }), "uuid7.rand_b_out_of_range", mintid.Uuid7Error],
  ["Uuid7.fromFields", () => Uuid7.fromFields({ unixMillis: 0, randA: 0, randB: -1n }), RangeError],
  ["Uuid7.fromFields", () => Uuid7.fromFields({ unixMillis: -1, randA: 0, randB: 0n }), RangeError],
  ["Uuid7Generator", () => new Uuid7Generator({ rollback: { kind: "sometimes" } }), TypeError],
  ["Uuid7Generator", () => new Uuid7Generator({ rollback: { kind: "wait", maxMillis: -1 } }), RangeError],
  ["Uuid7Generator", () => new Uuid7Generator({ clock: { now: () => 0 } }), TypeError],
  ["Uuid7Generator.nextBatch", () => new Uuid7Generator().nextBatch(-1), RangeError],
  ["Uuid7Generator.nextBatch", () => new Uuid7Generator().nextBatch("3"), TypeError],
  ["Uuid7Generator.next", () => {
    const clock = new ManualClock(1_000_000);
    const generator = new Uuid7Generator({ clock, rollback: { kind: "fail" } });
    generator.next();
    clock.rewind(1);
    generator.next();
  }, "uuid7.clock_rollback", mintid.Uuid7Error],
  ["ManualClock", () => new ManualClock(-1), RangeError],
  ["ManualClock", () => new ManualClock(2n ** 64n), RangeError],
  ["FixedEntropy", () => new FixedEntropy("abc"), TypeError],
  ["Snowflake", () => new Snowflake({ worker: 1024 }), "snowflake.worker_out_of_range", mintid.SnowflakeError],
  ["Snowflake", () => new Snowflake({ worker: -1 }), RangeError],
  ["Snowflake", () => new Snowflake({ worker: 1.5 }), RangeError],
  ["Snowflake", () => new Snowflake({ worker: 2n ** 64n }), RangeError],
  ["Snowflake", () => new Snowflake({ worker: 1, layout: "sonyflake" }), "snowflake.unknown_preset", mintid.SnowflakeError],
  ["Snowflake", () => new Snowflake({ worker: 1, startingAfterId: 2n ** 63n }), "snowflake.id_out_of_range", mintid.SnowflakeError],
  ["Snowflake", () => new Snowflake({ worker: 1, sequencePolicy: { kind: "borrow" } }), TypeError],
  ["Snowflake.nextId", () => {
    const clock = new ManualClock(1_735_689_700_000);
    const generator = new Snowflake({ worker: 1, clock, rollback: { kind: "fail" } });
    generator.nextId();
    clock.rewind(1);
    generator.nextId();
  }, "snowflake.clock_rolled_back", mintid.SnowflakeError],
  ["Snowflake.nextId", () => new Snowflake({ worker: 1, clock: new ManualClock(0) }).nextId(), "snowflake.epoch_in_future", mintid.SnowflakeError],
  ["Snowflake.nextBatch", () => new Snowflake({ worker: 1 }).nextBatch(1.5), RangeError],
  ["Snowflake.parse", () => Snowflake.parse("12a"), "snowflake.invalid_text", mintid.SnowflakeError],
  ["Snowflake.parse", () => Snowflake.parse("9223372036854775808"), "snowflake.id_out_of_range", mintid.SnowflakeError],
  ["Snowflake.parse", () => Snowflake.parse(12), TypeError],
  ["Snowflake.parseBase32", () => Snowflake.parseBase32("000000000000U"), "snowflake.invalid_text", mintid.SnowflakeError],
  ["Snowflake.toBase32", () => Snowflake.toBase32(2n ** 63n), "snowflake.id_out_of_range", mintid.SnowflakeError],
  ["Snowflake.toBase32", () => Snowflake.toBase32(-1n), RangeError],
  ["Snowflake.toBase32", () => Snowflake.toBase32(5), TypeError],
  ["SnowflakeLayout", () => new SnowflakeLayout({ timeBits: 0, workerBits: 10, sequenceBits: 12, epochMillis: 0 }), "snowflake.invalid_layout", mintid.SnowflakeError],
  ["SnowflakeLayout", () => new SnowflakeLayout({ timeBits: 300, workerBits: 10, sequenceBits: 12, epochMillis: 0 }), RangeError],
  ["SnowflakeLayout.preset", () => SnowflakeLayout.preset("nope"), "snowflake.unknown_preset", mintid.SnowflakeError],
  ["SnowflakeLayout.decode", () => SnowflakeLayout.JS_SAFE.decode(2n ** 53n), "snowflake.id_out_of_range", mintid.SnowflakeError],
  ["SnowflakeLayout.decode", () => SnowflakeLayout.CLASSIC.decode(2n ** 64n), RangeError],
  ["SnowflakeLayout.compose", () => SnowflakeLayout.CLASSIC.compose({ unixMillis: 0, worker: 0, sequence: 0 }), "snowflake.time_out_of_range", mintid.SnowflakeError],
  ["SnowflakeLayout.compose", () => SnowflakeLayout.CLASSIC.compose({ tick: 0, worker: 0, sequence: 4096 }), "snowflake.sequence_out_of_range", mintid.SnowflakeError],
  ["SnowflakeLayout.workerId", () => SnowflakeLayout.DATACENTER_WORKER.workerId(32, 0), "snowflake.worker_out_of_range", mintid.SnowflakeError],
  ["SnowflakeLayout.tickAt", () => SnowflakeLayout.CLASSIC.tickAt(0), "snowflake.time_out_of_range", mintid.SnowflakeError],
  ["fingerprint", () => mintid.fingerprint(undefined), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: undefined }), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: () => 1 }), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: Symbol("s") }), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: 1n }), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint([NaN]), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint([Infinity]), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint([1, , 2]), "fingerprint.invalid_json", mintid.FingerprintError], // eslint-disable-line no-sparse-arrays
  ["fingerprint", () => mintid.fingerprint(new Map([["a", 1]])), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint(cyclic), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint('{"a":1}'), "fingerprint.string_value", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint(new TextEncoder().encode("{}")), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: 1 }, { include: ["a"] }), "fingerprint.invalid_pointer", mintid.FingerprintError],
  ["fingerprint", () => mintid.fingerprint({ a: 1 }, { include: "/a" }), TypeError],
  ["fingerprintJson", () => mintid.fingerprintJson("{"), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson('{"id":1152921504606846976}'), "fingerprint.number_out_of_range", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson('{"a":1,"a":2}'), "fingerprint.duplicate_member", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson('"\\ud800"'), "fingerprint.lone_surrogate", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson('"\ud800"'), "fingerprint.invalid_utf8", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson(new Uint8Array([0x22, 0xff, 0x22])), "fingerprint.invalid_utf8", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson("[".repeat(200) + "]".repeat(200)), "fingerprint.too_deep", mintid.FingerprintError],
  ["fingerprintJson", () => mintid.fingerprintJson({}), TypeError],
  ["canonicalJson", () => mintid.canonicalJson("[1,]"), "fingerprint.invalid_json", mintid.FingerprintError],
  ["fingerprintBytes", () => mintid.fingerprintBytes("body"), TypeError],
  ["parseFingerprint", () => mintid.parseFingerprint("sha1:abc"), "fingerprint.invalid_text", mintid.FingerprintError],
  ["formatFingerprint", () => mintid.formatFingerprint(new Uint8Array(31)), RangeError],
  ["IdempotencyKey", () => new IdempotencyKey("", "s", "i"), "key.empty", mintid.IdempotencyKeyError],
  ["IdempotencyKey", () => new IdempotencyKey("k", "s", "a b"), "key.invalid_character", mintid.IdempotencyKeyError],
  ["IdempotencyKey", () => new IdempotencyKey("k", "s", "i".repeat(1000)), "key.too_long", mintid.IdempotencyKeyError],
  ["IdempotencyKey", () => new IdempotencyKey("k", "s", 5), TypeError],
  ["IdempotencyKey.parse", () => IdempotencyKey.parse("order.create"), "key.invalid_text", mintid.IdempotencyKeyError],
  ["IdempotencyKey.parseHeader", () => IdempotencyKey.parseHeader('"unterminated'), "key.invalid_header", mintid.IdempotencyKeyError],
  ["IdempotencyKey.fromHeader", () => IdempotencyKey.fromHeader("k", "s", ""), "key.empty", mintid.IdempotencyKeyError],
  ["IdempotencyKey.fromFields", () => IdempotencyKey.fromFields("k", "s", []), "key.empty", mintid.IdempotencyKeyError],
  ["IdempotencyKey.fromFields", () => IdempotencyKey.fromFields("k", "s", [1]), TypeError],
  ["IdempotencyKey.derived", () => IdempotencyKey.derived("k", "s", "sha256:short"), "fingerprint.invalid_text", mintid.FingerprintError],
  ["KeyRing", () => new KeyRing({ id: 1, secret: new Uint8Array(16) }), "request_id.weak_secret", mintid.RequestIdError],
  ["KeyRing", () => new KeyRing({ id: -1, secret }), RangeError],
  ["KeyRing", () => new KeyRing({ id: 1, secret: "s".repeat(32) }), TypeError],
  ["KeyRing.add", () => ring.add({ id: 1, secret }), "request_id.duplicate_key_id", mintid.RequestIdError],
  ["KeyRing.retire", () => ring.retire(1), "request_id.current_key", mintid.RequestIdError],
  ["KeyRing.retire", () => ring.retire(7), "request_id.unknown_key", mintid.RequestIdError],
  ["KeyRing.retire", () => ring.retire(2 ** 32), RangeError],
  ["KeyRing.issueGrant", () => ring.issueGrant("", Date.now()), "request_id.invalid_scope", mintid.RequestIdError],
  ["KeyRing.issueGrant", () => ring.issueGrant("s", 2n ** 48n), "request_id.expiry_out_of_range", mintid.RequestIdError],
  ["KeyRing.verify", () => ring.verify("garbage", "user:42"), "request_id.malformed", mintid.RequestIdError],
  ["KeyRing.verify", () => ring.verify(grant, "user:42"), "request_id.unsupported_version", mintid.RequestIdError],
  ["KeyRing.verify", () => ring.verify(mintid.mintRequestId(grant), "user:42", { now: Date.now() + 120_000 }), "request_id.grant_expired", mintid.RequestIdError],
  ["KeyRing.verify", () => ring.verify(mintid.mintRequestId(grant), "user:42", { maxSkewMillis: 0, now: Date.now() - 10_000 }), "request_id.in_future", mintid.RequestIdError],
  ["KeyRing.verify", () => ring.verify(mintid.mintRequestId(grant), "user:42", { maxAgeMillis: -5 }), RangeError],
  ["verifyRequestId", () => mintid.verifyRequestId({}, "x", "s"), TypeError],
  ["verifyUnsignedRequestId", () => mintid.verifyUnsignedRequestId("x"), "request_id.malformed", mintid.RequestIdError],
  ["verifyUnsignedRequestId", () => mintid.verifyUnsignedRequestId(mintid.uuid7(), { now: 0 }), "request_id.in_future", mintid.RequestIdError],
  ["mintRequestId", () => mintid.mintRequestId("not a grant"), "request_id.malformed_grant", mintid.RequestIdError],
  ["mintRequestId", () => mintid.mintRequestId(grant, "not a uuid"), "uuid7.invalid_text", mintid.Uuid7Error],
  ["mintRequestId", () => mintid.mintRequestId(42), TypeError],
  ["grantFields", () => mintid.grantFields("x"), "request_id.malformed_grant", mintid.RequestIdError],
  ["inspectRequestId", () => mintid.inspectRequestId("x"), "request_id.malformed", mintid.RequestIdError],
  ["RecordPolicy", () => new RecordPolicy({ leaseMillis: 0, retentionMillis: 1000 }), "record.invalid_policy", mintid.RecordError],
  ["RecordPolicy", () => new RecordPolicy({ leaseMillis: 1000, retentionMillis: 2000, storeErrors: "yes" }), TypeError],
  ["decide", () => mintid.decide({ ...record, status: "bogus" }, { fingerprint: FP }, 1500, policy), "record.unknown_status", mintid.RecordError],
  ["decide", () => mintid.decide(null, { fingerprint: "sha256:x" }, 1500, policy), "fingerprint.invalid_text", mintid.FingerprintError],
  ["decide", () => mintid.decide(null, { fingerprint: FP }, 2n ** 64n - 1n, policy), "record.time_overflow", mintid.RecordError],
  ["decide", () => mintid.decide(null, { fingerprint: FP }, 1500, {}), TypeError],
  ["applyClaim", () => {
    const decision = mintid.decide(null, { fingerprint: FP }, 1000, policy);
    mintid.applyClaim(decision.claim, null, 5000);
  }, "record.claim_expired", mintid.RecordError],
  ["applyClaim", () => {
    const decision = mintid.decide(null, { fingerprint: FP }, 1000, policy);
    mintid.applyClaim(decision.claim, record, 1000);
  }, "record.claim_conflict", mintid.RecordError],
  ["completeRecord", () => mintid.completeRecord(record, { token: 2n, createdMillis: 1000n }), "record.stale_token", mintid.RecordError],
  ["completeRecord", () => mintid.completeRecord({ ...record, status: "succeeded" }, { token: 1n, createdMillis: 1000n }), "record.not_pending", mintid.RecordError],
  ["failRecord", () => mintid.failRecord(record, { token: 1n, createdMillis: 1000n }, "maybe", policy), TypeError],
  ["isRemovable", () => mintid.isRemovable({ ...record, token: -1n }, 0), RangeError],
  ["parseRecordStatus", () => mintid.parseRecordStatus("done"), "record.unknown_status", mintid.RecordError],
  ["retryAfterSecs", () => mintid.retryAfterSecs(-1), RangeError],
  ["LeasePolicy", () => new mintid.LeasePolicy({ leaseMillis: 1000, renewIntervalMillis: 0 }), "lease.invalid_policy", mintid.LeaseError],
  ["LeasePolicy", () => new mintid.LeasePolicy({ layout: "nope" }), "snowflake.unknown_preset", mintid.SnowflakeError],
  ["acquireLease", () => mintid.acquireLease(heldRow, 1000, leasePolicy), "lease.still_held", mintid.LeaseError],
  ["acquireLease", () => mintid.acquireLease({ ...heldRow, workerId: 1024n, held: false }, 1000, leasePolicy), "lease.worker_out_of_range", mintid.LeaseError],
  ["acquireLease", () => mintid.acquireLease({ ...heldRow, held: "yes" }, 1000, leasePolicy), TypeError],
  ["whenNoLeaseFound", () => mintid.whenNoLeaseFound({ present: 1024, free: 0 }, leasePolicy), "lease.no_worker_free", mintid.LeaseError],
  ["LeaseGuard.admit", () => leaseGuard().admit(0n), "lease.foreign_id", mintid.LeaseError],
  ["LeaseGuard.admit", () => leaseGuard().admit(-1n), RangeError],
  ["LeaseGuard.check", () => leaseGuard().check(1_800_000_100_000), "lease.expired", mintid.LeaseError],
  ["SegmentPolicy", () => new mintid.SegmentPolicy({ initialStep: 10, minStep: 0, maxStep: 100 }), "segment.invalid_policy", mintid.SegmentError],
  ["SegmentPolicy", () => new mintid.SegmentPolicy({ initialStep: 10, minStep: 1, maxStep: 100, fetchAtPercent: 300 }), RangeError],
  ["SegmentAllocator.fetched", () => {
    const allocator = new mintid.SegmentAllocator(new mintid.SegmentPolicy({ initialStep: 10, minStep: 1, maxStep: 100 }));
    allocator.fetched({ maxId: 10, step: 10 }, 0);
  }, "segment.no_fetch", mintid.SegmentError],
  ["RelayPolicy", () => new mintid.RelayPolicy({ batchSize: 0, claimMillis: 1000 }), "outbox.invalid_policy", mintid.OutboxError],
  ["RelayPolicy.claim", () => new mintid.RelayPolicy({ batchSize: 1, claimMillis: 1000 }).claim(2n ** 64n - 1n), "outbox.time_overflow", mintid.OutboxError],
  ["parseOutboxStatus", () => mintid.parseOutboxStatus("done"), "outbox.unknown_status", mintid.OutboxError],
  ["enqueuedFromRows", () => mintid.enqueuedFromRows(2), "outbox.unexpected_rows", mintid.OutboxError],
  ["checkMarked", () => mintid.checkMarked(0, 42, 7n), "outbox.claim_lost", mintid.OutboxError],
  ["checkOutboxMessage", () => mintid.checkOutboxMessage("", "k", 0), "outbox.invalid_message", mintid.OutboxError],
  ["checkOutboxMessage", () => mintid.checkOutboxMessage("k", "k", -1), RangeError],
];

for (const [entry, call, expected, ErrorClass] of CASES) {
  const label = typeof expected === "string" ? expected : expected.name;
  test(`${entry} rejects bad input with ${label}`, () => {
    assert.throws(call, (error) => {
      if (typeof expected === "string") {
        assert.ok(error instanceof ErrorClass, `${error?.name}: ${error?.message}`);
        assert.ok(error instanceof mintid.MintidError);
        assert.equal(error.code, expected, error.message);
        assert.ok(error.message.length > 0);
      } else {
        assert.ok(error instanceof expected, `${error?.name}: ${error?.message}`);
        if (expected === RangeError) {
          // A number no core type can hold: the core's argument.* codes, as in every host.
          assert.ok(error instanceof mintid.ArgumentError && error instanceof mintid.MintidError, error.message);
          assert.match(error.code, /^argument\.(negative|out_of_range|byte_length)$/);
        } else {
          assert.ok(!(error instanceof mintid.MintidError));
        }
      }
      return true;
    });
  });
}

test("a forged request ID's error names the HTTP problem to answer with", () => {
  assert.throws(() => ring.verify("garbage", "user:42"), (error) => error.problem === "invalid_request_id");
  assert.equal(mintid.problemDetails("invalid_request_id")?.status, 400);
  assert.equal(mintid.problemDetails("nope"), undefined);
});
