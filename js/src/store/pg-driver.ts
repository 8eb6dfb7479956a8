/**
 * The node-postgres (`pg`) executor: a `Pool`, one client per checkout;
 * values bound by the server (`$1`, …), rows as arrays with integers as
 * `bigint`, errors classified by SQLSTATE.
 */

import { ClientConnection, type Connection, type Database, type Executor, lendingDatabase } from "./database.js";
import { classifyDbError, type DbErrorClass, type SqlValue } from "./driver.js";

/** The type parsers of a query (`pg`'s `types` option). */
interface PgTypes {
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** What the executor uses of a `pg` client. */
export interface PgClient {
  /** Runs a statement. */
  query(config: {
    text: string;
    values?: unknown[];
    rowMode?: "array";
    types?: PgTypes;
  }): Promise<{ rows: unknown[]; rowCount: number | null; fields?: readonly { readonly name: string }[] }>;
  /** The client's parser for a type (`pg.Client#getTypeParser`). */
  getTypeParser(oid: number, format?: string): (value: string) => unknown;
}

/** What the executor uses of a `pg` pool client. */
export interface PgPoolClient extends PgClient {
  /** Returns the client to the pool (destroys it when given an error). */
  release(error?: Error | boolean): void;
  /** Listens to the client's `error` event (a session the server ended between two statements). */
  on(event: "error", listener: (error: Error) => void): unknown;
  /** Stops listening. */
  removeListener(event: "error", listener: (error: Error) => void): unknown;
}

/** What the executor uses of a `pg` `Pool`. */
export interface PgPool {
  /** Checks a client out. */
  connect(): Promise<PgPoolClient>;
}

/** `int2`, `int4` and `int8`: read as `bigint`. */
const INTEGER_TYPES = new Set([21, 23, 20]);

/** The node-level errors of a socket that is gone. */
const NETWORK_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|EAI_AGAIN)$/;

/**
 * The class of a `pg` error: its SQLSTATE (`code`) by the core's table, a
 * socket that is gone, or a client that is closed.
 */
export function classifyPgError(error: unknown): DbErrorClass {
  const { code } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown };
  if (typeof code === "string" && NETWORK_CODES.test(code)) return "connection_lost";
  if (typeof code === "string") return classifyDbError("postgres", undefined, code, undefined);
  if (error instanceof Error && /Connection terminated|not queryable|connection is closed/i.test(error.message)) return "connection_lost";
  return "other";
}

function pgValue(value: SqlValue): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value;
}

const typesOf = new WeakMap<PgClient, PgTypes>();

/** `client`'s type parsers, integers as `bigint`. */
function types(client: PgClient): PgTypes {
  let parsers = typesOf.get(client);
  if (parsers === undefined) {
    parsers = { getTypeParser: (oid, format) => (INTEGER_TYPES.has(oid) ? BigInt : client.getTypeParser(oid, format)) };
    typesOf.set(client, parsers);
  }
  return parsers;
}

const executor: Executor<PgClient> = {
  dialect: "postgres",
  async run(client, sql, values) {
    const result = await client.query({ text: sql, values: values.map(pgValue), rowMode: "array", types: types(client) });
    return { columns: (result.fields ?? []).map((field) => field.name), rows: result.rows as SqlValue[][], rowCount: result.rowCount ?? 0 };
  },
  async execute(client, sql) {
    await client.query({ text: sql });
  },
  classify: classifyPgError,
};

/** A PostgreSQL database through a `pg` `Pool` (the caller creates and ends it). */
export function pgDatabase(pool: PgPool): Database {
  const lend = async () => {
    const client = await pool.connect();
    // A session the server ends while no statement runs is an `error` event of the checked-out
    // client, which would crash the process unheard: the next statement meets the closed client.
    let lost = false;
    const listener = () => {
      lost = true;
    };
    client.on("error", listener);
    const release = (broken: boolean) => {
      client.removeListener("error", listener);
      client.release(broken || lost);
    };
    return { client, release };
  };
  return lendingDatabase(executor, lend, { holdsAcrossCalls: true });
}

/**
 * A `pg` client (or pool client) on which the caller opened a transaction, as a
 * {@link Connection} for the "same transaction" way.
 */
export function pgConnection(client: PgClient): Connection {
  return new ClientConnection(executor, client);
}
