/**
 * The idempotency store: the three ways in (`runOnce`, `inTransaction`,
 * `claimLease`), `load` and `cleanup`, each driven by the core's record
 * driver (`mintid::store`). The driver names every query, pause and outcome
 * and does every loop, retry, limit and error code; this module runs the
 * queries it names on the executor, runs the operation when told, and
 * renews the lease beside it.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { toU64 } from "../check.js";
import { parseFingerprint } from "../fingerprint.js";
import { errorOf, type MintidError } from "../errors.js";
import { retryAfterSecs } from "../record.js";
import { Fingerprint, type IdempotencyKey, type IdempotencyRecord, type ProblemName, RecordPolicy, type RecordStatus } from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { type Connection, type Database, Serial } from "./database.js";
import { manifestOf, storeLimits } from "./driver.js";
import { type FastSender, fastSender, type RedisFastPath } from "./fast-path.js";
import { type DriveContext, Driver, type Handed, runWire, Session, type Use } from "./loop.js";
import { type Decision, Reporter, type StoreMetrics, type Way } from "./metrics.js";
import { defaultMetrics } from "./otel.js";
import type { KeyParts, Outcome, RecordEnd, RecordPolicyFields, WireExecute, WireRedis, WireResponse, WireSpec } from "./wire.js";

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
  /**
   * When the lease ends (Unix ms), as claimed or last renewed by {@link renew}:
   * after it another request may take the key over. (The background
   * renewals of `runOnce` move the stored deadline; this one learns it when
   * the operation returns.)
   */
  readonly leaseDeadlineMillis: bigint;
  /** How often the core says to renew the lease (ms). */
  readonly renewEveryMillis: bigint;
  /**
   * Aborted when a renewal found the record lost (the key was taken over or
   * completed, or the lease ran out before a renewal succeeded) or the
   * background renewals ended with another failure; its `reason` is that
   * StoreError (`store.record_lost`, `store.query_failed`, …). Pass it to
   * `fetch` and the like, or check `signal.aborted` before a write.
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

/** The request as the core's driver takes it: the fingerprint's digest and the key's creation time. */
function requestArgs(request: StoreRequest): [Uint8Array, bigint | null] {
  if (typeof request !== "object" || request === null || !(typeof request.fingerprint === "string" || request.fingerprint instanceof Fingerprint)) {
    throw new TypeError("request must be { fingerprint: Fingerprint | string, keyCreatedMillis? }");
  }
  const created = request.keyCreatedMillis === undefined ? null : toU64(request.keyCreatedMillis, "request.keyCreatedMillis");
  const { fingerprint } = request;
  return [fingerprint instanceof Fingerprint ? fingerprint.digest() : parseFingerprint(fingerprint), created];
}

/** A record policy's fields, as the core reads them. */
function policyFields(policy: RecordPolicy): RecordPolicyFields {
  const { leaseMillis, retentionMillis, storeErrors, retryAfterMillis, maxWaitMillis, pollMillis } = policy;
  return { leaseMillis, retentionMillis, storeErrors, retryAfterMillis, maxWaitMillis, pollMillis };
}

/** A step that hands control back to the store: execute, or done. */
type HandedStep = Exclude<Handed<"record">, { tag: "report" }>;
/** A record driver's end. */
type Done = Extract<HandedStep, { tag: "done" }>;

/** The decision a hand-over names (the core's). */
const decisionOf = (step: HandedStep): Decision => step.decision as Decision;

/** The store's parts a request's driver uses: its clock, its reporter and its fast path, if any. */
interface RunContext extends DriveContext {
  readonly fast: FastSender | undefined;
}

/**
 * One request's record driver on the wire, with the store's clock, reporter
 * and fast path; each call one crossing. The one place the store drives it.
 */
class RecordRun {
  /** The way the request came in. */
  readonly way: Way;
  readonly #driver: Driver<"record">;
  readonly #context: RunContext;

  /** The driver of one request with `key` and `request` under `policy` on `dialect`, the way it comes in. */
  constructor(dialect: Database["dialect"], policy: RecordPolicy, way: Way, key: IdempotencyKey, request: StoreRequest, context: RunContext) {
    const [digest, keyCreatedMillis] = requestArgs(request);
    const fast = context.fast === undefined ? null : { ttlMillis: context.fast.ttlMillis ?? null };
    const keyParts = { kind: key.kind, scope: key.scope, id: key.id };
    this.way = way;
    this.#driver = new Driver({ kind: "record", ...manifestOf(dialect), policy: policyFields(policy), way, fast, key: keyParts, digest, keyCreatedMillis }, context);
    this.#context = context;
  }

