/**
 * The transactional outbox: messages written with the business change, then
 * relayed in claimed batches with bounded retries. The core decides; the host
 * runs the named queries (`outbox_enqueue`, `outbox_claim`, `outbox_mark`, …).
 */

import * as wasm from "./wasm/mintid_wasm.js";
import { call } from "./call.js";
import { checkIndex, checkString, toU64 } from "./check.js";
import { setRelayPolicyHandle } from "./handles.js";

/** A random 64-bit draw (jitter, claim tokens), from `crypto.getRandomValues`. */
export function randomDraw(): bigint {
  const draw = new BigUint64Array(1);
  crypto.getRandomValues(draw);
  return draw[0] ?? 0n;
}

/** The settings of a {@link RelayPolicy}; each left out keeps the core's default. */
export interface RelayPolicyOptions {
  /** Messages per claimed batch (default 100). */
  readonly batchSize?: number | bigint;
  /** How long a claim holds its batch (ms, default 60 000). */
  readonly claimMillis?: number | bigint;
  /** The first retry's pause (ms). */
  readonly baseBackoffMillis?: number | bigint;
  /** The longest pause (ms). */
  readonly maxBackoffMillis?: number | bigint;
  /** Random jitter, as a percentage of the pause (0-100). */
  readonly jitterPercent?: number;
  /** Attempts before a message is dead. */
  readonly maxAttempts?: number | bigint;
}

/** A claimed batch. */
export interface BatchClaim {
  /** The token the claim writes and `outbox_mark` checks. */
  readonly claimToken: bigint;
  /** When the claim ends (Unix ms). */
  readonly claimedUntilMillis: bigint;
  /** How many messages to claim. */
  readonly batchSize: bigint;
  /** When it was made (Unix ms). */
  readonly nowMillis: bigint;
}

const optional = (value: number | bigint | undefined, what: string): bigint | undefined => (value === undefined ? undefined : toU64(value, what));

/** How the relay claims, retries and gives up; validated by the core (`outbox.invalid_policy`). */
export class RelayPolicy {
  readonly #policy: wasm.RelayPolicyHandle;

  /** A policy; see {@link RelayPolicyOptions}. */
  constructor(options: RelayPolicyOptions = {}) {
    const batch = optional(options.batchSize, "batchSize");
    const claim = optional(options.claimMillis, "claimMillis");
    const base = optional(options.baseBackoffMillis, "baseBackoffMillis");
    const max = optional(options.maxBackoffMillis, "maxBackoffMillis");
    const jitter = options.jitterPercent === undefined ? undefined : checkIndex(options.jitterPercent, 256, "jitterPercent");
    const attempts = optional(options.maxAttempts, "maxAttempts");
    this.#policy = call(() => new wasm.RelayPolicyHandle(batch, claim, base, max, jitter, attempts));
    setRelayPolicyHandle(this, this.#policy);
  }

  /** Messages per claimed batch. */
  get batchSize(): bigint {
    return this.#setting(0);
  }
  /** How long a claim holds its batch (ms). */
  get claimMillis(): bigint {
    return this.#setting(1);
  }
  /** The first retry's pause (ms). */
  get baseBackoffMillis(): bigint {
    return this.#setting(2);
  }
  /** The longest pause (ms). */
  get maxBackoffMillis(): bigint {
    return this.#setting(3);
  }
  /** Attempts before a message is dead. */
  get maxAttempts(): bigint {
    return this.#setting(4);
  }
  /** Random jitter, as a percentage of the pause. */
  get jitterPercent(): number {
    return Number(this.#setting(5));
  }

  #setting(index: number): bigint {
    return this.#policy.settings()[index] ?? 0n;
  }

  /** The pause before the next attempt after `attempts` failures (`draw`: a random u64, drawn when omitted). */
  backoffMillis(attempts: number | bigint, draw: bigint = randomDraw()): bigint {
    return this.#policy.backoffMillis(toU64(attempts, "attempts"), toU64(draw, "draw"));
  }

  /**
   * A batch claim at `now`.
   *
   * @throws OutboxError `outbox.time_overflow`.
   */
  claim(now: number | bigint = Date.now(), draw: bigint = randomDraw()): BatchClaim {
    const at = toU64(now, "now");
    const random = toU64(draw, "draw");
    const [claimToken = 0n, claimedUntilMillis = 0n, batchSize = 0n, nowMillis = 0n] = call(() => this.#policy.claim(at, random));
    return { claimToken, claimedUntilMillis, batchSize, nowMillis };
  }

  /** Whether to send a message at its `attempts`-th attempt or give up on it. */
  delivery(attempts: number | bigint): "send" | "give_up" {
    return this.#policy.delivery(toU64(attempts, "attempts")) as "send" | "give_up";
  }

  /**
   * After a failed attempt: `{ retryAtMillis }`, or `"dead"` when the attempts are used up.
   *
   * @throws OutboxError `outbox.time_overflow`.
   */
  afterFailure(attempts: number | bigint, now: number | bigint = Date.now(), draw: bigint = randomDraw()): { readonly retryAtMillis: bigint } | "dead" {
    const count = toU64(attempts, "attempts");
    const at = toU64(now, "now");
    const random = toU64(draw, "draw");
    const next = call(() => this.#policy.afterFailure(count, at, random));
    return next === undefined ? "dead" : { retryAtMillis: next };
  }
}

/** An outbox message's status. */
export type OutboxStatus = "pending" | "sent" | "dead";

/**
 * An outbox status read from storage.
 *
 * @throws OutboxError `outbox.unknown_status`.
 */
export function parseOutboxStatus(text: string): OutboxStatus {
  checkString(text, "text");
  return call(() => wasm.outboxStatus(text)) as OutboxStatus;
}

/**
 * What `outbox_enqueue` did, from its affected rows.
 *
 * @throws OutboxError `outbox.unexpected_rows`.
 */
export function enqueuedFromRows(rows: number | bigint): "new" | "already_enqueued" {
  const count = toU64(rows, "rows");
  return call(() => wasm.outboxEnqueued(count)) as "new" | "already_enqueued";
}

/**
 * Checks `outbox_mark`'s affected rows.
 *
 * @throws OutboxError `outbox.claim_lost`, `outbox.unexpected_rows`.
 */
export function checkMarked(rows: number | bigint, messageId: number | bigint, claimToken: bigint): void {
  const count = toU64(rows, "rows");
  const id = toU64(messageId, "messageId");
  const token = toU64(claimToken, "claimToken");
  call(() => wasm.outboxCheckMarked(count, id, token));
}

/**
 * Checks a message before it is enqueued.
 *
 * @throws OutboxError `outbox.invalid_message`.
 */
export function checkOutboxMessage(kind: string, businessKey: string, payloadLength: number): void {
  checkString(kind, "kind");
  checkString(businessKey, "businessKey");
  const length = checkIndex(payloadLength, 2 ** 32, "payloadLength");
  call(() => wasm.outboxCheckMessage(kind, businessKey, length));
}
