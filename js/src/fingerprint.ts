/**
 * Payload fingerprints: the RFC 8785 (JCS) canonical form of a JSON payload,
 * hashed with SHA-256, written `sha256:` + base64url. The same payload gives
 * the same fingerprint in every mintid language: the core parses and
 * canonicalises the JSON text itself, so `JSON.stringify`'s formatting never
 * decides the hash.
 *
 * One input rule per call, the same in every language: {@link fingerprint}
 * takes a parsed value (never JSON text: a value that is one string is
 * refused with `fingerprint.string_value`), {@link fingerprintJson} takes
 * JSON text (a string or its UTF-8 bytes), {@link fingerprintBytes} a raw body.
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkBytes, checkString, describe } from "./check.js";
import { errorOf } from "./errors.js";

/** Which fields of a payload count, as JSON Pointers (RFC 6901). */
export interface FieldSelection {
  /** Only these subtrees count (default: the whole document). */
  readonly include?: readonly string[];
  /** These subtrees never count (e.g. `"/sent_at"`). */
  readonly exclude?: readonly string[];
}

/**
 * A payload's fingerprint, as Python's, Kotlin's and Rust's `Fingerprint`:
 * its text form `sha256:` + 43 base64url characters (`text`, `toString()`,
 * and `JSON.stringify`), its 32 digest bytes (`digest()`, a copy), and
 * equality by value (`equals`). Store and compare it as its `text`.
 */
export class Fingerprint {
  /** The text form, `sha256:` + base64url of the digest. */
  readonly text: string;

  private constructor(text: string) {
    this.text = text;
  }

  /** Wraps a text the core made (already checked). */
  static ofText(text: string): Fingerprint {
    return new Fingerprint(text);
  }

  /**
   * Reads the text form `sha256:…`.
   *
   * @throws FingerprintError `fingerprint.invalid_text`.
   */
  static parse(text: string): Fingerprint {
    return new Fingerprint(formatFingerprint(parseFingerprint(text)));
  }

  /** The fingerprint of 32 SHA-256 digest bytes. */
  static fromDigest(digest: Uint8Array): Fingerprint {
    return new Fingerprint(formatFingerprint(digest));
  }

  /** The 32 digest bytes (a copy). */
  digest(): Uint8Array {
    return wasm.fingerprintParse(this.text);
  }

  /** Whether `other` is a fingerprint of the same digest. */
  equals(other: unknown): boolean {
    return other instanceof Fingerprint && other.text === this.text;
  }

  /** The text form. */
  toString(): string {
    return this.text;
  }

  /** The text form, for `JSON.stringify`. */
  toJSON(): string {
    return this.text;
  }
}

/** A fingerprint's text, given a {@link Fingerprint} or its text (`what` names it in errors). */
export function fingerprintText(value: Fingerprint | string, what: string): string {
  return value instanceof Fingerprint ? value.text : checkString(value, what);
}

const encoder = new TextEncoder();
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function pointers(list: readonly string[] | undefined, what: string): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new TypeError(`${what} must be an array of strings`);
  return list.map((pointer, i) => checkString(pointer, `${what}[${i}]`));
}

/** UTF-8 bytes of a JSON text; a string with a lone surrogate has none. */
function jsonBytes(text: string | Uint8Array): Uint8Array {
  if (text instanceof Uint8Array) return text;
  checkString(text, "text");
  if (LONE_SURROGATE.test(text)) {
    throw errorOf("fingerprint.invalid_utf8", "the JSON text holds a lone surrogate, which UTF-8 cannot encode");
  }
  return encoder.encode(text);
}

/**
 * The JSON text of a JS value, refusing what JSON cannot represent instead
 * of dropping or changing it as `JSON.stringify` does: `undefined`,
 * functions, symbols, `bigint`s, `NaN` and infinities, array holes, and
 * objects other than plain objects and arrays (a `Map` would become `{}`).
 * A value's `toJSON` (e.g. a `Date`'s) is honoured.
 */
