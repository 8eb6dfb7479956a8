/**
 * The `mysql2` executor (MySQL 8, MariaDB 10.6+): a promise `Pool`, one
 * connection per checkout; every statement a server-side prepared statement
 * (`execute()`, prepared once per connection), values never spliced into the
 * SQL; rows as arrays with integers as `bigint`; errors classified by MySQL
 * error number. Correct with or without `CLIENT_FOUND_ROWS` (mysql2's
 * default): the claim is a plain `INSERT` and every other write changes its row.
 */

import { betweenBeginAndCommit, type Connection, type Database, dbError, type Result } from "./database.js";
import { classifyDbError, DbError, type DbErrorClass, type SqlValue, type Statement, statementsOf, storeCall } from "./driver.js";

/** A column of a `mysql2` result. */
interface MysqlField {
  readonly name: string;
  readonly columnType?: number;
  readonly type?: number;
}

/** What the executor uses of a `mysql2/promise` connection. */
export interface MysqlConnection {
  /** Runs a server-side prepared statement (prepared once per connection). */
  execute(options: { sql: string; values?: unknown[]; rowsAsArray?: boolean; supportBigNumbers?: boolean; bigNumberStrings?: boolean }): Promise<[unknown, unknown]>;
  /** Runs a statement without parameters (migrations, transaction control). */
  query(sql: string): Promise<[unknown, unknown]>;
}

/** What the executor uses of a `mysql2/promise` pool connection. */
export interface MysqlPoolConnection extends MysqlConnection {
  /** Returns it to the pool. */
  release(): void;
  /** Closes it (after a broken connection). */
  destroy(): void;
}

/** What the executor uses of a `mysql2/promise` `Pool`. */
export interface MysqlPool {
  /** Checks a connection out. */
  getConnection(): Promise<MysqlPoolConnection>;
}

/** TINY, SHORT, LONG, LONGLONG, INT24, YEAR: read as `bigint`. */
const INTEGER_TYPES = new Set([1, 2, 3, 8, 9, 13]);

/** mysql2's codes for a connection that is gone. */
const LOST_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN|PROTOCOL_CONNECTION_LOST|PROTOCOL_SEQUENCE_TIMEOUT)$/;

/**
 * The class of a `mysql2` error: its MySQL error number (`errno`) and
 * `sqlState` by the core's table, a socket that is gone, or a connection that
 * is closed.
 */
export function classifyMysqlError(error: unknown): DbErrorClass {
  const { errno, code, fatal, sqlState } = (typeof error === "object" && error !== null ? error : {}) as { errno?: unknown; code?: unknown; fatal?: unknown; sqlState?: unknown };
  if (typeof errno === "number" && typeof code === "string" && code.startsWith("ER_")) {
    return classifyDbError("mysql", String(errno), typeof sqlState === "string" ? sqlState : undefined, undefined);
  }
  if ((typeof code === "string" && LOST_CODES.test(code)) || fatal === true) return "connection_lost";
  if (error instanceof Error && /closed state|connection is closed/i.test(error.message)) return "connection_lost";
  return "other";
}

function mysqlValue(value: SqlValue): unknown {
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

/** A row's values, integers as `bigint` (mysql2 gives `LONGLONG` as a string, the others as numbers). */
function rowOf(row: unknown[], integers: readonly boolean[]): SqlValue[] {
  return row.map((value, index) => (integers[index] === true && value !== null ? BigInt(value as string | number) : (value as SqlValue)));
}

class MysqlSession implements Connection {
  readonly dialect = "mysql" as const;
  readonly #connection: MysqlConnection;
  /** Whether a statement found the connection gone (the pool then destroys it). */
  broken = false;

  constructor(connection: MysqlConnection) {
    this.#connection = connection;
  }

  #failed(error: unknown): DbError {
    const failure = dbError(error, classifyMysqlError);
    if (failure.errorClass === "connection_lost") this.broken = true;
    return failure;
  }

  async run(statement: Statement, values: readonly SqlValue[]): Promise<Result> {
    try {
      const [result, fields] = await this.#connection.execute({
        sql: statement.sql,
        values: values.map(mysqlValue),
        rowsAsArray: true,
        supportBigNumbers: true,
        bigNumberStrings: true,
      });
      if (Array.isArray(result)) {
        const columns = (fields as MysqlField[]) ?? [];
        const integers = columns.map((field) => INTEGER_TYPES.has(field.columnType ?? field.type ?? -1));
        return { columns: columns.map((field) => field.name), rows: result.map((row: unknown[]) => rowOf(row, integers)), rowCount: result.length };
      }
      return { columns: [], rows: [], rowCount: Number((result as { affectedRows?: unknown }).affectedRows ?? 0) };
    } catch (error) {
      throw this.#failed(error);
    }
  }

  async execute(sql: string): Promise<void> {
    try {
      await this.#connection.query(sql);
    } catch (error) {
      throw this.#failed(error);
    }
  }
}

class MysqlDatabase implements Database {
  readonly dialect = "mysql" as const;
  readonly #pool: MysqlPool;
  readonly #statements = statementsOf("mysql");

  constructor(pool: MysqlPool) {
    this.#pool = pool;
  }

  statement(name: string): Statement {
    const statement = this.#statements.get(name);
    if (statement === undefined) throw new TypeError(`no query ${name} for mysql`);
    return statement;
  }

  async withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    let connection: MysqlPoolConnection;
    try {
      connection = await this.#pool.getConnection();
    } catch (error) {
      throw new DbError("connection_lost", error);
    }
    const session = new MysqlSession(connection);
    try {
      return await action(session);
    } finally {
      if (session.broken) connection.destroy();
      else connection.release();
    }
  }

  async transaction<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    return storeCall(() => this.withConnection((session) => betweenBeginAndCommit(session, "START TRANSACTION", action)));
  }

  async close(): Promise<void> {}
}

/**
 * A MySQL or MariaDB database through a `mysql2/promise` `Pool` (the caller
 * creates and ends it), with any client flags (`CLIENT_FOUND_ROWS`, mysql2's
 * default, or `flags: ["-FOUND_ROWS"]`).
 */
export function mysqlDatabase(pool: MysqlPool): Database {
  return new MysqlDatabase(pool);
}

/**
 * A `mysql2/promise` connection on which the caller opened a transaction, as a
 * {@link Connection} for the "same transaction" way.
 */
export function mysqlConnection(connection: MysqlConnection): Connection {
  return new MysqlSession(connection);
}
