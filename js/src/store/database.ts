/**
 * What every driver adapter offers the stores: run a named query on a
 * connection, in autocommit or inside one transaction.
 */

import { type Dialect, loadMigrations, type NamedQuery } from "./sql.js";
import { unavailable } from "./errors.js";

/** Parameter values: integers as `bigint` (or safe `number`), text, bytes, or null. */
export type SqlValue = bigint | number | string | Uint8Array | null;

/** A row, by column name, as the driver returned it. */
export type Row = Readonly<Record<string, unknown>>;

/** The result of a statement. */
export interface Result {
  /** The rows returned (empty for writes without `RETURNING`). */
  readonly rows: readonly Row[];
  /** The affected-row count. */
  readonly rowCount: number;
}

/** One connection: a transaction the caller holds, or a connection in autocommit. */
export interface Connection {
  /** The dialect of its database. */
  readonly dialect: Dialect;
  /** Runs a named query with its parameters by name. */
  run(query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<Result>;
  /** Runs a statement without parameters (migrations). */
  execute(sql: string): Promise<void>;
}

/** A database reached through one driver: a pool of connections or one connection. */
export interface Database {
  /** The dialect of its SQL. */
  readonly dialect: Dialect;
  /** The named query `name` of the dialect, rewritten for the driver. */
  query(name: string): NamedQuery;
  /** Runs `action` on a connection in autocommit. */
  withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T>;
  /**
   * Runs `action` inside one transaction: committed when it returns, rolled
   * back when it throws. `writeLock`: take the write lock at the start
   * (SQLite's `BEGIN IMMEDIATE`; no effect elsewhere).
   */
  transaction<T>(action: (connection: Connection) => Promise<T>, options?: { readonly writeLock?: boolean }): Promise<T>;
  /** Closes what the adapter opened itself (not a pool or connection the caller passed in). */
  close(): Promise<void>;
}

/** An integer column as `bigint` (drivers return int64 as string, number or bigint). */
export function int(value: unknown): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" || typeof value === "string") return BigInt(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

/** A bytes column. */
export function bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`expected a bytes column, got ${typeof value}`);
}

/** A text column (MySQL returns `VARBINARY` text as bytes). */
export function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  throw new TypeError(`expected a text column, got ${typeof value}`);
}

/** Runs a named query expecting at most one row. */
export async function one(connection: Connection, query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<Row | undefined> {
  return (await connection.run(query, params)).rows[0];
}

/** Runs a named query, giving its affected-row count. */
export async function execRows(connection: Connection, query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<number> {
  return (await connection.run(query, params)).rowCount;
}

/** The parameter values of `query`, in its binding order. */
export function bindOrder(query: NamedQuery, params: Readonly<Record<string, SqlValue>>): SqlValue[] {
  return query.params.map((name) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`query ${query.name} needs parameter ${name}`);
    return value;
  });
}

/** Whether a driver error means the server could not be reached or the connection broke. */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code } = error as { code?: unknown };
  if (typeof code !== "string") return false;
  return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN|PROTOCOL_CONNECTION_LOST|PROTOCOL_SEQUENCE_TIMEOUT|ER_CON_COUNT_ERROR|SQLITE_CANTOPEN|57P0[1-3]|08\w{3})$/.test(code)
    || (error instanceof Error && /Connection terminated|connection is closed|Can't add new command when connection is in closed state/i.test(error.message));
}

/** Rethrows a connection error as `store.unavailable`, anything else unchanged. */
export function translate(error: unknown): never {
  throw isConnectionError(error) ? unavailable(error) : error;
}

/** Serialises async actions (a single connection cannot interleave transactions). */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `action` after every action queued before it. */
  run<T>(action: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(action, action);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * Applies the dialect's migrations in order, each file in one transaction
 * (MySQL commits each DDL statement on its own; every statement is
 * idempotent, so a second run completes a partial one).
 */
export async function migrate(database: Database): Promise<void> {
  for (const migration of loadMigrations(database.dialect)) {
    await database.transaction(async (connection) => {
      for (const statement of migration.statements) await connection.execute(statement);
    }, { writeLock: true });
  }
}

/** The migration versions recorded in `mintid_schema_migrations`, ascending. */
export async function appliedMigrations(database: Database): Promise<number[]> {
  return database.withConnection(async (connection) => {
    const query: NamedQuery = { name: "applied_migrations", kind: "many", sql: "SELECT version FROM mintid_schema_migrations ORDER BY version", params: [] };
    const { rows } = await connection.run(query, {});
    return rows.map((row) => Number(int(row["version"])));
  });
}
