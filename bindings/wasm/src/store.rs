//! The store drivers of the core (`mintid::store`) for JS: the host pulls a
//! step, runs the named query it names on its database and pushes the
//! answer back. Every loop, pause, limit and error code is the core's.
//!
//! The record driver crosses on the lane (`lane.rs`, packed bytes); the
//! other drivers' steps, answers and outcomes cross as plain JS objects, one
//! crossing per step: `{ kind: "run", query: { name, params } }`, values as
//! `null | bigint | string | Uint8Array`, 64-bit integers as `bigint` (read
//! back with a range check: a `bigint` out of range is a `RangeError`, never
//! a wrapped value). The TypeScript shapes are in the section below.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use js_sys::{Array, Object, Reflect, Uint8Array};
use mintid::IdempotencyKey;
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, DriverError, Held, Manifest, Placeholder, Query,
    ResultKind, Step, StoreError, StoredResponse, Value,
};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::error::{range_error, to_js, type_error};
use crate::record::RecordPolicyHandle;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** An idempotency key's parts (an `IdempotencyKey`). */
export interface StoreKey { kind: string; scope: string; id: string; }
/** An SQL value: a parameter or a column. */
export type SqlValue = null | bigint | string | Uint8Array;
/** The shared SQL of one dialect for one placeholder style. */
export interface StoreManifest { dialect: "postgres" | "mysql" | "sqlite"; placeholder: "question" | "numbered" | "format"; }
/** One named query, rendered for a database library. */
export interface StoreStatement { name: string; kind: "one" | "many" | "execrows" | "exec"; sql: string; params: string[]; }
/** One numbered migration, split into statements. */
export interface StoreMigration { version: number; name: string; statements: string[]; }
/** One limit of the schema. */
export interface StoreLimit { name: string; maxBytes: number; }
/** A named query to run, its values in the statement's binding order. */
export interface StoreQuery { name: string; params: SqlValue[]; }
/** How an executor classifies a database error. */
export type DbErrorClass = "unique_violation" | "serialization" | "connection_lost" | "constraint" | "schema_missing" | "other";
/** The database's answer to a StoreQuery. */
export type StoreAnswer =
  | { kind: "rows"; rows: SqlValue[][] }
  | { kind: "affected"; count: bigint }
  | { kind: "failed"; class: DbErrorClass; message: string };
/** A response as stored and replayed. */
export interface StoreResponse { contentType: string; body: Uint8Array; }
/** A claim the driver holds. */
export interface Held { token: bigint; createdMillis: bigint; leaseDeadlineMillis: bigint; renewEveryMillis: bigint | null; }
/** A step of a renewal. */
export type RenewalStep = { kind: "run"; query: StoreQuery } | { kind: "renewed"; leaseDeadlineMillis: bigint };
/** A step of a cleanup. */
export type CleanupStep = { kind: "run"; query: StoreQuery } | { kind: "done"; deleted: bigint };
/** A record as stored, with what it replays. */
export interface StoreRecord {
  status: "pending" | "succeeded" | "failed" | "failed_retryable";
  fingerprint: string;
  token: bigint;
  leaseDeadlineMillis: bigint;
  createdMillis: bigint;
  expiresMillis: bigint;
  response: StoreResponse | null;
  error: string | null;
}
"#;

/// A fresh object with `fields` set.
pub(crate) fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let object = Object::new();
    for (name, value) in fields {
        // Setting a property on a fresh plain object cannot fail.
        let _ = Reflect::set(&object, &JsValue::from_str(name), value);
    }
    object.into()
}

fn field(object: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    if !object.is_object() {
        return Err(type_error("expected an object"));
    }
    Reflect::get(object, &JsValue::from_str(name))
}

fn text_field(object: &JsValue, name: &str) -> Result<String, JsValue> {
    field(object, name)?
        .as_string()
        .ok_or_else(|| type_error(&alloc::format!("{name} must be a string")))
}

fn u64_of(value: JsValue, name: &str) -> Result<u64, JsValue> {
    if !value.is_bigint() {
        return Err(type_error(&alloc::format!("{name} must be a bigint")));
    }
    u64::try_from(value).map_err(|_| range_error(&alloc::format!("{name} must be in [0, 2^64)")))
}

fn u64_field(object: &JsValue, name: &str) -> Result<u64, JsValue> {
    u64_of(field(object, name)?, name)
}

fn bytes_of(value: &JsValue, name: &str) -> Result<Vec<u8>, JsValue> {
    value
        .dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .ok_or_else(|| type_error(&alloc::format!("{name} must be a Uint8Array")))
}