  /** The store's reporter. */
  get reporter(): Reporter {
    return this.#context.reporter;
  }

  /** The steps from `step` on, on connections from `use`, up to `execute` or `done`; what the fast path came to counted. */
  async #drive(first: () => ReturnType<Driver<"record">["tell"]>, use: Use): Promise<HandedStep> {
    try {
      const step = await this.#driver.drive(first(), new Session(use));
      if (step.tag === "report") throw new TypeError("the record driver reported unasked");
      return step;
    } finally {
      const fast = this.#context.fast;
      if (fast !== undefined) {
        const report = this.#driver.tell({ tag: "report" });
        if (report.tag === "report") fast.count(report, this.reporter.metrics);
      }
    }
  }

  /**
   * The claim: the protocol from its start (the fast path's check included)
   * up to `execute` or `done`, reported as every host reports it: a replay
   * or in-progress answer from Redis is a decision like the database's.
   */
  start(use: Use): Promise<HandedStep> {
    return this.reporter.claim(this.way, () => this.#drive(() => this.#driver.tell({ tag: "start" }), use), decisionOf);
  }

  /** The operation, run in its span. */
  operation<T>(action: () => Promise<T>): Promise<T> {
    return this.reporter.operation(this.way, action);
  }

  /** The store error an end that could not record the operation's failure names, the failed write's database error as its cause. */
  unrecorded(end: { readonly storeCode: string; readonly storeMessage: string }): MintidError {
    const cause = this.#driver.cause;
    return errorOf(end.storeCode, end.storeMessage, cause === undefined ? {} : { cause });
  }

  /** The completion: pushes what the operation came to and runs the protocol to its end, reported. */
  finish(outcome: Outcome, use: Use): Promise<Done> {
    return this.reporter.complete(
      this.way,
      responseOf(outcome)?.body.byteLength ?? null,
      async () => {
        const end = await this.#drive(() => this.#driver.tell({ tag: "finish", outcome }), use);
        if (end.tag !== "done") throw new TypeError("the record driver asked to execute twice");
        return end;
      },
      decisionOf,
    );
  }
}

