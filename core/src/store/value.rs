//! The values a query binds and a row holds, and a query to run.

use alloc::string::String;
use alloc::vec::Vec;

/// One SQL value: a parameter or a column of a row.
///
/// Integers are 64-bit signed (the schema's `BIGINT`); texts are UTF-8;
/// bytes stay bytes. A driver reads a text column that arrives as bytes
/// (MySQL's `VARBINARY`) as UTF-8 text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// SQL `NULL`.
    Null,
    /// A 64-bit integer.
    Int(i64),
    /// A text.
    Text(String),
    /// A byte string.
    Bytes(Vec<u8>),
}

impl Value {
    /// The value as an integer, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(value) => Some(*value),
            _ => None,
        }
    }

    /// The value as text: a text, or bytes that are UTF-8.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(text) => Some(text),
            Value::Bytes(bytes) => core::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The value as bytes: bytes, or a text's UTF-8 bytes.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(bytes) => Some(bytes),
            Value::Text(text) => Some(text.as_bytes()),
            _ => None,
        }
    }
}

/// A named query to run, with its parameters already in the order the
/// [`Manifest`](super::Manifest)'s statement binds them for the host's
/// [`Placeholder`](super::Placeholder) style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The query's name in `schema/<dialect>/queries.sql`, e.g. `claim`.
    pub name: &'static str,
    /// The values to bind, in order.
    pub params: Vec<Value>,
}
