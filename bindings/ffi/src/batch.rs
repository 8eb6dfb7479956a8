//! The size of one bulk request.

use crate::error::MintidError;

/// The most IDs one bulk call makes: enough to amortise a boundary crossing,
/// small enough that a mistaken count cannot exhaust memory.
pub const MAX_BATCH: u32 = 1 << 16;

/// `count` as a length, or `argument.batch_too_large` above [`MAX_BATCH`].
pub(crate) fn batch_len(count: u32) -> Result<usize, MintidError> {
    if count > MAX_BATCH {
        return Err(MintidError::argument(
            "argument.batch_too_large",
            format_args!("a batch holds at most {MAX_BATCH} IDs, asked for {count}"),
        ));
    }
    usize::try_from(count).map_err(|_| {
        MintidError::argument(
            "argument.batch_too_large",
            format_args!("a batch of {count} IDs does not fit in memory"),
        )
    })
}

/// IDs as 8 big-endian bytes each: one byte string crosses the boundary far
/// faster than a sequence of numbers read one by one.
pub(crate) fn to_be_bytes(ids: &[u64]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(ids.len() * 8);
    for id in ids {
        bytes.extend_from_slice(&id.to_be_bytes());
    }
    bytes
}

/// The largest batch, for hosts sizing their requests.
#[uniffi::export]
pub fn max_batch() -> u32 {
    MAX_BATCH
}
