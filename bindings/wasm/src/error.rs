//! Core errors as JS `Error` objects carrying the core's stable `code`.

use core::fmt::Display;
use wasm_bindgen::JsValue;

/// A core error type: a stable dotted code and a one-line message.
pub(crate) trait CoreError: Display {
    /// The core's stable dotted code, e.g. `"uuid7.wrong_version"`.
    fn code(&self) -> &'static str;
}

macro_rules! core_errors {
    ($($error:ty),* $(,)?) => {
        $(impl CoreError for $error {
            fn code(&self) -> &'static str {
                <$error>::code(self)
            }
        })*
    };
}

core_errors!(mintid::uuid::UuidParseError, mintid::uuid7::Uuid7Error);

/// A JS `Error` with the error's message and a `code` property; the
/// TypeScript wrapper rethrows it as the package's `Error` subclass for that
/// code.
pub(crate) fn to_js<E: CoreError>(error: E) -> JsValue {
    coded_error(error.code(), &error.to_string())
}

/// A JS `Error` with `message` and a `code` property.
pub(crate) fn coded_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh `Error` object cannot fail.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

/// A JS `TypeError`: an argument the TypeScript wrapper should have rejected.
pub(crate) fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A JS `RangeError`: a count or size the wasm module cannot hold.
pub(crate) fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}
