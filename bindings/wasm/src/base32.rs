//! Crockford base32 text of 64- and 128-bit values.

use crate::error::coded_error;
use mintid::base32;
use wasm_bindgen::prelude::*;

/// 13 upper-case Crockford digits of a 64-bit value.
#[wasm_bindgen(js_name = base32EncodeU64)]
pub fn base32_encode_u64(value: u64) -> String {
    ascii(&base32::encode_u64(value))
}

/// The 64-bit value of 13 Crockford digits.
#[wasm_bindgen(js_name = base32DecodeU64)]
pub fn base32_decode_u64(text: &str) -> Result<u64, JsValue> {
    base32::decode_u64(text).map_err(|e| coded_error("base32.invalid", &e.to_string()))
}

fn ascii(digits: &[u8]) -> String {
    digits.iter().map(|&b| char::from(b)).collect()
}
