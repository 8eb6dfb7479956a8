//! Packing: lengths, texts, values, failures.

use alloc::vec::Vec;

use mintid::store::Value;

use crate::{Refusal, tag, value};

/// Appends a `u32` count or length. Every one fits: a statement has few
/// parameters and a value is bounded by the schema's limits (a response
/// body is at most 1 MiB).
pub(crate) fn put_u32(out: &mut Vec<u8>, length: usize) {
    out.extend_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_le_bytes());
}

pub(crate) fn put_u64(out: &mut Vec<u8>, number: u64) {
    out.extend_from_slice(&number.to_le_bytes());
}

/// Appends bytes or a text: a `u32` length, then the bytes.
pub(crate) fn put_bytes<B: AsRef<[u8]>>(out: &mut Vec<u8>, bytes: B) {
    let bytes = bytes.as_ref();
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// `0`, or `1` and what `put` appends.
pub(crate) fn put_optional<T>(
    out: &mut Vec<u8>,
    item: Option<T>,
    put: impl FnOnce(&mut Vec<u8>, T),
) {
    match item {
        None => out.push(0),
        Some(item) => {
            out.push(1);
            put(out, item);
        }
    }
}

/// A `u32` count, then each item as `put` appends it.
pub(crate) fn put_list<T>(
    out: &mut Vec<u8>,
    items: impl ExactSizeIterator<Item = T>,
    mut put: impl FnMut(&mut Vec<u8>, T),
) {
    put_u32(out, items.len());
    for item in items {
        put(out, item);
    }
}

/// Appends `value`: its tag, then an `i64` or a length and bytes.
pub(crate) fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(value::NULL),
        Value::Int(int) => {
            out.push(value::INT);
            out.extend_from_slice(&int.to_le_bytes());
        }
        Value::Text(text) => {
            out.push(value::TEXT);
            put_bytes(out, text);
        }
        Value::Bytes(bytes) => {
            out.push(value::BYTES);
            put_bytes(out, bytes);
        }
    }
}

/// Packs a failure into `out` (cleared first): `FAIL`, then code, detail,
/// optional part, optional position, optional problem, concern.
pub fn pack_error<E: Refusal>(out: &mut Vec<u8>, error: &E) {
    let fields = error.fields();
    out.clear();
    out.push(tag::FAIL);
    put_bytes(out, fields.code);
    put_bytes(out, fields.detail);
    put_optional(out, fields.part, put_bytes);
    put_optional(out, fields.position, put_u64);
    put_optional(out, fields.problem, put_bytes);
    put_bytes(out, fields.concern);
}
