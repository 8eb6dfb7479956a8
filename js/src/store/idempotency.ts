/**
 * The idempotency store: the three ways in (`runOnce`, `inTransaction`,
 * `claimLease`) over the named queries of `schema/`. Every rule is the
 * core's (`decide`, `completeRecord`, `failRecord`); this module only loads
 * rows, runs the SQL a decision names and reports the outcome.
 */

import {
  type Claim,
  completeRecord,
  decide,
  type Fence,
  failRecord,
  formatFingerprint,
  type IdempotencyKey,
  type IdempotencyRecord,
  parseFingerprint,
  parseRecordStatus,
  type ProblemName,
  RecordError,
  RecordPolicy,
} from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { bytes, type Connection, type Database, execRows, int, one, type Row, type SqlValue, text } from "./database.js";
import { StoreError, staleSnapshot } from "./errors.js";

/** The largest response stored: 1 MiB (schema/README.md, "Sizes"). */
export const MAX_RESPONSE_BYTES = 1_048_576;

/** An operation's response, stored and replayed byte for byte. */
export interface StoredResponse {
  /** Its content type (at most 255 ASCII bytes). */
  readonly contentType: string;
  /** Its bytes (at most {@link MAX_RESPONSE_BYTES}). */
  readonly body: Uint8Array;
}

/** What the store needs about a request besides its key. */
export interface StoreRequest {
  /** The payload's fingerprint (`sha256:…`, from `fingerprint()`). */
  readonly fingerprint: string;
  /** When the key was created (a verified request ID's time), if known. */
  readonly keyCreatedMillis?: number | bigint;
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