pub(crate) fn bytes(value: &[u8]) -> JsValue {
    Uint8Array::from(value).into()
}

fn optional(value: Option<JsValue>) -> JsValue {
    value.unwrap_or(JsValue::NULL)
}

fn strings(values: impl IntoIterator<Item = impl AsRef<str>>) -> JsValue {
    values
        .into_iter()
        .map(|value| JsValue::from_str(value.as_ref()))
        .collect::<Array>()
        .into()
}

pub(crate) fn manifest_of(value: &JsValue) -> Result<Manifest, JsValue> {
    let dialect = dialect_of(&text_field(value, "dialect")?)?;
    let placeholder = text_field(value, "placeholder")?;
    let placeholder = Placeholder::parse(&placeholder)
        .ok_or_else(|| type_error("placeholder must be question, numbered or format"))?;
    Ok(Manifest::new(dialect, placeholder))
}

fn dialect_of(name: &str) -> Result<Dialect, JsValue> {
    Dialect::parse(name).ok_or_else(|| type_error("dialect must be postgres, mysql or sqlite"))
}

fn key_of(key: &JsValue) -> Result<IdempotencyKey, JsValue> {
    let (kind, scope, id) = (
        text_field(key, "kind")?,
        text_field(key, "scope")?,
        text_field(key, "id")?,
    );
    IdempotencyKey::new(&kind, &scope, &id).map_err(to_js)
}

fn value_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Int(value) => JsValue::from(*value),
        Value::Text(value) => JsValue::from_str(value),
        Value::Bytes(value) => bytes(value),
    }
}

fn value_of(value: JsValue) -> Result<Value, JsValue> {
    if value.is_null() || value.is_undefined() {
        return Ok(Value::Null);
    }
    if value.is_bigint() {
        return i64::try_from(value)
            .map(Value::Int)
            .map_err(|_| range_error("an integer value must be in [-2^63, 2^63)"));
    }
    if let Some(text) = value.as_string() {
        return Ok(Value::Text(text));
    }
    bytes_of(&value, "a value that is not null, a bigint or a string").map(Value::Bytes)
}

pub(crate) fn query_js(query: &Query) -> JsValue {
    let params: Array = query.params.iter().map(value_js).collect();
    object(&[
        ("name", JsValue::from_str(query.name)),
        ("params", params.into()),
    ])
}

fn array_of(value: JsValue, name: &str) -> Result<Array, JsValue> {
    value
        .dyn_into::<Array>()
        .map_err(|_| type_error(&alloc::format!("{name} must be an array")))
}

pub(crate) fn answer_of(value: &JsValue) -> Result<Answer, JsValue> {
    match text_field(value, "kind")?.as_str() {
        "rows" => {
            let rows = array_of(field(value, "rows")?, "rows")?;
            let mut read = Vec::with_capacity(rows.length() as usize);
            for row in rows.iter() {
                let row = array_of(row, "a row")?;
                read.push(row.iter().map(value_of).collect::<Result<Vec<_>, _>>()?);
            }
            Ok(Answer::Rows(read))
        }
        "affected" => Ok(Answer::Affected(u64_field(value, "count")?)),
        "failed" => {
            let class = DbErrorClass::parse(&text_field(value, "class")?)
                .ok_or_else(|| type_error("class must be a DbErrorClass name"))?;
            Ok(Answer::Failed(DbError {
                class,
                message: text_field(value, "message")?,
            }))
        }
        _ => Err(type_error(
            "an answer's kind must be rows, affected or failed",
        )),
    }
}

fn response_js(response: &StoredResponse) -> JsValue {
    object(&[
        ("contentType", JsValue::from_str(&response.content_type)),
        ("body", bytes(&response.body)),
    ])
}

fn held_of(value: &JsValue) -> Result<Held, JsValue> {
    let every = field(value, "renewEveryMillis")?;
    Ok(Held {
        token: u64_field(value, "token")?,
        created_millis: u64_field(value, "createdMillis")?,
        lease_deadline_millis: u64_field(value, "leaseDeadlineMillis")?,
        renew_every_millis: if every.is_null() || every.is_undefined() {
            None
        } else {
            Some(u64_of(every, "renewEveryMillis")?)
        },
    })
}

/// `store.unexpected_row` for a step a driver never asks for (a bug between
/// the core and this crate).
pub(crate) fn never_asked(step: &str) -> JsValue {
    to_js(DriverError::Store(StoreError::unexpected_step(step)))
}

