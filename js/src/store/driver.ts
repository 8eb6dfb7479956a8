/**
 * The core's store drivers as the stores use them: the manifest of each
 * dialect (statements in the executor's placeholder style, migrations), the
 * schema's limits, and the core's errors with the database driver's error as
 * their `cause`. The drivers themselves cross on the wire (`wire.ts`, `loop.ts`).
 */

import "../node.js";
import { rethrow } from "../errors.js";
import * as wasm from "../wasm/mintid_wasm.js";

export type { DbErrorClass, SqlValue } from "../wasm/mintid_wasm.js";

/** The SQL dialects of `schema/`. */
export type Dialect = "postgres" | "mysql" | "sqlite";

/** How a named query's result is read: rows (`one`, `many`) or an affected-row count. */
export type StatementKind = "one" | "many" | "execrows" | "exec";

/** One named query of `schema/<dialect>/queries.sql`, rendered for a database library by the core. */
export interface Statement {
  /** Its name, e.g. `claim`. */
  readonly name: string;
  /** What it returns. */
  readonly kind: StatementKind;
  /** The SQL with the library's placeholders (`?` or `$1`). */
  readonly sql: string;
  /** The parameter names in binding order. */
  readonly params: readonly string[];
}


/** One limit of the schema that the core enforces before it writes. */
export interface StoreLimit {
  /** What it limits, e.g. `record.response_body`. */
  readonly name: string;
  /** The most bytes allowed. */
  readonly maxBytes: number;
}

/** The placeholder style of each dialect's Node library: `?` (better-sqlite3, mysql2) or `$1` (pg). */
const PLACEHOLDER = { sqlite: "question", mysql: "question", postgres: "numbered" } as const;

/** The manifest of `dialect` for its Node library. */
export function manifestOf(dialect: Dialect): wasm.StoreManifest {
  return { dialect, placeholder: PLACEHOLDER[dialect] };
}

const statementCache = new Map<Dialect, ReadonlyMap<string, Statement>>();

/** Every named query of `dialect`, rendered for its Node library (made once per dialect). */
export function statementsOf(dialect: Dialect): ReadonlyMap<string, Statement> {
  let statements = statementCache.get(dialect);
  if (statements === undefined) {
    statements = new Map(wasm.storeStatements(dialect, PLACEHOLDER[dialect]).map((statement) => [statement.name, statement]));
    statementCache.set(dialect, statements);
  }
  return statements;
}

/** Every limit of the schema, as the core enforces them. */
export function storeLimits(): readonly StoreLimit[] {
  return wasm.storeLimits();
}

/**
 * A database error as an executor classified it: the message is the
 * driver's, `cause` the driver's own error. The stores turn it into the
 * core's {@link StoreError} (with the same `cause`).
 */
export class DbError extends Error {
  /** The executor's classification. */
  readonly errorClass: wasm.DbErrorClass;

  /** The classified error `cause`. */
  constructor(errorClass: wasm.DbErrorClass, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.errorClass = errorClass;
  }

  override get name(): string {
    return "DbError";
  }
}

/**
 * The core's store error for a database error met outside a driver (an
 * executor's own transaction, `WorkerLeases.load`): `store.unavailable` for
 * a lost connection, `store.query_failed` or `store.conflict` otherwise;
 * anything that is not a {@link DbError} unchanged.
 */
export function storeErrorOf(error: unknown): unknown {
  if (!(error instanceof DbError)) return error;
  try {
    rethrow(wasm.storeFailure(error.errorClass, error.message), error.cause);
  } catch (typed) {
    return typed;
  }
}

/** Runs `action`, its database errors thrown as the core's store errors. */
export async function storeCall<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw storeErrorOf(error);
  }
}

export { classifyDbError } from "../wasm/mintid_wasm.js";
