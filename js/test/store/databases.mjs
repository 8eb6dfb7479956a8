// Fresh, empty databases for the store tests: a SQLite file, a PostgreSQL schema or a
// MariaDB database per case, each reached by as many connections ("workers") as a case
// wants. PostgreSQL and MariaDB come from MINTID_PG_* / MINTID_MYSQL_* (scripts/db/with-db.sh);
// without them the suites are skipped, except under CI=true where that is a failure.
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import pg from "pg";
import mysql from "mysql2/promise";
import { DbError, mysqlDatabase } from "../../dist/full/store/mysql.js";
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

/**
 * `database` with every statement run through `around(statement, run)`, where `run()` runs
 * it on the real connection: the faults a runner puts on one worker's executor.
 */
export function aroundStatements(database, around) {
  const wrap = (connection) => ({
    dialect: connection.dialect,
    execute: (text) => connection.execute(text),
    run: (statement, values) => around(statement, () => connection.run(statement, values)),
  });
  return {
    dialect: database.dialect,
    holdsAcrossCalls: database.holdsAcrossCalls,
    statement: (name) => database.statement(name),
    withConnection: (action) => database.withConnection((connection) => action(wrap(connection))),
    transaction: (action, options) => database.transaction((connection) => action(wrap(connection)), options),
    close: () => database.close(),
  };
}

/**
 * A worker's executor with the faults a runner arms for one step (tests/conformance/README.md):
 * `loseReply(name)`: the next statement named `name` runs to its end on the database (committed
 * outside a transaction), then the executor reports a broken connection (`connection_lost`, as
 * each library's error for a socket that is gone is classified); `failNext(matches, errorClass)`:
 * the next statement whose name `matches` fails with a database error of that class, unrun.
 * `armed()` is the number of faults that have not fired yet. `awayFrom(names)`: every statement
 * named in `names` fails unrun with `connection_lost` until `back()` (the database away).
 */
export function faultyDatabase(database) {
  const faults = [];
  let away = new Set();
  const wrapped = aroundStatements(database, async (statement, run) => {
    if (away.has(statement.name)) throw new DbError("connection_lost", new Error(`Connection terminated unexpectedly (${statement.name}: the database is away, armed by the runner)`));
    const at = faults.findIndex((fault) => fault.matches(statement.name));
    if (at < 0) return run();
    const [fault] = faults.splice(at, 1);
    if (fault.runs) await run();
    throw new DbError(fault.errorClass, new Error(fault.message(statement.name)));
  });
  return Object.assign(wrapped, {
    loseReply: (name) => faults.push({ matches: (each) => each === name, runs: true, errorClass: "connection_lost", message: (each) => `Connection terminated unexpectedly (after ${each} ran: its reply was lost)` }),
    failNext: (matches, errorClass) => faults.push({ matches, runs: false, errorClass, message: (each) => `${each} failed (${errorClass}, armed by the runner)` }),
    armed: () => faults.length,
    awayFrom: (names) => {
      away = new Set(names);
    },
    back: () => {
      away = new Set();
    },
  });
}

/** One request line to the fault proxy's control port (MINTID_FAULT_PROXY), its reply line. */
async function faultProxy(line) {
  const address = process.env.MINTID_FAULT_PROXY;
  if (!address) throw new Error("MINTID_FAULT_PROXY is not set (run under scripts/db/with-db.sh): an outage case cannot run");
  const [host, port] = address.split(":");
  const reply = await new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port) }, () => socket.end(`${line}\n`));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text.trim()));
    socket.on("error", reject);
  });
  if (reply.startsWith("error")) throw new Error(`fault proxy: ${line}: ${reply}`);
  return reply;
}

/**
 * Holds SQLite's exclusive lock on `file` for `millis` from another thread (BEGIN EXCLUSIVE):
 * resolves once the lock is held.
 */
function lockSqlite(file, millis) {
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
     const Database = require(workerData.module);
     const db = new Database(workerData.file);
     db.exec("BEGIN EXCLUSIVE");
     parentPort.postMessage("locked");
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.millis);
     db.exec("COMMIT");
     db.close();`,
    { eval: true, workerData: { file, millis, module: BETTER_SQLITE3 } },
  );
  worker.unref();
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

const BETTER_SQLITE3 = new URL("../../node_modules/better-sqlite3/lib/index.js", import.meta.url).pathname;

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
  // A server reached through a fault proxy listener of the case's own (see `outage` below).
  let outage = async () => {
    const config = dialect === "postgres" ? pgConfig() : mysqlConfig();
    const port = await faultProxy(`open ${config.host} ${config.port}`);
    return {
      open: (options = {}) => open({ ...options, port: Number(port) }),
      cut: (millis) => faultProxy(`cut ${port} ${millis}`),
      close: () => faultProxy(`close ${port}`),
    };
  };
  if (dialect === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "mintid-store-"));
    file = join(dir, "db.sqlite");
    open = () => sqliteDatabase(file);
    outage = async () => ({ open: () => sqliteDatabase(file), cut: (millis) => lockSqlite(file, millis), close: async () => {} });
    unavailable = () => sqliteDatabase(join(dir, "missing", "db.sqlite"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  } else if (dialect === "postgres") {
    const config = pgConfig();
    const admin = new pg.Client(config);
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
    const pools = [];
    open = ({ port = config.port } = {}) => {
      const pool = new pg.Pool({ ...config, port, max: poolSize, options: `-c search_path=${name}`, application_name: name });
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
    open = ({ foundRows = false, port = config.port } = {}) => {
      const pool = mysql.createPool({ ...config, port, ...(foundRows ? MYSQL_FOUND_ROWS : MYSQL_OPTIONS), database: name, connectionLimit: poolSize });
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
    outage: async () => {
      const made = await outage();
      // Closed last: after the pools that go through it.
      cleanups.unshift(made.close);
      return { open: (options) => { const database = made.open(options); opened.push(database); return database; }, cut: made.cut };
    },
    sideEffectTable: SIDE_EFFECT_TABLE[dialect],
    close: async () => {
      for (const database of opened) await database.close();
      for (const cleanup of cleanups.reverse()) await cleanup();
    },
  };
}
