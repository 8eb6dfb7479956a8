//! How a generator's 64-bit state maps onto UUIDv7 bits.
//!
//! A state is `unix_millis << 16 | counter`. Adding 1 to it carries a counter
//! rollover into the timestamp, so states (and the UUIDs made from them)
//! strictly increase without the counter ever wrapping.

use super::Uuid7;
use super::error::Uuid7Error;

/// The largest Unix millisecond a 48-bit timestamp holds (year 10889).
pub(super) const MAX_UNIX_MS: u64 = (1 << 48) - 1;
/// Width of the counter: rand_a's 12 bits and the top 4 bits of rand_b.
pub(super) const COUNTER_BITS: u32 = 16;
/// Bits of rand_b below the counter, fresh random for every ID.
pub(super) const TAIL_BITS: u32 = 58;
/// A new millisecond's counter starts at a random value below 2^15, so at
/// least 2^15 + 1 IDs fit in every millisecond before the counter rolls over.
const SEED_MASK: u16 = 0x7FFF;
/// Entropy bytes drawn to seed the counter of a new millisecond.
pub(super) const SEED_LEN: usize = 2;
/// Entropy bytes drawn for every ID; the low 58 bits of their big-endian value are used.
pub(super) const TAIL_LEN: usize = 8;

/// The millisecond of a state.
pub(super) const fn millis(state: u64) -> u64 {
    state >> COUNTER_BITS
}

/// The state of the first ID issued at clock reading `now` after `last`.
///
/// A reading later than `last`'s millisecond starts that millisecond with a
/// counter seeded by `seed` (two big-endian bytes, top bit cleared);
/// otherwise (the same millisecond, a timestamp carried ahead of the clock,
/// or a rollback the policy bridges) the state is `last + 1`.
pub(super) fn first_state(
    last: u64,
    now: u64,
    seed: impl FnOnce() -> [u8; SEED_LEN],
) -> Result<u64, Uuid7Error> {
    if now > MAX_UNIX_MS {
        Err(Uuid7Error::timestamp_overflow(now))
    } else if now > millis(last) {
        let counter = u16::from_be_bytes(seed()) & SEED_MASK;
        Ok((now << COUNTER_BITS) | u64::from(counter))
    } else {
        last.checked_add(1)
            .ok_or(Uuid7Error::timestamp_overflow(now))
    }
}

/// The state of the last of `count` (at least one) consecutive IDs starting at `first`.
pub(super) fn last_state(first: u64, count: usize, now: u64) -> Result<u64, Uuid7Error> {
    u64::try_from(count.saturating_sub(1))
        .ok()
        .and_then(|extra| first.checked_add(extra))
        .ok_or(Uuid7Error::timestamp_overflow(now))
}

/// The UUIDv7 of `state`, with the low 58 bits of `tail` as the random rest of rand_b.
pub(super) const fn encode(state: u64, tail: u64) -> Uuid7 {
    let counter = state & ((1 << COUNTER_BITS) - 1);
    let rand_a = (counter >> 4) as u16;
    let rand_b = ((counter & 0xF) << TAIL_BITS) | (tail & ((1 << TAIL_BITS) - 1));
    Uuid7::from_parts(millis(state), rand_a, rand_b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn a_new_millisecond_is_seeded_below_half_the_counter_range() {
        assert_eq!(first_state(0, 5, || [0xFF, 0xFF]), Ok((5 << 16) | 0x7FFF));
        assert_eq!(first_state(0, 5, || [0x12, 0x34]), Ok((5 << 16) | 0x1234));
        assert_eq!(
            first_state((5 << 16) | 9, 4, || unreachable!()),
            Ok((5 << 16) | 10)
        );
    }

    #[test]
    fn rollover_carries_into_the_timestamp() {
        let last = (5 << 16) | 0xFFFF;
        assert_eq!(first_state(last, 5, || unreachable!()), Ok(6 << 16));
        assert_eq!(last_state(last, 2, 5), Ok(6 << 16));
        assert_eq!(last_state(6 << 16, 2, 5), Ok((6 << 16) | 1));
        assert_eq!(last_state(last, 1, 5), Ok(last));
    }

    #[test]
    fn the_end_of_time_is_an_error() {
        let err = Uuid7Error::timestamp_overflow(MAX_UNIX_MS);
        assert_eq!(first_state(u64::MAX, MAX_UNIX_MS, || [0, 0]), Err(err));
        assert_eq!(last_state(u64::MAX - 1, 3, MAX_UNIX_MS), Err(err));
        assert_eq!(
            first_state(0, MAX_UNIX_MS + 1, || [0, 0]),
            Err(Uuid7Error::timestamp_overflow(MAX_UNIX_MS + 1))
        );
        assert_eq!(
            first_state(0, MAX_UNIX_MS, || [0, 0]),
            Ok(MAX_UNIX_MS << 16)
        );
    }

    #[test]
    fn encode_places_counter_and_tail() {
        let id = encode((0x017F_22E2_79B0 << 16) | 0xCC31, 0xFFFF_FFFF_FFFF_FFFF);
        assert_eq!(id.timestamp_millis(), 0x017F_22E2_79B0);
        assert_eq!(id.rand_a(), 0xCC3);
        assert_eq!(id.counter(), 0xCC31);
        assert_eq!(id.rand_b(), (1 << 58) | ((1 << 58) - 1));
        assert_eq!(id.to_string(), "017f22e2-79b0-7cc3-87ff-ffffffffffff");
    }
}
