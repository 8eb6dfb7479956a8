//! Core errors as JS `Error` objects carrying the core's stable `code`.

use alloc::string::ToString;
use core::fmt::Display;
use wasm_bindgen::JsValue;

/// A core error type: a stable dotted code and a one-line message.
pub(crate) trait CoreError: Display {
    /// The core's stable dotted code, e.g. `"uuid7.wrong_version"`.
    fn code(&self) -> &'static str;

    /// The zero-based byte offset of the problem in the input, when reported.
    fn position(&self) -> Option<usize> {
        None
    }

    /// The part of an idempotency key at fault, when reported.
    fn part(&self) -> Option<&'static str> {
        None
    }

    /// The name of the HTTP problem to answer with, when there is one.
    fn problem(&self) -> Option<&'static str> {
        None
    }
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

core_errors!(
    mintid::SnowflakeError,
    mintid::lease::LeaseError,
    mintid::outbox::OutboxError,
    mintid::segment::SegmentError,
    mintid::record::RecordError,
    mintid::uuid::UuidParseError,
    mintid::uuid7::Uuid7Error,
);

impl CoreError for mintid::FingerprintError {
    fn code(&self) -> &'static str {
        mintid::FingerprintError::code(self)
    }
    fn position(&self) -> Option<usize> {
        mintid::FingerprintError::position(self)
    }
}

impl CoreError for mintid::KeyError {
    fn code(&self) -> &'static str {
        mintid::KeyError::code(self)
    }
    fn position(&self) -> Option<usize> {
        mintid::KeyError::position(self)
    }
    fn part(&self) -> Option<&'static str> {
        mintid::KeyError::part(self).map(mintid::key::KeyPart::name)
    }
}

impl CoreError for mintid::request_id::RequestIdError {
    fn code(&self) -> &'static str {
        mintid::request_id::RequestIdError::code(self)
    }
    fn problem(&self) -> Option<&'static str> {
        mintid::request_id::RequestIdError::problem(self).map(mintid::record::Problem::name)
    }
}

impl CoreError for mintid::http::HttpError {
    fn code(&self) -> &'static str {
        mintid::http::HttpError::code(self)
    }
    fn position(&self) -> Option<usize> {
        mintid::http::HttpError::position(self)
    }
    fn problem(&self) -> Option<&'static str> {
        mintid::http::HttpError::problem(self).map(mintid::record::Problem::name)
    }
}

impl CoreError for mintid::store::DriverError {
    fn code(&self) -> &'static str {
        mintid::store::DriverError::code(self)
    }
    /// The class of the database error behind a store error, e.g. `connection_lost`.
    fn part(&self) -> Option<&'static str> {
        match self {
            mintid::store::DriverError::Store(error) => error.db_class().map(|c| c.as_str()),
            mintid::store::DriverError::Record(_)
            | mintid::store::DriverError::Lease(_)
            | mintid::store::DriverError::Segment(_)
            | mintid::store::DriverError::Outbox(_)
            | mintid::store::DriverError::Inbox(_)
            | mintid::store::DriverError::Transition(_) => None,
        }
    }
    fn problem(&self) -> Option<&'static str> {
        mintid::store::DriverError::problem(self).map(mintid::record::Problem::name)
    }
}

/// A JS `Error` with the error's message and the properties `code`, and
/// `position` and `part` when the core reports them; the TypeScript wrapper
/// rethrows it as the package's `Error` subclass for that code.
pub(crate) fn to_js<E: CoreError>(error: E) -> JsValue {
    let js = js_sys::Error::new(&error.to_string());
    // Setting properties on a fresh `Error` object cannot fail.
    let _ = js_sys::Reflect::set(&js, &"code".into(), &error.code().into());
    if let Some(position) = error.position() {
        let _ = js_sys::Reflect::set(&js, &"position".into(), &(position as f64).into());
    }
    if let Some(part) = error.part() {
        let _ = js_sys::Reflect::set(&js, &"part".into(), &part.into());
    }
    if let Some(problem) = error.problem() {
        let _ = js_sys::Reflect::set(&js, &"problem".into(), &problem.into());
    }
    js.into()
}

/// A JS `TypeError`: an argument the TypeScript wrapper should have rejected.
pub(crate) fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// A JS `RangeError`: a count or size the wasm module cannot hold.
pub(crate) fn range_error(message: &str) -> JsValue {
    js_sys::RangeError::new(message).into()
}
