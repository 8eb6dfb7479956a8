//! The store drivers of the core (`mintid::store`) for JS: the host pulls a
//! step, runs the named query it names on its database and pushes the
//! answer back. Every loop, pause, limit and error code is the core's.
//!
//! Every driver but the leases' and the segments' crosses on the wire
//! (`wire.rs`, packed bytes); those two still cross as plain JS objects, one
//! crossing per step: `{ kind: "run", query: { name, params } }`, values as
//! `null | bigint | string | Uint8Array`, 64-bit integers as `bigint` (read
//! back with a range check: a `bigint` out of range is a `RangeError`, never
//! a wrapped value). The TypeScript shapes are in the section below.

use alloc::string::String;
use alloc::vec::Vec;
use js_sys::{Array, Object, Reflect, Uint8Array};
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, Manifest, Placeholder, ResultKind, Value,
};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::error::{range_error, to_js, type_error};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
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
