//! The ID buffer rule of the core (`mintid::id_buffer`), for the vector
//! runners; generators apply it in their `next_batch`.

/// The last Unix millisecond at which the IDs of a batch may be handed out,
/// its first ID's tick starting at `first_tick_start_millis`.
#[uniffi::export]
pub fn id_buffer_fresh_until(first_tick_start_millis: u64, tick_millis: u64) -> u64 {
    mintid::id_buffer::fresh_until_millis(first_tick_start_millis, tick_millis)
}

/// The size of the next batch after one that handed out `handed_out` IDs.
#[uniffi::export]
pub fn id_buffer_next_batch_size(handed_out: u64, cap: u32) -> u32 {
    mintid::id_buffer::next_batch_size(handed_out, cap)
}

/// The largest batch for a generator of `ids_per_tick` IDs per tick.
#[uniffi::export]
pub fn id_buffer_batch_cap(ids_per_tick: u64) -> u32 {
    mintid::id_buffer::batch_cap(ids_per_tick)
}
