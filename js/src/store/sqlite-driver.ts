/** The better-sqlite3 adapter (12.x): one synchronous connection per file. */

import { bindOrder, type Connection, type Database, type Result, Serial, type SqlValue, translate } from "./database.js";
import { unavailable } from "./errors.js";
import { loadQueries, type NamedQuery } from "./sql.js";

/** What the adapter uses of a better-sqlite3 statement. */
export interface SqliteStatement {
  /** Whether it returns rows. */
  readonly reader: boolean;
  /** Returns integers as `bigint`. */
  safeIntegers(toggle?: boolean): this;
  /** Runs a reader. */
  all(...params: unknown[]): unknown[];
  /** Runs a writer. */
  run(...params: unknown[]): { changes: number };
}

/** What the adapter uses of a better-sqlite3 `Database`. */
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
  if (typeof value === "number") return BigInt(value);
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

class SqliteSession implements Connection {
  readonly dialect = "sqlite" as const;
  readonly #db: SqliteConnection;
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(db: SqliteConnection) {
    this.#db = db;
  }

  async run(query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<Result> {
    try {
      let statement = this.#statements.get(query.sql);
      if (statement === undefined) {
        statement = this.#db.prepare(query.sql).safeIntegers(true);
        this.#statements.set(query.sql, statement);
      }
      const values = bindOrder(query, params);
      const named = Object.fromEntries(query.params.map((name, index) => [name, sqliteValue(values[index] ?? null)]));
      const args = query.params.length === 0 ? [] : [named];
      if (statement.reader) {
        const rows = statement.all(...args) as Result["rows"];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: statement.run(...args).changes };
    } catch (error) {
      translate(error);
    }
  }

  async execute(sql: string): Promise<void> {
    try {
      this.#db.exec(sql);
    } catch (error) {
      translate(error);
    }
  }
}

class SqliteDatabase implements Database {
  readonly dialect = "sqlite" as const;
  readonly #open: () => Promise<SqliteConnection>;
  readonly #owned: boolean;
  readonly #queries = loadQueries("sqlite", "named");
  #state: { db: SqliteConnection; session: SqliteSession; queue: Serial } | undefined;

  constructor(open: () => Promise<SqliteConnection>, owned: boolean) {
    this.#open = open;
    this.#owned = owned;
  }

  query(name: string): NamedQuery {
    const query = this.#queries.get(name);
    if (query === undefined) throw new TypeError(`no query ${name} for sqlite`);
    return query;
  }

  async #connection(): Promise<{ db: SqliteConnection; session: SqliteSession; queue: Serial }> {
    if (this.#state === undefined) {
      let db: SqliteConnection;
      try {
        db = await this.#open();
      } catch (error) {
        // A file that cannot be opened (missing directory, no permission) is a database that is down.
        throw unavailable(error);
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
 * so that an unreachable file is a `store.unavailable` error, and closed by `close()`.
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
