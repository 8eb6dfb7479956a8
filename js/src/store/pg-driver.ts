/** The node-postgres (`pg`) adapter: a `Pool`, one client per operation. */

import { bindOrder, type Connection, type Database, isConnectionError, type Result, type SqlValue, translate } from "./database.js";
import { loadQueries, type NamedQuery } from "./sql.js";

/** What the adapter uses of a `pg` client. */
export interface PgClient {
  /** Runs a statement. */
  query(config: { text: string; values?: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** What the adapter uses of a `pg` pool client. */
export interface PgPoolClient extends PgClient {
  /** Returns the client to the pool (destroys it when given an error). */
  release(error?: Error | boolean): void;
}

/** What the adapter uses of a `pg` `Pool`. */
export interface PgPool {
  /** Checks a client out. */
  connect(): Promise<PgPoolClient>;
}

const queries = (): Map<string, NamedQuery> => loadQueries("postgres", "numbered");

function pgValue(value: SqlValue): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

class PgSession implements Connection {
  readonly dialect = "postgres" as const;
  readonly #client: PgClient;

  constructor(client: PgClient) {
    this.#client = client;
  }

  async run(query: NamedQuery, params: Readonly<Record<string, SqlValue>>): Promise<Result> {
    try {
      const result = await this.#client.query({ text: query.sql, values: bindOrder(query, params).map(pgValue) });
      return { rows: result.rows as Result["rows"], rowCount: result.rowCount ?? 0 };
    } catch (error) {
      translate(error);
    }
  }

  async execute(sql: string): Promise<void> {
    try {
      await this.#client.query({ text: sql });
    } catch (error) {
      translate(error);
    }
  }
}

class PgDatabase implements Database {
  readonly dialect = "postgres" as const;
  readonly #pool: PgPool;
  readonly #queries = queries();

  constructor(pool: PgPool) {
    this.#pool = pool;
  }

  query(name: string): NamedQuery {
    const query = this.#queries.get(name);
    if (query === undefined) throw new TypeError(`no query ${name} for postgres`);
    return query;
  }

  async #checkout(): Promise<PgPoolClient> {
    try {
      return await this.#pool.connect();
    } catch (error) {
      translate(error);
    }
  }

  async withConnection<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    const client = await this.#checkout();
    let broken = false;
    try {
      return await action(new PgSession(client));
    } catch (error) {
      broken = isConnectionError(error) || isConnectionError((error as { cause?: unknown }).cause);
      throw error;
    } finally {
      client.release(broken);
    }
  }

  async transaction<T>(action: (connection: Connection) => Promise<T>): Promise<T> {
    return this.withConnection(async (session) => {
      await session.execute("BEGIN");
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

/** A PostgreSQL database through a `pg` `Pool` (the caller creates and ends it). */
export function pgDatabase(pool: PgPool): Database {
  return new PgDatabase(pool);
}

/**
 * A `pg` client (or pool client) on which the caller opened a transaction, as a
 * {@link Connection} for the "same transaction" way.
 */
export function pgConnection(client: PgClient): Connection {
  return new PgSession(client);
}
