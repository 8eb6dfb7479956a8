/**
 * How generators hand out IDs made in batches inside wasm: one wasm call
 * makes a batch, JS hands its IDs out in order. The core's ID buffer rule
 * (docs/spec.md, "The ID buffer rule") sizes each batch from how many IDs
 * the previous one handed out (`refill(handedOut)`) and says until when its
 * IDs may be handed out (`freshUntil`): an ID goes out only while
 * `Date.now() <= freshUntil` (read after it is taken), so a stale batch is
 * dropped, its IDs skipped, never reused. IDs stay unique and increasing
 * because one core generator makes them all, and any bulk call drops the
 * batch first.
 */

/** The largest count a bulk call accepts. */
export const MAX_BULK = 1 << 20;
