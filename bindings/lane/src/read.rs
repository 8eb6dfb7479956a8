//! Reading what a host packed: rows, an operation's outcome, an error class.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use mintid::store::{
    DbErrorClass, DriverError, OperationOutcome, StoreError, StoredResponse, Value, limits,
};

use crate::value;

/// Reads packed rows: `u32` row count, then per row a `u8` column count and
/// its values. Anything else is `store.unexpected_row`.
pub fn unpack_rows(packed: &[u8]) -> Result<Vec<Vec<Value>>, DriverError> {
    let mut reader = Reader(packed);
    let rows = reader.u32()?;
    let mut out = Vec::with_capacity(rows.min(64) as usize);
    for _ in 0..rows {
        let columns = reader.u8()?;
        let mut row = Vec::with_capacity(usize::from(columns));
        for _ in 0..columns {
            row.push(reader.value()?);
        }
        out.push(row);
    }
    reader.end(out)
}

/// Reads a packed outcome: `0` succeeded (content type, body), `1` failed
/// (retryable `u8`, message, optional response), `2` not a response (the
/// type's name), `3` raised (the error's text: retryable, the core's rule).
/// An error text is bytes that may not be UTF-8 (a host string with a lone
/// surrogate, e.g. Python's `surrogatepass`): the core makes it storable
/// (`limits::storable_text_from_bytes`), never the host.
pub fn unpack_outcome(packed: &[u8]) -> Result<OperationOutcome, DriverError> {
    let mut reader = Reader(packed);
    let outcome = match reader.u8()? {
        0 => OperationOutcome::Succeeded(reader.response()?),
        1 => {
            let retryable = reader.u8()? != 0;
            let message = reader.error_text()?;
            let response = match reader.u8()? {
                0 => None,
                _ => Some(reader.response()?),
            };
            OperationOutcome::Failed {
                message,
                retryable,
                response,
            }
        }
        2 => OperationOutcome::NotAResponse {
            type_name: reader.text()?,
        },
        3 => OperationOutcome::Raised {
            message: reader.error_text()?,
        },
        _ => return Err(malformed("outcome")),
    };
    reader.end(outcome)
}

/// The class a host's executor gave a failed query: 0 unique violation, 1
/// serialization, 2 connection lost, 3 constraint, 5 schema missing,
/// anything else other.
pub fn class_of(class: u8) -> DbErrorClass {
    match class {
        0 => DbErrorClass::UniqueViolation,
        1 => DbErrorClass::Serialization,
        2 => DbErrorClass::ConnectionLost,
        3 => DbErrorClass::Constraint,
        5 => DbErrorClass::SchemaMissing,
        _ => DbErrorClass::Other,
    }
}

pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl Reader<'_> {
    pub(crate) fn take(&mut self, count: usize) -> Result<&[u8], DriverError> {
        if self.0.len() < count {
            return Err(malformed("answer"));
        }
        let (head, rest) = self.0.split_at(count);
        self.0 = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DriverError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DriverError> {
        let mut word = [0; 4];
        word.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(word))
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, DriverError> {
        let length = self.u32()? as usize;
        Ok(self.take(length)?.to_vec())
    }

    /// An operation's error text, made storable whatever its bytes.
    pub(crate) fn error_text(&mut self) -> Result<String, DriverError> {
        let bytes = self.bytes()?;
        Ok(limits::storable_text_from_bytes(
            &bytes,
            limits::RECORD_ERROR_MAX_BYTES,
        ))
    }

    pub(crate) fn text(&mut self) -> Result<String, DriverError> {
        String::from_utf8(self.bytes()?).map_err(|_| malformed("text"))
    }

    pub(crate) fn response(&mut self) -> Result<StoredResponse, DriverError> {
        Ok(StoredResponse {
            content_type: self.text()?,
            body: self.bytes()?,
        })
    }

    fn value(&mut self) -> Result<Value, DriverError> {
        match self.u8()? {
            value::NULL => Ok(Value::Null),
            value::INT => {
                let mut word = [0; 8];
                word.copy_from_slice(self.take(8)?);
                Ok(Value::Int(i64::from_le_bytes(word)))
            }
            value::TEXT => Ok(Value::Text(self.text()?)),
            value::BYTES => Ok(Value::Bytes(self.bytes()?)),
            _ => Err(malformed("value")),
        }
    }

    pub(crate) fn end<T>(self, value: T) -> Result<T, DriverError> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(malformed("answer"))
        }
    }
}

pub(crate) fn malformed(what: &str) -> DriverError {
    DriverError::Store(StoreError::unreadable_answer(&format!(
        "the packed {what} is not in the lane's layout"
    )))
}
