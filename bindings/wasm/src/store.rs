//! What a JS executor needs of the core's store beside the wire (`wire.rs`,
//! where every driver crosses): the named queries rendered for its library,
//! the schema's limits, the shutdown bound, the class of a database error and
//! the typed error it means outside a driver, and the storable-text rules for
//! the vector runners. The TypeScript shapes are in the section below.

use alloc::string::String;
use js_sys::{Array, Object, Reflect};
use mintid::store::{DbError, DbErrorClass, Dialect, Manifest, Placeholder, ResultKind};
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** An SQL value: a parameter or a column. */
export type SqlValue = null | bigint | string | Uint8Array;
/** The shared SQL of one dialect for one placeholder style. */
export interface StoreManifest { dialect: "postgres" | "mysql" | "sqlite"; placeholder: "question" | "numbered" | "format"; }
/** One named query, rendered for a database library. */
export interface StoreStatement { name: string; kind: "one" | "many" | "execrows" | "exec"; sql: string; params: string[]; }
/** One limit of the schema. */
export interface StoreLimit { name: string; maxBytes: number; }
/** How an executor classifies a database error. */
export type DbErrorClass = "unique_violation" | "serialization" | "connection_lost" | "constraint" | "schema_missing" | "other";
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

fn strings(values: impl IntoIterator<Item = impl AsRef<str>>) -> JsValue {
    values
        .into_iter()
        .map(|value| JsValue::from_str(value.as_ref()))
        .collect::<Array>()
        .into()
}

fn dialect_of(name: &str) -> Result<Dialect, JsValue> {
    Dialect::parse(name).ok_or_else(|| type_error("dialect must be postgres, mysql or sqlite"))
}

/// Every named query of `dialect`, rendered with the `placeholder` style
/// of its library (a `StoreManifest`'s fields).
#[wasm_bindgen(js_name = storeStatements, unchecked_return_type = "StoreStatement[]")]
pub fn store_statements(dialect: &str, placeholder: &str) -> Result<Array, JsValue> {
    let placeholder = Placeholder::parse(placeholder)
        .ok_or_else(|| type_error("placeholder must be question, numbered or format"))?;
    Ok(Manifest::new(dialect_of(dialect)?, placeholder)
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

/// The typed error a database error of `class` with the driver's `message`
/// means outside any driver (leases, segments, the outbox, migrations,
/// transaction control): `store.unavailable`, `store.conflict` or
/// `store.query_failed`.
#[wasm_bindgen(js_name = storeFailure)]
pub fn store_failure(
    #[wasm_bindgen(unchecked_param_type = "DbErrorClass")] class: &str,
    message: String,
) -> Result<JsValue, JsValue> {
    let class = DbErrorClass::parse(class)
        .ok_or_else(|| type_error("class must be a DbErrorClass name"))?;
    Ok(to_js(mintid::store::database_failure(&DbError {
        class,
        message,
    })))
}
