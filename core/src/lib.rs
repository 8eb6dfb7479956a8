//! # mintid
//!
//! Unique IDs and exactly-once request rules, shared by every language.
//!
//! * [`snowflake`]: 64-bit time-ordered IDs with a configurable [`SnowflakeLayout`].
//! * [`uuid7`]: RFC 9562 UUIDv7, monotonic within a millisecond.
//!
//! The crate is `#![no_std]` + `alloc` and sans-I/O: time comes in through
//! [`Clock`] and randomness through [`Entropy`]. The default `std` feature
//! supplies [`SystemClock`] and [`ThreadEntropy`] and the convenience calls
//! that read them.
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod base32;
pub mod clock;
pub mod entropy;
pub mod fingerprint;
pub mod key;
pub mod record;
pub mod request_id;
pub mod rollback;
pub mod snowflake;
pub mod uuid;
pub mod uuid7;

pub use clock::Clock;
#[cfg(target_has_atomic = "64")]
pub use clock::ManualClock;
#[cfg(feature = "std")]
pub use clock::SystemClock;
#[cfg(feature = "std")]
pub use entropy::ThreadEntropy;
pub use entropy::{Entropy, FixedEntropy};
pub use rollback::RollbackPolicy;
pub use uuid::{Uuid, UuidParseError};
#[cfg(target_has_atomic = "64")]
pub use uuid7::SharedUuid7Generator;
pub use uuid7::{Uuid7, Uuid7Error, Uuid7Generator};
