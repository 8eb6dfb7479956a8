// Helpers shared by the vector runners.
import assert from "node:assert/strict";
import { MintidError } from "mintid";

export function fromHex(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

export function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * `action` must throw a MintidError with `code`, and with the vector's
 * `position` and `part` when it names them.
 */
export function expectError(action, code, where, vector = {}) {
  assert.throws(action, (error) => {
    assert.ok(error instanceof MintidError, `${where}: expected ${code}, got ${error}`);
    assert.equal(error.code, code, `${where}: ${error.message}`);
    if ("position" in vector) assert.equal(error.position, vector.position, `${where}: position (${error.message})`);
    if ("part" in vector) assert.equal(error.part, vector.part, `${where}: part (${error.message})`);
    return true;
  }, `${where}: expected ${code}`);
}
