//! The errors of the store drivers (`store.*`), and [`DriverError`], what a
//! driver's [`Step::Fail`](super::Step::Fail) carries.

use alloc::string::String;
use core::fmt;

use super::DbErrorClass;
use crate::inbox::InboxError;
use crate::lease::LeaseError;
use crate::outbox::OutboxError;
use crate::record::{Problem, RecordError};
use crate::segment::SegmentError;
use crate::transition::TransitionError;

/// The kinds of [`StoreError`], each with a stable [`code`](StoreErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// `store.unavailable`: the database cannot be reached or the connection
    /// broke. Before a claim was written nothing ran; after the operation
    /// ran, the record stays pending until its lease passes.
    Unavailable,
    /// `store.response_too_large`: the response is over the 1 MiB limit; the
    /// operation ran, so its key stores this error as a final failure.
    ResponseTooLarge,
    /// `store.response_not_storable`: the response's content type is over 255
    /// bytes or not printable ASCII; stored as a final failure, as above.
    ResponseNotStorable,
    /// `store.not_a_response`: the operation returned something that is not a
    /// response; the claim was released (nothing is stored).
    NotAResponse,
    /// `store.stale_snapshot`: a claim neither inserted its record nor found
    /// the one in its way, round after round: the caller's transaction reads
    /// an old snapshot (MySQL/MariaDB `REPEATABLE READ`).
    StaleSnapshot,
    /// `store.conflict`: the database kept reporting serialization failures
    /// or deadlocks; nothing was run.
    Conflict,
    /// `store.record_lost`: a renewal of the record's lease changed no row:
    /// the key was taken over (or completed) and the operation no longer
    /// holds it.
    RecordLost,
    /// `store.query_failed`: a query failed for another reason (a
    /// constraint, a permission, a syntax error); its class and message are
    /// kept for the log.
    QueryFailed,
    /// `store.unexpected_row`: a row the driver cannot read (a column missing
    /// or of the wrong type): the schema is not the one the core expects.
    UnexpectedRow,
    /// `store.schema_missing`: a mintid table does not exist (PostgreSQL
    /// 42P01, MySQL/MariaDB 1146, SQLite "no such table"): the schema was
    /// never migrated. Each host's error names its migrate call.
    SchemaMissing,
}

impl StoreErrorKind {
    /// Every kind, for registries and parity tests.
    pub const ALL: [StoreErrorKind; 10] = [
        Self::Unavailable,
        Self::ResponseTooLarge,
        Self::ResponseNotStorable,
        Self::NotAResponse,
        Self::StaleSnapshot,
        Self::Conflict,
        Self::RecordLost,
        Self::QueryFailed,
        Self::UnexpectedRow,
        Self::SchemaMissing,
    ];

    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Unavailable => "store.unavailable",
            Self::ResponseTooLarge => "store.response_too_large",
            Self::ResponseNotStorable => "store.response_not_storable",
            Self::NotAResponse => "store.not_a_response",
            Self::StaleSnapshot => "store.stale_snapshot",
            Self::Conflict => "store.conflict",
            Self::RecordLost => "store.record_lost",
            Self::QueryFailed => "store.query_failed",
            Self::UnexpectedRow => "store.unexpected_row",
            Self::SchemaMissing => "store.schema_missing",
        }
    }

    /// The HTTP problem a request failing this way answers with: 503
    /// `storage_unavailable` when the store could not do its part; none for
    /// the faults of an operation's result (a response that cannot be
    /// stored, no response, a lost record), which a server answers as its
    /// own error (500), the stored outcome deciding what a retry gets.
    pub const fn problem(self) -> Option<Problem> {
        match self {
            Self::Unavailable
            | Self::Conflict
            | Self::QueryFailed
            | Self::UnexpectedRow
            | Self::SchemaMissing
            | Self::StaleSnapshot => Some(Problem::StorageUnavailable),
            Self::ResponseTooLarge
            | Self::ResponseNotStorable
            | Self::NotAResponse
            | Self::RecordLost => None,
        }
    }
}

/// A store protocol's failure. The message names no driver text (no host,
/// user or table of the database): that is in [`db_message`](Self::db_message),
/// for logs only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
    db: Option<(DbErrorClass, String)>,
}

