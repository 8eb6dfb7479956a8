/** The time the stores read and the pauses they take. */

import { setTimeout as sleep } from "node:timers/promises";

/** A clock for the stores: Unix milliseconds, and a pause (a `ManualClock` may advance on it). */
export interface StoreClock {
  /** The time now, in Unix milliseconds. */
  now(): bigint;
  /** Waits `millis` milliseconds. */
  pause(millis: bigint): Promise<void>;
}

/** `Date.now()` and a timer. */
export const systemClock: StoreClock = {
  now: () => BigInt(Date.now()),
  pause: async (millis) => {
    await sleep(Number(millis));
  },
};
