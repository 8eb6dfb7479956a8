/**
 * What every executor (one per database library) offers the stores: run a
 * statement of the core's manifest with positional values on a connection,
 * in autocommit or inside one transaction, and classify the driver's errors.
 */

import { systemClock } from "./clock.js";
import { DbError, type Dialect, manifestOf, type SqlValue, type Statement } from "./driver.js";
import { runWire } from "./loop.js";
import { NO_METRICS, Reporter } from "./metrics.js";

export type { SqlValue } from "./driver.js";

/** A row, by column name (leases, segments, the outbox read their rows this way). */
export type Row = Readonly<Record<string, SqlValue>>;

/** The result of a statement. */
export interface Result {
  /** The column names, in `SELECT`/`RETURNING` order (empty for a write without `RETURNING`). */
  readonly columns: readonly string[];
  /** The rows, each with its values in column order: integers as `bigint`, bytes as `Uint8Array`. */
  readonly rows: readonly (readonly SqlValue[])[];
  /** The affected-row count. */
  readonly rowCount: number;
}

/** One connection: a transaction the caller holds, or a connection in autocommit. */
export interface Connection {
  /** The dialect of its database. */
  readonly dialect: Dialect;
  /**
   * Runs `statement` binding `values` positionally (as a server-side
   * prepared statement where the library has them).
   *
   * @throws DbError the driver's error, classified.
   */
  run(statement: Statement, values: readonly SqlValue[]): Promise<Result>;
  /**
   * Runs a statement without parameters (migrations, transaction control).
   *
   * @throws DbError the driver's error, classified.
   */
  execute(sql: string): Promise<void>;
}

/** A database reached through one library: a pool of connections or one connection. */
export interface Database {
  /** The dialect of its SQL. */
  readonly dialect: Dialect;
  /**
   * Whether a connection may stay checked out while the caller's own code
   * runs (a relay holds one from send to send): not when every connection
   * to the database waits on one in-process queue (SQLite's executor), where
   * the caller's own statements would wait behind it. Absent: not.
   */
  readonly holdsAcrossCalls?: boolean;
  /** The named query `name` of the dialect, rendered for the library by the core. */
  statement(name: string): Statement;
  /**
   * Runs `action` on a connection in autocommit.
   *
   * @throws DbError `connection_lost` when no connection can be had.
   */
  withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T>;
  /**
   * Runs `action` inside one transaction: committed when it returns, rolled
   * back when it throws. `writeLock`: take the write lock at the start
   * (SQLite's `BEGIN IMMEDIATE`; no effect elsewhere).
   *
   * @throws StoreError `store.unavailable` (no connection, or it broke),
   * `store.query_failed`, … for a database error; `action`'s own errors unchanged.
   */
  transaction<T>(action: (connection: Connection) => Promise<T>, options?: { readonly writeLock?: boolean }): Promise<T>;
  /** Closes what the executor opened itself (not a pool or connection the caller passed in). */
  close(): Promise<void>;
}

/** An integer column as `bigint`. */
export function int(value: SqlValue | undefined): bigint {
  if (typeof value === "bigint") return value;
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}

/** A text column (MySQL returns `VARBINARY` text as bytes). */
export function text(value: SqlValue | undefined): string {
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  throw new TypeError(`expected a text column, got ${typeof value}`);
}

/** `statement`'s values in binding order, from values by parameter name. */
function bindOrder(statement: Statement, params: Readonly<Record<string, SqlValue>>): SqlValue[] {
  return statement.params.map((name) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`query ${statement.name} needs parameter ${name}`);
    return value;
  });
}

/** Runs a statement with values by parameter name; its rows by column name. */
export async function runNamed(connection: Connection, statement: Statement, params: Readonly<Record<string, SqlValue>>): Promise<Row[]> {
  const { columns, rows } = await connection.run(statement, bindOrder(statement, params));
  return rows.map((row) => Object.fromEntries(columns.map((column, index) => [column, row[index] ?? null])));
}

/** Runs a statement expecting at most one row. */
export async function one(connection: Connection, statement: Statement, params: Readonly<Record<string, SqlValue>>): Promise<Row | undefined> {
  return (await runNamed(connection, statement, params))[0];
}

/** A `DbError` for `cause`: the class `classify` gives it, or `cause` itself when it already is one. */
export function dbError(cause: unknown, classify: (error: unknown) => DbError["errorClass"]): DbError {
  return cause instanceof DbError ? cause : new DbError(classify(cause), cause);
}

/**
 * Runs `action` on `connection` between `begin` (e.g. `BEGIN`) and `COMMIT`,
 * rolled back when it throws.
 */
export async function betweenBeginAndCommit<T>(connection: Connection, begin: string, action: (connection: Connection) => Promise<T>): Promise<T> {
  await connection.execute(begin);
  try {
    const result = await action(connection);
    await connection.execute("COMMIT");
    return result;
  } catch (error) {
    await connection.execute("ROLLBACK").catch(() => undefined);
    throw error;
  }
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

/** Runs the core's migration driver on `database` (`pending`: only list what is not applied); the versions it names. */
async function migrations(database: Database, pending: boolean): Promise<number[]> {
  const spec = { kind: "migrations", ...manifestOf(database.dialect), pending } as const;
  const context = { clock: systemClock, reporter: new Reporter(NO_METRICS) };
  const end = await runWire(spec, (action) => database.withConnection(action), context);
  if (end.tag !== "done") throw new TypeError("the migration driver yielded a statement unexecuted");
  return [...end.versions];
}

/**
 * Applies the dialect's numbered migrations in order with the core's
 * migration driver (`docs/spec.md`, "The migration driver"): under the
 * migration lock (another process migrating is waited for), each in one
 * transaction where the dialect allows; the versions this call applied
 * (empty when every one was applied already).
 *
 * @throws StoreError `store.unavailable`, `store.conflict` (another process
 * held the lock for 5 minutes), `store.query_failed`.
 */
export function migrate(database: Database): Promise<number[]> {
  return migrations(database, false);
}

/**
 * The versions of the dialect's migrations that `mintid_schema_migrations`
 * does not record, in order: empty once {@link migrate} ran (or the same
 * files through a migration tool).
 *
 * @throws StoreError `store.query_failed` for a database never migrated, `store.unavailable`.
 */
export function pendingMigrations(database: Database): Promise<number[]> {
  return migrations(database, true);
}