impl StoreError {
    pub(crate) fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            db: None,
        }
    }

    /// `store.unexpected_row` for a host that met a step its driver never
    /// asks for (a host bug, reported as a typed error, never a panic).
    pub fn unexpected_step(step: &str) -> Self {
        Self::new(
            StoreErrorKind::UnexpectedRow,
            alloc::format!("the driver asked for a step this host does not expect: {step}"),
        )
    }

    /// `store.unexpected_row` for an answer a binding could not read (its
    /// encoding broken: a host bug, reported as a typed error).
    pub fn unreadable_answer(detail: &str) -> Self {
        Self::new(
            StoreErrorKind::UnexpectedRow,
            alloc::format!("the answer cannot be read: {detail}"),
        )
    }

    /// This verdict on an operation's result, after the write that recorded
    /// it failed with `failure`: the same kind, its message saying the
    /// result was not recorded, and `failure`'s database error (if any) as
    /// its cause.
    pub(crate) fn not_recorded(mut self, failure: &DriverError) -> Self {
        self.message = alloc::format!(
            "{}; it was not recorded ({}: {failure})",
            self.message,
            failure.code()
        );
        if let DriverError::Store(StoreError { db: Some(db), .. }) = failure {
            self.db = Some(db.clone());
        }
        self
    }

    pub(crate) fn with_db(mut self, class: DbErrorClass, message: &str) -> Self {
        self.db = Some((class, String::from(message)));
        self
    }

    /// What went wrong.
    pub const fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"store.unavailable"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The class of the database error behind it, if one was.
    pub fn db_class(&self) -> Option<DbErrorClass> {
        self.db.as_ref().map(|(class, _)| *class)
    }

    /// The database driver's message behind it, for logs (never for a
    /// response: it may name hosts, ports and users).
    pub fn db_message(&self) -> Option<&str> {
        self.db.as_ref().map(|(_, message)| message.as_str())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for StoreError {}

/// Why a driver failed: a store error, a record rule (a stale fencing
/// token, a claim no longer pending, a time overflow), a lease rule or an
/// outbox rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverError {
    /// A store protocol failure (`store.*`).
    Store(StoreError),
    /// A record rule refused the write (`record.*`).
    Record(RecordError),
    /// A lease rule refused (`lease.*`).
    Lease(LeaseError),
    /// A segment rule refused (`segment.*`).
    Segment(SegmentError),
    /// An outbox rule refused (`outbox.*`).
    Outbox(OutboxError),
    /// An inbox rule refused (`inbox.*`).
    Inbox(InboxError),
    /// A transition rule refused (`transition.*`).
    Transition(TransitionError),
}

impl DriverError {
    /// The stable dotted code.
    pub const fn code(&self) -> &'static str {
        match self {
            DriverError::Store(error) => error.code(),
            DriverError::Record(error) => error.code(),
            DriverError::Lease(error) => error.code(),
            DriverError::Segment(error) => error.code(),
            DriverError::Outbox(error) => error.code(),
            DriverError::Inbox(error) => error.code(),
            DriverError::Transition(error) => error.code(),
        }
    }

    /// The HTTP problem a request failing this way answers with, if any.
    pub const fn problem(&self) -> Option<Problem> {
        match self {
            DriverError::Store(error) => error.kind().problem(),
            DriverError::Record(_)
            | DriverError::Lease(_)
            | DriverError::Segment(_)
            | DriverError::Outbox(_)
            | DriverError::Inbox(_)
            | DriverError::Transition(_) => None,
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::Store(error) => error.fmt(f),
            DriverError::Record(error) => error.fmt(f),
            DriverError::Lease(error) => error.fmt(f),
            DriverError::Segment(error) => error.fmt(f),
            DriverError::Outbox(error) => error.fmt(f),
            DriverError::Inbox(error) => error.fmt(f),
            DriverError::Transition(error) => error.fmt(f),
        }
    }
}

impl core::error::Error for DriverError {}

impl From<StoreError> for DriverError {
    fn from(error: StoreError) -> Self {
        DriverError::Store(error)
    }
}

impl From<LeaseError> for DriverError {
    fn from(error: LeaseError) -> Self {
        DriverError::Lease(error)
    }
}

impl From<SegmentError> for DriverError {
    fn from(error: SegmentError) -> Self {
        DriverError::Segment(error)
    }
}

impl From<RecordError> for DriverError {
    fn from(error: RecordError) -> Self {
        DriverError::Record(error)
    }
}

impl From<OutboxError> for DriverError {
    fn from(error: OutboxError) -> Self {
        DriverError::Outbox(error)
    }
}

impl From<InboxError> for DriverError {
    fn from(error: InboxError) -> Self {
        DriverError::Inbox(error)
    }
}

impl From<TransitionError> for DriverError {
    fn from(error: TransitionError) -> Self {
        DriverError::Transition(error)
    }
}
