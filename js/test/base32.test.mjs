import assert from "node:assert/strict";
import { test } from "node:test";
import { Base32Error, MintidError, decodeBase32, encodeBase32 } from "mintid";

test("base32 round-trips 64-bit values without a JS number", () => {
  for (const value of [0n, 1n, 32n, (1n << 53n) + 1n, (1n << 64n) - 1n]) {
    assert.equal(decodeBase32(encodeBase32(value)), value);
  }
  assert.equal(encodeBase32((1n << 64n) - 1n), "FZZZZZZZZZZZZ");
  assert.equal(decodeBase32("0000000000O1L"), 33n);
});

test("base32 rejects bigints outside [0, 2^64) before they wrap", () => {
  assert.throws(() => encodeBase32(-1n), RangeError);
  assert.throws(() => encodeBase32(1n << 64n), RangeError);
  assert.throws(() => encodeBase32(5), TypeError);
});

test("base32 decode errors carry the core's code", () => {
  for (const text of ["123", "00000000000U0", "G000000000000"]) {
    assert.throws(
      () => decodeBase32(text),
      (error) => error instanceof Base32Error && error instanceof MintidError && error.code.startsWith("base32."),
    );
  }
  assert.throws(() => decodeBase32(13), TypeError);
});
