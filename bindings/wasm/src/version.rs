//! The core's version, which the npm package reports beside its own.

use alloc::string::String;
use wasm_bindgen::prelude::wasm_bindgen;

/// The version of the `mintid` core crate this module was built from.
#[wasm_bindgen(js_name = coreVersion)]
pub fn core_version() -> String {
    mintid::VERSION.into()
}
