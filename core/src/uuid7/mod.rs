//! RFC 9562 UUIDv7: time-ordered 128-bit IDs, monotonic within a millisecond.
//!
//! [`Uuid7`] is the value type (parse, format, fields). Two generators make
//! them: [`Uuid7Generator`] for one owner (`&mut self`, the fastest) and
//! [`SharedUuid7Generator`] for many threads (`&self`, lock-free; on targets
//! with 64-bit atomics). Both produce the same IDs from the same clock
//! readings and entropy bytes. Under `std`, `now()` uses a process-wide
//! shared generator on the system clock.
//!
//! # Layout and method
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        unix_ts_ms (48)                        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           unix_ts_ms          |  ver  |     counter[15..4]    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|c[3..0]|                    random (58)                    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                             random                            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The generators use RFC 9562 §6.2 method 1, a fixed-length dedicated
//! counter: 16 bits, the 12 of `rand_a` and the top 4 of `rand_b`. The other
//! 58 bits of `rand_b` are fresh random for every ID. A clock reading later
//! than the last ID's millisecond starts that millisecond with the counter at
//! a random value below 2^15 (top bit zero), so at least 32 769 IDs fit in
//! every millisecond; each further ID in the same millisecond adds one.
//! Counter rollover carries into the timestamp (the state
//! `unix_millis << 16 | counter` simply adds one), so the timestamp runs ahead
//! of the clock by a millisecond per 65 536 extra IDs and the counter never
//! wraps. Method 1 was chosen over method 3 (sub-millisecond time) because
//! it guarantees order however fast IDs are made, needs no finer clock than
//! milliseconds (browsers and microcontrollers lack one), and keeps both
//! generators' state in one 64-bit word.
//!
//! # Clock rollback
//!
//! Each generator remembers the latest clock reading it used. A reading
//! earlier than that is a rollback, handled by its [`RollbackPolicy`]
//! ([`DEFAULT_ROLLBACK_POLICY`] unless set): `Fail` errors, `Wait` waits for
//! the clock to catch up, `Logical` keeps counting on from the last ID.
//! The timestamp of IDs never goes backwards under any policy.

mod clock_reading;
mod error;
mod generator;
mod layout;
#[cfg(target_has_atomic = "64")]
mod shared;
mod value;

pub use error::{Uuid7Error, Uuid7ErrorKind};
pub use generator::Uuid7Generator;
#[cfg(target_has_atomic = "64")]
pub use shared::SharedUuid7Generator;
pub use value::Uuid7;

use crate::RollbackPolicy;

/// The rollback policy of a new generator: keep counting from the last
/// timestamp while the clock is at most 10 s behind it, fail beyond that.
///
/// UUIDv7 uniqueness rests on the counter and 58 random bits, not on the
/// clock, so ordinary NTP steps are bridged rather than turned into errors;
/// a clock more than 10 s behind is broken enough to report.
pub const DEFAULT_ROLLBACK_POLICY: RollbackPolicy = RollbackPolicy::Logical { max_millis: 10_000 };

/// The bulk byte paths take 16 bytes per ID.
fn check_buffer_len(len: usize) -> Result<(), Uuid7Error> {
    if len % 16 == 0 {
        Ok(())
    } else {
        Err(Uuid7Error::buffer_length(len))
    }
}

#[cfg(all(feature = "std", target_has_atomic = "64"))]
static GLOBAL: SharedUuid7Generator<crate::SystemClock, crate::ThreadEntropy> =
    SharedUuid7Generator::new();

/// The process-wide generator behind [`now`]: the system clock, the
/// per-thread ChaCha generator and the [`DEFAULT_ROLLBACK_POLICY`].
///
/// Bindings use it for bulk output ([`SharedUuid7Generator::fill_bytes`]).
#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub fn global() -> &'static SharedUuid7Generator<crate::SystemClock, crate::ThreadEntropy> {
    &GLOBAL
}

/// A new UUIDv7 from the process-wide [`global`] generator.
///
/// Fails only if the system clock went back more than 10 s or reads past
/// year 10889.
#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub fn now() -> Result<Uuid7, Uuid7Error> {
    GLOBAL.generate()
}
