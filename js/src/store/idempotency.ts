/**
 * The idempotency store: the three ways in (`runOnce`, `inTransaction`,
 * `claimLease`), `load` and `cleanup`, each driven by the core's record
 * driver (`mintid::store`). The driver names every query, pause and outcome
 * and does every loop, retry, limit and error code; this module runs the
 * queries it names on the executor, runs the operation when told, and
 * renews the lease beside it.
 */

import { toU64 } from "../check.js";
import { policyHandle } from "../handles.js";
import { Fingerprint, type IdempotencyKey, type IdempotencyRecord, type ProblemName, RecordPolicy } from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { type Connection, type Database, Serial } from "./database.js";
import {
  type Answered,
  type Dialect,
  drive,
  type Held,
  manifestOf,
  RecordCleanup,
  RecordRenewal,
  type StoreResponse as DriverResponse,
  storeLimits,
  storeLoadQuery,
  storeReadRecord,
} from "./driver.js";
import { type Finished, fastReport, type OperationOutcome, packOutcome, pushAnswer, RecordLane, type RecordStep, recordStep } from "./lane.js";
import type { RecordLaneDriver } from "../wasm/mintid_wasm.js";
import { type RunStep, runQueries, type Use } from "./steps.js";
import { type FastSender, fastSender, type RedisFastPath } from "./fast-path.js";
import { type Decision, Reporter, type StoreMetrics, type Way } from "./metrics.js";
import { defaultMetrics } from "./otel.js";

/** The largest response stored: 1 MiB (the core's limit `record.response_body`). */
export const MAX_RESPONSE_BYTES = storeLimits().find((limit) => limit.name === "record.response_body")?.maxBytes ?? 0;

/** An operation's response, stored and replayed byte for byte. */
export interface StoredResponse {
  /** Its content type (at most 255 bytes of printable ASCII). */
  readonly contentType: string;
  /** Its bytes (at most {@link MAX_RESPONSE_BYTES}). */
  readonly body: Uint8Array;
}

/** What the store needs about a request besides its key. */
export interface StoreRequest {
  /** The payload's fingerprint (from `fingerprint()`, or its text `sha256:…`). */
  readonly fingerprint: Fingerprint | string;
  /** When the key was created (a verified request ID's time), if known. */
  readonly keyCreatedMillis?: number | bigint;
}

function isResponse(value: unknown): value is StoredResponse {
  if (typeof value !== "object" || value === null) return false;
  const { contentType, body } = value as { contentType?: unknown; body?: unknown };
  return typeof contentType === "string" && body instanceof Uint8Array;
}

/**
 * Thrown by an operation to fail it: a final failure (`retryable: false`,
 * the default) is stored and replayed to duplicates when the policy stores
 * errors; a retryable one releases the key. Any other error thrown by an
 * operation counts as retryable and is rethrown unchanged.
 */
export class OperationError extends Error {
  /** Whether a later request may run the operation again. */
  readonly retryable: boolean;
  /** A response to store with a final failure (e.g. a problem document), or `null`. */
  readonly response: StoredResponse | null;

  /** An operation failure with its message (stored as the record's error text, cut by the core to 1024 bytes). */
  constructor(message: string, options: { readonly retryable?: boolean; readonly response?: StoredResponse | null } = {}) {
    super(message);
    const response = options.response ?? null;
    if (response !== null && !isResponse(response)) throw new TypeError("response must be { contentType: string, body: Uint8Array }");
    this.retryable = options.retryable ?? false;
    this.response = response;
  }

  override get name(): string {
    return "OperationError";
  }
}

/** The outcome of a request: run, replayed, or refused (a refusal names its HTTP problem). */
export type RunResult =
  | { readonly decision: "execute"; readonly response: StoredResponse }
  | { readonly decision: "replay"; readonly outcome: "succeeded"; readonly response: StoredResponse }
  | { readonly decision: "replay"; readonly outcome: "failed"; readonly error: string; readonly response: StoredResponse | null }
  | { readonly decision: "in_progress"; readonly problem: ProblemName; readonly retryAfterMillis: bigint; readonly retryAfterSecs: bigint }
  | { readonly decision: "fingerprint_mismatch"; readonly problem: ProblemName }
  | { readonly decision: "key_too_old"; readonly problem: ProblemName };

