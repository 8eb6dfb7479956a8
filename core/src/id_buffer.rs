//! The ID buffer rule: how a host hands out IDs it fetched from a generator
//! in bulk, one rule for every host.
//!
//! A call into the core costs far more than handing out an ID from a list
//! (microseconds through uniffi from Python), so hosts take IDs in batches.
//! For each batch the core says two things:
//!
//! * **until when its IDs may be handed out** ([`fresh_until_millis`]): an ID
//!   goes out only while the clock, read after the ID was taken from the
//!   list, reads at most `fresh_until_millis`: the start of the tick of the
//!   batch's *first* ID plus one tick. IDs of a batch only get later, so the
//!   first ID's bound holds for all of them: no ID is ever handed out with a
//!   timestamp more than one tick (1 ms for UUIDv7 and classic Snowflakes)
//!   behind the clock's millisecond. Past it the rest of the batch is
//!   dropped, never handed out;
//! * **how large the next batch is** ([`next_batch_size`]): twice what the
//!   previous batch handed out before it was used up or went stale, at least
//!   1 and at most the cap ([`batch_cap`]: [`MAX_BATCH`], and no more than a
//!   tick's sequence numbers, so a batch never waits for a later tick).
//!
//! ```text
//!   host: take an ID from the list; now = clock();
//!         now <= fresh_until ? hand it out : drop the list
//!         list used up or dropped: handed_out = how many went out;
//!         batch = core.next_batch(next_batch_size(handed_out, cap)) + fresh_until
//! ```
//!
//! The full rule is in `docs/spec.md`, section "The ID buffer rule".

/// The most IDs one batch of a host buffer holds.
pub const MAX_BATCH: u32 = 4096;

/// The last Unix millisecond at which the IDs of a batch may be handed out:
/// the tick of its first ID starts at `first_tick_start_millis` and lasts
/// `tick_millis` (1 for UUIDv7), so this is the millisecond right after that
/// tick. A host hands out an ID while `now_millis <= fresh_until_millis`.
pub const fn fresh_until_millis(first_tick_start_millis: u64, tick_millis: u64) -> u64 {
    first_tick_start_millis.saturating_add(if tick_millis == 0 { 1 } else { tick_millis })
}

/// Whether an ID of a batch fresh until `fresh_until_millis` may be handed
/// out when the clock reads `now_millis`.
pub const fn is_fresh(fresh_until_millis: u64, now_millis: u64) -> bool {
    now_millis <= fresh_until_millis
}

/// The largest batch for a generator issuing at most `ids_per_tick` IDs per
/// tick: [`MAX_BATCH`], and no more than one tick's sequence numbers.
pub const fn batch_cap(ids_per_tick: u64) -> u32 {
    if ids_per_tick < MAX_BATCH as u64 {
        if ids_per_tick == 0 {
            1
        } else {
            ids_per_tick as u32
        }
    } else {
        MAX_BATCH
    }
}

/// The size of the next batch after one that handed out `handed_out` IDs
/// (0 before the first batch): twice that, within `1..=cap`.
pub const fn next_batch_size(handed_out: u64, cap: u32) -> u32 {
    let cap = if cap == 0 { 1 } else { cap };
    let doubled = handed_out.saturating_mul(2);
    if doubled == 0 {
        1
    } else if doubled > cap as u64 {
        cap
    } else {
        doubled as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_one_tick_past_the_first_ids_tick() {
        assert_eq!(fresh_until_millis(1_000, 1), 1_001);
        assert_eq!(fresh_until_millis(1_000, 10), 1_010);
        assert_eq!(fresh_until_millis(u64::MAX, 1), u64::MAX);
        assert!(is_fresh(1_001, 1_001));
        assert!(!is_fresh(1_001, 1_002));
    }

    #[test]
    fn sizes_double_what_went_out_within_the_cap() {
        assert_eq!(next_batch_size(0, 4096), 1);
        assert_eq!(next_batch_size(1, 4096), 2);
        assert_eq!(next_batch_size(3_000, 4096), 4096);
        assert_eq!(next_batch_size(u64::MAX, 10), 10);
        assert_eq!(batch_cap(1 << 12), 4096);
        assert_eq!(batch_cap(1 << 16), 4096);
        assert_eq!(batch_cap(256), 256);
        assert_eq!(batch_cap(0), 1);
    }
}
