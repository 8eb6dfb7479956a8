//! Snowflake IDs: 64-bit, time-ordered, unique per worker.
//!
//! * [`SnowflakeLayout`]: how the bits are split, the epoch and the tick;
//!   presets; lifetime; [`compose`](SnowflakeLayout::compose) and
//!   [`decode`](SnowflakeLayout::decode).
//! * [`SnowflakeId`]: the value, with its decimal and Crockford base32 text.
//! * [`Snowflake`]: the lock-free generator shared between threads (on targets
//!   with 64-bit atomics).
//! * [`SnowflakeError`]: every failure, with a stable code.
//!
//! The normative description is the Snowflake section of `docs/spec.md`.

mod error;
#[cfg(target_has_atomic = "64")]
mod generator;
mod id;
mod layout;
mod presets;

#[cfg(test)]
pub(crate) use error::{Detail, TextProblem};
pub use error::{SnowflakeError, SnowflakeErrorKind};
#[cfg(target_has_atomic = "64")]
pub use generator::{SequencePolicy, Snowflake, SnowflakeBuilder};
pub use id::SnowflakeId;
pub use layout::{SnowflakeLayout, SnowflakeParts};
