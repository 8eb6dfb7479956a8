// One call, one shape in every host (issue 15): the argument order of
// `decide`.
import assert from "node:assert/strict";
import { test } from "node:test";
import * as mintid from "mintid";

const policy = new mintid.RecordPolicy({ leaseMillis: 1000, retentionMillis: 100_000 });
const FP = String(mintid.fingerprint({ a: 1 }));

test("decide takes (existing, incoming, nowMillis, policy) as every host does", () => {
  const decision = mintid.decide(null, { fingerprint: FP }, 5000, policy);
  assert.equal(decision.kind, "execute");
  assert.equal(decision.claim.record.leaseDeadlineMillis, 6000n);
  assert.equal(decision.claim.record.createdMillis, 5000n);
});

test("fingerprint returns a Fingerprint, as in Python, Kotlin and Rust", () => {
  const made = mintid.fingerprint({ b: [1, 2], a: "x" });
  assert.ok(made instanceof mintid.Fingerprint);
  assert.match(made.text, /^sha256:[A-Za-z0-9_-]{43}$/);
  assert.equal(String(made), made.text);
  assert.equal(`${made}`, made.text);
  assert.equal(JSON.stringify({ fp: made }), JSON.stringify({ fp: made.text }));
  const digest = made.digest();
  assert.equal(digest.length, 32);
  digest[0] ^= 0xff;
  assert.notDeepEqual(made.digest(), digest, "digest() hands out a copy");
  assert.ok(made.equals(mintid.fingerprintJson('{"a":"x","b":[1,2]}')));
  assert.ok(made.equals(mintid.Fingerprint.parse(made.text)));
  assert.ok(made.equals(mintid.Fingerprint.fromDigest(made.digest())));
  assert.ok(!made.equals(mintid.fingerprint({ a: "y" })));
  assert.ok(!made.equals(made.text), "a Fingerprint never equals a string");
  assert.ok(mintid.fingerprintBytes(new Uint8Array([1])) instanceof mintid.Fingerprint);
  assert.throws(() => mintid.Fingerprint.parse("sha256:x"), (error) => error.code === "fingerprint.invalid_text");
});

test("a Fingerprint or its text is accepted wherever a fingerprint goes", () => {
  const made = mintid.fingerprint({ a: 1 });
  assert.deepEqual(mintid.decide(null, { fingerprint: made }, 5000, policy), mintid.decide(null, { fingerprint: made.text }, 5000, policy));
});

test("a key part with a lone surrogate is refused with the typed key error, as in Kotlin and Python", () => {
  const refused = (part) => (error) => error instanceof mintid.IdempotencyKeyError && error.code === "key.invalid_character" && error.part === part;
  for (const id of ["a\uD800b", "\uDC00", "tail\uD83D"]) {
    assert.throws(() => new mintid.IdempotencyKey("order.create", "user:1", id), refused("id"), JSON.stringify(id));
  }
  assert.throws(() => new mintid.IdempotencyKey("order.create", "user:\uD800", "x"), refused("scope"));
  assert.throws(() => new mintid.IdempotencyKey("order.\uD800", "user:1", "x"), refused("kind"));
  // A field may hold any character (U+FFFD too), so the lone surrogate is refused before wasm turns it into one.
  assert.throws(() => mintid.IdempotencyKey.fromFields("order.create", "user:1", ["a", "\uD800"]), refused("id"));
  assert.equal(mintid.IdempotencyKey.fromFields("order.create", "user:1", ["a", "\uFFFD", "\u{1F600}"]).kind, "order.create");
  assert.throws(() => mintid.IdempotencyKey.parse("order.create:user:1:a\uD800"), (error) => error instanceof mintid.IdempotencyKeyError);
  assert.throws(() => mintid.IdempotencyKey.fromHeader("order.create", "user:1", '"a\uD800"'), (error) => error instanceof mintid.IdempotencyKeyError);
});
