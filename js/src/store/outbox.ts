/**
 * The transactional outbox over `outbox_message`: enqueue inside the
 * caller's business transaction; relays claim due messages in batches
 * (`FOR UPDATE SKIP LOCKED`), send them, and mark them sent, retried with
 * backoff or dead, all as the core's `RelayPolicy` decides.
 */

import { checkMarked, checkOutboxMessage, enqueuedFromRows, parseOutboxStatus, RelayPolicy, type OutboxStatus } from "../node.js";
import { type StoreClock, systemClock } from "./clock.js";
import { bytes, type Connection, type Database, execRows, int, one, runNamed, text } from "./database.js";
import { storeCall } from "./driver.js";

/** A message to enqueue. */
export interface OutboxMessageInput {
  /** Its id (a Snowflake). */
  readonly messageId: bigint;
  /** The kind of event, e.g. `order.created`. */
  readonly kind: string;
  /** The business key: one message per (kind, business key). */
  readonly businessKey: string;
  /** The payload. */
  readonly payload: Uint8Array;
}

/** A claimed message. */
export interface ClaimedMessage {
  /** Its id. */
  readonly messageId: bigint;
  /** Its kind. */
  readonly kind: string;
  /** Its business key. */
  readonly businessKey: string;
  /** Its payload. */
  readonly payload: Uint8Array;
  /** The attempts so far, this claim's included. */
  readonly attempts: bigint;
  /** When it was enqueued (Unix ms). */
  readonly createdMillis: bigint;
}

/** A claimed batch: its messages are this relay's until `claimedUntilMillis`. */
export interface ClaimedBatch {
  /** The claim token the marks are checked against. */
  readonly claimToken: bigint;
  /** When the claim ends (Unix ms). */
  readonly claimedUntilMillis: bigint;
  /** The messages, oldest first. */
  readonly messages: readonly ClaimedMessage[];
}

/** A stored message, as `outbox_load` reads it. */
export interface StoredOutboxMessage extends ClaimedMessage {
  /** Its status. */
  readonly status: OutboxStatus;
  /** When it is next due (Unix ms). */
  readonly nextAttemptMillis: bigint;
  /** The last failure's text, or `null`. */
  readonly lastError: string | null;
}

/** What became of one message: sent, to retry at a time, dead, or given up without sending. */
export type RelayOutcome = "sent" | { readonly retryAtMillis: bigint } | "dead" | "given_up";

/** The error text a message given up without sending is marked dead with. */
export const ATTEMPTS_EXHAUSTED = "outbox.attempts_exhausted";

/** One outbox in one database, relayed under one {@link RelayPolicy}. */
export class Outbox {
  /** The database. */
  readonly database: Database;
  /** The relay policy. */
  readonly policy: RelayPolicy;
  readonly #clock: StoreClock;

