/**
 * The store's one step loop: a driver on the wire (`wire.ts`) run against
 * the executor. It runs the queries and transaction steps the driver names
 * on one connection, sleeps its pauses, sends its Redis calls, and hands the
 * driver's yields and ends back to the caller; every rule is the driver's.
 */

import { toU64 } from "../check.js";
import { errorOf } from "../errors.js";
import type { StoreClock } from "./clock.js";
import type { Connection } from "./database.js";
import { DbError, type Dialect, statementsOf } from "./driver.js";
import type { Reporter } from "./metrics.js";
import { Wire, wireVersion } from "../wasm/mintid_wasm.js";
import {
  type CommonStep,
  type KindSteps,
  packInput,
  packSpec,
  type RedisAnswer,
  readStep,
  type WireFail,
  type WireInput,
  type WireKind,
  type WireRedis,
  type WireSpec,
  type WireStep,
  WIRE_VERSION,
  Writer,
} from "./wire.js";

if (wireVersion() !== WIRE_VERSION)
  throw new Error(`mintid: the wasm module packs the wire's layout ${wireVersion()}, this package reads ${WIRE_VERSION}: a build mixed two versions`);

/** Gives `action` a connection: one from the pool, or the caller's. */
export type Use = <T>(action: (connection: Connection) => Promise<T>) => Promise<T>;

/** What a drive hands back: the kind's yield or end (a failure is thrown). */
export type Handed<K extends WireKind> = Exclude<KindSteps[K], WireRedis>;

/**
 * A connection taken from `use` at the first statement and held until
 * {@link release}: one connection for the statements of a drive (and, when
 * the caller holds it, of the next).
 */
export class Session {
  readonly #use: Use;
  #held: { readonly connection: Promise<Connection>; readonly done: () => void; readonly ended: Promise<unknown> } | undefined;

  constructor(use: Use) {
    this.#use = use;
  }

  /** The held connection, taken now if none is. @throws DbError when none can be had. */
  connection(): Promise<Connection> {
    if (this.#held === undefined) {
      let done = (): void => undefined;
      const gate = new Promise<void>((resolve) => {
        done = resolve;
      });
      let ended: Promise<unknown> = Promise.resolve();
      const connection = new Promise<Connection>((resolve, reject) => {
        ended = this.#use(async (each) => {
          resolve(each);
          await gate;
        });
        // A checkout that failed (or a `use` that never called back): nothing is held.
        ended.then(() => reject(new TypeError("the store's connection ended before it was used")), reject);
      });
      const held = { connection, done, ended };
      connection.catch(() => {
        if (this.#held === held) this.#held = undefined;
      });
      this.#held = held;
    }
    return this.#held.connection;
  }

  /** Gives the connection back (a broken one is dropped by its executor). */
  async release(): Promise<void> {
    const held = this.#held;
    this.#held = undefined;
    if (held === undefined) return;
    held.done();
    await held.ended.catch(() => undefined);
  }
}

/** The statement that begins a driver's transaction (`write`: SQLite takes the write lock at once). */
function beginStatement(dialect: Dialect, write: boolean): string {
  return dialect === "sqlite" && write ? "BEGIN IMMEDIATE" : "BEGIN";
}

