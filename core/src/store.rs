//! The store protocols as sans-I/O drivers: the host pulls a step, runs it
//! against its database and pushes back what the database said.
//!
//! Every loop, retry, pause, limit and error code of a store protocol lives
//! here, once; a host keeps one *executor* per database library, which runs
//! the named statement a [`Query`] names (text and parameter order from the
//! [`Manifest`]), returns rows or the affected-row count as an [`Answer`],
//! and classifies a database error ([`DbErrorClass`]). The model is
//! matrix-sdk-crypto's push/pull state machine and quinn-proto's
//! `poll_transmit`/`handle_event`: nothing here touches a socket or a clock,
//! so every interleaving can be tested against a scripted database.
//!
//! ```text
//!  host                                   core driver
//!  ────                                   ───────────
//!  driver = RecordDriver::new(…)
//!  step = driver.start(now) ───────────▶  Run(Query claim …)
//!  rows = execute(manifest[claim], params)
//!  step = driver.push(Answer::Rows, now) ▶ Yield(Execute(held))  run the operation,
//!  (renew every held.renew_every_millis)                           heartbeat beside it
//!  step = driver.finish(Response, now) ─▶ Run(Query complete …)
//!  step = driver.push(Affected(1), now) ▶ Yield(Done(Executed))
//! ```
//!
//! The drivers:
//! * [`RecordDriver`]: the idempotency record protocol (run once, same
//!   transaction, lease and fence), [`RecordRenewal`], one renewal of a
//!   held claim, [`RecordHeartbeat`], the schedule and stop rule of those
//!   renewals, and [`RecordCleanup`], batches of expired records deleted.
//! * [`Migrator`]: the numbered migrations applied (under a lock, each in
//!   its transaction) or the pending ones listed.
//! * [`LeaseAcquisition`]: taking a worker id (find, skip a row that cannot
//!   be used now, take; seed, retry, wait, or fail; a caller's deadline).
//! * [`LeaseRenewal`] and [`LeaseRelease`]: a held lease's heartbeat beat
//!   and its release on shutdown.
//! * [`SegmentDriver`]: segment IDs of one tag (runs of IDs handed out from
//!   memory, the next segment's fetch as steps, the tag created on first use).
//! * [`OutboxEnqueue`], [`OutboxRelay`] and [`OutboxCleanup`]: the outbox
//!   (enqueue in the caller's transaction; the relay loop with its send
//!   decision, retries, dead messages and bounded error text; cleanup).
//! * [`InboxConsume`] and [`InboxCleanup`]: the inbox (a delivered message
//!   claimed in the consumer's transaction, the handler run once, a
//!   duplicate skipped; expired rows deleted).
//! * [`TransitionDriver`]: a state machine's compare-and-set on the
//!   caller's table (`applied`, `already`, `refused`).
//! * [`FastPath`]: the Redis fast path in front of the record driver, as
//!   the record driver's own steps ([`RecordDriver::with_fast_path`]: the
//!   script to run, what its answer means, the write after the commit).
//!
//! The limits every protocol enforces before it writes are in [`limits`].
//! The full rules are in `docs/spec.md`, section "Store drivers".

mod answer;
mod error;
mod error_class;
mod fast_path;
mod heartbeat;
mod inbox_driver;
mod lease_driver;
#[cfg(target_has_atomic = "64")]
mod lease_renewal;
pub mod limits;
mod manifest;
mod migration_driver;
mod outbox_driver;
mod record_driver;
mod record_fast;
mod renewal;
mod segment_driver;
mod transition_driver;
mod value;

pub use answer::{Answer, DbError, DbErrorClass};
pub use error::{DriverError, StoreError, StoreErrorKind};
pub use error_class::classify_db_error;
pub use fast_path::{
    CHECK, ENTRY_PREFIX, FORGET, FastAnswer, FastPath, FastVerdict, RedisCall, SETTLE, Script,
    TTL_MARGIN_MILLIS,
};
pub use heartbeat::RecordHeartbeat;
pub use inbox_driver::{Consumed, InboxCleanup, InboxConsume, InboxStep, InboxYield};
pub use lease_driver::{LeaseAcquisition, LeaseStep};
#[cfg(target_has_atomic = "64")]
pub use lease_renewal::{LeaseRelease, LeaseRenewal};
pub use manifest::{Dialect, Manifest, Migration, ParamType, Placeholder, ResultKind, Statement};
pub use migration_driver::{
    MIGRATION_LOCK_PAUSE_MAX_MILLIS, MIGRATION_LOCK_PAUSE_MILLIS, MIGRATION_LOCK_WAIT_MILLIS,
    MigrationStep, MigrationYield, Migrator,
};
pub use outbox_driver::{
    ClaimedMessage, EnqueueStep, OutboxCleanup, OutboxEnqueue, OutboxRelay, RelayReport, RelayStep,
    RelayYield, StoredMessage, outbox_load_query, read_outbox_load,
};
pub use record_driver::{
    COMPLETION_PAUSE_MAX_MILLIS, Finished, Held, MAX_CLAIM_ROUNDS, OperationOutcome, RETRIES,
    RETRY_PAUSE_MILLIS, RecordDriver, RecordStep, RecordYield, StoredRecord, StoredResponse, Way,
    database_failure, load_query, read_load, read_record,
};
pub use record_fast::FastReport;
pub use renewal::{RecordCleanup, RecordRenewal};
pub use segment_driver::{
    MAX_TAG_BYTES, SEGMENT_WAIT_MILLIS, SegmentDriver, SegmentStep, TakeAction, Taken,
};
pub use transition_driver::{TransitionDriver, TransitionStep, TransitionYield};
pub use value::{Query, Value};

/// One step a driver asks its host to take.
///
/// `Y` is what the driver hands to the host when the protocol reaches a
/// point only the host can act on (for records, [`RecordYield`]: run the
/// operation now, or the protocol's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<Y> {
    /// Run this named query and push the database's [`Answer`].
    Run(Query),
    /// Sleep this many milliseconds (at least 1), then call the driver's
    /// `resume`.
    Pause {
        /// How long to sleep, in milliseconds.
        millis: u64,
    },
    /// Begin a transaction on the connection the following queries run on
    /// (`write`: take the write lock at once, SQLite's `BEGIN IMMEDIATE`),
    /// then push `Answer::Affected(0)` (or the failure).
    Begin {
        /// Whether the transaction writes.
        write: bool,
    },
    /// Commit the transaction, then push `Answer::Affected(0)` (or the failure).
    Commit,
    /// Roll the transaction back, then push `Answer::Affected(0)` (whatever
    /// happened: the driver already knows why).
    Rollback,
    /// The driver's value for the host.
    Yield(Y),
    /// The protocol ended with this error; nothing more is to be run.
    Fail(DriverError),
}
