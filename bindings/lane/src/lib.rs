//! The lane: the core's store drivers with their steps, answers and outcomes
//! as packed byte strings, for bindings that pay per call or per object.
//!
//! uniffi's Python pays microseconds for every buffer and lifts every enum
//! value through interpreted code; wasm-bindgen builds every JS object field
//! by field through imports. Through the lane a step is one byte string the
//! host reads in place, and an answer one byte string it writes: one crossing
//! per step either way. The layout is in `docs/spec.md`, "The lane"; what each
//! step means is the driver's, unchanged. This crate holds the layout once,
//! for both bindings: the C entry points of `mintid-ffi` (`mintid_lane_*`) and
//! the `RecordLane`/`RelayLane` classes of `mintid-wasm`.

#![no_std]
#![deny(missing_docs)]

extern crate alloc;

mod fast;
mod lane;
mod read;
mod record;
mod relay;
mod write;

pub use fast::{pack_report, put_redis_call, unpack_answer};
pub use lane::{Driven, Lane};
pub use read::{class_of, unpack_outcome, unpack_rows};
pub use write::{pack_error, put_value};

/// The tag of a packed step (its first byte). A driver's own yields take
/// `YIELD` and `DONE`: what follows them is that driver's.
pub mod tag {
    /// Run a named query: name, parameters.
    pub const RUN: u8 = 1;
    /// Pause for some milliseconds, then resume.
    pub const PAUSE: u8 = 2;
    /// The driver's yield before its end: execute (records), send (relay).
    pub const YIELD: u8 = 3;
    /// The driver's end and what it came to.
    pub const DONE: u8 = 4;
    /// The driver failed: its typed error.
    pub const FAIL: u8 = 5;
    /// Run a script on Redis (the record driver's fast path): `EVAL` flag,
    /// name, SHA-1 or source, keys, arguments.
    pub const REDIS: u8 = 6;
}

/// The tag of a packed value.
pub mod value {
    /// SQL `NULL`.
    pub const NULL: u8 = 0;
    /// A signed 64-bit integer, little-endian.
    pub const INT: u8 = 1;
    /// UTF-8 text: `u32` length, bytes.
    pub const TEXT: u8 = 2;
    /// Bytes: `u32` length, bytes.
    pub const BYTES: u8 = 3;
}

/// What a packed failure says: the error's code, message and place.
#[derive(Debug, Clone, Copy)]
pub struct Fields<'a> {
    /// The stable dotted code, e.g. `store.unavailable`.
    pub code: &'a str,
    /// The message.
    pub detail: &'a str,
    /// The part of a key at fault, or the database error's class.
    pub part: Option<&'a str>,
    /// The byte offset of the problem in the input.
    pub position: Option<u64>,
    /// The HTTP problem to answer with.
    pub problem: Option<&'a str>,
    /// The concern (`store`, `record`, `key`, …): the host's error family.
    pub concern: &'a str,
}

/// A binding's error type, as the lane packs it: made from a driver's
/// failure, and read back as [`Fields`].
pub trait Refusal: From<mintid::store::DriverError> {
    /// The fields to pack.
    fn fields(&self) -> Fields<'_>;
}
