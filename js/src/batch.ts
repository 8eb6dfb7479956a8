/**
 * How generators hand out IDs made in batches inside wasm: one wasm call
 * makes a batch, JS hands its IDs out in order. A batch is used only while
 * `Date.now()` is at most {@link FRESH_MILLIS} past its first ID's timestamp
 * (a stale batch is dropped: its IDs are skipped, never reused), so an ID's
 * timestamp is never more than 1 ms behind the clock when handed out. IDs
 * stay unique and increasing because one core generator makes them all, and
 * any bulk call drops the batch first.
 */

/** The most IDs one wasm call makes for single-ID calls. */
export const MAX_BATCH = 256;

/** How many milliseconds past its first timestamp a batch may still be used. */
export const FRESH_MILLIS = 1;

/**
 * The size of the next batch: twice what was handed out from the last one,
 * so a caller making one ID now and then pays for at most two.
 */
export function nextBatchSize(handedOut: number): number {
  return Math.min(MAX_BATCH, Math.max(1, handedOut * 2));
}

/** The largest count a bulk call accepts. */
export const MAX_BULK = 1 << 20;
