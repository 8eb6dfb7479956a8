//! The store drivers of the core (`mintid::store`) for Python and Kotlin: the
//! host pulls a step, runs the named query it names on its database and
//! pushes the answer back. Each call is one boundary crossing; bytes stay
//! bytes. Every loop, pause, limit and error code is the core's.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::MintidError;
use crate::key::IdempotencyKey;
use crate::record::{CheckedRecordPolicy, Outcome};
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
    /// The parameter names in binding order (for reading; a [`StoreQuery`]
    /// holds the values in this order).
    pub params: Vec<String>,
    /// The parameters' SQL types, in the same order.
    pub param_types: Vec<ParamType>,
}

/// One numbered migration, split into statements.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Migration {
    /// Its version.
    pub version: u32,
    /// Its name.
    pub name: String,
    /// Its statements, in order.
    pub statements: Vec<String>,
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

/// The numbered migrations of `dialect`, in order.
#[uniffi::export]
pub fn store_migrations(dialect: Dialect) -> Vec<Migration> {
    core::Manifest::from(Manifest {
        dialect,
        placeholder: Placeholder::Question,
    })
    .migrations()
    .into_iter()
    .map(|migration| Migration {
        version: migration.version,
        name: migration.name.into(),
        statements: migration.statements.into_iter().map(Into::into).collect(),
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

/// One SQL value: a parameter or a column.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum SqlValue {
    /// SQL `NULL`.
    Null,
    /// A 64-bit integer.
    Int {
        /// The value.
        value: i64,
    },
    /// A text.
    Text {
        /// The value.
        value: String,
    },
    /// A byte string.
    Bytes {
        /// The value.
        value: Vec<u8>,
    },
}

impl From<core::Value> for SqlValue {
    fn from(value: core::Value) -> Self {
        match value {
            core::Value::Null => Self::Null,
            core::Value::Int(value) => Self::Int { value },
            core::Value::Text(value) => Self::Text { value },
            core::Value::Bytes(value) => Self::Bytes { value },
        }
    }
}

impl From<SqlValue> for core::Value {
    fn from(value: SqlValue) -> Self {
        match value {
            SqlValue::Null => Self::Null,
            SqlValue::Int { value } => Self::Int(value),
            SqlValue::Text { value } => Self::Text(value),
            SqlValue::Bytes { value } => Self::Bytes(value),
        }
    }
}

/// A named query to run, its values in the statement's binding order.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoreQuery {
    /// The query's name, e.g. `claim`.
    pub name: String,
    /// The values to bind, in order.
    pub params: Vec<SqlValue>,
}

impl From<core::Query> for StoreQuery {
    fn from(query: core::Query) -> Self {
        Self {
            name: query.name.into(),
            params: query.params.into_iter().map(Into::into).collect(),
        }
    }
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

impl From<DbErrorClass> for core::DbErrorClass {
    fn from(class: DbErrorClass) -> Self {
        match class {
            DbErrorClass::UniqueViolation => Self::UniqueViolation,
            DbErrorClass::Serialization => Self::Serialization,
            DbErrorClass::ConnectionLost => Self::ConnectionLost,
            DbErrorClass::Constraint => Self::Constraint,
            DbErrorClass::SchemaMissing => Self::SchemaMissing,
            DbErrorClass::Other => Self::Other,
        }
    }
}

/// The database's answer to a [`StoreQuery`].
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum StoreAnswer {
    /// The rows, each with its columns in the query's `SELECT` order.
    Rows {
        /// The rows.
        rows: Vec<Vec<SqlValue>>,
    },
    /// The affected-row count.
    Affected {
        /// The count.
        count: u64,
    },
    /// The query failed; `message` is the driver's, for the core's log field
    /// only (it never reaches a problem document).
    Failed {
        /// The executor's classification.
        class: DbErrorClass,
        /// The driver's message.
        message: String,
    },
}

impl From<StoreAnswer> for core::Answer {
    fn from(answer: StoreAnswer) -> Self {
        match answer {
            StoreAnswer::Rows { rows } => Self::Rows(
                rows.into_iter()
                    .map(|row| row.into_iter().map(Into::into).collect())
                    .collect(),
            ),
            StoreAnswer::Affected { count } => Self::Affected(count),
            StoreAnswer::Failed { class, message } => Self::Failed(core::DbError {
                class: class.into(),
                message,
            }),
        }
    }
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

/// A response as stored and replayed.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredResponse {
    /// Its content type.
    pub content_type: String,
    /// Its bytes.
    pub body: Vec<u8>,
}

impl From<core::StoredResponse> for StoredResponse {
    fn from(response: core::StoredResponse) -> Self {
        Self {
            content_type: response.content_type,
            body: response.body,
        }
    }
}

impl From<StoredResponse> for core::StoredResponse {
    fn from(response: StoredResponse) -> Self {
        Self {
            content_type: response.content_type,
            body: response.body,
        }
    }
}

/// What the operation came to.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum OperationOutcome {
    /// It returned this response.
    Succeeded {
        /// The response.
        response: StoredResponse,
    },
    /// It failed.
    Failed {
        /// The error text (cut to 1024 bytes by the core).
        message: String,
        /// Whether it is worth retrying (releases the key).
        retryable: bool,
        /// An optional error response to replay.
        response: Option<StoredResponse>,
    },
    /// It raised another error (its text): retryable, the core decides.
    Raised {
        /// The error's text.
        message: String,
    },
    /// It returned something that is not a response (its type's name).
    NotAResponse {
        /// What it returned.
        type_name: String,
    },
}

impl From<OperationOutcome> for core::OperationOutcome {
    fn from(outcome: OperationOutcome) -> Self {
        match outcome {
            OperationOutcome::Succeeded { response } => Self::Succeeded(response.into()),
            OperationOutcome::Failed {
                message,
                retryable,
                response,
            } => Self::Failed {
                message,
                retryable,
                response: response.map(Into::into),
            },
            OperationOutcome::Raised { message } => Self::Raised { message },
            OperationOutcome::NotAResponse { type_name } => Self::NotAResponse { type_name },
        }
    }
}

/// A claim the driver holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Held {
    /// The claim's fencing token.
    pub token: u64,
    /// The record's creation time (with the token, the fence).
    pub created_millis: u64,
    /// When the lease ends (Unix ms).
    pub lease_deadline_millis: u64,
    /// How often to renew the lease while the operation runs (none inside a
    /// caller's transaction).
    pub renew_every_millis: Option<u64>,
}

