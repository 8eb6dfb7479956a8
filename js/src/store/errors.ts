/** The storage adapters' errors (`store.*`). */

import { MintidError } from "../errors.js";

/** A storage adapter error: `store.unavailable`, `store.response_too_large` or `store.stale_snapshot`. */
export class StoreError extends MintidError {
  /** The driver's error behind this one, if any. */
  override readonly cause: unknown;

  /** An error with its `code`, message, the HTTP problem it maps to and the driver's error. */
  constructor(code: "store.unavailable" | "store.response_too_large" | "store.stale_snapshot", message: string, options: { problem?: string; cause?: unknown } = {}) {
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

/**
 * The error for a claim that neither inserted its record nor found the one in
 * the way, round after round: the caller's transaction reads an old snapshot
 * (MySQL/MariaDB REPEATABLE READ after an earlier read of the table).
 */
export function staleSnapshot(key: string, rounds: number): StoreError {
  return new StoreError("store.stale_snapshot", `the claim of ${key} neither inserted nor found its record ${rounds} times: the transaction reads an old snapshot`);
}