/** The failure of a `fail` step, as the core's typed error with `cause` behind it. */
export function failure(step: WireFail, cause: unknown): Error {
  return errorOf(step.code, step.detail, {
    ...(step.part === null ? {} : { part: step.part }),
    ...(step.position === null ? {} : { position: Number(step.position) }),
    ...(step.problem === null ? {} : { problem: step.problem }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The store's parts a drive uses. */
export interface DriveContext {
  readonly clock: StoreClock;
  readonly reporter: Reporter;
  /** Sends a Redis step (a record driver with a fast path). */
  readonly redis?: (step: WireRedis) => Promise<RedisAnswer>;
}

/**
 * A driver of kind `K` on the wire, pushed inputs and driven against an
 * executor; one crossing per step. Free it with {@link free}.
 */
export class Driver<K extends WireKind> {
  readonly kind: K;
  readonly #wire: Wire;
  readonly #context: DriveContext;
  /** The database driver's error behind the last failed answer: the cause of a failure after it. */
  #cause: unknown;

  /** The driver `spec` makes (one the core refuses fails at its first step). */
  constructor(spec: WireSpec & { readonly kind: K }, context: DriveContext) {
    this.kind = spec.kind;
    this.#wire = new Wire(packSpec(spec));
    this.#context = context;
  }

  /** The database driver's error behind the last failed answer (the cause of a store error the driver ends with). */
  get cause(): unknown {
    return this.#cause;
  }

  /** The time now, from the store's clock. */
  now(): bigint {
    return toU64(this.#context.clock.now(), "clock.now()");
  }

  /** Pushes `input`: the driver's next step. */
  push(input: WireInput): WireStep<K> {
    return readStep(this.kind, this.#wire.call(packInput(input, new Writer())));
  }

  /** Pushes `input` without its time (taken from the store's clock now). */
  tell(input: DistributiveOmit<WireInput, "nowMillis">): WireStep<K> {
    return this.push({ ...input, nowMillis: this.now() } as WireInput);
  }

  /** Frees the driver. */
  free(): void {
    this.#wire.free();
  }

  /**
   * Runs the steps from `step` on: statements on `session`'s connection,
   * pauses slept (the connection given back first, outside a transaction),
   * Redis calls sent (likewise), up to a yield or an end, which it returns.
   * A `fail` step is thrown as the core's error. The connection goes back at
   * the end unless `hold`; a lost one is dropped at once.
   */
  async drive(step: WireStep<K>, session: Session, hold = false): Promise<Handed<K>> {
    let open = false;
    try {
      for (;;) {
        const current = step as CommonStep | KindSteps[WireKind];
        switch (current.tag) {
          case "run":
          case "begin":
          case "commit":
          case "rollback":
            step = await this.#statement(current, session, (now) => {
              open = now;
            });
            break;
          case "pause":
            if (!open) await session.release();
            await this.#context.clock.pause(current.millis);
            step = this.tell({ tag: "resume" });
            break;
          case "redis": {
            const redis = this.#context.redis;
            if (redis === undefined) throw new TypeError("the record driver asked for Redis without a fast path");
            await session.release();
            step = this.tell({ tag: "redis", answer: await redis(current) });
            break;
          }
          case "fail":
            throw failure(current, this.#cause);
          case "yield":
            if (this.kind !== "migrations") return current as Handed<K>;
            // A migration's statement, executed as it is on the same connection.
            step = await this.#statement(current as Extract<Statement, { tag: "yield" }>, session, (now) => {
              open = now;
            });
            break;
          default:
            return current as Handed<K>;
        }
      }
    } finally {
      if (open)
        await session.connection().then(
          (c) => c.execute("ROLLBACK").catch(() => undefined),
          () => undefined,
        );
      if (!hold) await session.release();
    }
  }

  /** Runs one statement step; its answer pushed. */
  async #statement(step: Statement, session: Session, opened: (open: boolean) => void): Promise<WireStep<K>> {
    if (step.tag === "rollback") {
      // What the rollback says is not pushed: the failure that led to it stays the cause.
      opened(false);
      await session
        .connection()
        .then(
          (c) => c.execute("ROLLBACK"),
          () => undefined,
        )
        .catch(() => undefined);
      return this.tell(DONE);
    }
    let failed: DbError | undefined;
    let input: DistributiveOmit<WireInput, "nowMillis"> = DONE;
    try {
      const connection = await session.connection();
      if (step.tag === "run") {
        const statement = statementsOf(connection.dialect).get(step.name);
        if (statement === undefined) throw new TypeError(`no query ${step.name} for ${connection.dialect}`);
        const result = await connection.run(statement, step.params);
        if (statement.kind === "one" || statement.kind === "many") input = { tag: "rows", rows: result.rows };
        else input = { tag: "affected", count: BigInt(result.rowCount) };
      } else if (step.tag === "yield") {
        await connection.execute(step.sql);
      } else {
        await connection.execute(step.tag === "begin" ? beginStatement(connection.dialect, step.write) : "COMMIT");
        opened(step.tag === "begin");
      }
    } catch (error) {
      if (!(error instanceof DbError)) throw error;
      failed = error;
      input = { tag: "failed", class: error.errorClass, message: error.message };
      if (error.errorClass === "connection_lost") {
        opened(false);
        await session.release();
      }
    }
    this.#context.reporter.answered(failed);
    this.#cause = failed?.cause;
    return this.tell(input);
  }
}

/** A step that runs a statement: a named query, transaction control, a migration's SQL. */
type Statement = Extract<CommonStep, { tag: "run" | "begin" | "commit" | "rollback" }> | Extract<KindSteps["migrations"], { tag: "yield" }>;

/** The answer to a statement without rows. */
const DONE = { tag: "affected", count: 0n } as const;

/** `Omit` over each member of a union. */
type DistributiveOmit<T, Key extends PropertyKey> = T extends unknown ? Omit<T, Key> : never;

/** The first input of most drivers. */
const START = () => ({ tag: "start" }) as const;

/**
 * Runs the driver `spec` makes on connections from `use`, from its `first`
 * input (read once the driver is made; default `start`) to its end; the end.
 */
export async function runWire<K extends WireKind>(
  spec: WireSpec & { readonly kind: K },
  use: Use,
  context: DriveContext,
  first: () => DistributiveOmit<WireInput, "nowMillis"> = START,
): Promise<Handed<K>> {
  const driver = new Driver<K>(spec, context);
  try {
    return await driver.drive(driver.tell(first()), new Session(use));
  } finally {
    driver.free();
  }
}