  /** An operation failure with its message (stored as the record's error text, ≤ 1024 bytes). */
  constructor(message: string, options: { readonly retryable?: boolean; readonly response?: StoredResponse | null } = {}) {
    super(message);
    this.retryable = options.retryable ?? false;
    this.response = options.response ?? null;
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

/** A record as stored: the core's fields plus what it replays. */
export interface StoredRecord extends IdempotencyRecord {
  /** The stored response, or `null`. */
  readonly response: StoredResponse | null;
  /** The stored error text, or `null`. */
  readonly error: string | null;
}

/** A claim written with a lease ("lease and fence"): complete or fail it with its fence. */
export interface RecordLease {
  /** The fencing token of this claim. */
  readonly token: bigint;
  /** When the lease ends (Unix ms): after it another request may take the key over. */
  readonly leaseDeadlineMillis: bigint;
  /**
   * Stores the response. @throws RecordError `record.stale_token` (taken
   * over) or `record.not_pending`; StoreError `store.response_too_large`.
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
}

type Params = Record<string, SqlValue>;

const MAX_CLAIM_ROUNDS = 100;

function keyParams(key: IdempotencyKey): Params {
  return { scope: key.scope, kind: key.kind, key_id: key.id };
}

function recordOf(row: Row): StoredRecord {
  const body = row["response_body"];
  const contentType = row["response_content_type"];
  const error = row["error"];
  return {
    status: parseRecordStatus(text(row["status"])),
    fingerprint: formatFingerprint(bytes(row["fingerprint"])),
    token: int(row["fencing_token"]),
    leaseDeadlineMillis: int(row["lease_deadline_millis"]),
    createdMillis: int(row["created_millis"]),
    expiresMillis: int(row["expires_millis"]),
    response: body === null || body === undefined ? null : { contentType: contentType === null || contentType === undefined ? "" : text(contentType), body: new Uint8Array(bytes(body)) },
    error: error === null || error === undefined ? null : text(error),
  };
}

function checkSize(response: StoredResponse | null): StoreError | undefined {
  if (response === null || response.body.byteLength <= MAX_RESPONSE_BYTES) return undefined;
  return new StoreError("store.response_too_large", `the response has ${response.body.byteLength} bytes, more than the ${MAX_RESPONSE_BYTES} stored`);
}

/**
 * Idempotency records in one database, under one {@link RecordPolicy}.
 *
 * Three ways in, named alike in every mintid language:
 * - {@link runOnce}: claim, run, store, replay to duplicates;
 * - {@link inTransaction}: the same inside the caller's transaction, so the
 *   record commits or rolls back with the business writes;
 * - {@link claimLease}: a claim with a lease and a fencing token, completed
 *   or failed later (long external calls).
 */
export class IdempotencyStore {
  /** The database. */
  readonly database: Database;
  /** The record policy. */
  readonly policy: RecordPolicy;
  readonly #clock: StoreClock;

  /** A store over `database` (see the `mintid/store/*` entry points). */
  constructor(database: Database, policy: RecordPolicy, options: IdempotencyStoreOptions = {}) {
    if (!(policy instanceof RecordPolicy)) throw new TypeError("policy must be a RecordPolicy");
    this.database = database;
    this.policy = policy;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Runs `operation` once for `key`: the first request claims the key, runs
   * it and stores its response; a duplicate replays what was stored, waits
   * for a request in flight (policy `maxWaitMillis`) or is answered
   * `in_progress`. An operation that throws is failed (see
   * {@link OperationError}) and its error rethrown.
   *
   * @throws StoreError `store.unavailable`: before the claim was written nothing
   * ran; when the database fails after the operation ran (storing its result or
   * its failure), the record stays pending until its lease passes, then the key
   * may be taken over. `store.response_too_large` (the operation ran; its key
   * replays this error). RecordError `record.stale_token` when the lease passed
   * and another request took the key over before completion.
   */
  async runOnce(key: IdempotencyKey, request: StoreRequest, operation: () => Promise<StoredResponse>): Promise<RunResult> {
    const claimed = await this.#claim((action) => this.database.withConnection(action), key, request);
    if (claimed.decision !== "execute") return claimed;
    const { fence, record } = claimed;
    let response: StoredResponse;
    try {
      response = await operation();
    } catch (error) {
      await this.#fail(fence, record, key, error);
      throw error;
    }
    await this.#complete(fence, record, key, response);
    return { decision: "execute", response };
  }

  /**
   * {@link runOnce} inside the caller's transaction on `connection` (from
   * `database.transaction(…)` or the driver's `…Connection(client)`): the
   * claim, `operation`'s writes on the same connection and the completion
   * commit or roll back together. An operation that throws leaves the
   * failure to the caller's rollback: nothing is stored.
   *
   * @throws StoreError `store.unavailable`; `store.response_too_large` (roll
   * back: the claim and the business writes go together, so nothing happened).
   */
  async inTransaction(connection: Connection, key: IdempotencyKey, request: StoreRequest, operation: (connection: Connection) => Promise<StoredResponse>): Promise<RunResult> {
    const claimed = await this.#claim((action) => action(connection), key, request);
    if (claimed.decision !== "execute") return claimed;
    const response = await operation(connection);
    const tooLarge = checkSize(response);
    if (tooLarge !== undefined) throw tooLarge;
    await this.#write(connection, "complete", claimed.fence, claimed.record, key, { response_body: response.body, response_content_type: response.contentType });
    return { decision: "execute", response };
  }

  /**
   * Claims `key` with a lease: on `execute`, the caller runs the operation
   * and calls the lease's `complete` or `fail` before `leaseDeadlineMillis`;
   * later, another request may take the key over and the late write is
   * refused (`record.stale_token`).
   *
   * @throws StoreError `store.unavailable`.
   */
  async claimLease(key: IdempotencyKey, request: StoreRequest): Promise<LeaseResult> {
    const claimed = await this.#claim((action) => this.database.withConnection(action), key, request);
    if (claimed.decision !== "execute") return claimed;
    const { fence, record } = claimed;
    return {
      decision: "execute",
      lease: {
        token: fence.token,
        leaseDeadlineMillis: record.leaseDeadlineMillis,
        complete: (response) => this.#complete(fence, record, key, response),
        fail: (error, options = {}) => this.#fail(fence, record, key, new OperationError(error, options)),
      },
    };
  }

  /** The stored record of `key`, or `null`. */
  async load(key: IdempotencyKey): Promise<StoredRecord | null> {
    return this.database.withConnection((connection) => this.#load(connection, key));
  }

  /**
   * Deletes expired records (a pending one only once its lease passed too),
   * `batchSize` per statement until a batch comes back short; the total deleted.
   */
  async cleanup(batchSize = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.database.withConnection((connection) =>
        execRows(connection, this.database.query("cleanup"), { now_millis: this.#clock.now(), batch_size: BigInt(batchSize) }));
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }

  async #load(connection: Connection, key: IdempotencyKey): Promise<StoredRecord | null> {
    const row = await one(connection, this.database.query("load"), keyParams(key));
    return row === undefined ? null : recordOf(row);
  }

  /** Decides and writes claims until one is written or the decision is not to execute. */
  async #claim(
    use: <T>(action: (connection: Connection) => Promise<T>) => Promise<T>,
    key: IdempotencyKey,
    request: StoreRequest,
  ): Promise<{ decision: "execute"; fence: Fence; record: IdempotencyRecord } | NotExecuted> {
    const fingerprint = parseFingerprint(request.fingerprint);
    const incoming = { fingerprint: request.fingerprint, ...(request.keyCreatedMillis === undefined ? {} : { keyCreatedMillis: request.keyCreatedMillis }) };
    let waited = 0n;
    // A fresh key is claimed in one round trip: the insert is tried before any load.
    let stored: StoredRecord | null | undefined;
    for (let round = 0; ; round += 1) {
      // Each lost race means another request wrote the key in between; endless
      // losses mean a snapshot that cannot see the row (MySQL REPEATABLE READ after
      // an earlier read in the caller's transaction).
      if (round > MAX_CLAIM_ROUNDS) throw staleSnapshot(key.toString(), MAX_CLAIM_ROUNDS);
      const result = await use(async (connection) => {
        const decision = decide(stored ?? null, { ...incoming, waitedMillis: waited }, this.policy, this.#clock.now());
        if (decision.kind === "execute") {
          const written = await this.#writeClaim(connection, key, fingerprint, decision.claim);
          if (written) return { decision: "execute" as const, fence: { token: decision.claim.record.token, createdMillis: decision.claim.record.createdMillis }, record: decision.claim.record };
          stored = await this.#load(connection, key);
          return undefined;
        }
        if (stored === undefined) {
          stored = await this.#load(connection, key);
          return undefined;
        }
        return decision;
      });
      if (result === undefined) continue;
      if ("fence" in result) return result;
      switch (result.kind) {
        case "wait":
          await this.#clock.pause(result.pollMillis);
          waited += result.pollMillis;
          stored = await use((connection) => this.#load(connection, key));
          round = 0;
          continue;
        case "replay":
          return this.#replay(stored ?? null, result.outcome);
        case "in_progress":
          return { decision: "in_progress", problem: result.problem, retryAfterMillis: result.retryAfterMillis, retryAfterSecs: result.retryAfterSecs };
        case "fingerprint_mismatch":
        case "key_too_old":
          return { decision: result.kind, problem: result.problem };
      }
    }
  }

  #replay(record: StoredRecord | null, outcome: "succeeded" | "failed"): NotExecuted {
    if (outcome === "succeeded") return { decision: "replay", outcome, response: record?.response ?? { contentType: "", body: new Uint8Array() } };
    return { decision: "replay", outcome, error: record?.error ?? "", response: record?.response ?? null };
  }

  async #writeClaim(connection: Connection, key: IdempotencyKey, fingerprint: Uint8Array, claim: Claim): Promise<boolean> {
    const { record, replaces } = claim;
    const now = this.#clock.now();
    const common: Params = { ...keyParams(key), fencing_token: record.token, lease_deadline_millis: record.leaseDeadlineMillis, now_millis: now };
    if (replaces === null) {
      const query = this.database.query("claim");
      const params = { ...common, fingerprint, created_millis: record.createdMillis, expires_millis: record.expiresMillis };
      // `claim` returns a row (PostgreSQL, SQLite) or an affected-row count (MySQL).
      const result = await connection.run(query, params);
      return query.kind === "one" ? result.rows.length === 1 : result.rowCount === 1;
    }
    const params = { ...common, expected_token: replaces.fence.token, expected_created_millis: replaces.fence.createdMillis, expected_status: replaces.status };
    return (await execRows(connection, this.database.query("reclaim"), params)) === 1;
  }

  async #complete(fence: Fence, record: IdempotencyRecord, key: IdempotencyKey, response: StoredResponse): Promise<void> {
    const tooLarge = checkSize(response);
    if (tooLarge !== undefined) {
      await this.#fail(fence, record, key, new OperationError(tooLarge.code));
      throw tooLarge;
    }
    await this.database.withConnection((connection) =>
      this.#write(connection, "complete", fence, record, key, { response_body: response.body, response_content_type: response.contentType }));
  }

  async #fail(fence: Fence, record: IdempotencyRecord, key: IdempotencyKey, error: unknown): Promise<void> {
    const failure = error instanceof OperationError && !error.retryable ? "final" : "retryable";
    const message = error instanceof Error ? error.message : String(error);
    const response = error instanceof OperationError ? error.response : null;
    const after = failRecord(record, fence, failure, this.policy);
    await this.database.withConnection((connection) => after.status === "failed"
      ? this.#write(connection, "fail", fence, record, key, { error: message, response_body: response?.body ?? null, response_content_type: response?.contentType ?? null })
      : this.#write(connection, "release", fence, record, key, { error: message }));
  }

  /** Runs a fenced write; when it changes no row, the core says why (`record.stale_token`, …). */
  async #write(connection: Connection, name: "complete" | "fail" | "release", fence: Fence, record: IdempotencyRecord, key: IdempotencyKey, values: Params): Promise<void> {
    const params = { ...keyParams(key), fencing_token: fence.token, created_millis: fence.createdMillis, now_millis: this.#clock.now(), ...values };
    if ((await execRows(connection, this.database.query(name), params)) === 1) return;
    const current = await this.#load(connection, key);
    completeRecord(current ?? record, fence);
    throw new RecordError("record.stale_token", `the ${name} of token ${fence.token} changed no row: the record was taken over or removed`);
  }
}

