/**
 * What the stores report to an application's metrics and traces: one hook,
 * called where the core's driver has already decided (nothing here decides
 * anything). The calls map to the core's registry of names, units and
 * attributes (`docs/spec.md`, "Metrics and traces");
 * {@link OpenTelemetryMetrics} records them through OpenTelemetry.
 */

import type { DbErrorClass } from "./driver.js";

/** The way a request came in: `runOnce`, `inTransaction` or `claimLease`. */
export type Way = "run_once" | "same_transaction" | "lease";

/** How a request's claim ended (the core's `Finished::decision`). */
export type Decision = "execute" | "replay" | "in_progress" | "fingerprint_mismatch" | "key_too_old";

/** What the Redis fast path's lookup came to (the core's `FastVerdict`): answered from Redis, sent on, or sent on because Redis failed. */
export type FastPathVerdict = "hit" | "miss" | "fallback";

/** A span of the registry a store opens around a step of a request. */
export type SpanName = "mintid.claim" | "mintid.operation" | "mintid.complete";

/**
 * The hook of the stores (`metrics` in the options of `IdempotencyStore`,
 * `Outbox`, `WorkerLeases`, `SegmentIds`; the HTTP middleware uses its
 * store's): every method is optional and may be called from any request at
 * any time. Attribute values are the core's names, never a key's scope or
 * id, a fingerprint, a payload, a response or an error message.
 */
export interface StoreMetrics {
  /** A request's claim ended with `decision` on `way`, `nanos` after its first step. */
  claimed?(way: Way, decision: Decision, nanos: number): void;
  /** An executed request's outcome was stored in `nanos`; `responseBytes` is its response body's size, or `null` without one. */
  completed?(way: Way, nanos: number, responseBytes: number | null): void;
  /** A statement failed with the database error class `errorClass` (`connection_lost`, …). */
  storeError?(errorClass: DbErrorClass): void;
  /** A renewal found a running operation's record taken over or completed. */
  recordLost?(): void;
  /** A relay run ended: its messages `sent`, `retried` and `dead`. */
  relayed?(sent: number, retried: number, dead: number): void;
  /** A request ID was refused with the error `code` (`request_id.bad_tag`, …). */
  requestIdRejected?(code: string): void;
  /** The Redis fast path looked a request up: `verdict`. */
  fastPathLookup?(verdict: FastPathVerdict): void;
  /** A write to Redis after the database path failed (the database still holds the truth). */
  fastPathWriteFailed?(): void;
  /**
   * Runs `action` inside the span `name` with the attribute `way`; `decision`
   * names the decision of what `action` came to (set at the span's end), or
   * `undefined` for none.
   */
  traced?<T>(name: SpanName, way: Way, action: () => Promise<T>, decision: (result: T) => Decision | undefined): Promise<T>;
}

/** Records nothing. */
export const NO_METRICS: StoreMetrics = Object.freeze({});

/** Nanoseconds since `started` (from `process.hrtime.bigint()`). */
function since(started: bigint): number {
  return Number(process.hrtime.bigint() - started);
}

/**
 * A store's side of its hook: times and names the steps the driver
 * decided, in the spans the hook opens.
 */
export class Reporter {
  /** The hook. */
  readonly metrics: StoreMetrics;

  constructor(metrics: StoreMetrics) {
    if (typeof metrics !== "object" || metrics === null) throw new TypeError("metrics must be a StoreMetrics object");
    this.metrics = metrics;
  }

  #traced<T>(name: SpanName, way: Way, action: () => Promise<T>, decision: (result: T) => Decision | undefined): Promise<T> {
    return this.metrics.traced === undefined ? action() : this.metrics.traced(name, way, action, decision);
  }

  /** Runs `action` in the span `name`, then `report`s its time and result. */
  #timed<T>(name: SpanName, way: Way, action: () => Promise<T>, decision: (result: T) => Decision, report: (nanos: number, result: T) => void): Promise<T> {
    return this.#traced(
      name,
      way,
      async () => {
        const started = process.hrtime.bigint();
        const result = await action();
        report(since(started), result);
        return result;
      },
      decision,
    );
  }

  /** Runs the claim `action` of `way` in `mintid.claim` and reports the decision `decision` names and its time. */
  claim<T>(way: Way, action: () => Promise<T>, decision: (result: T) => Decision): Promise<T> {
    return this.#timed("mintid.claim", way, action, decision, (nanos, result) => this.metrics.claimed?.(way, decision(result), nanos));
  }

  /** Runs the application's operation of `way` in `mintid.operation`. */
  operation<T>(way: Way, action: () => Promise<T>): Promise<T> {
    return this.#traced("mintid.operation", way, action, () => undefined);
  }

  /** Runs the completion `action` of `way` in `mintid.complete` and reports its time and the stored response's size `responseBytes`. */
  complete<T>(way: Way, responseBytes: number | null, action: () => Promise<T>, decision: (result: T) => Decision): Promise<T> {
    return this.#timed("mintid.complete", way, action, decision, (nanos) => this.metrics.completed?.(way, nanos, responseBytes));
  }

  /** Reports the failed answer of `failure`, if any. */
  answered(failure: { readonly errorClass: DbErrorClass } | undefined): void {
    if (failure !== undefined) this.metrics.storeError?.(failure.errorClass);
  }
}