function toJsonText(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, function (this: unknown, key: string, member: unknown): unknown {
      const where = key === "" ? "the value" : `the member ${JSON.stringify(key)}`;
      switch (typeof member) {
        case "string":
        case "boolean":
          return member;
        case "number":
          if (Number.isFinite(member)) return member;
          throw errorOf("fingerprint.invalid_json", `${where} is ${member}, which JSON cannot represent`);
        case "object": {
          if (member === null || Array.isArray(member)) return member;
          const prototype: unknown = Object.getPrototypeOf(member);
          if (prototype === Object.prototype || prototype === null) return member;
          if (ArrayBuffer.isView(member)) {
            throw errorOf("fingerprint.invalid_json", `${where} is bytes; pass JSON text to fingerprintJson or a raw body to fingerprintBytes`);
          }
          const kind = (member as { constructor?: { name?: unknown } }).constructor?.name;
          throw errorOf("fingerprint.invalid_json", `${where} is a ${String(kind ?? "non-plain object")}; pass a plain object or array`);
        }
        default:
          throw errorOf("fingerprint.invalid_json", `${where} is ${describe(member)}, which JSON cannot represent`);
      }
    });
  } catch (error) {
    if (error instanceof TypeError) {
      throw errorOf("fingerprint.invalid_json", `the value cannot be written as JSON: ${error.message}`);
    }
    throw error;
  }
  if (text === undefined) throw errorOf("fingerprint.invalid_json", "the value cannot be written as JSON");
  return text;
}

/**
 * The fingerprint of a parsed JS value (plain objects, arrays, finite
 * numbers, booleans, null, and strings inside them), optionally narrowed to
 * some fields. JSON text is never parsed here: pass it to {@link fingerprintJson}.
 *
 * @throws FingerprintError `fingerprint.string_value` for a value that is one
 * string (it could be meant as JSON text), `fingerprint.invalid_json` for a
 * value JSON cannot represent (bytes among them), or the core's codes
 * (`fingerprint.number_out_of_range` for an integer beyond ±(2^53−1),
 * `fingerprint.lone_surrogate`, `fingerprint.too_deep`, `fingerprint.invalid_pointer`).
 */
export function fingerprint(value: unknown, selection: FieldSelection = {}): Fingerprint {
  const include = pointers(selection.include, "include");
  const exclude = pointers(selection.exclude, "exclude");
  const bytes = jsonBytes(toJsonText(value));
  return Fingerprint.ofText(call(() => wasm.fingerprintValue(bytes, include, exclude)));
}

/**
 * The fingerprint of a JSON text (a string, or its UTF-8 bytes, e.g. a
 * request body as received).
 *
 * @throws FingerprintError `fingerprint.invalid_utf8`, `fingerprint.invalid_json`,
 * `fingerprint.duplicate_member`, `fingerprint.lone_surrogate`,
 * `fingerprint.number_out_of_range`, `fingerprint.too_deep` (with `position`),
 * or `fingerprint.invalid_pointer`.
 */
export function fingerprintJson(text: string | Uint8Array, selection: FieldSelection = {}): Fingerprint {
  const include = pointers(selection.include, "include");
  const exclude = pointers(selection.exclude, "exclude");
  const bytes = jsonBytes(text);
  return Fingerprint.ofText(call(() => wasm.fingerprintJson(bytes, include, exclude)));
}

/** The RFC 8785 canonical text that {@link fingerprintJson} hashes for the same arguments. */
export function canonicalJson(text: string | Uint8Array, selection: FieldSelection = {}): string {
  const include = pointers(selection.include, "include");
  const exclude = pointers(selection.exclude, "exclude");
  const bytes = jsonBytes(text);
  return call(() => wasm.canonicalizeJson(bytes, include, exclude));
}

/** The fingerprint of a raw (non-JSON) body: SHA-256 of a zero byte and the body. */
export function fingerprintBytes(body: Uint8Array): Fingerprint {
  return Fingerprint.ofText(wasm.fingerprintBytes(checkBytes(body, "body")));
}

/**
 * The 32 SHA-256 digest bytes of a fingerprint text.
 *
 * @throws FingerprintError `fingerprint.invalid_text`.
 */
export function parseFingerprint(text: string): Uint8Array {
  checkString(text, "text");
  return call(() => wasm.fingerprintParse(text));
}

/** The text form (`sha256:` + base64url) of a 32-byte SHA-256 digest. */
export function formatFingerprint(digest: Uint8Array): string {
  return wasm.fingerprintFromDigest(checkBytes(digest, "digest", 32));
}
