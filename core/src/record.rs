//! The idempotency record state machine: what to do with a request, given
//! the stored record of its key.
//!
//! Everything here is pure: a storage adapter loads the row of a key, asks
//! [`decide`] what to do, runs the SQL that the [`Decision`] names, and feeds
//! results back through [`Record::complete`] and [`Record::fail`]. No
//! function reads a clock, touches storage or allocates on the hot path.
//!
//! ```text
//!   no record ──Execute: insert, token 1──▶ pending ──complete──▶ succeeded  (Replay)
//!                                            │   ▲
//!                                            │   └─ Execute: reclaim, token + 1 (compare-and-set)
//!                                            │      when the lease has passed, or from
//!                                            │      failed_retryable
//!                                            ├──fail(final)──────▶ failed            (Replay)
//!                                            └──fail(retryable)──▶ failed_retryable
//!   any record past its expiry, or a key created a retention ago: KeyTooOld
//! ```
//!
//! The full rules, with the HTTP mapping, are in `docs/spec.md`, section
//! "The idempotency record state machine".

mod decide;
mod error;
mod http;
mod policy;
mod status;
mod transition;

pub use decide::{Claim, Decision, Expected, Incoming, Outcome, decide};
pub use error::{RecordError, RecordErrorKind};
pub use http::{
    PROBLEM_CONTENT_TYPE, Problem, REPLAYED_HEADER, REPLAYED_VALUE, RETRY_AFTER_HEADER,
    retry_after_secs,
};
pub use policy::RecordPolicy;
pub use status::Status;
pub use transition::Failure;

use crate::fingerprint::Fingerprint;

/// The stored state of one idempotency key: one row of the shared schema.
///
/// Every field is a plain value that maps to one column. The record does not
/// hold the stored response or error: the adapter keeps those beside it and
/// replays them when [`decide`] says [`Decision::Replay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    /// Where the record is in its life.
    pub status: Status,
    /// The fingerprint of the payload that first used the key.
    pub fingerprint: Fingerprint,
    /// The fencing token of the latest claim (1 for the first, one more for
    /// each reclaim).
    pub token: u64,
    /// While [`Status::Pending`]: when the holder's lease ends, in Unix
    /// milliseconds. Kept unchanged by the other states.
    pub lease_deadline_millis: u64,
    /// When the key was first claimed, in Unix milliseconds. With the token
    /// it identifies a claim (see [`Fence`]).
    pub created_millis: u64,
    /// When the record leaves retention, in Unix milliseconds: from then on
    /// the key is too old and the record may be removed.
    pub expires_millis: u64,
}

/// What identifies one claim of a key: the fencing token and the creation
/// time of the record it was granted on.
///
/// The holder of a claim presents its fence to [`Record::complete`] and
/// [`Record::fail`]; storage guards those writes with
/// `token = :token AND created = :created_millis`. The creation time keeps a
/// claim on a record that was removed after retention from matching a new
/// record of the same key, whose tokens start again at 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fence {
    /// The fencing token.
    pub token: u64,
    /// The record's creation time, in Unix milliseconds.
    pub created_millis: u64,
}

impl Record {
    /// The fence of the record's latest claim.
    pub const fn fence(&self) -> Fence {
        Fence {
            token: self.token,
            created_millis: self.created_millis,
        }
    }

    /// Whether the record has left retention at `now_millis`.
    pub const fn is_expired(&self, now_millis: u64) -> bool {
        now_millis >= self.expires_millis
    }

    /// Whether cleanup may delete the record at `now_millis`: it has left
    /// retention, and it is not pending under a lease that is still running.
    pub fn is_removable(&self, now_millis: u64) -> bool {
        self.is_expired(now_millis)
            && (self.status != Status::Pending || now_millis >= self.lease_deadline_millis)
    }
}
