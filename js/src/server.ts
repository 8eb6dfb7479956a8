/**
 * What servers need beyond minting: key rings and request-ID verification.
 * (Not in the browser build.)
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkBytes, checkIndex, checkString, toU64 } from "./check.js";
import { Grant } from "./request-id.js";

/** A server secret: at least 32 random bytes, under a key id (a u32). */
export interface SecretKey {
  /** The key id, carried in grants and request IDs. */
  readonly id: number;
  /** The secret bytes (at least 32, from a CSPRNG). */
  readonly secret: Uint8Array;
}

const U32_LIMIT = 2 ** 32;

function keyArgs(key: SecretKey): [number, Uint8Array] {
  if (typeof key !== "object" || key === null) throw new TypeError("key must be { id, secret }");
  return [checkIndex(key.id, U32_LIMIT, "key.id"), checkBytes(key.secret, "key.secret")];
}

/** How old or how far ahead a request ID's timestamp may be. */
export interface VerifyOptions {
  /** The time to verify at, in Unix milliseconds (default `Date.now()`). */
  readonly now?: number | bigint;
  /** The oldest accepted, in milliseconds (default 24 h; keep it ≤ the records' retention). */
  readonly maxAgeMillis?: number | bigint;
  /** How far in the future (client clock skew), in milliseconds (default 5 min). */
  readonly maxSkewMillis?: number | bigint;
}

function verifyArgs(options: VerifyOptions): [bigint, bigint | undefined, bigint | undefined] {
  return [
    toU64(options.now ?? Date.now(), "now"),
    options.maxAgeMillis === undefined ? undefined : toU64(options.maxAgeMillis, "maxAgeMillis"),
    options.maxSkewMillis === undefined ? undefined : toU64(options.maxSkewMillis, "maxSkewMillis"),
  ];
}

/**
 * A server's secret keys: the current one issues grants, every one verifies
 * (rotate a new key in, retire an old one once no unexpired grant uses it).
 *
 * @throws RequestIdError `request_id.weak_secret`, `request_id.duplicate_key_id`,
 * `request_id.current_key`, `request_id.unknown_key`.
 */
export class KeyRing {
  readonly #ring: wasm.KeyRingHandle;

  /** A ring whose current key is `current`. */
  constructor(current: SecretKey) {
    const [id, secret] = keyArgs(current);
    this.#ring = call(() => new wasm.KeyRingHandle(id, secret));
  }

  /** Adds a key that only verifies. */
  add(key: SecretKey): void {
    const [id, secret] = keyArgs(key);
    call(() => this.#ring.add(id, secret));
  }

  /** Adds a key and makes it the current one. */
  rotate(key: SecretKey): void {
    const [id, secret] = keyArgs(key);
    call(() => this.#ring.rotate(id, secret));
  }

  /** Removes a key (not the current one). */
  retire(id: number): void {
    const keyId = checkIndex(id, U32_LIMIT, "id");
    call(() => this.#ring.retire(keyId));
  }

  /** The current key id. */
  get currentId(): number {
    return this.#ring.currentId;
  }

  /** Every key id in the ring. */
  get keyIds(): number[] {
    return Array.from(this.#ring.keyIds);
  }

  /**
   * A {@link Grant} letting a client mint request IDs for `scope` (1 to 64
   * UTF-8 bytes) until `expiresMillis` (Unix ms); send the client its `text`.
   *
   * @throws RequestIdError `request_id.invalid_scope`, `request_id.expiry_out_of_range`.
   */
  issueGrant(scope: string, expiresMillis: number | bigint): Grant {
    checkString(scope, "scope");
    const expires = toU64(expiresMillis, "expiresMillis");
    return Grant.parse(call(() => this.#ring.issueGrant(scope, expires)));
  }

  /**
   * The UUIDv7 (hyphenated) of a signed request ID, once it is shown to be
   * minted from an unexpired grant of this ring for `scope` and fresh.
   *
   * @throws RequestIdError `request_id.invalid_scope`, `request_id.malformed`,
   * `request_id.unsupported_version`, `request_id.unknown_key`, `request_id.bad_tag`,
   * `request_id.grant_expired`, `request_id.too_old`, `request_id.in_future`;
   * its `problem` names the HTTP problem to answer with.
   */
  verify(requestId: string, scope: string, options: VerifyOptions = {}): string {
    checkString(requestId, "requestId");
    checkString(scope, "scope");
    const [now, maxAge, maxSkew] = verifyArgs(options);
    return call(() => this.#ring.verify(requestId, scope, now, maxAge, maxSkew));
  }
}

/** {@link KeyRing.verify}: the UUIDv7 of a genuine, fresh signed request ID of `scope`. */
export function verifyRequestId(ring: KeyRing, requestId: string, scope: string, options: VerifyOptions = {}): string {
  if (!(ring instanceof KeyRing)) throw new TypeError("ring must be a KeyRing");
  return ring.verify(requestId, scope, options);
}

/**
 * The UUIDv7 (hyphenated) of an unsigned request ID (a UUIDv7 in any text
 * form) that is fresh. It proves nothing about who made it: scope keys by client.
 *
 * @throws RequestIdError `request_id.malformed`, `request_id.too_old`, `request_id.in_future`.
 */
export function verifyUnsignedRequestId(text: string, options: VerifyOptions = {}): string {
  checkString(text, "text");
  const [now, maxAge, maxSkew] = verifyArgs(options);
  return call(() => wasm.verifyUnsignedRequestId(text, now, maxAge, maxSkew));
}
