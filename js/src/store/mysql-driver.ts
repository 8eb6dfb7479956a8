/**
 * The `mysql2` adapter (MySQL 8, MariaDB 10.6+): a promise `Pool` created
 * with `flags: ["-FOUND_ROWS"]` (affected rows, not found rows) and
 * `supportBigNumbers: true, bigNumberStrings: true`.
 */

import { bindOrder, type Connection, type Database, isConnectionError, type Result, type SqlValue, translate } from "./database.js";
import { loadQueries, type NamedQuery } from "./sql.js";

/** What the adapter uses of a `mysql2/promise` connection. */
export interface MysqlConnection {
  /** Runs a statement, values escaped into the text (one round trip). */
  query(sql: string, values?: unknown[]): Promise<[unknown, unknown]>;
}

/** What the adapter uses of a `mysql2/promise` pool connection. */
export interface MysqlPoolConnection extends MysqlConnection {
  /** Returns it to the pool. */
  release(): void;
  /** Closes it (after a broken connection). */
  destroy(): void;
}

/** What the adapter uses of a `mysql2/promise` `Pool`. */
export interface MysqlPool {
  /** Checks a connection out. */
  getConnection(): Promise<MysqlPoolConnection>;
}

const CLIENT_FOUND_ROWS = 2;

function mysqlValue(value: SqlValue): unknown {
  if (typeof value === "bigint") return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

class MysqlSession implements Connection {
  readonly dialect = "mysql" as const;
  readonly #connection: MysqlConnection;

  constructor(connection: MysqlConnection) {
    this.#connection = connection;
  }

  async run(query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<Result> {
    try {
      const [result] = await this.#connection.query(query.sql, bindOrder(query, params).map(mysqlValue));
      if (Array.isArray(result)) return { rows: result as Result["rows"], rowCount: result.length };
      return { rows: [], rowCount: Number((result as { affectedRows?: unknown }).affectedRows ?? 0) };
    } catch (error) {
      translate(error);
    }
  }

  async execute(sql: string): Promise<void> {
    try {
      await this.#connection.query(sql);
    } catch (error) {
      translate(error);
    }
  }
}

class MysqlDatabase implements Database {
  readonly dialect = "mysql" as const;
  readonly #pool: MysqlPool;
  readonly #queries = loadQueries("mysql", "positional");

  constructor(pool: MysqlPool) {
    this.#pool = pool;
  }

  query(name: string): NamedQuery {
    const query = this.#queries.get(name);
    if (query === undefined) throw new TypeError(`no query ${name} for mysql`);
    return query;
  }

  async withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    let connection: MysqlPoolConnection;
    try {
      connection = await this.#pool.getConnection();
    } catch (error) {
      translate(error);
    }
    let broken = false;
    try {
      return await action(new MysqlSession(connection));
    } catch (error) {
      broken = isConnectionError(error) || isConnectionError((error as { cause?: unknown }).cause);
      throw error;
    } finally {
      if (broken) connection.destroy();
      else connection.release();
    }
  }

  async transaction<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    return this.withConnection(async (session) => {
      await session.execute("START TRANSACTION");
      try {
        const result = await action(session);
        await session.execute("COMMIT");
        return result;
      } catch (error) {
        await session.execute("ROLLBACK").catch(() => undefined);
        throw error;
      }
    });
  }

  async close(): Promise<void> {}
}

/**
 * A MySQL or MariaDB database through a `mysql2/promise` `Pool` (the caller
 * creates and ends it). Create the pool with `flags: ["-FOUND_ROWS"]` (`claim`
 * reads the affected-row count, which `CLIENT_FOUND_ROWS` would falsify) and
 * `supportBigNumbers: true, bigNumberStrings: true` (64-bit values exact).
 *
 * @throws TypeError when the pool reports found rows or rounds 64-bit integers.
 */
export function mysqlDatabase(pool: MysqlPool): Database {
  const config = (pool as { pool?: { config?: { connectionConfig?: { clientFlags?: unknown; supportBigNumbers?: unknown; bigNumberStrings?: unknown } } } }).pool?.config?.connectionConfig;
  if (typeof config?.clientFlags === "number" && (config.clientFlags & CLIENT_FOUND_ROWS) !== 0) {
    throw new TypeError("the mysql2 pool reports found rows: create it with flags: [\"-FOUND_ROWS\"]");
  }
  if (config !== undefined && (config.supportBigNumbers !== true || config.bigNumberStrings !== true)) {
    throw new TypeError("the mysql2 pool would round 64-bit integers: create it with supportBigNumbers: true, bigNumberStrings: true");
  }
  return new MysqlDatabase(pool);
}

/**
 * A `mysql2/promise` connection on which the caller opened a transaction, as a
 * {@link Connection} for the "same transaction" way.
 */
export function mysqlConnection(connection: MysqlConnection): Connection {
  return new MysqlSession(connection);
}
