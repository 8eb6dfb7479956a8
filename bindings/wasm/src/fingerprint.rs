//! Payload fingerprints: RFC 8785 canonical JSON hashed with SHA-256.
//!
//! JSON input crosses as UTF-8 bytes (a JS string is encoded by the glue,
//! raw bytes pass as they are), so the core alone decides what is valid.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use mintid::fingerprint::{self, FieldSelection, Fingerprint};
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};

fn selection(include: Vec<String>, exclude: Vec<String>) -> Result<FieldSelection, JsValue> {
    FieldSelection::new(&include, &exclude).map_err(to_js)
}

/// The text form (`sha256:…`) of the fingerprint of a JSON text, narrowed to
/// the fields `include` selects minus those `exclude` removes (JSON Pointers).
#[wasm_bindgen(js_name = fingerprintJson)]
pub fn fingerprint_json(
    text: &[u8],
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<String, JsValue> {
    let selection = selection(include, exclude)?;
    fingerprint::fingerprint_json(text, &selection)
        .map(|fingerprint| fingerprint.to_string())
        .map_err(to_js)
}

/// The text form of the fingerprint of a JS value written as JSON text: as
/// [`fingerprint_json`], but a document that is one string is refused
/// (`fingerprint.string_value`).
#[wasm_bindgen(js_name = fingerprintValue)]
pub fn fingerprint_value(
    text: &[u8],
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<String, JsValue> {
    let selection = selection(include, exclude)?;
    fingerprint::fingerprint_value(text, &selection)
        .map(|fingerprint| fingerprint.to_string())
        .map_err(to_js)
}

/// The RFC 8785 canonical text that [`fingerprint_json`] hashes.
#[wasm_bindgen(js_name = canonicalizeJson)]
pub fn canonicalize_json(
    text: &[u8],
    include: Vec<String>,
    exclude: Vec<String>,
) -> Result<String, JsValue> {
    let selection = selection(include, exclude)?;
    fingerprint::canonicalize_selection(text, &selection).map_err(to_js)
}

/// The text form of the fingerprint of a raw (non-JSON) body.
#[wasm_bindgen(js_name = fingerprintBytes)]
pub fn fingerprint_bytes(raw: &[u8]) -> String {
    fingerprint::fingerprint_bytes(raw).to_string()
}

/// The 32 digest bytes of a fingerprint's text form (`fingerprint.invalid_text`).
#[wasm_bindgen(js_name = fingerprintParse)]
pub fn fingerprint_parse(text: &str) -> Result<Vec<u8>, JsValue> {
    Fingerprint::parse(text.as_bytes())
        .map(|fingerprint| fingerprint.as_bytes().to_vec())
        .map_err(to_js)
}

/// The text form of a 32-byte SHA-256 digest.
#[wasm_bindgen(js_name = fingerprintFromDigest)]
pub fn fingerprint_from_digest(digest: &[u8]) -> Result<String, JsValue> {
    <[u8; 32]>::try_from(digest)
        .map(|digest| Fingerprint::from_digest(digest).to_string())
        .map_err(|_| type_error("a SHA-256 digest is 32 bytes"))
}
