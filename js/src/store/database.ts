/**
 * What every executor (one per database library) offers the stores: run a
 * statement of the core's manifest with positional values on a connection,
 * in autocommit or inside one transaction, and classify the library's errors.
 * A library gives an {@link Executor} and a way to lend its clients; the
 * rest is shared.
 */

import { systemClock } from "./clock.js";
import { DbError, type DbErrorClass, type Dialect, type SqlValue, type Statement, statementsOf, storeCall } from "./driver.js";
import { runWire, type Use } from "./loop.js";
import { NO_METRICS, Reporter } from "./metrics.js";

export type { SqlValue } from "./driver.js";

/** A row, by column name. */
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
   * The database library's own object it runs on (a `pg` client, a `mysql2`
   * connection, a better-sqlite3 `Database`), for the caller's own statements
   * in the same transaction.
   */
  readonly client: unknown;
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
   * to the database waits on one in-process queue (SQLite's executor).
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

/** One database library's part: run and classify on its client `C`. */
export interface Executor<C> {
  readonly dialect: Dialect;
  /** Runs `sql` binding `values`; throws the library's error. */
  run(client: C, sql: string, values: readonly SqlValue[]): Promise<Result>;
  /** Runs `sql` without parameters; throws the library's error. */
  execute(client: C, sql: string): Promise<void>;
  /** The class of one of the library's errors. */
  classify(error: unknown): DbErrorClass;
}

/** A client lent by a pool, given back with whether it broke. */
export interface Lent<C> {
  readonly client: C;
  release(broken: boolean): void;
}

/** A library's client as a {@link Connection}: its errors classified, a lost connection remembered. */
export class ClientConnection<C> implements Connection {
  readonly #executor: Executor<C>;
  readonly client: C;
  /** Whether a statement found the connection gone (its pool then drops it). */
  broken = false;

  constructor(executor: Executor<C>, client: C) {
    this.#executor = executor;
    this.client = client;
  }

  get dialect(): Dialect {
    return this.#executor.dialect;
  }

  run(statement: Statement, values: readonly SqlValue[]): Promise<Result> {
    return this.#classified(() => this.#executor.run(this.client, statement.sql, values));
  }

  execute(sql: string): Promise<void> {
    return this.#classified(() => this.#executor.execute(this.client, sql));
  }

  async #classified<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      const failure = error instanceof DbError ? error : new DbError(this.#executor.classify(error), error);
      if (failure.errorClass === "connection_lost") this.broken = true;
      throw failure;
    }
  }
}

/**
 * A {@link Database} whose connections are clients `lend` gives (a pool's,
 * or one behind an in-process queue); `holdsAcrossCalls` and `close` as the
 * library's.
 */
export function lendingDatabase<C>(executor: Executor<C>, lend: () => Promise<Lent<C>>, options: { readonly holdsAcrossCalls: boolean; readonly close?: () => void }): Database {
  const { dialect } = executor;
  const statements = statementsOf(dialect);
  const withConnection = async <T>(action: (connection: Connection) => Promise<T>): Promise<T> => {
    let lent: Lent<C>;
    try {
      lent = await lend();
    } catch (error) {
      // No connection to be had (down, refused, a file that cannot be opened).
      throw error instanceof DbError ? error : new DbError("connection_lost", error);
    }
    const connection = new ClientConnection(executor, lent.client);
    try {
      return await action(connection);
    } finally {
      lent.release(connection.broken);
    }
  };
  return {
    dialect,
    holdsAcrossCalls: options.holdsAcrossCalls,
    statement(name) {
      const statement = statements.get(name);
      if (statement === undefined) throw new TypeError(`no query ${name} for ${dialect}`);
      return statement;
    },
    withConnection,
    transaction(action, { writeLock = false } = {}) {
      const begin = dialect === "mysql" ? "START TRANSACTION" : dialect === "sqlite" && writeLock ? "BEGIN IMMEDIATE" : "BEGIN";
      return storeCall(() =>
        withConnection(async (connection) => {
          await connection.execute(begin);
          try {
            const result = await action(connection);
            await connection.execute("COMMIT");
            return result;
          } catch (error) {
            await connection.execute("ROLLBACK").catch(() => undefined);
            throw error;
          }
        }),
      );
    },
    async close() {
      options.close?.();
    },
  };
}

/** Serialises async actions (a single connection cannot interleave transactions). */
export class Serial {
  #tail: Promise<unknown> = Promise.resolve();

  /** Waits for every holder queued before; the release of this one. */
  async lock(): Promise<() => void> {
    const before = this.#tail;
    let release = (): void => undefined;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await before;
    return release;
  }

  /** Runs `action` after every action queued before it. */
  async run<T>(action: () => Promise<T>): Promise<T> {
    const release = await this.lock();
    try {
      return await action();
    } finally {
      release();
    }
  }
}

/** Runs the core's migration driver on `database` (`pending`: only list what is not applied); the versions it names. */
async function migrations(database: Database, pending: boolean): Promise<number[]> {
  const context = { clock: systemClock, reporter: new Reporter(NO_METRICS), dialect: database.dialect, use: ((action) => database.withConnection(action)) as Use };
  const end = await runWire(context, { kind: "migrations", pending });
  if (end.tag !== "done") throw new TypeError("the migration driver yielded a statement unexecuted");
  return [...end.versions];
}

/**
 * Applies the dialect's numbered migrations with the core's migration driver
 * (`docs/spec.md`, "The migration driver"): under the migration lock, each
 * in one transaction where the dialect allows; the versions this call
 * applied (empty when every one was applied already).
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
