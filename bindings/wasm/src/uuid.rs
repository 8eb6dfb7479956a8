//! UUIDs of any version: the four text forms, version, variant, version 8.
//!
//! A UUID crosses the boundary as its 16 bytes (a `Uint8Array`).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use mintid::uuid::{TextForm, Uuid};
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};

/// The 16 bytes of a UUID, or a `TypeError` for any other length.
pub(crate) fn uuid_bytes(bytes: &[u8]) -> Result<[u8; 16], JsValue> {
    <[u8; 16]>::try_from(bytes)
        .map_err(|_| type_error(&format!("a UUID is 16 bytes, got {}", bytes.len())))
}

/// The text form named `form`: `hyphenated`, `simple`, `urn` or `base32`.
pub(crate) fn text_form(form: &str) -> Result<TextForm, JsValue> {
    match form {
        "hyphenated" => Ok(TextForm::Hyphenated),
        "simple" => Ok(TextForm::Simple),
        "urn" => Ok(TextForm::Urn),
        "base32" => Ok(TextForm::Base32),
        other => Err(type_error(&format!(
            "form must be \"hyphenated\", \"simple\", \"urn\" or \"base32\", got \"{other}\""
        ))),
    }
}

/// The bytes of a UUID in any of the four text forms.
#[wasm_bindgen(js_name = uuidParse)]
pub fn uuid_parse(text: &str) -> Result<Vec<u8>, JsValue> {
    Uuid::parse(text)
        .map(|uuid| uuid.as_bytes().to_vec())
        .map_err(to_js)
}

/// The UUID in text form `form`.
#[wasm_bindgen(js_name = uuidFormat)]
pub fn uuid_format(bytes: &[u8], form: &str) -> Result<String, JsValue> {
    let uuid = Uuid::from_bytes(uuid_bytes(bytes)?);
    Ok(uuid.format(text_form(form)?).as_str().into())
}

/// The version field.
#[wasm_bindgen(js_name = uuidVersion)]
pub fn uuid_version(bytes: &[u8]) -> Result<u8, JsValue> {
    Ok(Uuid::from_bytes(uuid_bytes(bytes)?).version())
}

/// The variant's name: `ncs`, `rfc9562`, `microsoft` or `future`.
#[wasm_bindgen(js_name = uuidVariant)]
pub fn uuid_variant(bytes: &[u8]) -> Result<String, JsValue> {
    Ok(Uuid::from_bytes(uuid_bytes(bytes)?).variant().name().into())
}

/// A version 8 UUID from 16 custom bytes (version and variant set).
#[wasm_bindgen(js_name = uuidNewV8)]
pub fn uuid_new_v8(custom: &[u8]) -> Result<Vec<u8>, JsValue> {
    Ok(Uuid::new_v8(uuid_bytes(custom)?).as_bytes().to_vec())
}
