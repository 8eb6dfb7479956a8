/**
 * The transactional outbox over `outbox_message`, driven by the core's
 * outbox drivers (`mintid::store::{OutboxEnqueue, OutboxRelay,
 * OutboxCleanup}`): enqueue inside the caller's business transaction;
 * `relay` runs the core's relay loop on the wire, calling `send` when the
 * core says so.
 * Every rule is the core's.
 */

import { toU64 } from "../check.js";
import { type OutboxStatus, randomDraw, RelayPolicy } from "../outbox.js";
import { type StoreClock, systemClock } from "./clock.js";
import type { Connection, Database } from "./database.js";
import { type DriveContext, Driver, runWire, type Use } from "./loop.js";
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
  readonly #draw: () => bigint;
  readonly #context: DriveContext;

  /** An outbox over `database`. */
  constructor(database: Database, policy: RelayPolicy, options: OutboxOptions = {}) {
    if (!(policy instanceof RelayPolicy)) throw new TypeError("policy must be a RelayPolicy");
    this.database = database;
    this.policy = policy;
    this.#draw = options.draw ?? randomDraw;
    const use: Use = (action) => this.database.withConnection(action);
    this.#context = { clock: options.clock ?? systemClock, reporter: new Reporter(options.metrics ?? defaultMetrics()), dialect: database.dialect, use };
  }

  /**
   * Enqueues `message` on `connection`, inside the caller's business
   * transaction: `"already_enqueued"` when its (kind, business key) has a message.
   *
   * @throws OutboxError `outbox.invalid_message`.
   * @throws StoreError `store.query_failed` when the message id is another message's.
   */
  async enqueue(connection: Connection, message: OutboxMessage): Promise<"new" | "already_enqueued"> {
    const { kind: messageKind, businessKey, payload } = message;
    const context = { ...this.#context, dialect: connection.dialect, use: (action: (c: Connection) => Promise<unknown>) => action(connection) } as DriveContext;
    return (await runWire(context, { kind: "enqueue", messageId: toU64(message.messageId, "messageId"), messageKind, businessKey, payload })).enqueued;
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
    const { batchSize, claimMillis, baseBackoffMillis, maxBackoffMillis, jitterPercent, maxAttempts } = this.policy;
    const policy = { batchSize, claimMillis, baseBackoffMillis, maxBackoffMillis, jitterPercent, maxAttempts };
    const driver = new Driver(this.#context, { kind: "relay", policy, seed: toU64(this.#draw(), "draw()") });
    // One connection from send to send (docs/spec.md), where the executor can hold one across
    // the caller's code; a lost one is dropped, the next statement runs on a fresh one.
    const hold = this.database.holdsAcrossCalls === true;
    try {
      let step = await driver.drive({ tag: "start" }, hold);
      while (step.tag === "yield") {
        const { messageId, messageKind: kind, businessKey, payload, attempts, createdMillis } = step;
        let error: string | undefined;
        try {
          await send({ messageId, kind, businessKey, payload, attempts, createdMillis });
        } catch (thrown) {
          error = thrown instanceof Error ? thrown.message : String(thrown);
        }
        step = await driver.drive(error === undefined ? { tag: "sent" } : { tag: "send_failed", error }, hold);
      }
      const { tag: _, ...counts } = step;
      const report = Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, Number(count)])) as unknown as RelayReport;
      this.#context.reporter.metrics.relayed?.(report.sent, report.retried, report.dead);
      return report;
    } finally {
      await driver.release();
      driver.free();
    }
  }

  /** The message of (`kind`, `businessKey`), or `null`. */
  async load(kind: string, businessKey: string): Promise<StoredMessage | null> {
    const { message } = await runWire(this.#context, { kind: "outbox_load", messageKind: kind, businessKey });
    if (message === null) return null;
    const { messageId, status, attempts, nextAttemptMillis, lastError } = message;
    return { messageId, status: status as OutboxStatus, attempts, nextAttemptMillis, lastError };
  }

  /** Deletes sent messages last updated at or before `sentBeforeMillis`, in batches; the total deleted. Dead ones are kept. */
  async cleanup(sentBeforeMillis: bigint, batchSize = 1000): Promise<number> {
    const spec = { kind: "outbox_cleanup", sentBeforeMillis: toU64(sentBeforeMillis, "sentBeforeMillis"), batchSize: toU64(batchSize, "batchSize") } as const;
    return Number((await runWire(this.#context, spec)).deleted);
  }
}
