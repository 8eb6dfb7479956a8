/**
 * Argument checks at the JS edge, before a value crosses into wasm, where
 * wasm-bindgen would silently wrap an out-of-range `bigint` (`-1n` becomes
 * 2^64-1) or stringify a non-string.
 */

const U64_LIMIT = 1n << 64n;

/** `value` as an unsigned 64-bit integer, or `TypeError` / `RangeError`. */
export function checkU64(value: unknown, what: string): bigint {
  if (typeof value !== "bigint") {
    throw new TypeError(`${what} must be a bigint, got ${describe(value)}`);
  }
  if (value < 0n || value >= U64_LIMIT) {
    throw new RangeError(`${what} must be in [0, 2^64), got ${value}`);
  }
  return value;
}

/** `value` as a string, or `TypeError`. */
export function checkString(value: unknown, what: string): string {
  if (typeof value !== "string") {
    throw new TypeError(`${what} must be a string, got ${describe(value)}`);
  }
  return value;
}

/** A short description of a value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