  /** An outbox over `database`. */
  constructor(database: Database, policy: RelayPolicy, options: { readonly clock?: StoreClock } = {}) {
    if (!(policy instanceof RelayPolicy)) throw new TypeError("policy must be a RelayPolicy");
    this.database = database;
    this.policy = policy;
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * Enqueues `message` on `connection`, inside the caller's business
   * transaction: `"already_enqueued"` when its (kind, business key) has a message.
   *
   * @throws OutboxError `outbox.invalid_message`.
   */
  async enqueue(connection: Connection, message: OutboxMessageInput): Promise<"new" | "already_enqueued"> {
    checkOutboxMessage(message.kind, message.businessKey, message.payload.byteLength);
    const rows = await storeCall(() => execRows(connection, this.database.statement("outbox_enqueue"), {
      message_id: message.messageId,
      kind: message.kind,
      business_key: message.businessKey,
      payload: message.payload,
      now_millis: this.#clock.now(),
    }));
    return enqueuedFromRows(rows);
  }

  /** Claims a batch of due messages (`draw`: the claim token's randomness, for tests). */
  async claim(draw?: bigint): Promise<ClaimedBatch> {
    const claim = this.policy.claim(this.#clock.now(), ...(draw === undefined ? [] : [draw]));
    return storeCall(() => this.database.withConnection(async (connection) => {
      await execRows(connection, this.database.statement("outbox_claim"), {
        claim_token: claim.claimToken,
        claimed_until_millis: claim.claimedUntilMillis,
        now_millis: claim.nowMillis,
        batch_size: claim.batchSize,
      });
      const rows = await runNamed(connection, this.database.statement("outbox_claimed"), { claim_token: claim.claimToken });
      const messages = rows.map((row) => ({
        messageId: int(row["message_id"]),
        kind: text(row["kind"]),
        businessKey: text(row["business_key"]),
        payload: new Uint8Array(bytes(row["payload"])),
        attempts: int(row["attempts"]),
        createdMillis: int(row["created_millis"]),
      }));
      return { claimToken: claim.claimToken, claimedUntilMillis: claim.claimedUntilMillis, messages };
    }));
  }

  /**
   * Sends one claimed message with `send` and marks the outcome: a message
   * whose attempts ran out is marked dead without sending; a failed send is
   * retried after the policy's backoff, or dead (`draw`: the jitter's randomness, for tests).
   *
   * @throws OutboxError `outbox.claim_lost` when the claim ended and another relay took the message.
   */
  async relayMessage(batch: ClaimedBatch, message: ClaimedMessage, send: (message: ClaimedMessage) => Promise<void>, draw?: bigint): Promise<RelayOutcome> {
    if (this.policy.delivery(message.attempts) === "give_up") {
      await this.#mark("outbox_mark_dead", batch, message, { last_error: ATTEMPTS_EXHAUSTED });
      return "given_up";
    }
    try {
      await send(message);
    } catch (error) {
      const lastError = error instanceof Error ? error.message : String(error);
      const next = this.policy.afterFailure(message.attempts, this.#clock.now(), ...(draw === undefined ? [] : [draw]));
      if (next === "dead") {
        await this.#mark("outbox_mark_dead", batch, message, { last_error: lastError });
        return "dead";
      }
      await this.#mark("outbox_mark_retry", batch, message, { next_attempt_millis: next.retryAtMillis, last_error: lastError });
      return next;
    }
    await this.#mark("outbox_mark_sent", batch, message, {});
    return "sent";
  }

  /** Claims and relays batches until none is due; how many messages were sent. */
  async relay(send: (message: ClaimedMessage) => Promise<void>): Promise<number> {
    let sent = 0;
    for (;;) {
      const batch = await this.claim();
      if (batch.messages.length === 0) return sent;
      for (const message of batch.messages) {
        if ((await this.relayMessage(batch, message, send)) === "sent") sent += 1;
      }
    }
  }

  async #mark(name: string, batch: ClaimedBatch, message: ClaimedMessage, values: Record<string, bigint | string>): Promise<void> {
    const rows = await storeCall(() => this.database.withConnection((connection) => execRows(connection, this.database.statement(name), {
      message_id: message.messageId,
      claim_token: batch.claimToken,
      now_millis: this.#clock.now(),
      ...values,
    })));
    checkMarked(rows, message.messageId, batch.claimToken);
  }

  /** The message of (`kind`, `businessKey`), or `null`. */
  async load(kind: string, businessKey: string): Promise<StoredOutboxMessage | null> {
    const row = await storeCall(() => this.database.withConnection((connection) => one(connection, this.database.statement("outbox_load"), { kind, business_key: businessKey })));
    if (row === undefined) return null;
    const lastError = row["last_error"];
    return {
      messageId: int(row["message_id"]),
      kind: text(row["kind"]),
      businessKey: text(row["business_key"]),
      payload: new Uint8Array(bytes(row["payload"])),
      attempts: int(row["attempts"]),
      createdMillis: int(row["created_millis"]),
      status: parseOutboxStatus(text(row["status"])),
      nextAttemptMillis: int(row["next_attempt_millis"]),
      lastError: lastError === null || lastError === undefined ? null : text(lastError),
    };
  }

  /** Deletes sent messages last updated at or before `sentBeforeMillis`, in batches; the total deleted. */
  async cleanup(sentBeforeMillis: bigint, batchSize = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await storeCall(() => this.database.withConnection((connection) =>
        execRows(connection, this.database.statement("outbox_cleanup"), { sent_before_millis: sentBeforeMillis, batch_size: BigInt(batchSize) })));
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