/** A refusal or a replay: every {@link RunResult} but `execute`. */
export type NotExecuted = Exclude<RunResult, { readonly decision: "execute" }>;

/** A record as stored: the core's record and what it replays (as in every mintid language). */
export interface StoredRecord {
  /** The core's record: status, fingerprint, fence, lease and retention. */
  readonly record: IdempotencyRecord;
  /** The stored response, or `null`. */
  readonly response: StoredResponse | null;
  /** The stored error text, or `null`. */
  readonly error: string | null;
}

/**
 * The claim a running operation holds: its fence, its lease (renewed in the
 * background by `runOnce`) and whether it was lost.
 */
export interface HeldLease {
  /** The fencing token of this claim. */
  readonly token: bigint;
  /** When the lease ends (Unix ms), as last renewed: after it another request may take the key over. */
  readonly leaseDeadlineMillis: bigint;
  /** How often the core says to renew the lease (ms). */
  readonly renewEveryMillis: bigint;
  /**
   * Aborted when a renewal found the record lost (the key was taken over or
   * completed); its `reason` is that StoreError (`store.record_lost`). Pass
   * it to `fetch` and the like, or check `signal.aborted` before a write.
   */
  readonly signal: AbortSignal;
  /**
   * Renews the lease now, on a connection of the store's pool.
   *
   * @throws StoreError `store.record_lost` (the claim is gone: stop writing),
   * `store.unavailable` (the lease still runs until `leaseDeadlineMillis`).
   */
  renew(): Promise<void>;
}

/** A claim written with a lease ("lease and fence"): renew it, then complete or fail it with its fence. */
export interface RecordLease extends HeldLease {
  /**
   * Stores the response. @throws RecordError `record.stale_token` (taken
   * over) or `record.not_pending`; StoreError `store.response_too_large`,
   * `store.response_not_storable` (stored as a final failure),
   * `store.not_a_response`, `store.unavailable`.
   */
  complete(response: StoredResponse): Promise<void>;
  /** Stores a failure: final (replayed, or released when errors are not stored) or retryable (released). */
  fail(error: string, options?: { readonly retryable?: boolean; readonly response?: StoredResponse | null }): Promise<void>;
}

/** The outcome of {@link IdempotencyStore.claimLease}. */
export type LeaseResult = { readonly decision: "execute"; readonly lease: RecordLease } | NotExecuted;

/** Options of an {@link IdempotencyStore}. */
export interface IdempotencyStoreOptions {
  /** The clock (default the system clock); tests pass a manual one. */
  readonly clock?: StoreClock;
  /**
   * The Redis fast path in front of `runOnce` and `claimLease` (opt-in;
   * `inTransaction` never uses it: its commit is the caller's).
   */
  readonly fastPath?: RedisFastPath;
  /**
   * Where decisions, latencies, errors and spans are reported (default: an
   * `OpenTelemetryMetrics` on the global providers when `@opentelemetry/api`
   * resolves, else nothing). The HTTP middleware reports refused request IDs here too.
   */
  readonly metrics?: StoreMetrics;
}

/** Options of one {@link IdempotencyStore.runOnce} call. */
export interface RunOnceOptions {
  /**
   * The caller going away (a client disconnect, a deadline): honoured until
   * the operation starts (aborted before, nothing is claimed; aborted while
   * the key was claimed, the operation does not run and the claim is
   * released), ignored once it ran (its outcome is recorded all the same).
   * Either way `runOnce` then rejects with `signal.reason`.
   */
  readonly signal?: AbortSignal;
}

