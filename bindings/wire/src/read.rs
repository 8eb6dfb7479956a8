//! Reading what a host packed: a little-endian cursor over one byte string.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use mintid::store::{DriverError, StoreError, Value};

use crate::value;

/// A cursor over packed bytes; every read past the end, and bytes left over
/// at [`end`](Reader::end), is `store.unexpected_row`.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader of `packed`, a packed `what` (named in its errors).
    pub(crate) fn new(packed: &'a [u8], what: &'static str) -> Self {
        Self { rest: packed, what }
    }

    pub(crate) fn take(&mut self, count: usize) -> Result<&'a [u8], DriverError> {
        if self.rest.len() < count {
            return Err(self.malformed());
        }
        let (head, rest) = self.rest.split_at(count);
        self.rest = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DriverError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn flag(&mut self) -> Result<bool, DriverError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.malformed()),
        }
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DriverError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64, DriverError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DriverError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// A `u32` length and that many bytes, borrowed.
    pub(crate) fn raw(&mut self) -> Result<&'a [u8], DriverError> {
        let length = self.u32()? as usize;
        self.take(length)
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, DriverError> {
        Ok(self.raw()?.to_vec())
    }

    pub(crate) fn text(&mut self) -> Result<String, DriverError> {
        String::from_utf8(self.bytes()?).map_err(|_| self.malformed())
    }

    /// `0`, or `1` and what `read` reads.
    pub(crate) fn optional<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, DriverError>,
    ) -> Result<Option<T>, DriverError> {
        if self.flag()? {
            read(self).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A `u32` count and that many of what `read` reads.
    pub(crate) fn list<T>(
        &mut self,
        mut read: impl FnMut(&mut Self) -> Result<T, DriverError>,
    ) -> Result<Vec<T>, DriverError> {
        let count = self.u32()? as usize;
        // Every item is at least one byte: a count past the bytes left is
        // malformed before anything is allocated for it.
        if count > self.rest.len() {
            return Err(self.malformed());
        }
        (0..count).map(|_| read(self)).collect()
    }

    pub(crate) fn value(&mut self) -> Result<Value, DriverError> {
        match self.u8()? {
            value::NULL => Ok(Value::Null),
            value::INT => Ok(Value::Int(i64::from_le_bytes(self.array()?))),
            value::TEXT => Ok(Value::Text(self.text()?)),
            value::BYTES => Ok(Value::Bytes(self.bytes()?)),
            _ => Err(self.malformed()),
        }
    }

    /// `value` when nothing is left over.
    pub(crate) fn end<T>(self, value: T) -> Result<T, DriverError> {
        if self.rest.is_empty() {
            Ok(value)
        } else {
            Err(self.malformed())
        }
    }

    pub(crate) fn malformed(&self) -> DriverError {
        malformed(self.what)
    }
}

/// `store.unexpected_row`: the packed `what` is not in the layout (a host's
/// codec bug, reported as a typed error).
pub(crate) fn malformed(what: &str) -> DriverError {
    DriverError::Store(StoreError::unreadable_answer(&format!(
        "not in the wire's layout: the packed {what}"
    )))
}
