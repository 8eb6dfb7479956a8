//! Core errors as JS `Error` objects carrying the core's stable `code`.

use wasm_bindgen::JsValue;

/// A JS `Error` with `message` and a `code` property; the TypeScript wrapper
/// rethrows it as the package's `Error` subclass for that code.
pub(crate) fn js_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh `Error` object cannot fail.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}
