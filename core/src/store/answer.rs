//! What the database said: the host's answer to a [`Query`](super::Query).

use alloc::string::String;
use alloc::vec::Vec;

use super::Value;

/// The class of a database error. An executor reads its driver's codes
/// (SQLSTATE, MySQL error numbers, SQLite result codes) and asks
/// [`classify_db_error`](super::classify_db_error) which class they name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DbErrorClass {
    /// A unique or primary-key violation (SQLSTATE 23505, MySQL 1062,
    /// SQLite `SQLITE_CONSTRAINT_PRIMARYKEY`/`_UNIQUE`).
    UniqueViolation,
    /// A serialization failure or deadlock (SQLSTATE 40001/40P01, MySQL
    /// 1213/1205, SQLite `SQLITE_BUSY`): the statement may succeed if run
    /// again in a new transaction.
    Serialization,
    /// The database cannot be reached or the connection broke (SQLSTATE
    /// class 08 and 57P0x, MySQL client errors 2xxx, 1040, 1053, SQLite
    /// `CANTOPEN`/`IOERR`, any failure to connect).
    ConnectionLost,
    /// Any other constraint: a `CHECK`, `NOT NULL` or a value too long for
    /// its column (SQLSTATE class 23 and 22, MySQL 1406/3819/4025).
    Constraint,
    /// A table does not exist (SQLSTATE 42P01, MySQL/MariaDB 1146, SQLite
    /// `SQLITE_ERROR` with the message "no such table"): the mintid schema
    /// was not migrated.
    SchemaMissing,
    /// Anything else (a syntax error, a permission).
    Other,
}

impl DbErrorClass {
    /// The stable name: `unique_violation`, `serialization`,
    /// `connection_lost`, `constraint`, `schema_missing` or `other`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DbErrorClass::UniqueViolation => "unique_violation",
            DbErrorClass::Serialization => "serialization",
            DbErrorClass::ConnectionLost => "connection_lost",
            DbErrorClass::Constraint => "constraint",
            DbErrorClass::SchemaMissing => "schema_missing",
            DbErrorClass::Other => "other",
        }
    }

    /// The class of a stable name, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "unique_violation" => DbErrorClass::UniqueViolation,
            "serialization" => DbErrorClass::Serialization,
            "connection_lost" => DbErrorClass::ConnectionLost,
            "constraint" => DbErrorClass::Constraint,
            "schema_missing" => DbErrorClass::SchemaMissing,
            "other" => DbErrorClass::Other,
            _ => return None,
        })
    }
}

/// A classified database error. The message is the driver's, for logs: no
/// driver text ever reaches a problem document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbError {
    /// The class the host's executor gave it.
    pub class: DbErrorClass,
    /// The driver's message (may name hosts, users and tables: log it, never
    /// answer a request with it).
    pub message: String,
}

/// The database's answer to one [`Query`](super::Query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The rows of a `:one` or `:many` query, each with its columns in the
    /// order of the query's `SELECT`/`RETURNING` list.
    Rows(Vec<Vec<Value>>),
    /// The affected-row count of an `:execrows` (or `:exec`) query.
    Affected(u64),
    /// The query failed.
    Failed(DbError),
}