impl From<core::Held> for Held {
    fn from(held: core::Held) -> Self {
        Self {
            token: held.token,
            created_millis: held.created_millis,
            lease_deadline_millis: held.lease_deadline_millis,
            renew_every_millis: held.renew_every_millis,
        }
    }
}

impl From<Held> for core::Held {
    fn from(held: Held) -> Self {
        Self {
            token: held.token,
            created_millis: held.created_millis,
            lease_deadline_millis: held.lease_deadline_millis,
            renew_every_millis: held.renew_every_millis,
        }
    }
}

/// How a record protocol ended.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum Finished {
    /// The operation ran and its response is stored.
    Executed,
    /// The operation ran and failed: re-raise its own error.
    OperationFailed {
        /// Whether a final failure was stored (otherwise released, or in a
        /// caller's transaction nothing was written).
        stored: bool,
    },
    /// The operation ran and failed, and recording it failed too:
    /// re-raise its own error with this store error attached.
    OperationFailedUnrecorded {
        /// The store error's code, e.g. `store.unavailable`.
        code: String,
        /// The store error's message.
        message: String,
    },
    /// Not run: the stored result.
    Replay {
        /// Which result was stored.
        outcome: Outcome,
        /// The stored response.
        response: Option<StoredResponse>,
        /// For a failure, the stored error text.
        error: Option<String>,
    },
    /// Not run: another request holds the key.
    InProgress {
        /// The suggested retry delay (ms).
        retry_after_millis: u64,
    },
    /// Not run: the key was first used with a different payload.
    FingerprintMismatch,
    /// Not run: the key is older than retention.
    KeyTooOld,
}

impl From<core::Finished> for Finished {
    fn from(finished: core::Finished) -> Self {
        match finished {
            core::Finished::Executed => Self::Executed,
            core::Finished::OperationFailed { stored } => Self::OperationFailed { stored },
            core::Finished::OperationFailedUnrecorded { store_error } => {
                Self::OperationFailedUnrecorded {
                    code: store_error.code().to_owned(),
                    message: store_error.to_string(),
                }
            }
            core::Finished::Replay {
                outcome,
                response,
                error,
            } => Self::Replay {
                outcome: outcome.into(),
                response: response.map(Into::into),
                error,
            },
            core::Finished::InProgress { retry_after_millis } => {
                Self::InProgress { retry_after_millis }
            }
            core::Finished::FingerprintMismatch => Self::FingerprintMismatch,
            core::Finished::KeyTooOld => Self::KeyTooOld,
        }
    }
}

/// A step of the record protocol. A failure is the call's error.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum RecordStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Sleep, then call `resume`.
    Pause {
        /// How long, in milliseconds.
        millis: u64,
    },
    /// Run the operation now (renewing the lease meanwhile), then `finish`.
    Execute {
        /// The claim held.
        held: Held,
    },
    /// The protocol ended.
    Done {
        /// How.
        finished: Finished,
    },
}

