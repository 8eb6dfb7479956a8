/**
 * The core's store drivers as the stores use them: the manifest of each
 * dialect (statements in the executor's placeholder style, migrations), the
 * schema's limits, and the core's errors with the database driver's error as
 * their `cause`. Statements, steps and answers cross wasm as plain objects.
 */

import "../node.js";
import { rethrow } from "../errors.js";
import * as wasm from "../wasm/mintid_wasm.js";
import type { StoreClock } from "./clock.js";
import type { Connection, Database } from "./database.js";
import type { Reporter } from "./metrics.js";

export type { DbErrorClass, SqlValue, StoreAnswer } from "../wasm/mintid_wasm.js";

/** The SQL dialects of `schema/`. */
export type Dialect = "postgres" | "mysql" | "sqlite";

/** How a named query's result is read: rows (`one`, `many`) or an affected-row count. */
export type StatementKind = "one" | "many" | "execrows" | "exec";

/** One named query of `schema/<dialect>/queries.sql`, rendered for a database library by the core. */
export interface Statement {
  /** Its name, e.g. `claim`. */
  readonly name: string;
  /** What it returns. */
  readonly kind: StatementKind;
  /** The SQL with the library's placeholders (`?` or `$1`). */
  readonly sql: string;
  /** The parameter names in binding order. */
  readonly params: readonly string[];
}

/** A dialect's numbered migration, split into statements by the core. */
export interface Migration {
  /** Its version. */
  readonly version: number;
  /** Its name, e.g. `idempotency_record`. */
  readonly name: string;
  /** Its statements, in order. */
  readonly statements: readonly string[];
}

/** One limit of the schema that the core enforces before it writes. */
export interface StoreLimit {
  /** What it limits, e.g. `record.response_body`. */
  readonly name: string;
  /** The most bytes allowed. */
  readonly maxBytes: number;
}

/** The placeholder style of each dialect's Node library: `?` (better-sqlite3, mysql2) or `$1` (pg). */
const PLACEHOLDER = { sqlite: "question", mysql: "question", postgres: "numbered" } as const;

/** The manifest of `dialect` for its Node library. */
export function manifestOf(dialect: Dialect): wasm.StoreManifest {
  return { dialect, placeholder: PLACEHOLDER[dialect] };
}

const statementCache = new Map<Dialect, ReadonlyMap<string, Statement>>();

/** Every named query of `dialect`, rendered for its Node library (made once per dialect). */
export function statementsOf(dialect: Dialect): ReadonlyMap<string, Statement> {
  let statements = statementCache.get(dialect);
  if (statements === undefined) {
    statements = new Map(wasm.storeStatements(manifestOf(dialect)).map((statement) => [statement.name, statement]));
    statementCache.set(dialect, statements);
  }
  return statements;
}

/** The numbered migrations of `dialect`, in order. */
export function migrationsOf(dialect: Dialect): readonly Migration[] {
  return wasm.storeMigrations(dialect);
}

/** Every limit of the schema, as the core enforces them. */
export function storeLimits(): readonly StoreLimit[] {
  return wasm.storeLimits();
}

/**
 * A database error as an executor classified it: the message is the
 * driver's, `cause` the driver's own error. The stores turn it into the
 * core's {@link StoreError} (with the same `cause`).
 */
export class DbError extends Error {
  /** The executor's classification. */
  readonly errorClass: wasm.DbErrorClass;

  /** The classified error `cause`. */
  constructor(errorClass: wasm.DbErrorClass, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.errorClass = errorClass;
  }

  override get name(): string {
    return "DbError";
  }
}

/** The failed answer of a {@link DbError}, to push to a driver. */
export function failedAnswer(error: DbError): wasm.StoreAnswer {
  return { kind: "failed", class: error.errorClass, message: error.message };
}

/** The result of a call into a core driver, its error rethrown as the package's class with the database error behind it. */
export function drive<T>(action: () => T, failure: DbError | undefined): T {
  try {
    return action();
  } catch (error) {
    rethrow(error, failure?.cause);
  }
}

/**
 * The core's store error for a database error met outside the record
 * protocol (leases, segments, the outbox): `store.unavailable` for a lost
 * connection, `store.query_failed` or `store.conflict` otherwise; anything
 * that is not a {@link DbError} unchanged.
 */
export function storeErrorOf(error: unknown): unknown {
  if (!(error instanceof DbError)) return error;
  try {
    rethrow(wasm.storeFailure(failedAnswer(error)), error.cause);
  } catch (typed) {
    return typed;
  }
}

/** Runs `action`, its database errors thrown as the core's store errors. */
export async function storeCall<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw storeErrorOf(error);
  }
}

