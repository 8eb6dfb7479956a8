/**
 * The better-sqlite3 executor (12.x): one synchronous connection per file,
 * statements prepared once, errors classified by their SQLite result code.
 */

import { type Database, type Executor, lendingDatabase, Serial } from "./database.js";
import { classifyDbError, type DbErrorClass, type SqlValue } from "./driver.js";

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

/** Each connection's statements, prepared once, with their column names. */
const prepared = new WeakMap<SqliteConnection, Map<string, { readonly statement: SqliteStatement; readonly columns: readonly string[] }>>();

function prepare(db: SqliteConnection, sql: string) {
  let statements = prepared.get(db);
  if (statements === undefined) {
    statements = new Map();
    prepared.set(db, statements);
  }
  let entry = statements.get(sql);
  if (entry === undefined) {
    const statement = db.prepare(sql).safeIntegers(true);
    const columns = statement.reader
      ? statement
          .raw(true)
          .columns()
          .map((column) => column.name)
      : [];
    entry = { statement, columns };
    statements.set(sql, entry);
  }
  return entry;
}

const executor: Executor<SqliteConnection> = {
  dialect: "sqlite",
  async run(db, sql, values) {
    const { statement, columns } = prepare(db, sql);
    const args = values.map(sqliteValue);
    if (!statement.reader) return { columns, rows: [], rowCount: statement.run(...args).changes };
    const rows = statement.all(...args) as SqlValue[][];
    return { columns, rows, rowCount: rows.length };
  },
  async execute(db, sql) {
    db.exec(sql);
  },
  classify: classifySqliteError,
};

function configure(db: SqliteConnection, options: SqliteOptions): SqliteConnection {
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMillis ?? 5000)}`);
  if (db.name !== ":memory:" && db.name !== "") db.pragma("journal_mode = WAL");
  return db;
}

/**
 * A SQLite database through better-sqlite3: pass an open `Database` (kept
 * open by `close()`), or a file name, opened on first use (WAL, busy timeout)
 * so that an unreachable file is a lost connection (`store.unavailable`), and
 * closed by `close()`. Its one connection is lent to one caller at a time.
 */
export function sqliteDatabase(database: SqliteConnection | string, options: SqliteOptions = {}): Database {
  const open = async (): Promise<SqliteConnection> => {
    if (typeof database !== "string") return configure(database, options);
    const specifier = "better-sqlite3";
    const { default: Driver } = (await import(specifier)) as { default: new (file: string, options?: object) => SqliteConnection };
    return configure(new Driver(database, { fileMustExist: false }), options);
  };
  let state: { readonly db: SqliteConnection; readonly queue: Serial } | undefined;
  const lend = async () => {
    if (state === undefined) {
      const db = await open();
      state = { db, queue: queueFor(db) };
    }
    const { db, queue } = state;
    return { client: db, release: await queue.lock() };
  };
  const close = () => {
    if (typeof database === "string") state?.db.close();
    state = undefined;
  };
  return lendingDatabase(executor, lend, { holdsAcrossCalls: false, close });
}
