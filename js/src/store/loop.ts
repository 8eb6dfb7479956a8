/**
 * The store's one step loop: a driver on the wire (`wire.ts`) run against
 * an executor. It runs the statements the driver names on one connection,
 * sleeps its pauses, sends its Redis calls and hands its yields and ends
 * back; every rule is the driver's.
 */

import { toU64 } from "../check.js";
import { errorOf } from "../errors.js";
import { Wire, wireVersion } from "../wasm/mintid_wasm.js";
import type { StoreClock } from "./clock.js";
import type { Connection } from "./database.js";
import { DbError, type Dialect, manifestOf, statementsOf } from "./driver.js";
import type { Reporter } from "./metrics.js";
import {
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

/** `Omit` over each member of a union. */
type Without<T, Key extends PropertyKey> = T extends unknown ? Omit<T, Key> : never;
/** An input without its time (the store's clock reads it). */
export type Told = Without<WireInput, "nowMillis">;
/** What a drive hands back: the kind's yield or end (a failure is thrown). */
export type Handed<K extends WireKind> = Extract<WireStep<K>, { tag: "yield" | "done" }>;

/** A store's parts a driver uses. */
export interface DriveContext {
  readonly clock: StoreClock;
  readonly reporter: Reporter;
  /** The dialect of the connections `use` gives. */
  readonly dialect: Dialect;
  readonly use: Use;
  /** Sends a Redis step (a record driver with a fast path). */
  readonly redis?: (step: WireRedis) => Promise<RedisAnswer>;
}

/** The failure of a `fail` step, as the core's typed error with `cause` behind it. */
export function failure(step: WireFail, cause: unknown): Error {
  const { code, detail, part, position, problem } = step;
  return errorOf(code, detail, {
    ...(part === null ? {} : { part }),
    ...(position === null ? {} : { position: Number(position) }),
    ...(problem === null ? {} : { problem }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A connection taken from `use` at the first statement and held until
 * {@link release}: one for the statements of a drive (and of the next, when held).
 */
class Session {
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
    held?.done();
    await held?.ended.catch(() => undefined);
  }

  /** Rolls back what the held connection has open, saying nothing of how it went. */
  async rollback(): Promise<void> {
    await this.connection().then(
      (c) => c.execute("ROLLBACK").catch(() => undefined),
      () => undefined,
    );
  }
}

/** The answer to a statement without rows. */
const DONE = { tag: "affected", count: 0n } as const;

/** A driver of kind `K` on the wire, pushed inputs and driven on its store's connections; one crossing per step. */
export class Driver<K extends WireKind> {
  readonly kind: K;
  readonly #wire: Wire;
  readonly #context: DriveContext;
  readonly #session: Session;
  /** The database driver's error behind the last failed answer: the cause of a failure after it. */
  #cause: unknown;

  /** The driver `spec` makes (one the core refuses fails at its every step). */
  constructor(context: DriveContext, spec: Without<WireSpec, "dialect" | "placeholder"> & { readonly kind: K }) {
    this.kind = spec.kind;
    this.#wire = new Wire(packSpec({ ...spec, ...manifestOf(context.dialect) } as WireSpec));
    this.#context = context;
    this.#session = new Session(context.use);
  }

  /** Throws the core's refusal of the spec (a made driver's step is empty until its first input). */
  check(): void {
    const refused = this.#wire.step();
    if (refused.length > 0) throw failure(readStep(this.kind, refused) as unknown as WireFail, undefined);
  }

  /** The database driver's error behind the last failed answer (the cause of a store error the driver ends with). */
  get cause(): unknown {
    return this.#cause;
  }

  /** Pushes `input` at the store clock's time now: the driver's next step. */
  tell(input: Told): WireStep<K> {
    const now = toU64(this.#context.clock.now(), "clock.now()");
    return readStep(this.kind, this.#wire.call(packInput({ ...input, nowMillis: now } as WireInput, new Writer())));
  }

  /** Frees the driver. */
  free(): void {
    this.#wire.free();
  }

  /** Gives back a connection held across drives. */
  release(): Promise<void> {
    return this.#session.release();
  }

  /**
   * Pushes `input` and runs the steps from there: statements on one
   * connection, pauses slept and Redis calls sent (the connection given back
   * first, outside a transaction), up to a yield, an end or a take, which it
   * returns. A `fail` step is thrown as the core's error; a lost connection
   * is dropped at once. `hold`: keep the connection for the next drive (a
   * relay, from send to send).
   */
  async drive(input: Told, hold = false): Promise<Handed<K>> {
    const session = this.#session;
    let open = false;
    try {
      let step = this.tell(input);
      for (;;) {
        const current = step as { readonly tag: string; readonly millis?: bigint };
        switch (current.tag) {
          case "pause":
            if (!open) await session.release();
            await this.#context.clock.pause(current.millis ?? 0n);
            step = this.tell({ tag: "resume" });
            break;
          case "redis": {
            const { redis } = this.#context;
            if (redis === undefined) throw new TypeError("the record driver asked for Redis without a fast path");
            await session.release();
            step = this.tell({ tag: "redis", answer: await redis(step as WireRedis) });
            break;
          }
          case "fail":
            throw failure(step as WireFail, this.#cause);
          case "rollback":
            // What the rollback says is not pushed: the failure that led to it stays the cause.
            open = false;
            await session.rollback();
            step = this.tell(DONE);
            break;
          case "yield":
            if (this.kind !== "migrations") return step as Handed<K>;
            // A migration's statement, executed as it is on the same connection.
            step = this.tell(await this.#statement(step, session, (now) => (open = now)));
            break;
          case "run":
          case "begin":
          case "commit":
            step = this.tell(await this.#statement(step, session, (now) => (open = now)));
            break;
          default:
            return step as Handed<K>;
        }
      }
    } finally {
      if (open) await session.rollback();
      if (!hold) await session.release();
    }
  }

  /** Runs a statement step: the answer to push. */
  async #statement(step: { readonly tag: string; readonly [field: string]: unknown }, session: Session, opened: (open: boolean) => void): Promise<Told> {
    let failed: DbError | undefined;
    let answer: Told = DONE;
    try {
      const connection = await session.connection();
      if (step.tag === "run") {
        const statement = statementsOf(connection.dialect).get(step["name"] as string);
        if (statement === undefined) throw new TypeError(`no query ${String(step["name"])} for ${connection.dialect}`);
        const result = await connection.run(statement, step["params"] as never);
        answer = statement.kind === "one" || statement.kind === "many" ? { tag: "rows", rows: result.rows } : { tag: "affected", count: BigInt(result.rowCount) };
      } else if (step.tag === "yield") {
        await connection.execute(step["sql"] as string);
      } else {
        // SQLite takes the write lock at once for a writing transaction.
        await connection.execute(step.tag === "commit" ? "COMMIT" : connection.dialect === "sqlite" && step["write"] === true ? "BEGIN IMMEDIATE" : "BEGIN");
        opened(step.tag === "begin");
      }
    } catch (error) {
      if (!(error instanceof DbError)) throw error;
      failed = error;
      answer = { tag: "failed", class: error.errorClass, message: error.message };
      if (error.errorClass === "connection_lost") {
        opened(false);
        await session.release();
      }
    }
    this.#context.reporter.answered(failed);
    this.#cause = failed?.cause;
    return answer;
  }
}

/** Runs the driver `spec` makes from its `first` input (default `start`) to its end; the end. */
export async function runWire<K extends WireKind>(
  context: DriveContext,
  spec: Without<WireSpec, "dialect" | "placeholder"> & { readonly kind: K },
  first: () => Told = () => ({ tag: "start" }),
): Promise<Handed<K>> {
  const driver = new Driver<K>(context, spec);
  try {
    return await driver.drive(first());
  } finally {
    driver.free();
  }
}