/** A database answer, with the driver's error behind a failed one. */
export interface Answered {
  /** The answer the core reads. */
  readonly answer: wasm.StoreAnswer;
  /** The classified error behind a failed answer. */
  readonly failure: DbError | undefined;
}

/** Runs `query` on `connection`, as the answer the core reads: rows or an affected count, or the classified failure. */
export async function answerOf(connection: Connection, query: wasm.StoreQuery): Promise<Answered> {
  const statement = statementsOf(connection.dialect).get(query.name);
  if (statement === undefined) throw new TypeError(`no query ${query.name} for ${connection.dialect}`);
  return answered(async () => {
    const result = await connection.run(statement, query.params);
    return statement.kind === "one" || statement.kind === "many" ? { kind: "rows", rows: result.rows as wasm.SqlValue[][] } : { kind: "affected", count: BigInt(result.rowCount) };
  });
}

async function answered(action: () => Promise<wasm.StoreAnswer>): Promise<Answered> {
  try {
    return { answer: await action(), failure: undefined };
  } catch (error) {
    if (!(error instanceof DbError)) throw error;
    return { answer: failedAnswer(error), failure: error };
  }
}

/** A step a driver asks its host for; any other kind is the driver's end. */
type HostStep =
  | { readonly kind: "run"; readonly query: wasm.StoreQuery }
  | { readonly kind: "pause"; readonly millis: bigint }
  | { readonly kind: "begin"; readonly write: boolean }
  | { readonly kind: "commit" }
  | { readonly kind: "rollback" };

const HOST_STEPS: ReadonlySet<string> = new Set(["run", "pause", "begin", "commit", "rollback"]);

function isHostStep(step: { readonly kind: string }): step is HostStep {
  return HOST_STEPS.has(step.kind);
}

const DONE = { kind: "affected", count: 0n } as const;

/**
 * Runs a core driver on `database` from `first()` until a step that is not
 * a database step or a pause (the driver's end), and returns it: `run`,
 * `begin`, `commit`, `rollback` are answered with `push` on one connection;
 * a `pause` sleeps on `clock` (the connection goes back first, outside a
 * transaction), then `resume()`. A connection that cannot be had is the
 * failed answer to the step in hand. The driver's failure is thrown as the
 * core's error with the database's error as its `cause`. Each failed answer
 * is reported to `reporter`.
 */
export async function runDriver<S extends { readonly kind: string }>(
  database: Database,
  clock: StoreClock,
  first: () => S,
  push: (answer: wasm.StoreAnswer) => S,
  resume: () => S,
  reporter: Reporter,
): Promise<Exclude<S, HostStep>> {
  let failure: DbError | undefined;
  const next = (call: () => S): S => drive(call, failure);
  const answer = (got: Answered): S => {
    failure = got.failure;
    reporter.answered(failure);
    return next(() => push(got.answer));
  };
  let step = next(first);
  for (;;) {
    if (!isHostStep(step)) return step as Exclude<S, HostStep>;
    if (step.kind === "pause") {
      await clock.pause(step.millis);
      step = next(resume);
      continue;
    }
    try {
      step = await database.withConnection(async (connection) => {
        let held = step as S;
        let open = false;
        try {
          for (;;) {
            if (!isHostStep(held) || (held.kind === "pause" && !open)) return held;
            const current: HostStep = held;
            if (current.kind === "pause") {
              await clock.pause(current.millis);
              held = next(resume);
            } else if (current.kind === "run") {
              held = answer(await answerOf(connection, current.query));
            } else if (current.kind === "begin") {
              const begun = await answered(async () => {
                await connection.execute(beginStatement(connection.dialect, current.write));
                return DONE;
              });
              open = begun.failure === undefined;
              held = answer(begun);
            } else if (current.kind === "commit") {
              const committed = await answered(async () => {
                await connection.execute("COMMIT");
                return DONE;
              });
              open = committed.failure !== undefined;
              held = answer(committed);
            } else {
              await connection.execute("ROLLBACK").catch(() => undefined);
              open = false;
              held = next(() => push(DONE)); // the failure that led here stays the cause
            }
          }
        } finally {
          if (open) await connection.execute("ROLLBACK").catch(() => undefined);
        }
      });
    } catch (error) {
      if (!(error instanceof DbError)) throw error;
      step = answer({ answer: failedAnswer(error), failure: error });
    }
  }
}

/** The statement that begins a driver's transaction (`write`: SQLite takes the write lock at once). */
function beginStatement(dialect: Dialect, write: boolean): string {
  return dialect === "sqlite" && write ? "BEGIN IMMEDIATE" : "BEGIN";
}

export { classifyDbError, LeaseAcquisition, LeaseRelease, LeaseRenewal } from "../wasm/mintid_wasm.js";
export type { LeaseStep } from "../wasm/mintid_wasm.js";