/** The request as the core's driver takes it: the fingerprint's text and the key's creation time. */
function requestArgs(request: StoreRequest): [string, bigint | undefined] {
  if (typeof request !== "object" || request === null || !(typeof request.fingerprint === "string" || request.fingerprint instanceof Fingerprint)) {
    throw new TypeError("request must be { fingerprint: Fingerprint | string, keyCreatedMillis? }");
  }
  const created = request.keyCreatedMillis === undefined ? undefined : toU64(request.keyCreatedMillis, "request.keyCreatedMillis");
  return [String(request.fingerprint), created];
}

const WAYS: Readonly<Record<Way, number>> = { run_once: 0, same_transaction: 1, lease: 2 };

/** A step that hands control back to the store: execute, or done. */
type HandedStep = Exclude<RecordStep, RunStep | { kind: "pause" } | { kind: "redis" }>;

/** A claim's end: the decision it names (the driver's, as {@link RunResult} names it). */
function claimDecision(step: HandedStep): Decision {
  return step.kind === "done" ? notExecuted(beforeRun(step.finished)).decision : "execute";
}

/** A completion's end: the operation ran, whatever the driver stored. */
const executeDecision = (): Decision => "execute";

/** The store's parts a request's driver uses: its clock, its reporter and its fast path, if any. */
interface RunContext {
  readonly clock: StoreClock;
  readonly reporter: Reporter;
  readonly fast: FastSender | undefined;
}

/**
 * One request's record driver on the lane, with the store's clock, reporter
 * and fast path; each call one crossing. The one place the store drives it:
 * queries, pauses and Redis calls, up to the step it hands back.
 */
class RecordRun {
  /** The way the request came in. */
  readonly way: Way;
  readonly #driver: RecordLaneDriver;
  readonly #context: RunContext;
  /** The driver error behind the last database answer, for a failure the driver steps to after it. */
  #cause: unknown;

  private constructor(way: Way, driver: RecordLaneDriver, context: RunContext) {
    this.way = way;
    this.#driver = driver;
    this.#context = context;
  }

  /** The driver of one request with `key` and `request`, the way it comes in. */
  static of(lane: RecordLane, way: Way, key: IdempotencyKey, request: StoreRequest, context: RunContext): RecordRun {
    const [fingerprint, created] = requestArgs(request);
    return new RecordRun(
      way,
      drive(() => lane.driver(WAYS[way], key.kind, key.scope, key.id, fingerprint, created), undefined),
      context,
    );
  }

  /** The store's reporter. */
  get reporter(): Reporter {
    return this.#context.reporter;
  }

  #now(): bigint {
    return toU64(this.#context.clock.now(), "clock.now()");
  }

  /** The Redis calls from `step` on, each answer pushed, up to a step that is not one. */
  async #redis(step: RecordStep): Promise<Exclude<RecordStep, { kind: "redis" }>> {
    const fast = this.#context.fast;
    while (step.kind === "redis") {
      if (fast === undefined) throw new TypeError("the record driver asked for Redis without a fast path");
      const answer = await fast.send(step.call);
      step = recordStep(this.#driver.pushRedis(answer, this.#now()), this.#cause);
    }
    return step;
  }

