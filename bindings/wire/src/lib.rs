//! The wire: every store driver of the core with its spec, inputs and steps
//! as packed byte strings, for bindings that pay per call or per object.
//!
//! uniffi's Python pays microseconds for every buffer and lifts every enum
//! value through interpreted code; wasm-bindgen builds every JS object field
//! by field through imports. Through the wire a driver is made from one byte
//! string (its [`Spec`]), each answer is one byte string ([`Input`]) and
//! each step one byte string the host reads in place: one crossing per step.
//! The layout is in `docs/spec.md`, "The wire", pinned by
//! `tests/vectors/wire.json`; what each step means is the driver's,
//! unchanged. This crate holds the layout once, for both bindings: the C
//! entry points of `mintid-ffi` (`mintid_wire_*`) and the `Wire` class of
//! `mintid-wasm`.

#![no_std]
#![deny(missing_docs)]

extern crate alloc;

mod driver;
pub mod guards;
mod input;
mod read;
mod spec;
pub mod step;
mod wire;
mod write;

pub use input::{Input, Outcome, RedisAnswer};
pub use spec::{KeyParts, LeasePolicyParts, Spec};
pub use wire::Wire;
pub use write::pack_error;

/// The layout's version: what `mintid_wire_version()` and `wireVersion()`
/// return, and `version` in `tests/vectors/wire.json`.
pub const VERSION: u32 = 1;

/// The kind of a spec (its first byte): which driver it makes.
pub mod kind {
    /// The record driver of one request.
    pub const RECORD: u8 = 1;
    /// One outbox relay run.
    pub const RELAY: u8 = 2;
    /// One renewal of a held record's lease.
    pub const RECORD_RENEWAL: u8 = 3;
    /// The cleanup of expired records.
    pub const RECORD_CLEANUP: u8 = 4;
    /// The cleanup of sent outbox messages.
    pub const OUTBOX_CLEANUP: u8 = 5;
    /// The load of one record.
    pub const RECORD_LOAD: u8 = 6;
    /// The load of one outbox message.
    pub const OUTBOX_LOAD: u8 = 7;
    /// The enqueue of one outbox message.
    pub const ENQUEUE: u8 = 8;
    /// The numbered migrations applied, or the pending ones listed.
    pub const MIGRATIONS: u8 = 9;
    /// The heartbeat of a held record claim.
    pub const HEARTBEAT: u8 = 10;
    /// The segment IDs of one tag: takes, and the fetches they ask for.
    pub const SEGMENT: u8 = 11;
    /// The acquisition of a worker-id lease.
    pub const LEASE_ACQUIRE: u8 = 12;
    /// One renewal of a held worker-id lease.
    pub const LEASE_RENEW: u8 = 13;
    /// The release of a held worker-id lease.
    pub const LEASE_RELEASE: u8 = 14;
}

/// The tag of an input (its first byte).
pub mod input_tag {
    /// The first step.
    pub const START: u8 = 1;
    /// The rows of the last `Run`.
    pub const ROWS: u8 = 2;
    /// The affected-row count of the last `Run`.
    pub const AFFECTED: u8 = 3;
    /// The last `Run` (or transaction step) failed.
    pub const FAILED: u8 = 4;
    /// Continue after a pause.
    pub const RESUME: u8 = 5;
    /// The operation's outcome (record).
    pub const FINISH: u8 = 6;
    /// The last send succeeded (relay).
    pub const SENT: u8 = 7;
    /// The last send failed (relay).
    pub const SEND_FAILED: u8 = 8;
    /// Redis's answer to the last Redis step (record).
    pub const REDIS: u8 = 9;
    /// Take the fast path's report (record).
    pub const REPORT: u8 = 10;
    /// The host stops the driver (heartbeat: the operation returned).
    pub const STOP: u8 = 11;
    /// Take the next run of IDs (segment), answered by `TAKEN`.
    pub const TAKE: u8 = 12;
    /// Run the fetch a take said is due (segment): its first step.
    pub const FETCH: u8 = 13;
    /// The fetch due or under way is dropped (segment).
    pub const ABANDON: u8 = 14;
    /// The process is a fork child (segment): forget every ID in memory.
    pub const FORKED: u8 = 15;
    /// Start a lease renewal or release with the generator's high-water time.
    pub const MARK: u8 = 16;
}

/// The tag of a step (its first byte). A driver's own hand-overs take
/// `YIELD` and `DONE`: what follows them is that kind's.
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
    /// Run a script on Redis (the record driver's fast path).
    pub const REDIS: u8 = 6;
    /// Begin a transaction (`write` flag).
    pub const BEGIN: u8 = 7;
    /// Commit the transaction.
    pub const COMMIT: u8 = 8;
    /// Roll the transaction back.
    pub const ROLLBACK: u8 = 9;
    /// The fast path's report (the answer to a `report` input).
    pub const REPORT: u8 = 10;
    /// The run of IDs a segment's `take` hands out, and what to do next.
    pub const TAKEN: u8 = 11;
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

/// A binding's error type, as the wire packs it: made from a driver's
/// failure, a key or a lease layout the core refused, or a guard serial
/// no live guard holds, and read back as [`Fields`].
pub trait Refusal:
    From<mintid::store::DriverError> + From<mintid::key::KeyError> + From<mintid::SnowflakeError>
{
    /// The fields to pack.
    fn fields(&self) -> Fields<'_>;

    /// `argument.out_of_range`, the bindings' own code: `detail` is the
    /// message (a renew or release spec naming a guard serial that is not,
    /// or no longer, registered: [`guards`]).
    fn out_of_range(detail: &str) -> Self;
}
