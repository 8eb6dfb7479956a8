/** Idempotency keys: which operation (kind), whose (scope), which attempt (id). */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkString } from "./check.js";
import { errorOf } from "./errors.js";

const encoder = new TextEncoder();

/** A field that holds no lone surrogate: UTF-8 cannot carry one, and wasm would send U+FFFD instead. */
function wellFormed(field: string, index: number): string {
  const lone = /[\uD800-\uDFFF]/u.exec(field);
  if (lone !== null) {
    throw errorOf("key.invalid_character", `fields[${index}] holds a lone surrogate at UTF-16 index ${lone.index}, which UTF-8 cannot encode`, { part: "id" });
  }
  return field;
}
/** Header values as bytes: a string is encoded as UTF-8, bytes pass as they are. */
function headerBytes(value: string | Uint8Array): Uint8Array {
  return value instanceof Uint8Array ? value : encoder.encode(checkString(value, "header"));
}

/**
 * A validated idempotency key. Its canonical text is `kind:scope:id` (the
 * scope's `%` and `:` escaped), the same in every mintid language. Immutable.
 *
 * Every constructor throws {@link IdempotencyKeyError} (`key.empty`, `key.too_long`,
 * `key.invalid_character`, with `part` and `position`) for a part that breaks
 * its rules.
 */
export class IdempotencyKey {
  /** The operation, e.g. `order.create`. */
  readonly kind: string;
  /** Whose key it is, e.g. `tenant-7` or `user:123`. */
  readonly scope: string;
  /** Which attempt: the client's key, or one built from fields or a fingerprint. */
  readonly id: string;
  readonly #text: string;

  /** A key from its three parts. */
  constructor(kind: string, scope: string, id: string) {
    checkString(kind, "kind");
    checkString(scope, "scope");
    checkString(id, "id");
    const [k = "", s = "", i = "", text = ""] = call(() => wasm.keyNew(kind, scope, id));
    this.kind = k;
    this.scope = s;
    this.id = i;
    this.#text = text;
  }

  /**
   * A key whose id is an `Idempotency-Key` header value (a Structured Field
   * string `"…"` or a bare token).
   *
   * @throws IdempotencyKeyError also `key.invalid_header`.
   */
  static fromHeader(kind: string, scope: string, header: string | Uint8Array): IdempotencyKey {
    checkString(kind, "kind");
    checkString(scope, "scope");
    const bytes = headerBytes(header);
    return fromParts(call(() => wasm.keyFromHeader(kind, scope, bytes)));
  }

  /** A key whose id is built from business fields (e.g. `["user", "123", "2023-10-01"]`). */
  static fromFields(kind: string, scope: string, fields: readonly string[]): IdempotencyKey {
    checkString(kind, "kind");
    checkString(scope, "scope");
    if (!Array.isArray(fields)) throw new TypeError("fields must be an array of strings");
    const list = fields.map((field, i) => wellFormed(checkString(field, `fields[${i}]`), i));
    return fromParts(call(() => wasm.keyFromFields(kind, scope, list)));
  }

  /**
   * A key for a client that sent none: its id is a UUIDv8 derived from the
   * kind, the scope and the payload's fingerprint (`sha256:…`).
   *
   * @throws IdempotencyKeyError; FingerprintError `fingerprint.invalid_text`.
   */
  static derived(kind: string, scope: string, fingerprint: string): IdempotencyKey {
    checkString(kind, "kind");
    checkString(scope, "scope");
    checkString(fingerprint, "fingerprint");
    return fromParts(call(() => wasm.keyDerived(kind, scope, fingerprint)));
  }

  /**
   * Reads the canonical text `kind:scope:id`.
   *
   * @throws IdempotencyKeyError also `key.invalid_text`.
   */
  static parse(text: string): IdempotencyKey {
    const bytes = encoder.encode(checkString(text, "text"));
    return fromParts(call(() => wasm.keyParse(bytes)));
  }

  /**
   * The id in an `Idempotency-Key` header value.
   *
   * @throws IdempotencyKeyError `key.empty`, `key.too_long`, `key.invalid_header`.
   */
  static parseHeader(value: string | Uint8Array): string {
    const bytes = headerBytes(value);
    return call(() => wasm.keyParseHeader(bytes));
  }

  /** The canonical text `kind:scope:id`. */
  toString(): string {
    return this.#text;
  }

  /** The canonical text, so `JSON.stringify` writes it. */
  toJSON(): string {
    return this.#text;
  }

  /** Whether `other` is the same key. */
  equals(other: IdempotencyKey): boolean {
    return other instanceof IdempotencyKey && other.#text === this.#text;
  }
}

function fromParts(parts: string[]): IdempotencyKey {
  const [kind = "", scope = "", id = ""] = parts;
  return new IdempotencyKey(kind, scope, id);
}
