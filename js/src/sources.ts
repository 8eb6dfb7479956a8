/**
 * Time and randomness for generators. By default a generator reads
 * `Date.now()` and `crypto.getRandomValues` (drawn 4 KiB at a time);
 * {@link ManualClock} and {@link FixedEntropy} make it deterministic, for
 * tests and the shared vectors.
 */

import { checkBytes, toU64 } from "./check.js";
import { clockHandle, newClockHandle } from "./handles.js";

/**
 * What a generator does when the clock reads earlier than the last
 * timestamp it issued. No policy ever returns a duplicate.
 *
 * - `fail`: throw at once;
 * - `wait`: wait for the clock to catch up, for a rollback of at most `maxMillis`;
 * - `logical`: keep issuing from the last timestamp while the clock is at most `maxMillis` behind.
 */
export type RollbackPolicy =
  | { readonly kind: "fail" }
  | { readonly kind: "wait"; readonly maxMillis: number | bigint }
  | { readonly kind: "logical"; readonly maxMillis: number | bigint };

/** A clock that moves only when told to (Unix milliseconds), for tests. */
export class ManualClock {
  /**
   * A clock reading `unixMillis`. With `advanceOnPause`, each pause a generator
   * asks for (waiting for a new tick or for a rolled-back clock) moves the
   * clock forward by that long, as real time would.
   */
  constructor(unixMillis: number | bigint, options: { readonly advanceOnPause?: boolean } = {}) {
    newClockHandle(this, toU64(unixMillis, "unixMillis"), options.advanceOnPause === true);
  }

  /** The time in Unix milliseconds. */
  now(): bigint {
    return clockHandle(this).nowMillis();
  }

  /** Sets the time, forwards or backwards. */
  set(unixMillis: number | bigint): void {
    clockHandle(this).setMillis(toU64(unixMillis, "unixMillis"));
  }

  /** Moves the time forward. */
  advance(millis: number | bigint): void {
    clockHandle(this).advanceMillis(toU64(millis, "millis"));
  }

  /** Moves the time backward (a clock rollback), stopping at zero. */
  rewind(millis: number | bigint): void {
    clockHandle(this).rewindMillis(toU64(millis, "millis"));
  }
}

/** Replays fixed bytes as randomness, cycling: deterministic, for tests and vectors only. */
export class FixedEntropy {
  readonly #bytes: Uint8Array;

  /** Entropy replaying a copy of `bytes` (an empty array yields zeros). */
  constructor(bytes: Uint8Array) {
    this.#bytes = checkBytes(bytes, "bytes").slice();
  }

  /** A copy of the bytes replayed. */
  get bytes(): Uint8Array {
    return this.#bytes.slice();
  }
}
