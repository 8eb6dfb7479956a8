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
 * A signed request ID (58 characters of base64url) minted from `grant` (the
 * 58-character text the server issued) for a new UUIDv7, or for `uuid` (a
 * UUIDv7 in any text form) when given, e.g. to re-mint a retry's ID.
 *
 * @throws RequestIdError `request_id.malformed_grant`; Uuid7Error for a bad `uuid`.
 */
export function mintRequestId(grant: string, uuid?: string): string {
  checkString(grant, "grant");
  const id = uuid === undefined ? uuid7() : checkString(uuid, "uuid");
  return call(() => wasm.mintRequestId(grant, id));
}

/** The parts of a grant. */
export interface GrantFields extends SignedFields {
  /** The 32-byte key the grant signs with: a bearer secret of its scope. */
  readonly grantKey: Uint8Array;
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
