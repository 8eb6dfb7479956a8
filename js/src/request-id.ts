/**
 * Request IDs a client mints and a server verifies.
 *
 * A server's {@link KeyRing} issues a grant for a scope (the user or session
 * it authenticated) and an expiry; the client (a browser, offline) mints a
 * signed request ID per request with {@link mintRequestId} and sends the same
 * ID with every retry; the server checks it with {@link verifyRequestId} and
 * uses its UUIDv7 as the idempotency key's id.
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkString } from "./check.js";
import { uuid7 } from "./uuid.js";

/** The readable fields of a grant or a signed request ID (nothing here is verified). */
export interface SignedFields {
  /** The id of the server key behind it. */
  readonly keyId: number;
  /** When the grant expires, in Unix milliseconds. */
  readonly expiresMillis: bigint;
}

function fields([keyId = 0n, expiresMillis = 0n]: BigUint64Array | bigint[]): SignedFields {
  return { keyId: Number(keyId), expiresMillis };
}

/**
 * A signed request ID (58 characters of base64url) minted from `grant` (a
 * {@link Grant}, or the 58-character text the server issued) for a new
 * UUIDv7, or for `uuid` (a UUIDv7 in any text form) when given, e.g. to
 * re-mint a retry's ID.
 *
 * @throws RequestIdError `request_id.malformed_grant`; Uuid7Error for a bad `uuid`.
 */
export function mintRequestId(grant: Grant | string, uuid?: string): string {
  const text = grant instanceof Grant ? grant.text : checkString(grant, "grant");
  const id = uuid === undefined ? uuid7() : checkString(uuid, "uuid");
  return call(() => wasm.mintRequestId(text, id));
}

/** The parts of a grant. */
export interface GrantFields extends SignedFields {
  /** The 32-byte key the grant signs with: a bearer secret of its scope. */
  readonly grantKey: Uint8Array;
}

/**
 * A grant: the right to mint request IDs for one scope until an expiry,
 * issued by a server's `KeyRing.issueGrant` and sent to the client as its
 * 58-character {@link Grant.text} (`String(grant)` and `JSON.stringify`
 * give the text too). Its grant key is a bearer secret of that scope.
 */
export class Grant implements GrantFields {
  /** The 58-character text the server sends the client. */
  readonly text: string;
  readonly keyId: number;
  readonly expiresMillis: bigint;
  readonly grantKey: Uint8Array;

  private constructor(text: string) {
    const read = grantFields(text);
    this.text = text;
    this.keyId = read.keyId;
    this.expiresMillis = read.expiresMillis;
    this.grantKey = read.grantKey;
  }

  /**
   * Reads the text of a grant.
   *
   * @throws RequestIdError `request_id.malformed_grant`.
   */
  static parse(text: string): Grant {
    return new Grant(checkString(text, "text"));
  }

  /** A signed request ID for `uuid` (a new UUIDv7 by default); see {@link mintRequestId}. */
  mint(uuid?: string): string {
    return mintRequestId(this, uuid);
  }

  /** The text; see {@link Grant.text}. */
  toString(): string {
    return this.text;
  }

  /** The text, so that a grant is written into JSON as its text. */
  toJSON(): string {
    return this.text;
  }
}

/**
 * The parts of a grant text.
 *
 * @throws RequestIdError `request_id.malformed_grant`.
 */
export function grantFields(grant: string): GrantFields {
  checkString(grant, "grant");
  return call(() => ({ ...fields(wasm.grantFields(grant)), grantKey: wasm.grantKey(grant) }));
}

/** The readable parts of a signed request ID, before any verification. */
export interface UnverifiedRequestId extends SignedFields {
  /** The UUIDv7 it carries (hyphenated); trust it only after verification. */
  readonly uuid: string;
  /** The 16 tag bytes. */
  readonly tag: Uint8Array;
}

/**
 * Reads a signed request ID without verifying it (for logs and debugging).
 *
 * @throws RequestIdError `request_id.malformed` or `request_id.unsupported_version`.
 */
export function inspectRequestId(requestId: string): UnverifiedRequestId {
  checkString(requestId, "requestId");
  return call(() => ({
    ...fields(wasm.requestIdFields(requestId)),
    uuid: wasm.requestIdUnverifiedUuid(requestId),
    tag: wasm.requestIdTag(requestId),
  }));
}
