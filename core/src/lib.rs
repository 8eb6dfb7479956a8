//! # mintid
//!
//! Unique IDs and exactly-once request rules, shared by every language.
//!
//! * [`snowflake`]: 64-bit time-ordered IDs with a configurable [`SnowflakeLayout`].
//! * [`uuid7`]: RFC 9562 UUIDv7, monotonic within a millisecond; [`uuid`] the
//!   generic UUID value and its text forms.
//! * [`key`]: idempotency keys (kind, scope, id), validated and built from
//!   business fields or HTTP headers.
//! * [`fingerprint`]: RFC 8785 (JCS) + SHA-256 payload fingerprints, the
//!   same bytes in every language.
//! * [`request_id`]: request IDs a browser mints offline from a grant and a
//!   server verifies.
//! * [`record`]: the idempotency record state machine and its HTTP mapping;
//!   [`http`]: the rules the HTTP integrations share (default key kind,
//!   stored response envelope, problem documents, defaults).
//! * [`lease`]: worker-id leases (acquire, renew, release, stop in time);
//!   [`segment`]: Leaf-style segment allocation; [`outbox`]: the outbox's
//!   relay rules.
//! * [`store`]: the store protocols as sans-I/O drivers (the host runs the
//!   named queries of `schema/` they ask for) and the shared SQL itself.
//!
//! The crate is `#![no_std]` + `alloc` and sans-I/O: time comes in through
//! [`Clock`] and randomness through [`Entropy`]. The default `std` feature
//! supplies [`SystemClock`] and [`ThreadEntropy`] and the convenience calls
//! that read them.
//!
//! ## Features
//!
//! * `std` (default): [`SystemClock`], [`ThreadEntropy`] (a per-thread
//!   ChaCha generator seeded from the OS) and the calls that read them, such
//!   as [`uuid7::now`] and [`Snowflake::new`].
//!
//! Without it (`default-features = false`) the rest of the crate is the
//! same: pass your own [`Clock`] and [`Entropy`]. The shared lock-free
//! generators need 64-bit atomics (`target_has_atomic = "64"`).
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod base32;
pub mod base64url;
pub mod clock;
pub mod entropy;
pub mod error_codes;
pub mod fingerprint;
pub mod http;
pub mod id_buffer;
pub mod inbox;
pub mod key;
pub mod lease;
pub mod metrics;
pub mod outbox;
mod quote;
pub mod record;
pub mod request_id;
pub mod rollback;
pub mod segment;
pub mod snowflake;
pub mod store;
pub mod transition;
pub mod uuid;
pub mod uuid7;
pub mod webhook;

/// The version of this crate, which every mintid package reports as its
/// core's version (Python `mintid.core_version()`, Kotlin `Mintid.coreVersion()`,
/// JS `coreVersion()`, `mintid --version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The crate README's examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use clock::Clock;
#[cfg(target_has_atomic = "64")]
pub use clock::ManualClock;
#[cfg(feature = "std")]
pub use clock::SystemClock;
#[cfg(feature = "std")]
pub use entropy::ThreadEntropy;
pub use entropy::{Entropy, FixedEntropy};
#[cfg(target_has_atomic = "64")]
pub use lease::LeaseGuard;
pub use lease::{LeaseError, LeasePolicy, WorkerLease};
pub use outbox::{OutboxError, OutboxStatus, RelayPolicy};
pub use record::{Decision, Record, RecordError, RecordPolicy};
pub use request_id::{Grant, KeyRing, RequestId, RequestIdError};
pub use rollback::RollbackPolicy;
pub use segment::{SegmentAllocator, SegmentError, SegmentPolicy};
#[cfg(target_has_atomic = "64")]
pub use snowflake::{SequencePolicy, Snowflake, SnowflakeBuilder};
pub use snowflake::{
    SnowflakeError, SnowflakeErrorKind, SnowflakeId, SnowflakeLayout, SnowflakeParts,
};
pub use uuid::{Uuid, UuidParseError};
#[cfg(target_has_atomic = "64")]
pub use uuid7::SharedUuid7Generator;
pub use uuid7::{Uuid7, Uuid7Error, Uuid7Generator};

pub use fingerprint::{FieldSelection, Fingerprint, FingerprintError};
pub use key::{IdempotencyKey, KeyError};
