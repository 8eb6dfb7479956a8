//! Packing: steps out of a driver, failures, values.

use alloc::vec::Vec;

use mintid::store::{DriverError, Step, StoreError, Value};

use crate::{Refusal, tag, value};

pub(crate) fn put_u32(out: &mut Vec<u8>, length: usize) {
    // Every packed length fits: a statement has few parameters and a value
    // is bounded by the schema's limits (a response body is at most 1 MiB).
    out.extend_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_le_bytes());
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

pub(crate) fn put_optional(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => out.push(0),
        Some(bytes) => {
            out.push(1);
            put_bytes(out, bytes);
        }
    }
}

/// Appends `value`: its tag, then an `i64` or a `u32` length and bytes.
pub fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(value::NULL),
        Value::Int(int) => {
            out.push(value::INT);
            out.extend_from_slice(&int.to_le_bytes());
        }
        Value::Text(text) => {
            out.push(value::TEXT);
            put_bytes(out, text.as_bytes());
        }
        Value::Bytes(bytes) => {
            out.push(value::BYTES);
            put_bytes(out, bytes);
        }
    }
}

/// Packs `step` into `out` (cleared first), its yields by `yielded`; a
/// `Fail` packs as [`pack_error`]. A driver that never asks for a
/// transaction step and asks for one is `store.unexpected_row` (a bug
/// between the core and the lane).
pub(crate) fn pack_step<Y, E: Refusal>(
    out: &mut Vec<u8>,
    step: Step<Y>,
    yielded: impl FnOnce(&mut Vec<u8>, Y),
) {
    out.clear();
    match step {
        Step::Run(query) => {
            out.push(tag::RUN);
            out.push(u8::try_from(query.name.len()).unwrap_or(u8::MAX));
            out.extend_from_slice(query.name.as_bytes());
            out.push(u8::try_from(query.params.len()).unwrap_or(u8::MAX));
            for param in &query.params {
                put_value(out, param);
            }
        }
        Step::Pause { millis } => {
            out.push(tag::PAUSE);
            out.extend_from_slice(&millis.to_le_bytes());
        }
        Step::Yield(yield_) => yielded(out, yield_),
        Step::Fail(error) => pack_error(out, &E::from(error)),
        Step::Begin { .. } | Step::Commit | Step::Rollback => pack_error(
            out,
            &E::from(DriverError::Store(StoreError::unexpected_step(
                "a transaction step",
            ))),
        ),
    }
}

/// Packs a failure into `out` (cleared first): `FAIL`, then code, detail,
/// part, position, problem, concern.
pub fn pack_error<E: Refusal>(out: &mut Vec<u8>, error: &E) {
    let fields = error.fields();
    out.clear();
    out.push(tag::FAIL);
    put_bytes(out, fields.code.as_bytes());
    put_bytes(out, fields.detail.as_bytes());
    put_optional(out, fields.part.map(str::as_bytes));
    match fields.position {
        None => out.push(0),
        Some(position) => {
            out.push(1);
            out.extend_from_slice(&position.to_le_bytes());
        }
    }
    put_optional(out, fields.problem.map(str::as_bytes));
    put_bytes(out, fields.concern.as_bytes());
}