/// Every named query of `manifest`, rendered.
#[wasm_bindgen(js_name = storeStatements, unchecked_return_type = "StoreStatement[]")]
pub fn store_statements(
    #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
) -> Result<Array, JsValue> {
    Ok(manifest_of(&manifest)?
        .statements()
        .iter()
        .map(|statement| {
            let kind = match statement.kind {
                ResultKind::One => "one",
                ResultKind::Many => "many",
                ResultKind::ExecRows => "execrows",
                ResultKind::Exec => "exec",
            };
            object(&[
                ("name", JsValue::from_str(statement.name)),
                ("kind", JsValue::from_str(kind)),
                ("sql", JsValue::from_str(&statement.sql)),
                ("params", strings(&statement.params)),
            ])
        })
        .collect())
}

/// The numbered migrations of `dialect`, in order.
#[wasm_bindgen(js_name = storeMigrations, unchecked_return_type = "StoreMigration[]")]
pub fn store_migrations(dialect: &str) -> Result<Array, JsValue> {
    Ok(Manifest::new(dialect_of(dialect)?, Placeholder::Question)
        .migrations()
        .iter()
        .map(|migration| {
            object(&[
                ("version", migration.version.into()),
                ("name", JsValue::from_str(migration.name)),
                ("statements", strings(&migration.statements)),
            ])
        })
        .collect())
}

/// Every limit of the schema (`mintid::store::limits::ALL`).
#[wasm_bindgen(js_name = storeLimits, unchecked_return_type = "StoreLimit[]")]
pub fn store_limits() -> Array {
    mintid::store::limits::ALL
        .iter()
        .map(|(name, max)| {
            object(&[
                ("name", JsValue::from_str(name)),
                ("maxBytes", (*max as f64).into()),
            ])
        })
        .collect()
}

/// How long a host's shutdown waits for work under way (a heartbeat's last
/// renewal, a segment fetch, a relay's mark) before it gives up on it
/// (`mintid::store::limits::SHUTDOWN_WAIT_MILLIS`): the bound every host
/// takes from the core.
#[wasm_bindgen(js_name = shutdownWaitMillis)]
pub fn shutdown_wait_millis() -> f64 {
    mintid::store::limits::SHUTDOWN_WAIT_MILLIS as f64
}

/// `bytes` (a host's text, which may not be UTF-8) as a database can store
/// it, cut to `max_bytes` (`mintid::store::limits::storable_text_from_bytes`):
/// the rule every text a driver writes from JS meets once `TextEncoder` has
/// made it bytes (a lone surrogate is then `EF BF BD`). For the vectors.
#[wasm_bindgen(js_name = storableTextFromBytes)]
pub fn storable_text_from_bytes(bytes: &[u8], max_bytes: usize) -> String {
    mintid::store::limits::storable_text_from_bytes(bytes, max_bytes)
}

/// The text the core stores for a raised failure of the type `type_name`
/// with `message` (`mintid::store::limits::raised_text`), for the vector
/// runners: the TypeScript layer passes the two on the wire and never
/// composes the text itself.
#[wasm_bindgen(js_name = raisedText)]
pub fn raised_text(type_name: &[u8], message: &[u8]) -> String {
    mintid::store::limits::raised_text(type_name, message)
}

/// The class of a database error from the codes its driver reports: `code`
/// is the dialect's own code as text (a MySQL/MariaDB error number, an SQLite
/// result code by number or name), `sqlstate` the SQLSTATE when the driver
/// gives one, `message` the driver's message (read only for SQLite's
/// missing table) (`mintid::store::classify_db_error`).
#[wasm_bindgen(js_name = classifyDbError, unchecked_return_type = "DbErrorClass")]
pub fn classify_db_error(
    dialect: &str,
    code: Option<String>,
    sqlstate: Option<String>,
    message: Option<String>,
) -> Result<JsValue, JsValue> {
    let class = mintid::store::classify_db_error(
        dialect_of(dialect)?,
        code.as_deref(),
        sqlstate.as_deref(),
        message.as_deref(),
    );
    Ok(JsValue::from_str(class.as_str()))
}

/// The query that loads a key's record (for `load`).
#[wasm_bindgen(js_name = storeLoadQuery, unchecked_return_type = "StoreQuery")]
pub fn store_load_query(
    #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
    #[wasm_bindgen(unchecked_param_type = "StoreKey")] key: JsValue,
) -> Result<JsValue, JsValue> {
    let query = mintid::store::load_query(manifest_of(&manifest)?, &key_of(&key)?);
    Ok(query_js(&query))
}

