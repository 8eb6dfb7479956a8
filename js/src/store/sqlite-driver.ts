/**
 * The better-sqlite3 executor (12.x): one synchronous connection per file,
 * statements prepared once, errors classified by their SQLite result code.
 */

import { type Connection, type Database, dbError, type Result, Serial } from "./database.js";
import { classifyDbError, DbError, type DbErrorClass, type SqlValue, type Statement, statementsOf, storeCall } from "./driver.js";

/** What the executor uses of a better-sqlite3 statement. */
export interface SqliteStatement {
  /** Whether it returns rows. */
  readonly reader: boolean;
  /** Returns integers as `bigint`. */
  safeIntegers(toggle?: boolean): this;
  /** Returns rows as arrays of column values. */
  raw(toggle?: boolean): this;
  /** The columns of a reader. */
  columns(): { readonly name: string }[];
  /** Runs a reader. */
  all(...params: unknown[]): unknown[];
  /** Runs a writer. */
  run(...params: unknown[]): { changes: number };
}

/** What the executor uses of a better-sqlite3 `Database`. */
export interface SqliteConnection {
  /** The file name (`:memory:` for a private database). */
  readonly name: string;
  /** Whether a transaction is open. */
  readonly inTransaction: boolean;
  /** Prepares a statement. */
  prepare(sql: string): SqliteStatement;
  /** Runs statements without parameters. */
  exec(sql: string): unknown;
  /** Sets or reads a pragma. */
  pragma(source: string): unknown;
  /** Closes the connection. */
  close(): unknown;
}

/** Options of {@link sqliteDatabase}. */
export interface SqliteOptions {
  /** How long a statement waits for another process's write lock (ms, default 5000). */
  readonly busyTimeoutMillis?: number;
}

// Every connection to one file in this process shares one queue: SQLite has one
// writer, and a synchronous driver blocked on a lock held by a transaction
// waiting in the same event loop would never get it.
const queues = new Map<string, Serial>();

function queueFor(connection: SqliteConnection): Serial {
  if (connection.name === ":memory:" || connection.name === "") return new Serial();
  let queue = queues.get(connection.name);
  if (queue === undefined) {
    queue = new Serial();
    queues.set(connection.name, queue);
  }
  return queue;
}

function sqliteValue(value: SqlValue): unknown {
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/**
 * The class of a better-sqlite3 error: its extended result code (`code`, by
 * name) by the core's table, or a closed connection.
 */
export function classifySqliteError(error: unknown): DbErrorClass {
  const { code } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown };
  if (typeof code !== "string") {
    return error instanceof TypeError && /database connection is not open/.test(error.message) ? "connection_lost" : "other";
  }
  return classifyDbError("sqlite", code, undefined, error instanceof Error ? error.message : undefined);
}

interface Prepared {
  readonly statement: SqliteStatement;
  readonly columns: readonly string[];
}

class SqliteSession implements Connection {
  readonly dialect = "sqlite" as const;
  readonly #db: SqliteConnection;
  readonly #prepared = new Map<string, Prepared>();

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  #prepare(sql: string): Prepared {
    let prepared = this.#prepared.get(sql);
    if (prepared === undefined) {
      const statement = this.#db.prepare(sql).safeIntegers(true);
      const columns = statement.reader
        ? statement
            .raw(true)
            .columns()
            .map((column) => column.name)
        : [];
      prepared = { statement, columns };
      this.#prepared.set(sql, prepared);
    }
    return prepared;
  }

  async run(statement: Statement, values: readonly SqlValue[]): Promise<Result> {
    try {
      const { statement: prepared, columns } = this.#prepare(statement.sql);
      const args = values.map(sqliteValue);
      if (prepared.reader) {
        const rows = prepared.all(...args) as SqlValue[][];
        return { columns, rows, rowCount: rows.length };
      }
      return { columns, rows: [], rowCount: prepared.run(...args).changes };
    } catch (error) {
      throw dbError(error, classifySqliteError);
    }
  }

  async execute(sql: string): Promise<void> {
    try {
      this.#db.exec(sql);
    } catch (error) {
      throw dbError(error, classifySqliteError);
    }
  }
}

class SqliteDatabase implements Database {
  readonly dialect = "sqlite" as const;
  readonly #open: () => Promise<SqliteConnection>;
  readonly #owned: boolean;
  readonly #statements = statementsOf("sqlite");
  #state: { db: SqliteConnection; session: SqliteSession; queue: Serial } | undefined;

  constructor(open: () => Promise<SqliteConnection>, owned: boolean) {
    this.#open = open;
    this.#owned = owned;
  }

  statement(name: string): Statement {
    const statement = this.#statements.get(name);
    if (statement === undefined) throw new TypeError(`no query ${name} for sqlite`);
    return statement;
  }

  async #connection(): Promise<{ db: SqliteConnection; session: SqliteSession; queue: Serial }> {
    if (this.#state === undefined) {
      let db: SqliteConnection;
      try {
        db = await this.#open();
      } catch (error) {
        // A file that cannot be opened (missing directory, no permission) is a database that is down.
        throw new DbError("connection_lost", error);
      }
      this.#state = { db, session: new SqliteSession(db), queue: queueFor(db) };
    }
    return this.#state;
  }

  async withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    const { session, queue } = await this.#connection();
    return queue.run(() => action(session));
  }

  async transaction<T>(action: (connection: Connection) => Promise<T>, options: { readonly writeLock?: boolean } = {}): Promise<T> {
    return storeCall(() => this.#transaction(action, options));
  }

  async #transaction<T>(action: (connection: Connection) => Promise<T>, options: { readonly writeLock?: boolean }): Promise<T> {
    const { db, session, queue } = await this.#connection();
    return queue.run(async () => {
      await session.execute(options.writeLock === true ? "BEGIN IMMEDIATE" : "BEGIN");
      try {
        const result = await action(session);
        await session.execute("COMMIT");
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    if (this.#owned && this.#state !== undefined) this.#state.db.close();
    this.#state = undefined;
  }
}

function configure(db: SqliteConnection, options: SqliteOptions): SqliteConnection {
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMillis ?? 5000)}`);
  if (db.name !== ":memory:" && db.name !== "") db.pragma("journal_mode = WAL");
  return db;
}

/**
 * A SQLite database through better-sqlite3: pass an open `Database` (kept
 * open by `close()`), or a file name, opened on first use (WAL, busy timeout)
 * so that an unreachable file is a lost connection (`store.unavailable`), and closed by `close()`.
 */
export function sqliteDatabase(database: SqliteConnection | string, options: SqliteOptions = {}): Database {
  if (typeof database === "string") {
    const open = async (): Promise<SqliteConnection> => {
      const specifier = "better-sqlite3";
      const { default: Driver } = (await import(specifier)) as { default: new (file: string, options?: object) => SqliteConnection };
      return configure(new Driver(database, { fileMustExist: false }), options);
    };
    return new SqliteDatabase(open, true);
  }
  return new SqliteDatabase(async () => configure(database, options), false);
}
