/**
 * The `mysql2` executor (MySQL 8, MariaDB 10.6+): a promise `Pool`, one
 * connection per checkout; every statement a server-side prepared statement
 * (`execute()`, prepared once per connection), values never spliced into the
 * SQL; rows as arrays with integers as `bigint`; errors classified by MySQL
 * error number. Correct with or without `CLIENT_FOUND_ROWS` (mysql2's
 * default): the claim is a plain `INSERT` and every other write changes its row.
 */

import { ClientConnection, type Connection, type Database, type Executor, lendingDatabase } from "./database.js";
import { classifyDbError, type DbErrorClass, type SqlValue } from "./driver.js";

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

const executor: Executor<MysqlConnection> = {
  dialect: "mysql",
  async run(client, sql, values) {
    const options = { sql, values: values.map(mysqlValue), rowsAsArray: true, supportBigNumbers: true, bigNumberStrings: true };
    const [result, fields] = await client.execute(options);
    if (!Array.isArray(result)) return { columns: [], rows: [], rowCount: Number((result as { affectedRows?: unknown }).affectedRows ?? 0) };
    const columns = (fields as MysqlField[]) ?? [];
    // mysql2 gives `LONGLONG` as a string, the other integers as numbers.
    const integers = columns.map((field) => INTEGER_TYPES.has(field.columnType ?? field.type ?? -1));
    const rows = result.map((row: unknown[]) => row.map((value, at) => (integers[at] === true && value !== null ? BigInt(value as string | number) : (value as SqlValue))));
    return { columns: columns.map((field) => field.name), rows, rowCount: result.length };
  },
  async execute(client, sql) {
    await client.query(sql);
  },
  classify: classifyMysqlError,
};

/**
 * A MySQL or MariaDB database through a `mysql2/promise` `Pool` (the caller
 * creates and ends it), with any client flags (`CLIENT_FOUND_ROWS`, mysql2's
 * default, or `flags: ["-FOUND_ROWS"]`).
 */
export function mysqlDatabase(pool: MysqlPool): Database {
  const lend = async () => {
    const client = await pool.getConnection();
    return { client, release: (broken: boolean) => (broken ? client.destroy() : client.release()) };
  };
  return lendingDatabase(executor, lend, { holdsAcrossCalls: true });
}

/**
 * A `mysql2/promise` connection on which the caller opened a transaction, as a
 * {@link Connection} for the "same transaction" way.
 */
export function mysqlConnection(connection: MysqlConnection): Connection {
  return new ClientConnection(executor, connection);
}
