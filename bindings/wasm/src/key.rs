//! Idempotency keys: kind, scope and id, and their canonical text.
//!
//! A key crosses as `[kind, scope, id, text]`.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use mintid::IdempotencyKey;
use mintid::fingerprint::Fingerprint;
use mintid::key;
use wasm_bindgen::prelude::*;

use crate::error::to_js;

fn parts(key: IdempotencyKey) -> Vec<String> {
    let text = key.to_string();
    vec![key.kind().into(), key.scope().into(), key.id().into(), text]
}

/// A key from its three parts.
#[wasm_bindgen(js_name = keyNew)]
pub fn key_new(kind: &str, scope: &str, id: &str) -> Result<Vec<String>, JsValue> {
    IdempotencyKey::new(kind, scope, id)
        .map(parts)
        .map_err(to_js)
}

/// A key whose id is the value of an `Idempotency-Key` header (raw bytes).
#[wasm_bindgen(js_name = keyFromHeader)]
pub fn key_from_header(kind: &str, scope: &str, header: &[u8]) -> Result<Vec<String>, JsValue> {
    IdempotencyKey::from_header(kind, scope, header)
        .map(parts)
        .map_err(to_js)
}

/// A key whose id is built from business fields.
#[wasm_bindgen(js_name = keyFromFields)]
pub fn key_from_fields(
    kind: &str,
    scope: &str,
    fields: Vec<String>,
) -> Result<Vec<String>, JsValue> {
    IdempotencyKey::from_fields(kind, scope, &fields)
        .map(parts)
        .map_err(to_js)
}

/// A key whose id is derived from a payload fingerprint (text form).
#[wasm_bindgen(js_name = keyDerived)]
pub fn key_derived(kind: &str, scope: &str, fingerprint: &str) -> Result<Vec<String>, JsValue> {
    let fingerprint = Fingerprint::parse(fingerprint.as_bytes()).map_err(to_js)?;
    IdempotencyKey::derived(kind, scope, &fingerprint)
        .map(parts)
        .map_err(to_js)
}

/// Reads the canonical text `kind:scope:id`.
#[wasm_bindgen(js_name = keyParse)]
pub fn key_parse(text: &[u8]) -> Result<Vec<String>, JsValue> {
    IdempotencyKey::parse(text).map(parts).map_err(to_js)
}

/// The id in an `Idempotency-Key` header value (raw bytes).
#[wasm_bindgen(js_name = keyParseHeader)]
pub fn key_parse_header(value: &[u8]) -> Result<String, JsValue> {
    key::parse_header(value).map_err(to_js)
}
