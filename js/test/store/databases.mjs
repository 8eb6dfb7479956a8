// Fresh, empty databases for the store tests: a SQLite file, a PostgreSQL schema or a
// MariaDB database per case, each reached by as many connections ("workers") as a case
// wants. PostgreSQL and MariaDB come from MINTID_PG_* / MINTID_MYSQL_* (scripts/db/with-db.sh);
// without them the suites are skipped, except under CI=true where that is a failure.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import mysql from "mysql2/promise";
import { mysqlDatabase } from "../../dist/full/store/mysql.js";
import { pgDatabase } from "../../dist/full/store/pg.js";
import { sqliteDatabase } from "../../dist/full/store/sqlite.js";

// A loopback port where nothing listens: "the database is down".
const DEAD_PORT = 9;
let serial = 0;
const runId = `${process.pid}_${Date.now() % 1e6}`;

const SIDE_EFFECT_TABLE = {
  sqlite: "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope TEXT NOT NULL, kind TEXT NOT NULL, key_id TEXT NOT NULL, worker TEXT NOT NULL)",
  postgres: "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope text NOT NULL, kind text NOT NULL, key_id text NOT NULL, worker text NOT NULL)",
  mysql: "CREATE TABLE IF NOT EXISTS conformance_side_effect (scope VARBINARY(64) NOT NULL, kind VARBINARY(32) NOT NULL, key_id VARBINARY(64) NOT NULL, worker VARCHAR(64) NOT NULL)",
};

/** A statement of the runner's own SQL, written with `?` placeholders (`$1`, `$2`, … for PostgreSQL). */
export function sql(dialect, name, text, kind = "many") {
  let number = 0;
  const rendered = dialect === "postgres" ? text.replaceAll("?", () => `$${(number += 1)}`) : text;
  return { name, kind, sql: rendered, params: [] };
}

function pgConfig() {
  const { MINTID_PG_HOST: host, MINTID_PG_PORT: port, MINTID_PG_USER: user, MINTID_PG_PASSWORD: password, MINTID_PG_DATABASE: database } = process.env;
  return host ? { host, port: Number(port), user, password, database } : undefined;
}

function mysqlConfig() {
  const { MINTID_MYSQL_HOST: host, MINTID_MYSQL_PORT: port, MINTID_MYSQL_USER: user, MINTID_MYSQL_PASSWORD: password } = process.env;
  return host ? { host, port: Number(port), user, password } : undefined;
}

// Affected rows (not found rows) unless a case asks for mysql2's default CLIENT_FOUND_ROWS:
// the outbox's enqueue still reads affected rows (issue 14).
const MYSQL_OPTIONS = { flags: ["-FOUND_ROWS"] };
const MYSQL_FOUND_ROWS = {};

/** The dialects to test here, each with `reason` set when it cannot run. */
export function dialects() {
  const missing = (what) => (process.env.CI === "true" ? undefined : `${what} not set (run under scripts/db/with-db.sh)`);
  const need = (config, name) => {
    if (config) return undefined;
    const reason = missing(name);
    if (reason === undefined) throw new Error(`${name} must be set under CI=true`);
    return reason;
  };
  return [
    { dialect: "sqlite", skip: undefined },
    { dialect: "postgres", skip: need(pgConfig(), "MINTID_PG_HOST") },
    { dialect: "mysql", skip: need(mysqlConfig(), "MINTID_MYSQL_HOST") },
  ];
}

/**
 * A fresh empty database of `dialect`: `open()` gives a new Database (its own connections;
 * `open({ foundRows: true })` on MySQL with mysql2's default CLIENT_FOUND_ROWS),
 * `unavailable()` one whose server is down, `schema` its name (PostgreSQL: the schema), `killConnections()` terminates the server sessions
 * of every connection `open()` made (from the admin connection), `close()` drops everything.
 */
export async function freshDatabase(dialect, { poolSize = 1 } = {}) {
  serial += 1;
  const name = `mintid_t${runId}_${serial}`;
  const opened = [];
  const cleanups = [];
  let open;
  let unavailable;
  let file;
  // SQLite is embedded: it has no server session to lose.
  let killConnections = async () => {};
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "mintid-store-"));
    file = join(dir, "db.sqlite");
    open = () => sqliteDatabase(file);
    unavailable = () => sqliteDatabase(join(dir, "missing", "db.sqlite"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  } else if (dialect === "postgres") {
    const config = pgConfig();
    const admin = new pg.Client(config);
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
    const pools = [];
    open = () => {
      const pool = new pg.Pool({ ...config, max: poolSize, options: `-c search_path=${name}`, application_name: name });
      pool.on("error", () => {});
      pools.push(pool);
      return pgDatabase(pool);
    };
    unavailable = () => {
      const pool = new pg.Pool({ ...config, port: DEAD_PORT, max: 1, connectionTimeoutMillis: 2000 });
      pool.on("error", () => {});
      pools.push(pool);
      return pgDatabase(pool);
    };
    killConnections = async () => {
      const { rows } = await admin.query("SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()", [name]);
      if (!rows.some((row) => row.killed)) throw new Error("no session of the case to terminate");
    };
    cleanups.push(async () => {
      await Promise.all(pools.map((pool) => pool.end()));
      await admin.query(`DROP SCHEMA ${name} CASCADE`);
      await admin.end();
    });
  } else {
    const config = mysqlConfig();
    const admin = await mysql.createConnection({ ...config, ...MYSQL_OPTIONS });
    await admin.query(`CREATE DATABASE ${name}`);
    const pools = [];
    open = ({ foundRows = false } = {}) => {
      const pool = mysql.createPool({ ...config, ...(foundRows ? MYSQL_FOUND_ROWS : MYSQL_OPTIONS), database: name, connectionLimit: poolSize });
      pools.push(pool);
      return mysqlDatabase(pool);
    };
    unavailable = () => {
      const pool = mysql.createPool({ ...config, ...MYSQL_OPTIONS, port: DEAD_PORT, connectionLimit: 1, connectTimeout: 2000 });
      pools.push(pool);
      return mysqlDatabase(pool);
    };
    killConnections = async () => {
      const [sessions] = await admin.query("SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", [name]);
      if (sessions.length === 0) throw new Error("no session of the case to terminate");
      for (const { id } of sessions) await admin.query(`KILL ${Number(id)}`);
    };
    cleanups.push(async () => {
      await Promise.all(pools.map((pool) => pool.end()));
      await admin.query(`DROP DATABASE ${name}`);
      await admin.end();
    });
  }
  return {
    dialect,
    file,
    open: (options) => {
      const database = open(options);
      opened.push(database);
      return database;
    },
    unavailable,
    schema: name,
    killConnections: () => killConnections(),
    sideEffectTable: SIDE_EFFECT_TABLE[dialect],
    close: async () => {
      for (const database of opened) await database.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