/// Reads the answer to [`store_load_query`]: the record, or `null`. A
/// failed answer is the store error it means.
#[wasm_bindgen(js_name = storeReadRecord, unchecked_return_type = "StoreRecord | null")]
pub fn store_read_record(
    #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
) -> Result<JsValue, JsValue> {
    let Some(stored) = mintid::store::read_load(&answer_of(&answer)?).map_err(to_js)? else {
        return Ok(JsValue::NULL);
    };
    let record = stored.record;
    Ok(object(&[
        ("status", JsValue::from_str(record.status.as_str())),
        (
            "fingerprint",
            JsValue::from_str(&record.fingerprint.to_string()),
        ),
        ("token", record.token.into()),
        ("leaseDeadlineMillis", record.lease_deadline_millis.into()),
        ("createdMillis", record.created_millis.into()),
        ("expiresMillis", record.expires_millis.into()),
        (
            "response",
            optional(stored.response.as_ref().map(response_js)),
        ),
        (
            "error",
            optional(stored.error.as_deref().map(JsValue::from_str)),
        ),
    ]))
}

/// The typed error a database error means outside any driver (leases,
/// segments, the outbox, migrations, transaction control):
/// `store.unavailable`, `store.conflict` or `store.query_failed`.
#[wasm_bindgen(js_name = storeFailure)]
pub fn store_failure(
    #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
) -> Result<JsValue, JsValue> {
    match answer_of(&answer)? {
        Answer::Failed(error) => Ok(to_js(mintid::store::database_failure(&error))),
        _ => Err(type_error("storeFailure takes a failed answer")),
    }
}

/// The heartbeat of one held claim (`mintid::store::RecordRenewal`).
#[wasm_bindgen]
pub struct RecordRenewal(mintid::store::RecordRenewal);

#[wasm_bindgen]
impl RecordRenewal {
    /// The heartbeat of `held`, a claim of `key` under `policy`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        policy: &RecordPolicyHandle,
        #[wasm_bindgen(unchecked_param_type = "StoreKey")] key: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Held")] held: JsValue,
    ) -> Result<RecordRenewal, JsValue> {
        Ok(Self(mintid::store::RecordRenewal::new(
            manifest_of(&manifest)?,
            *policy.policy(),
            &key_of(&key)?,
            &held_of(&held)?,
        )))
    }

    /// Start a renewal at `now_millis`: the query to run.
    #[wasm_bindgen(unchecked_return_type = "StoreQuery")]
    pub fn start(&mut self, now_millis: u64) -> JsValue {
        query_js(&self.0.start(now_millis))
    }

    /// Push the answer. Fails with `store.record_lost` (the key was taken
    /// over or completed: the operation no longer holds it),
    /// `store.unavailable` (try again at the next beat) or `store.query_failed`.
    #[wasm_bindgen(unchecked_return_type = "RenewalStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
    ) -> Result<JsValue, JsValue> {
        let kind = |name: &str| ("kind", JsValue::from_str(name));
        match self.0.push(answer_of(&answer)?) {
            Step::Run(query) => Ok(object(&[kind("run"), ("query", query_js(&query))])),
            Step::Yield(deadline) => Ok(object(&[
                kind("renewed"),
                ("leaseDeadlineMillis", deadline.into()),
            ])),
            Step::Fail(error) => Err(to_js(error)),
            Step::Pause { .. } | Step::Begin { .. } | Step::Commit | Step::Rollback => {
                Err(never_asked("a pause or a transaction step"))
            }
        }
    }
}

/// Expired records deleted in batches (`mintid::store::RecordCleanup`).
#[wasm_bindgen]
pub struct RecordCleanup(mintid::store::RecordCleanup);

#[wasm_bindgen]
impl RecordCleanup {
    /// A cleanup of `batch_size` records per statement.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        batch_size: u64,
    ) -> Result<RecordCleanup, JsValue> {
        Ok(Self(mintid::store::RecordCleanup::new(
            manifest_of(&manifest)?,
            batch_size,
        )))
    }

    /// The first batch's query, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "StoreQuery")]
    pub fn start(&self, now_millis: u64) -> JsValue {
        query_js(&self.0.next(now_millis))
    }

    /// Push a batch's answer.
    #[wasm_bindgen(unchecked_return_type = "CleanupStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
        now_millis: u64,
    ) -> Result<JsValue, JsValue> {
        let kind = |name: &str| ("kind", JsValue::from_str(name));
        match self.0.push(answer_of(&answer)?, now_millis) {
            Step::Run(query) => Ok(object(&[kind("run"), ("query", query_js(&query))])),
            Step::Yield(deleted) => Ok(object(&[kind("done"), ("deleted", deleted.into())])),
            Step::Fail(error) => Err(to_js(error)),
            Step::Pause { .. } | Step::Begin { .. } | Step::Commit | Step::Rollback => {
                Err(never_asked("a pause or a transaction step"))
            }
        }
    }
}
