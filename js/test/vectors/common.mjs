// Helpers shared by the vector runners.
import assert from "node:assert/strict";
import { MintidError } from "mintid";

export function fromHex(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

export function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** `action` must throw a MintidError with `code`. */
export function expectError(action, code, where) {
  assert.throws(action, (error) => {
    assert.ok(error instanceof MintidError, `${where}: expected ${code}, got ${error}`);
    assert.equal(error.code, code, `${where}: ${error.message}`);
    return true;
  }, `${where}: expected ${code}`);
}
