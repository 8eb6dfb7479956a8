//! The errors of the store: the core's typed driver errors, and an
//! operation's own failure handed back after it was recorded.

use core::fmt;

use mintid::store::{DriverError, StoredResponse};

/// How an operation fails: a final failure (the default) is stored and
/// replayed to duplicates when the policy stores errors; a retryable one
/// releases the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationError {
    /// The error text (stored cut to 1024 bytes by the core).
    pub message: String,
    /// Whether it is worth retrying.
    pub retryable: bool,
    /// An optional error response to replay with it.
    pub response: Option<StoredResponse>,
}

impl OperationError {
    /// A final failure with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retryable: false,
            response: None,
        }
    }

    /// A retryable failure with `message`: the key is released.
    pub fn retryable(message: impl Into<String>) -> Self {
        Self {
            retryable: true,
            ..Self::new(message)
        }
    }

    /// The same failure with an error response to replay.
    pub fn with_response(mut self, response: StoredResponse) -> Self {
        self.response = Some(response);
        self
    }
}

impl fmt::Display for OperationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OperationError {}

/// What a store call can fail with.
#[derive(Debug)]
pub enum Error {
    /// The core's typed error (`store.*`, `record.*`, `lease.*`), with its
    /// stable [`code`](Error::code); the database driver's message, if any,
    /// is in [`StoreError::db_message`](mintid::store::StoreError::db_message),
    /// for logs only.
    Driver(DriverError),
    /// The operation failed: its own error, after the store recorded the
    /// failure as the core decided (stored, released, or in a caller's
    /// transaction left to its rollback).
    Operation(OperationError),
    /// The operation failed and recording its failure failed too: its own
    /// error (what the caller's code acts on), with the store error that
    /// kept it from being recorded as the [`source`](std::error::Error::source)
    /// (logged as well). The record stays pending until its lease passes.
    OperationNotRecorded {
        /// The operation's own error.
        operation: OperationError,
        /// Why its failure was not recorded (`store.unavailable`, …).
        store: Box<DriverError>,
    },
    /// A leased generator could not make an ID (`snowflake.*`).
    Snowflake(mintid::SnowflakeError),
}

impl Error {
    /// The stable dotted code of a driver or generator error, `None` for an
    /// operation's.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Error::Driver(error) => Some(error.code()),
            Error::Snowflake(error) => Some(error.code()),
            Error::Operation(_) | Error::OperationNotRecorded { .. } => None,
        }
    }
}

/// The core's code of a missing mintid table.
const SCHEMA_MISSING: &str = "store.schema_missing";

/// What the message of `store.schema_missing` adds: this crate's migrate call.
const MIGRATE_FIX: &str = ": call Store::migrate() once at start-up, or apply the files under \
                           schema/ with your migration tool";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Driver(error) => {
                write!(f, "{}: {error}", error.code())?;
                if error.code() == SCHEMA_MISSING {
                    f.write_str(MIGRATE_FIX)?;
                }
                Ok(())
            }
            Error::Operation(error)
            | Error::OperationNotRecorded {
                operation: error, ..
            } => error.fmt(f),
            Error::Snowflake(error) => write!(f, "{}: {error}", error.code()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::OperationNotRecorded { store, .. } => Some(store.as_ref()),
            _ => None,
        }
    }
}

impl From<DriverError> for Error {
    fn from(error: DriverError) -> Self {
        Error::Driver(error)
    }
}
