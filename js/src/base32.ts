/** Crockford base32: 13 sortable characters for a 64-bit value. */

import * as wasm from "../wasm/mintid_wasm.js";
import { checkString, checkU64 } from "./check.js";
import { rethrow } from "./errors.js";

/**
 * 13 upper-case Crockford base32 digits of a 64-bit value; text order equals
 * numeric order.
 *
 * @throws TypeError if `value` is not a bigint; RangeError if it is outside `[0, 2^64)`.
 */
export function encodeBase32(value: bigint): string {
  return wasm.base32EncodeU64(checkU64(value, "value"));
}

/**
 * The 64-bit value of 13 Crockford base32 digits (case-insensitive; `I`/`L`
 * read as 1, `O` as 0).
 *
 * @throws Base32Error (`base32.*`) if the text is not 13 valid digits of a 64-bit value.
 */
export function decodeBase32(text: string): bigint {
  checkString(text, "text");
  try {
    return wasm.base32DecodeU64(text);
  } catch (error) {
    rethrow(error);
  }
}
