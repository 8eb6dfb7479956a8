/**
 * The transactional outbox over `outbox_message`, driven by the core's
 * outbox drivers (`mintid::store::{OutboxEnqueue, OutboxRelay,
 * OutboxCleanup}`): enqueue inside the caller's business transaction;
 * `relay` runs the core's relay loop on the lane, calling `send` when the
 * core says so.
 * Every rule is the core's.
 */

import { toU64 } from "../check.js";
import { relayPolicyHandle } from "../handles.js";
import { type OutboxStatus, randomDraw, RelayPolicy } from "../outbox.js";
import * as wasm from "../wasm/mintid_wasm.js";
import { type StoreClock, systemClock } from "./clock.js";
import type { Connection, Database } from "./database.js";
import { type Answered, answerOf, DbError, drive, failedAnswer, manifestOf } from "./driver.js";
import { pushAnswer, RelayLaneDriver, type RelayStep, relayStep } from "./lane.js";
import { runQueries, type Use } from "./steps.js";
import { Reporter, type StoreMetrics } from "./metrics.js";
import { defaultMetrics } from "./otel.js";

/** A message to enqueue: one per (kind, business key). */
export interface OutboxMessage {
  /** Its id (a Snowflake). */
  readonly messageId: bigint;
  /** The kind of event, e.g. `order.created`. */
  readonly kind: string;
  /** The business key. */
  readonly businessKey: string;
  /** The payload. */
  readonly payload: Uint8Array;
}

/** A message of a claimed batch, handed to `send`. */
export interface ClaimedMessage {
  /** Its id. */
  readonly messageId: bigint;
  /** Its kind. */
  readonly kind: string;
  /** Its business key. */
  readonly businessKey: string;
  /** Its payload. */
  readonly payload: Uint8Array;
  /** The sends started so far, this one included. */
  readonly attempts: bigint;
  /** When it was enqueued (Unix ms). */
  readonly createdMillis: bigint;
}

/** A message as stored (`outbox_load`). */
export interface StoredMessage {
  /** Its id. */
  readonly messageId: bigint;
  /** Its status. */
  readonly status: OutboxStatus;
  /** The sends started so far. */
  readonly attempts: bigint;
  /** When it is next due (Unix ms). */
  readonly nextAttemptMillis: bigint;
  /** The last failed send's error text (at most 1024 bytes), or `null`. */
  readonly lastError: string | null;
}

/** What one {@link Outbox.relay} run did (the core's `RelayReport`). */
export interface RelayReport {
  /** Messages sent. */
  readonly sent: number;
  /** Messages whose send failed, due again after the policy's backoff. */
  readonly retried: number;
  /** Messages whose last attempt failed: dead. */
  readonly dead: number;
  /** Messages whose attempts ran out before this claim (relays died sending them): dead unsent. */
  readonly givenUp: number;
  /** Marks that found another relay's claim (`outbox.claim_lost`): counted, the run goes on. */
  readonly claimLost: number;
  /** Messages given back unsent because the claim would end first; claimed again. */
  readonly released: number;
  /** Marks that failed on a database error: counted, the run goes on; the message is sent again once its claim ends. */
  readonly markFailed: number;
}

/** Options of an {@link Outbox}. */
export interface OutboxOptions {
  /** The clock (default the system clock); tests pass a manual one. */
  readonly clock?: StoreClock;
  /** A random u64 per relay run, for its claim tokens and jitter (default `crypto.getRandomValues`). */
  readonly draw?: () => bigint;
  /** Where each relay run's sent, retried and dead messages and the database errors are reported (default as in `IdempotencyStoreOptions.metrics`). */
  readonly metrics?: StoreMetrics;
}

/** One outbox in one database, relayed under one {@link RelayPolicy}. */
export class Outbox {
  /** The database. */
  readonly database: Database;
  /** The relay policy. */
  readonly policy: RelayPolicy;
  readonly #clock: StoreClock;
  readonly #draw: () => bigint;
  readonly #reporter: Reporter;
  readonly #use: Use = (action) => this.database.withConnection(action);

  /** An outbox over `database`. */
  constructor(database: Database, policy: RelayPolicy, options: OutboxOptions = {}) {
    if (!(policy instanceof RelayPolicy)) throw new TypeError("policy must be a RelayPolicy");
    this.database = database;
    this.policy = policy;
    this.#clock = options.clock ?? systemClock;
    this.#draw = options.draw ?? randomDraw;
    this.#reporter = new Reporter(options.metrics ?? defaultMetrics());
  }

  #now(): bigint {
    return toU64(this.#clock.now(), "clock.now()");
  }

