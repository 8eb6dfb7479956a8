/**
 * Argument checks at the JS edge, before a value crosses into wasm, where
 * wasm-bindgen would silently wrap an out-of-range `bigint` (`-1n` becomes
 * 2^64-1), truncate a number or stringify a non-string.
 */

import { ArgumentError } from "./errors.js";

const U64_LIMIT = 1n << 64n;

/** `value` as an unsigned 64-bit integer, or `TypeError` / `RangeError`. */
export function checkU64(value: unknown, what: string): bigint {
  if (typeof value !== "bigint") {
    throw new TypeError(`${what} must be a bigint, got ${describe(value)}`);
  }
  if (value < 0n) throw new ArgumentError("argument.negative", `${what} must not be negative, got ${value}`);
  if (value >= U64_LIMIT) {
    throw new ArgumentError("argument.out_of_range", `${what} must be in [0, 2^64), got ${value}`);
  }
  return value;
}

/**
 * An unsigned 64-bit integer given as a `bigint` or as a non-negative safe
 * integer `number` (a number never carries a value above 2^53 exactly).
 */
export function toU64(value: unknown, what: string): bigint {
  if (typeof value === "number") {
    if (value < 0) throw new ArgumentError("argument.negative", `${what} must not be negative, got ${value}`);
    if (!Number.isSafeInteger(value)) {
      throw new ArgumentError("argument.out_of_range", `${what} must be a non-negative safe integer or a bigint, got ${value}`);
    }
    return BigInt(value);
  }
  return checkU64(value, what);
}

/**
 * A `number` option that counts something (bytes, milliseconds): a safe
 * integer of at least `least`, else `ArgumentError` (`argument.negative`
 * below zero, `argument.out_of_range` otherwise), as Python and Kotlin
 * refuse the same option.
 */
export function checkCount(value: unknown, what: string, least = 0): number {
  if (typeof value !== "number") throw new TypeError(`${what} must be a number, got ${describe(value)}`);
  if (value < 0) throw new ArgumentError("argument.negative", `${what} must not be negative, got ${value}`);
  if (!Number.isSafeInteger(value) || value < least) {
    throw new ArgumentError("argument.out_of_range", `${what} must be a safe integer of at least ${least}, got ${value}`);
  }
  return value;
}

/** An integer `number` in `[0, limit)`, or `TypeError` / `RangeError`. */
export function checkIndex(value: unknown, limit: number, what: string): number {
  if (typeof value !== "number") {
    throw new TypeError(`${what} must be a number, got ${describe(value)}`);
  }
  if (value < 0) throw new ArgumentError("argument.negative", `${what} must not be negative, got ${value}`);
  if (!Number.isInteger(value) || value >= limit) {
    throw new ArgumentError("argument.out_of_range", `${what} must be an integer in [0, ${limit}), got ${value}`);
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

/** `value` as a `Uint8Array` of `length` bytes (any length when omitted). */
export function checkBytes(value: unknown, what: string, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new TypeError(`${what} must be a Uint8Array, got ${describe(value)}`);
  }
  if (length !== undefined && value.length !== length) {
    throw new ArgumentError("argument.byte_length", `${what} must be ${length} bytes, got ${value.length}`);
  }
  return value;
}

/** A short description of a value's type for error messages. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value;
}
