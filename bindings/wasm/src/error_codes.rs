//! The core's registry of error codes, for the JS layer to check its typed
//! errors against.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use mintid::error_codes::ERROR_CODES;
use wasm_bindgen::prelude::*;

/// Every code of the core's registry, sorted by code, five strings each:
/// the code, its problem's name (empty when none), `"1"` when a host can meet
/// it (else `"0"`), its summary and its message template.
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<String> {
    ERROR_CODES
        .iter()
        .flat_map(|entry| {
            [
                entry.code.to_string(),
                entry
                    .problem
                    .map_or("", |problem| problem.name())
                    .to_string(),
                if entry.host { "1" } else { "0" }.to_string(),
                entry.summary.to_string(),
                entry.template.to_string(),
            ]
        })
        .collect()
}