  /** The steps from `step` on: Redis calls sent, queries run through `use`, pauses slept, up to `execute` or `done`. */
  async #drive(step: RecordStep, use: Use): Promise<HandedStep> {
    for (;;) {
      if (step.kind === "redis") step = await this.#redis(step);
      else if (step.kind === "pause") {
        await this.#context.clock.pause(step.millis);
        step = recordStep(this.#driver.resume());
      } else if (step.kind === "run") {
        step = await runQueries(
          use,
          step.query,
          (answered) => {
            this.#cause = answered.failure?.cause;
            return recordStep(pushAnswer(this.#driver, answered, this.#now()), this.#cause);
          },
          this.reporter,
        );
      } else {
        return step;
      }
    }
  }

  /** Counts what the fast path came to since the last report (the driver hands control back after each drive). */
  #report(): void {
    const fast = this.#context.fast;
    if (fast !== undefined) fast.count(fastReport(this.#driver.takeFastReport()), this.reporter.metrics);
  }

  /**
   * The claim: the protocol from its start (the fast path's check included)
   * up to `execute` or `done`, reported as every host reports it: a replay
   * or in-progress answer from Redis is a decision like the database's.
   */
  async start(use: Use): Promise<HandedStep> {
    try {
      const first = recordStep(this.#driver.start(this.#now()));
      return await this.reporter.claim(this.way, () => this.#drive(first, use), claimDecision);
    } finally {
      this.#report();
    }
  }

  /** The operation, run in its span. */
  operation<T>(action: () => Promise<T>): Promise<T> {
    return this.reporter.operation(this.way, action);
  }

  /** The completion: pushes what the operation came to and runs the protocol to its end, reported. */
  finish(outcome: OperationOutcome, use: Use): Promise<Finished> {
    return this.reporter.complete(
      this.way,
      responseOf(outcome)?.body.byteLength ?? null,
      async () => {
        try {
          const end = await this.#drive(recordStep(this.#driver.finish(packOutcome(outcome), this.#now())), use);
          if (end.kind !== "done") throw new TypeError("the record driver asked to execute twice");
          return end.finished;
        } finally {
          this.#report();
        }
      },
      executeDecision,
    );
  }
}

/** The response an outcome gives the store to keep, if any. */
function responseOf(outcome: OperationOutcome): DriverResponse | null {
  return outcome.kind === "succeeded" || outcome.kind === "failed" ? outcome.response : null;
}

/** The type name of a value that is not a response. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "Array";
  if (typeof value !== "object") return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? name : "Object";
}

/** What a value returned by an operation is to the core. */
function returned(value: unknown): OperationOutcome {
  if (isResponse(value)) return { kind: "succeeded", response: { contentType: value.contentType, body: value.body } };
  return { kind: "not_a_response", typeName: typeName(value) };
}

/** The text of a thrown value: an error's message, or the value as a string. */
function textOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What an error thrown by an operation is to the core: an {@link OperationError}'s failure, or any other error's text (the core makes it retryable). */
function thrown(error: unknown): OperationOutcome {
  if (error instanceof OperationError) return { kind: "failed", message: error.message, retryable: error.retryable, response: error.response };
  return { kind: "raised", message: textOf(error) };
}

/** A replay or a refusal as a {@link RunResult}. */
function notExecuted(finished: Exclude<Finished, { kind: "executed" | "operation_failed" }>): NotExecuted {
  switch (finished.kind) {
    case "replay":
      return finished.outcome === "succeeded"
        ? { decision: "replay", outcome: "succeeded", response: finished.response }
        : { decision: "replay", outcome: "failed", error: finished.error, response: finished.response };
    case "in_progress":
      return { decision: "in_progress", problem: finished.problem, retryAfterMillis: finished.retryAfterMillis, retryAfterSecs: finished.retryAfterSecs };
    case "fingerprint_mismatch":
    case "key_too_old":
      return { decision: finished.kind, problem: finished.problem };
  }
}

/**
 * Runs the operation the driver said to execute, pushes what it came to and
 * runs the protocol to its end: the response, or the operation's own error.
 */
async function execute(run: RecordRun, use: Use, operation: () => Promise<unknown>): Promise<RunResult> {
  let outcome: OperationOutcome;
  let failure: { error: unknown } | undefined;
  try {
    outcome = returned(await run.operation(operation));
  } catch (error) {
    failure = { error };
    outcome = thrown(error);
  }
  const finished = await run.finish(outcome, use);
  if (failure !== undefined) throw failure.error;
  if (finished.kind !== "executed" || outcome.kind !== "succeeded") throw new TypeError(`the record driver ended with ${finished.kind} after the operation returned`);
  return { decision: "execute", response: outcome.response };
}

/**
 * A held claim's lease: renewed on demand or, for `runOnce`, every
 * `renewEveryMillis` from a timer (`unref`ed) until the operation ends.
 */
class Lease implements HeldLease {
  readonly token: bigint;
  readonly renewEveryMillis: bigint;
  readonly #key: IdempotencyKey;
  readonly #held: Held;
  #renewal: RecordRenewal | undefined;
  readonly #store: IdempotencyStore;
  readonly #clock: StoreClock;
  readonly #reporter: Reporter;
  readonly #lost = new AbortController();
  #deadline: bigint;
  #renewing: Promise<void> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(store: IdempotencyStore, clock: StoreClock, key: IdempotencyKey, held: Held, reporter: Reporter) {
    this.#store = store;
    this.#clock = clock;
    this.#reporter = reporter;
    this.token = held.token;
    this.renewEveryMillis = held.renewEveryMillis ?? 0n;
    this.#deadline = held.leaseDeadlineMillis;
    this.#key = key;
    this.#held = held;
  }

  /** The claim's renewal driver, made at the first renewal (most operations end before one). */
  #renewalDriver(): RecordRenewal {
    const store = this.#store;
    this.#renewal ??= drive(() => new RecordRenewal(manifestOf(store.database.dialect), policyHandle(store.policy), this.#key, this.#held), undefined);
    return this.#renewal;
  }

  get leaseDeadlineMillis(): bigint {
    return this.#deadline;
  }

  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  renew(): Promise<void> {
    if (this.#lost.signal.aborted) return Promise.reject(this.#lost.signal.reason);
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renewOnce(): Promise<void> {
    const renewal = this.#renewalDriver();
    const query = renewal.start(toU64(this.#clock.now(), "clock.now()"));
    try {
      const renewed = await runQueries(this.#store.useConnection, query, ({ answer, failure }) => drive(() => renewal.push(answer), failure), this.#reporter);
      this.#deadline = renewed.leaseDeadlineMillis;
    } catch (error) {
      if (error instanceof Error && (error as { code?: unknown }).code === "store.record_lost") {
        this.#reporter.metrics.recordLost?.();
        this.#lost.abort(error);
      }
      throw error;
    }
  }

  /** Renews every `renewEveryMillis` until {@link stop}; a failed beat is tried again at the next one. */
  beat(): void {
    if (this.renewEveryMillis === 0n) return;
    this.#timer = setInterval(() => {
      if (this.#renewing === undefined && !this.#lost.signal.aborted) this.renew().catch(() => undefined);
    }, Number(this.renewEveryMillis));
    this.#timer.unref();
  }

  /** Stops the heartbeat and waits for a renewal in flight. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#renewing?.catch(() => undefined);
  }
}

/**
 * A claim held by the lease-and-fence way, finished by the caller: the
 * driver keeps the claim held after a finish, so a failed `complete` may be
 * followed by a `fail` (each write fenced); finishes run one at a time.
 */
class ClaimedLease extends Lease implements RecordLease {
  readonly #run: RecordRun;
  readonly #use: Use;
  readonly #finishes = new Serial();

  constructor(store: IdempotencyStore, clock: StoreClock, key: IdempotencyKey, held: Held, run: RecordRun) {
    super(store, clock, key, held, run.reporter);
    this.#run = run;
    this.#use = store.useConnection;
  }

  async complete(response: StoredResponse): Promise<void> {
    await this.#finishes.run(() => this.#run.finish(returned(response), this.#use));
  }

  async fail(error: string, options: { readonly retryable?: boolean; readonly response?: StoredResponse | null } = {}): Promise<void> {
    const failure = new OperationError(String(error), options);
    await this.#finishes.run(() => this.#run.finish(thrown(failure), this.#use));
  }
}

/**
 * Runs operations once per idempotency key over a {@link Database}
 * (see the `mintid/store/*` entry points):
 *
 * - {@link runOnce}: claim, run the operation, store its result, replay it
 *   to duplicates, the lease renewed in the background while it runs.
 * - {@link inTransaction}: the same inside the caller's transaction, so the
 *   record commits or rolls back with the operation's own writes.
 * - {@link claimLease}: a claim with a lease and a fencing token, renewed,
 *   completed or failed later (long external calls).
 */
export class IdempotencyStore {
  /** The database. */
  readonly database: Database;
  /** The record policy. */
  readonly policy: RecordPolicy;
  /** Where decisions, latencies, errors and spans are reported (see {@link IdempotencyStoreOptions.metrics}). */
  readonly metrics: StoreMetrics;
  readonly #reporter: Reporter;
  readonly #clock: StoreClock;
  readonly #fastPath: RedisFastPath | undefined;
  readonly #context: RunContext;

  /** A store over `database` (see the `mintid/store/*` entry points), with the Redis fast path when `options.fastPath` is given. */
  constructor(database: Database, policy: RecordPolicy, options: IdempotencyStoreOptions = {}) {
    if (!(policy instanceof RecordPolicy)) throw new TypeError("policy must be a RecordPolicy");
    this.database = database;
    this.policy = policy;
    this.#reporter = new Reporter(options.metrics ?? defaultMetrics());
    this.metrics = this.#reporter.metrics;
    this.#clock = options.clock ?? systemClock;
    this.#fastPath = options.fastPath;
    this.#context = { clock: this.#clock, reporter: this.#reporter, fast: options.fastPath === undefined ? undefined : fastSender(options.fastPath) };
  }

  readonly #lanes = new Map<Dialect, RecordLane>();

  /** The record lane of `dialect` under the store's policy, with the fast path when the store has one (made once). */
  #lane(dialect: Dialect): RecordLane {
    let lane = this.#lanes.get(dialect);
    if (lane === undefined) {
      const plain = drive(() => new RecordLane(manifestOf(dialect), policyHandle(this.policy)), undefined);
      const fast = this.#fastPath;
      lane = fast === undefined ? plain : plain.withFastPath(fast.ttlMillis);
      this.#lanes.set(dialect, lane);
    }
    return lane;
  }

  /** Gives `action` a connection of the store's database. */
  readonly useConnection: Use = (action) => this.database.withConnection(action);

  /**
   * Runs `operation` once for `key`: the first request claims the key, runs
   * it and stores its response; a duplicate replays what was stored, waits
   * for a request in flight (policy `maxWaitMillis`) or is answered
   * `in_progress`. The operation gets the claim's {@link HeldLease}, renewed
   * every `renewEveryMillis` on the pool while it runs (its `signal` aborts
   * when the claim was lost). An operation that throws is failed (see
   * {@link OperationError}) and its error rethrown; one that returns
   * something that is not a response releases the claim.
   *
   * @throws StoreError `store.unavailable`: before the claim was written nothing
   * ran; when the database fails after the operation ran, the record stays
   * pending until its lease passes. `store.response_too_large`,
   * `store.response_not_storable` (the operation ran; its key replays this
   * error), `store.not_a_response` (released), `store.conflict`,
   * `store.stale_snapshot`, `store.query_failed`. RecordError
   * `record.stale_token` when the lease passed and another request took the
   * key over before completion.
   *
   * With a fast path, a duplicate may be answered from Redis (a replay of
   * what the database committed, or `in_progress`) without the database.
   *
   * With `options.signal` aborted, it rejects with `signal.reason` once the
   * store is done: before the operation ran, after releasing a claim it
   * holds; after, once the outcome is recorded (see {@link RunOnceOptions}).
   */
  async runOnce(key: IdempotencyKey, request: StoreRequest, operation: (lease: HeldLease) => Promise<StoredResponse>, options: RunOnceOptions = {}): Promise<RunResult> {
    const { signal } = options;
    signal?.throwIfAborted();
    const run = RecordRun.of(this.#lane(this.database.dialect), "run_once", key, request, this.#context);
    const step = await run.start(this.useConnection);
    if (step.kind === "done") {
      signal?.throwIfAborted();
      return this.#notExecuted(step.finished);
    }
    if (signal?.aborted) {
      // Claimed, not run: an error raised instead of the operation, which the core makes retryable (released).
      await run.finish({ kind: "raised", message: `aborted before the operation ran: ${textOf(signal.reason)}` }, this.useConnection);
      throw signal.reason;
    }
    const lease = new Lease(this, this.#clock, key, step.held, run.reporter);
    lease.beat();
    const ran = execute(run, this.useConnection, async () => {
      try {
        return await operation(lease);
      } finally {
        await lease.stop();
      }
    });
    if (signal === undefined) return ran;
    // The outcome is recorded whatever the caller does; then the abort wins over it.
    const settled = await ran.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    signal.throwIfAborted();
    if ("error" in settled) throw settled.error;
    return settled.result;
  }

  /**
   * {@link runOnce} inside the caller's transaction on `connection` (from
   * `database.transaction(…)` or the executor's `…Connection(client)`): the
   * claim, `operation`'s writes on the same connection and the completion
   * commit or roll back together. An operation that throws leaves the
   * failure to the caller's rollback: nothing is stored.
   *
   * @throws StoreError `store.unavailable`; `store.response_too_large`,
   * `store.response_not_storable`, `store.not_a_response` (roll back: the
   * claim and the business writes go together, so nothing happened);
   * `store.stale_snapshot`.
   */
  async inTransaction(connection: Connection, key: IdempotencyKey, request: StoreRequest, operation: (connection: Connection) => Promise<StoredResponse>): Promise<RunResult> {
    const run = RecordRun.of(this.#lane(connection.dialect), "same_transaction", key, request, this.#context);
    const use: Use = (action) => action(connection);
    const step = await run.start(use);
    if (step.kind === "done") return this.#notExecuted(step.finished);
    return execute(run, use, () => operation(connection));
  }

  /**
   * Claims `key` with a lease: on `execute`, the caller runs the operation,
   * renews the lease (`renew()`, every `renewEveryMillis`) and calls its
   * `complete` or `fail` before `leaseDeadlineMillis`; later, another request
   * may take the key over and the late write is refused (`record.stale_token`).
   *
   * With a fast path, a duplicate may be answered from Redis.
   *
   * @throws StoreError `store.unavailable`, `store.conflict`, `store.query_failed`.
   */
  async claimLease(key: IdempotencyKey, request: StoreRequest): Promise<LeaseResult> {
    const run = RecordRun.of(this.#lane(this.database.dialect), "lease", key, request, this.#context);
    const step = await run.start(this.useConnection);
    if (step.kind === "done") return this.#notExecuted(step.finished);
    return { decision: "execute", lease: new ClaimedLease(this, this.#clock, key, step.held, run) };
  }

  /**
   * The stored record of `key`, or `null`.
   *
   * @throws StoreError `store.unavailable`, `store.query_failed`, `store.unexpected_row`.
   */
  async load(key: IdempotencyKey): Promise<StoredRecord | null> {
    const query = drive(() => storeLoadQuery(manifestOf(this.database.dialect), key), undefined);
    const read = ({ answer, failure }: Answered) => ({ kind: "read", stored: drive(() => storeReadRecord(answer), failure) }) as const;
    const { stored } = await runQueries(this.useConnection, query, read, this.#reporter);
    if (stored === null) return null;
    const { response, error, ...record } = stored;
    return { record: { ...record, fingerprint: Fingerprint.ofText(record.fingerprint) }, response, error };
  }

  /**
   * Deletes expired records (a pending one only once its lease passed too),
   * `batchSize` per statement until a batch comes back short; the total deleted.
   *
   * @throws StoreError `store.unavailable`, `store.query_failed`.
   */
  async cleanup(batchSize = 1000): Promise<number> {
    const cleanup = drive(() => new RecordCleanup(manifestOf(this.database.dialect), toU64(batchSize, "batchSize")), undefined);
    const now = (): bigint => toU64(this.#clock.now(), "clock.now()");
    const done = await runQueries(this.useConnection, cleanup.start(now()), ({ answer, failure }) => drive(() => cleanup.push(answer, now()), failure), this.#reporter);
    return Number(done.deleted);
  }

  #notExecuted(finished: Finished): NotExecuted {
    return notExecuted(beforeRun(finished));
  }
}

/** A driver's end before the operation ran: a replay or a refusal. */
function beforeRun(finished: Finished): Exclude<Finished, { kind: "executed" | "operation_failed" }> {
  if (finished.kind === "executed" || finished.kind === "operation_failed") throw new TypeError(`the record driver ended with ${finished.kind} before the operation ran`);
  return finished;
}
