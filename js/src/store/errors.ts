/** The storage adapters' errors (`store.*`). */

import { MintidError } from "../errors.js";

/** A storage adapter error: `store.unavailable` or `store.response_too_large`. */
export class StoreError extends MintidError {
  /** The driver's error behind this one, if any. */
  override readonly cause: unknown;

  /** An error with its `code`, message, the HTTP problem it maps to and the driver's error. */
  constructor(code: "store.unavailable" | "store.response_too_large", message: string, options: { problem?: string; cause?: unknown } = {}) {
    super(code, message, options.problem === undefined ? {} : { problem: options.problem });
    this.cause = options.cause;
  }

  override get name(): string {
    return "StoreError";
  }
}

/** The error for a database that cannot be reached or a connection that broke. */
export function unavailable(cause: unknown): StoreError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new StoreError("store.unavailable", `the database is unavailable: ${detail}`, { problem: "storage_unavailable", cause });
}