fn core_key(key: &IdempotencyKey) -> Result<mintid::key::IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::new(
        &key.kind, &key.scope, &key.id,
    )?)
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic inside the core while locked would be a core bug; the state is
    // still a valid state machine value, so keep going.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A step of a renewal: run a query, or renewed until a deadline.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum RenewalStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Renewed: the lease now ends at this time (Unix ms).
    Renewed {
        /// The new deadline.
        lease_deadline_millis: u64,
    },
}

/// The heartbeat of one held claim (`mintid::store::RecordRenewal`).
#[derive(Debug, uniffi::Object)]
pub struct RecordRenewal(Mutex<core::RecordRenewal>);

#[uniffi::export]
impl RecordRenewal {
    /// The heartbeat of `held`, a claim of `key` under `policy`.
    #[uniffi::constructor]
    pub fn new(
        manifest: Manifest,
        policy: Arc<CheckedRecordPolicy>,
        key: IdempotencyKey,
        held: Held,
    ) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(Mutex::new(core::RecordRenewal::new(
            manifest.into(),
            policy.core(),
            &core_key(&key)?,
            &held.into(),
        )))))
    }

    /// Start a renewal at `now_millis`: the query to run.
    pub fn start(&self, now_millis: u64) -> StoreQuery {
        lock(&self.0).start(now_millis).into()
    }

    /// Push the answer. Fails with `store.record_lost` (the key was taken
    /// over or completed: stop the operation's writes), `store.unavailable`
    /// (try again at the next beat) or `store.query_failed`.
    pub fn push(&self, answer: StoreAnswer) -> Result<RenewalStep, MintidError> {
        match lock(&self.0).push(answer.into()) {
            core::Step::Run(query) => Ok(RenewalStep::Run {
                query: query.into(),
            }),
            core::Step::Yield(lease_deadline_millis) => Ok(RenewalStep::Renewed {
                lease_deadline_millis,
            }),
            core::Step::Fail(error) => Err(error.into()),
            _ => never_asked(),
        }
    }
}

pub(crate) fn never_asked<T>() -> Result<T, MintidError> {
    Err(MintidError::argument(
        "argument.internal",
        "the driver asked for a step it never asks for",
    ))
}

/// A step of a cleanup: run a query, or done with the total deleted.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum CleanupStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Done.
    Done {
        /// How many records were deleted in all.
        deleted: u64,
    },
}

/// Expired records deleted in batches (`mintid::store::RecordCleanup`).
#[derive(Debug, uniffi::Object)]
pub struct RecordCleanup(Mutex<core::RecordCleanup>);

#[uniffi::export]
impl RecordCleanup {
    /// A cleanup of `batch_size` records per statement.
    #[uniffi::constructor]
    pub fn new(manifest: Manifest, batch_size: u64) -> Arc<Self> {
        Arc::new(Self(Mutex::new(core::RecordCleanup::new(
            manifest.into(),
            batch_size,
        ))))
    }

    /// The first batch's query.
    pub fn start(&self, now_millis: u64) -> StoreQuery {
        lock(&self.0).next(now_millis).into()
    }

    /// Push a batch's answer.
    pub fn push(&self, answer: StoreAnswer, now_millis: u64) -> Result<CleanupStep, MintidError> {
        match lock(&self.0).push(answer.into(), now_millis) {
            core::Step::Run(query) => Ok(CleanupStep::Run {
                query: query.into(),
            }),
            core::Step::Yield(deleted) => Ok(CleanupStep::Done { deleted }),
            core::Step::Fail(error) => Err(error.into()),
            _ => never_asked(),
        }
    }
}

/// A record as stored, with what it replays.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredRecord {
    /// The core's record.
    pub record: crate::record::Record,
    /// The stored response, if any.
    pub response: Option<StoredResponse>,
    /// The stored error text, if any.
    pub error: Option<String>,
}

/// The query that loads `key`'s record (for `load`).
#[uniffi::export]
pub fn store_load_query(
    manifest: Manifest,
    key: IdempotencyKey,
) -> Result<StoreQuery, MintidError> {
    Ok(core::load_query(manifest.into(), &core_key(&key)?).into())
}

/// Reads the answer to [`store_load_query`]: the record, or none.
#[uniffi::export]
pub fn store_read_record(answer: StoreAnswer) -> Result<Option<StoredRecord>, MintidError> {
    let record = core::read_load(&answer.into())?;
    Ok(record.map(|stored| StoredRecord {
        record: stored.record.into(),
        response: stored.response.map(Into::into),
        error: stored.error,
    }))
}