  /**
   * Enqueues `message` on `connection`, inside the caller's business
   * transaction: `"already_enqueued"` when its (kind, business key) has a message.
   *
   * @throws OutboxError `outbox.invalid_message`.
   * @throws StoreError `store.query_failed` when the message id is another message's.
   */
  async enqueue(connection: Connection, message: OutboxMessage): Promise<"new" | "already_enqueued"> {
    const id = toU64(message.messageId, "messageId");
    const driver = drive(() => new wasm.OutboxEnqueueDriver(manifestOf(this.database.dialect), id, message.kind, message.businessKey, message.payload), undefined);
    const start = drive(() => driver.start(this.#now()), undefined);
    if (start.kind === "done") return start.enqueued;
    const use: Use = (action) => action(connection);
    const done = await runQueries(use, start.query, ({ answer, failure }) => drive(() => driver.push(answer), failure), this.#reporter);
    return done.enqueued;
  }

  /**
   * Relays until nothing is due: the core claims batches, decides before
   * each message whether its claim still covers a send, and calls `send`;
   * a `send` that throws fails that attempt (its message is stored, cut to
   * 1024 bytes). What happened, message by message.
   *
   * @throws StoreError `store.unavailable`, `store.query_failed`, …
   */
  async relay(send: (message: ClaimedMessage) => Promise<void>): Promise<RelayReport> {
    const seed = toU64(this.#draw(), "draw()");
    const driver = drive(() => new RelayLaneDriver(manifestOf(this.database.dialect), relayPolicyHandle(this.policy), seed), undefined);
    const answer = (answered: Answered): RelayStep => {
      this.#reporter.answered(answered.failure);
      return relayStep(pushAnswer(driver, answered, this.#now()), answered.failure?.cause);
    };
    const sent = async (message: ClaimedMessage): Promise<RelayStep> => {
      try {
        await send(message);
      } catch (thrown) {
        return relayStep(driver.failed(thrown instanceof Error ? thrown.message : String(thrown), this.#now()));
      }
      return relayStep(driver.sent(this.#now()));
    };
    let step = relayStep(driver.start(this.#now()));
    while (step.kind !== "done") {
      if (step.kind === "pause") {
        await this.#clock.pause(step.millis);
        step = relayStep(driver.resume());
      } else if (step.kind === "send") {
        step = await sent(step.message);
      } else {
        // One connection from send to send (docs/spec.md), where the executor can hold one
        // across the caller's code: given back at a pause, and dropped when a statement on it
        // found it lost (the next statement runs on a fresh one).
        const first = step;
        const holds = this.database.holdsAcrossCalls === true;
        try {
          step = await this.database.withConnection(async (connection) => {
            let held: RelayStep = first;
            for (;;) {
              if (held.kind === "send" && holds) held = await sent(held.message);
              else if (held.kind !== "run") return held;
              else {
                const answered = await answerOf(connection, held.query);
                held = answer(answered);
                if (answered.failure?.errorClass === "connection_lost") return held;
              }
            }
          });
        } catch (error) {
          if (!(error instanceof DbError)) throw error;
          step = answer({ answer: failedAnswer(error), failure: error });
        }
      }
    }
    const { sent: count, retried, dead } = step.report;
    this.#reporter.metrics.relayed?.(count, retried, dead);
    return step.report;
  }

  /** The message of (`kind`, `businessKey`), or `null`. */
  async load(kind: string, businessKey: string): Promise<StoredMessage | null> {
    const query = drive(() => wasm.outboxLoadQuery(manifestOf(this.database.dialect), kind, businessKey), undefined);
    const read = ({ answer, failure }: Answered) => ({ kind: "read", message: drive(() => wasm.outboxReadMessage(answer), failure) }) as const;
    const { message } = await runQueries(this.#use, query, read, this.#reporter);
    if (message === null) return null;
    return { messageId: message.messageId, status: message.status, attempts: message.attempts, nextAttemptMillis: message.nextAttemptMillis, lastError: message.lastError };
  }

  /** Deletes sent messages last updated at or before `sentBeforeMillis`, in batches; the total deleted. Dead messages are kept. */
  async cleanup(sentBeforeMillis: bigint, batchSize = 1000): Promise<number> {
    const cleanup = drive(
      () => new wasm.OutboxCleanupDriver(manifestOf(this.database.dialect), toU64(sentBeforeMillis, "sentBeforeMillis"), toU64(batchSize, "batchSize")),
      undefined,
    );
    const start = drive(() => cleanup.start(), undefined);
    if (start.kind === "done") return Number(start.deleted);
    const done = await runQueries(this.#use, start.query, ({ answer, failure }) => drive(() => cleanup.push(answer), failure), this.#reporter);
    return Number(done.deleted);
  }
}
