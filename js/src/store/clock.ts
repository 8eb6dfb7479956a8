/** The time the stores read and the pauses they take. */

import { setTimeout as sleep } from "node:timers/promises";
import { shutdownWaitMillis } from "../wasm/mintid_wasm.js";

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

/**
 * Waits for `task` (background work under way, its outcome dropped) at most
 * the core's shutdown bound (`docs/spec.md`, "Shutdown waits"), then goes on
 * without it.
 */
export async function waitAtMostShutdown(task: Promise<unknown> | undefined): Promise<void> {
  if (task === undefined) return;
  const bound = new AbortController();
  await Promise.race([task.catch(() => undefined), sleep(shutdownWaitMillis(), undefined, { signal: bound.signal }).catch(() => undefined)]);
  bound.abort();
}