/** The response an outcome gives the store to keep, if any. */
function responseOf(outcome: Outcome): WireResponse | null {
  return outcome.outcome === "succeeded" || outcome.outcome === "failed" ? outcome.response : null;
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
function returned(value: unknown): Outcome {
  if (isResponse(value)) return { outcome: "succeeded", response: { contentType: value.contentType, body: value.body } };
  return { outcome: "not_a_response", typeName: typeName(value) };
}

/**
 * What an error thrown by an operation is to the core: an {@link OperationError}'s
 * failure, or any other error raised, by its type's name and message (the
 * core composes the stored text and makes it retryable).
 */
function thrown(error: unknown): Outcome {
  if (error instanceof OperationError) return { outcome: "failed", message: error.message, retryable: error.retryable, response: error.response };
  if (error instanceof Error) return { outcome: "raised", typeName: error.name, message: error.message };
  return { outcome: "raised", typeName: typeName(error), message: String(error) };
}

/** A driver's end before the operation ran: a replay or a refusal, as a {@link RunResult}. */
function notExecuted(end: RecordEnd): NotExecuted {
  switch (end.finished) {
    case "replay":
      if (end.outcome === "failed") return { decision: "replay", outcome: "failed", error: end.error ?? "", response: end.response };
      if (end.response === null) throw new TypeError("the core replayed a success without its response");
      return { decision: "replay", outcome: "succeeded", response: end.response };
    case "in_progress":
      return { decision: "in_progress", problem: "in_progress", retryAfterMillis: end.retryAfterMillis, retryAfterSecs: retryAfterSecs(end.retryAfterMillis) };
    case "fingerprint_mismatch":
    case "key_too_old":
      return { decision: end.finished, problem: end.finished };
    default:
      throw new TypeError(`the record driver ended with ${end.finished} before the operation ran`);
  }
}

/**
 * Runs the operation the driver said to execute, pushes what it came to and
 * runs the protocol to its end: the response, or the operation's own error.
 */
async function execute(run: RecordRun, use: Use, operation: () => Promise<unknown>): Promise<RunResult> {
  let outcome: Outcome;
  let failure: { error: unknown } | undefined;
  try {
    outcome = returned(await run.operation(operation));
  } catch (error) {
    failure = { error };
    outcome = thrown(error);
  }
  const finished = await run.finish(outcome, use);
  if (finished.finished === "operation_failed_unrecorded" && failure !== undefined) {
    // The core's rule ("Which error the caller sees"): the operation's own error wins, the
    // store's is attached (as its `storeError`, when it is an object) and logged.
    const storeError = run.unrecorded(finished);
    if (typeof failure.error === "object" && failure.error !== null) Reflect.set(failure.error, "storeError", storeError);
    process.emitWarning(`the operation's failure was not recorded (${storeError.code}): ${storeError.message}`, { code: "MINTID_NOT_RECORDED" });
  }
  if (failure !== undefined) throw failure.error;
  if (finished.finished !== "executed" || outcome.outcome !== "succeeded") throw new TypeError(`the record driver ended with ${finished.finished} after the operation returned`);
  return { decision: "execute", response: outcome.response };
}

/**
 * A held claim's lease: renewed on demand or, for `runOnce`, by the core's
 * heartbeat (`docs/spec.md`, "The heartbeat") while the operation runs.
 */
class Lease implements HeldLease {
  readonly token: bigint;
  readonly renewEveryMillis: bigint;
  readonly #key: KeyParts;
  readonly #held: WireExecute;
  #renewal: Driver<"record_renewal"> | undefined;
  readonly #store: IdempotencyStore;
  readonly #context: DriveContext;
  readonly #lost = new AbortController();
  readonly #stopped = new AbortController();
  #deadline: bigint;
  #renewing: Promise<void> | undefined;

  constructor(store: IdempotencyStore, context: DriveContext, key: IdempotencyKey, held: WireExecute) {
    this.#store = store;
    this.#context = context;
    this.token = held.token;
    this.renewEveryMillis = held.renewEveryMillis ?? 0n;
    this.#deadline = held.leaseDeadlineMillis;
    this.#key = { kind: key.kind, scope: key.scope, id: key.id };
    this.#held = held;
  }

  /** The driver of `kind` for this claim (its spec: the policy, the key, the claim). */
  #driver<K extends "record_renewal" | "heartbeat">(kind: K): Driver<K> {
    const { token, createdMillis, leaseDeadlineMillis, renewEveryMillis } = this.#held;
    const claim = { ...manifestOf(this.#store.database.dialect), policy: policyFields(this.#store.policy), key: this.#key, token, createdMillis, leaseDeadlineMillis };
    return new Driver<K>({ kind, ...claim, renewEveryMillis } as WireSpec & { readonly kind: K }, this.#context);
  }

  get leaseDeadlineMillis(): bigint {
    return this.#deadline;
  }

  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  /** The deadline moved to `deadline` (never back). */
  #renewed(deadline: bigint): void {
    if (deadline > this.#deadline) this.#deadline = deadline;
  }

  /** A renewal failed with `error`: the claim is no longer held when the core ended it for good. */
  #failed(error: unknown, ended: boolean): void {
    const lost = error instanceof Error && (error as { code?: unknown }).code === "store.record_lost";
    if (lost) this.#context.reporter.metrics.recordLost?.();
    if ((lost || ended) && !this.#lost.signal.aborted) this.#lost.abort(error);
  }

  renew(): Promise<void> {
    if (this.#lost.signal.aborted) return Promise.reject(this.#lost.signal.reason);
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  async #renewOnce(): Promise<void> {
    // Made at the first renewal (most operations end before one).
    this.#renewal ??= this.#driver("record_renewal");
    try {
      const renewed = await this.#renewal.drive(this.#renewal.tell({ tag: "start" }), new Session(this.#store.useConnection));
      this.#renewed(renewed.leaseDeadlineMillis);
    } catch (error) {
      this.#failed(error, false);
      throw error;
    }
  }

  /**
   * Runs the core's heartbeat in the background until {@link stop}: its
   * pauses on a timer that keeps no process alive, its renewals on
   * connections of the store's pool, the deadline each pause carries taken.
   * A heartbeat that ends with a failure (the record lost, the lease run
   * out, a query failed) aborts `signal`.
   */
  beat(): void {
    const heartbeat = this.#driver("heartbeat");
    this.#beating(heartbeat)
      .then(
        (deadline) => this.#renewed(deadline),
        (error: unknown) => this.#failed(error, true),
      )
      .finally(() => heartbeat.free());
  }

  /** Drives `heartbeat` to its end (pushed `stop` once {@link stop} aborts a pause): the deadline as last renewed. */
  async #beating(heartbeat: Driver<"heartbeat">): Promise<bigint> {
    const stopped = this.#stopped.signal;
    const session = new Session(this.#store.useConnection);
    let step = await heartbeat.drive(heartbeat.tell({ tag: "start" }), session);
    while (step.tag === "yield") {
      this.#renewed(step.leaseDeadlineMillis);
      await sleep(Number(step.millis), undefined, { signal: stopped, ref: false }).catch(() => undefined);
      step = await heartbeat.drive(heartbeat.tell({ tag: stopped.aborted ? "stop" : "resume" }), session);
    }
    return step.leaseDeadlineMillis;
  }

  /** Stops the heartbeat at once: a renewal in flight is not waited for, and changes nothing. */
  stop(): void {
    this.#stopped.abort();
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

  constructor(store: IdempotencyStore, context: DriveContext, key: IdempotencyKey, held: WireExecute, run: RecordRun) {
    super(store, context, key, held);
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
  readonly #context: RunContext;

  /** A store over `database` (see the `mintid/store/*` entry points), with the Redis fast path when `options.fastPath` is given. */
  constructor(database: Database, policy: RecordPolicy, options: IdempotencyStoreOptions = {}) {
    if (!(policy instanceof RecordPolicy)) throw new TypeError("policy must be a RecordPolicy");
    this.database = database;
    this.policy = policy;
    this.#reporter = new Reporter(options.metrics ?? defaultMetrics());
    this.metrics = this.#reporter.metrics;
    this.#clock = options.clock ?? systemClock;
    const fast = options.fastPath === undefined ? undefined : fastSender(options.fastPath);
    this.#context = { clock: this.#clock, reporter: this.#reporter, fast, ...(fast === undefined ? {} : { redis: (step: WireRedis) => fast.send(step) }) };
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
    const run = new RecordRun(this.database.dialect, this.policy, "run_once", key, request, this.#context);
    const step = await run.start(this.useConnection);
    if (step.tag === "done") {
      signal?.throwIfAborted();
      return notExecuted(step);
    }
    if (signal?.aborted) {
      // Claimed, not run: an error raised instead of the operation, which the core makes retryable (released).
      await run.finish(thrown(signal.reason), this.useConnection);
      throw signal.reason;
    }
    const lease = new Lease(this, this.#context, key, step);
    lease.beat();
    const ran = execute(run, this.useConnection, async () => {
      try {
        return await operation(lease);
      } finally {
        lease.stop();
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
    const run = new RecordRun(connection.dialect, this.policy, "same_transaction", key, request, this.#context);
    const use: Use = (action) => action(connection);
    const step = await run.start(use);
    if (step.tag === "done") return notExecuted(step);
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
    const run = new RecordRun(this.database.dialect, this.policy, "lease", key, request, this.#context);
    const step = await run.start(this.useConnection);
    if (step.tag === "done") return notExecuted(step);
    return { decision: "execute", lease: new ClaimedLease(this, this.#context, key, step, run) };
  }

  /**
   * The stored record of `key`, or `null`.
   *
   * @throws StoreError `store.unavailable`, `store.query_failed`, `store.unexpected_row`.
   */
  async load(key: IdempotencyKey): Promise<StoredRecord | null> {
    const spec = { kind: "record_load", ...manifestOf(this.database.dialect), key: { kind: key.kind, scope: key.scope, id: key.id } } as const;
    const { record: stored } = await runWire(spec, this.useConnection, this.#context);
    if (stored === null) return null;
    const { response, error, fingerprint, status, ...record } = stored;
    return { record: { ...record, status: status as RecordStatus, fingerprint: Fingerprint.fromDigest(fingerprint) }, response, error };
  }

  /**
   * Deletes expired records (a pending one only once its lease passed too),
   * `batchSize` per statement until a batch comes back short; the total deleted.
   *
   * @throws StoreError `store.unavailable`, `store.query_failed`.
   */
  async cleanup(batchSize = 1000): Promise<number> {
    const spec = { kind: "record_cleanup", ...manifestOf(this.database.dialect), batchSize: toU64(batchSize, "batchSize") } as const;
    return Number((await runWire(spec, this.useConnection, this.#context)).deleted);
  }
}
