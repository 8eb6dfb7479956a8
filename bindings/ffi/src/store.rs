//! What a Python or Kotlin executor needs of the core's store beside the
//! wire (`wire.rs`, where every driver crosses): the named queries rendered
//! for its library, the schema's limits, the shutdown bound, the class of a
//! database error, and the storable-text rules for the vector runners.

use mintid::store as core;

/// An SQL dialect of `schema/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Dialect {
    /// PostgreSQL 12+.
    Postgres,
    /// MySQL 8.0.16+ and MariaDB 10.6+.
    Mysql,
    /// SQLite 3.37+.
    Sqlite,
}

/// How a database library writes parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Placeholder {
    /// `?`, bound in order of appearance (JDBC, `sqlite3`).
    Question,
    /// `$1`, `$2`, … one per distinct name (node `pg`).
    Numbered,
    /// `%s`, bound in order of appearance, `%` written `%%` (psycopg, PyMySQL).
    Format,
}

/// The shared SQL of one dialect for one placeholder style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Manifest {
    /// The dialect.
    pub dialect: Dialect,
    /// The library's placeholder style.
    pub placeholder: Placeholder,
}

impl From<Dialect> for core::Dialect {
    fn from(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Postgres => Self::Postgres,
            Dialect::Mysql => Self::Mysql,
            Dialect::Sqlite => Self::Sqlite,
        }
    }
}

impl From<Manifest> for core::Manifest {
    fn from(manifest: Manifest) -> Self {
        let dialect = manifest.dialect.into();
        let placeholder = match manifest.placeholder {
            Placeholder::Question => core::Placeholder::Question,
            Placeholder::Numbered => core::Placeholder::Numbered,
            Placeholder::Format => core::Placeholder::Format,
        };
        core::Manifest::new(dialect, placeholder)
    }
}

/// What a named query returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum ResultKind {
    /// At most one row.
    One,
    /// Rows.
    Many,
    /// The affected-row count.
    ExecRows,
    /// Nothing.
    Exec,
}

/// The SQL type of a parameter (for binding a typed `NULL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum ParamType {
    /// A 64-bit integer.
    Int,
    /// A text.
    Text,
    /// A byte string.
    Bytes,
}

/// One named query, rendered for a database library.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Statement {
    /// Its name, e.g. `claim`.
    pub name: String,
    /// What it returns.
    pub kind: ResultKind,
    /// The SQL with the library's placeholders.
    pub sql: String,
    /// The parameter names in binding order.
    pub params: Vec<String>,
    /// The parameters' SQL types, in the same order.
    pub param_types: Vec<ParamType>,
}

/// Every named query of `manifest`, rendered.
#[uniffi::export]
pub fn store_statements(manifest: Manifest) -> Vec<Statement> {
    core::Manifest::from(manifest)
        .statements()
        .into_iter()
        .map(|statement| Statement {
            name: statement.name.into(),
            kind: match statement.kind {
                core::ResultKind::One => ResultKind::One,
                core::ResultKind::Many => ResultKind::Many,
                core::ResultKind::ExecRows => ResultKind::ExecRows,
                core::ResultKind::Exec => ResultKind::Exec,
            },
            sql: statement.sql,
            params: statement.params.into_iter().map(Into::into).collect(),
            param_types: statement
                .param_types
                .into_iter()
                .map(|t| match t {
                    core::ParamType::Int => ParamType::Int,
                    core::ParamType::Text => ParamType::Text,
                    core::ParamType::Bytes => ParamType::Bytes,
                })
                .collect(),
        })
        .collect()
}

/// One limit of the schema that the drivers enforce before they write.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoreLimit {
    /// What it limits, e.g. `record.error`.
    pub name: String,
    /// The most bytes allowed.
    pub max_bytes: u64,
}

/// Every limit of the schema (`mintid::store::limits::ALL`).
#[uniffi::export]
pub fn store_limits() -> Vec<StoreLimit> {
    core::limits::ALL
        .iter()
        .map(|(name, max)| StoreLimit {
            name: (*name).into(),
            max_bytes: *max as u64,
        })
        .collect()
}

/// How long a host's shutdown waits for work under way (a heartbeat's last
/// renewal, a segment fetch, a relay's mark) before it gives up on it
/// (`mintid::store::limits::SHUTDOWN_WAIT_MILLIS`): the bound every host
/// takes from the core.
#[uniffi::export]
pub fn shutdown_wait_millis() -> u64 {
    core::limits::SHUTDOWN_WAIT_MILLIS
}

/// `bytes` (a host's text as it crossed: UTF-8 that may hold an encoded lone
/// surrogate or other invalid sequences) made storable and cut to `max_bytes`
/// (`mintid::store::limits::storable_text_from_bytes`): the rule every driver
/// applies to an error text from a host, for the vector runners.
#[uniffi::export]
pub fn storable_text_from_bytes(bytes: Vec<u8>, max_bytes: u64) -> String {
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    core::limits::storable_text_from_bytes(&bytes, max_bytes)
}

/// The text the core stores for a raised failure of the type `type_name`
/// with `message` (both bytes as they crossed;
/// `mintid::store::limits::raised_text`), for the vector runners: a host
/// passes the two on the wire and never composes the text itself.
#[uniffi::export]
pub fn raised_text(type_name: Vec<u8>, message: Vec<u8>) -> String {
    core::limits::raised_text(&type_name, &message)
}

/// How a host's executor classifies a database error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum DbErrorClass {
    /// A unique or primary-key violation.
    UniqueViolation,
    /// A serialization failure or deadlock.
    Serialization,
    /// The database cannot be reached or the connection broke.
    ConnectionLost,
    /// Another constraint (`CHECK`, `NOT NULL`, a value too long).
    Constraint,
    /// A table does not exist: the schema was not migrated.
    SchemaMissing,
    /// Anything else.
    Other,
}

impl From<core::DbErrorClass> for DbErrorClass {
    fn from(class: core::DbErrorClass) -> Self {
        match class {
            core::DbErrorClass::UniqueViolation => Self::UniqueViolation,
            core::DbErrorClass::Serialization => Self::Serialization,
            core::DbErrorClass::ConnectionLost => Self::ConnectionLost,
            core::DbErrorClass::Constraint => Self::Constraint,
            core::DbErrorClass::SchemaMissing => Self::SchemaMissing,
            core::DbErrorClass::Other => Self::Other,
        }
    }
}

/// The class of a database error from the codes its driver reports: `code`
/// is the dialect's own code as text (a MySQL/MariaDB error number, an SQLite
/// result code by number or name; none for PostgreSQL), `sqlstate` the
/// SQLSTATE when the driver gives one, `message` the driver's message (read
/// only for SQLite's missing table). Every executor asks this instead of
/// mapping codes itself (`mintid::store::classify_db_error`).
#[uniffi::export]
pub fn classify_db_error(
    dialect: Dialect,
    code: Option<String>,
    sqlstate: Option<String>,
    message: Option<String>,
) -> DbErrorClass {
    core::classify_db_error(
        dialect.into(),
        code.as_deref(),
        sqlstate.as_deref(),
        message.as_deref(),
    )
    .into()
}

/// Which way a request comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Way {
    /// The store runs the operation (and renews the lease meanwhile).
    RunOnce,
    /// Inside the caller's transaction.
    SameTransaction,
    /// Lease and fence: the host holds the claim and finishes it later.
    Lease,
}
