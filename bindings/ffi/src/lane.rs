//! The lane: plain C entry points for the hot path of a request, for hosts
//! whose binding pays per call: the record driver (its steps, answers and
//! outcomes as one packed byte string each) and a key's canonical text.
//!
//! uniffi's Python pays about 5 µs for every buffer it allocates or frees
//! and lifts every value of an enum through interpreted code, so a request
//! through the uniffi objects cost tens of calls and objects; through the
//! lane it is one `ctypes` call per step, with the key, digest and rows
//! passed as pointers and the step read from the driver's own buffer. The
//! layout is in `docs/spec.md`, "The record lane"; what each step means is
//! [`core::RecordStep`]'s, unchanged. Every entry point catches a panic
//! (`internal.panic`): nothing unwinds across the boundary.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mintid::store as core;

use crate::error::MintidError;
use crate::store::RecordDrivers;

/// The tag of a packed step.
mod tag {
    pub const RUN: u8 = 1;
    pub const PAUSE: u8 = 2;
    pub const EXECUTE: u8 = 3;
    pub const DONE: u8 = 4;
    pub const FAIL: u8 = 5;
}

/// The tag of a packed value.
mod value {
    pub const NULL: u8 = 0;
    pub const INT: u8 = 1;
    pub const TEXT: u8 = 2;
    pub const BYTES: u8 = 3;
}

/// The tag of a packed [`core::Finished`].
mod finished {
    pub const EXECUTED: u8 = 0;
    pub const OPERATION_FAILED: u8 = 1;
    pub const REPLAY: u8 = 2;
    pub const IN_PROGRESS: u8 = 3;
    pub const FINGERPRINT_MISMATCH: u8 = 4;
    pub const KEY_TOO_OLD: u8 = 5;
}

fn put_u32(out: &mut Vec<u8>, length: usize) {
    // Every packed length fits: a statement has few parameters and a value
    // is bounded by the schema's limits (a response body is at most 1 MiB).
    out.extend_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_value(out: &mut Vec<u8>, value: &core::Value) {
    match value {
        core::Value::Null => out.push(value::NULL),
        core::Value::Int(int) => {
            out.push(value::INT);
            out.extend_from_slice(&int.to_le_bytes());
        }
        core::Value::Text(text) => {
            out.push(value::TEXT);
            put_bytes(out, text.as_bytes());
        }
        core::Value::Bytes(bytes) => {
            out.push(value::BYTES);
            put_bytes(out, bytes);
        }
    }
}

fn put_optional(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => out.push(0),
        Some(bytes) => {
            out.push(1);
            put_bytes(out, bytes);
        }
    }
}

fn put_finished(out: &mut Vec<u8>, done: core::Finished) {
    match done {
        core::Finished::Executed => out.push(finished::EXECUTED),
        core::Finished::OperationFailed { stored } => {
            out.extend_from_slice(&[finished::OPERATION_FAILED, u8::from(stored)]);
        }
        core::Finished::Replay {
            outcome,
            response,
            error,
        } => {
            let succeeded = matches!(outcome, mintid::record::Outcome::Succeeded);
            out.extend_from_slice(&[finished::REPLAY, u8::from(!succeeded)]);
            match response {
                None => out.push(0),
                Some(response) => {
                    out.push(1);
                    put_bytes(out, response.content_type.as_bytes());
                    put_bytes(out, &response.body);
                }
            }
            put_optional(out, error.as_deref().map(str::as_bytes));
        }
        core::Finished::InProgress { retry_after_millis } => {
            out.push(finished::IN_PROGRESS);
            out.extend_from_slice(&retry_after_millis.to_le_bytes());
        }
        core::Finished::FingerprintMismatch => out.push(finished::FINGERPRINT_MISMATCH),
        core::Finished::KeyTooOld => out.push(finished::KEY_TOO_OLD),
    }
}

/// A step packed (a `Fail` is the call's error).
fn pack(step: core::RecordStep) -> Result<Vec<u8>, MintidError> {
    let mut out = Vec::with_capacity(128);
    match step {
        core::Step::Run(query) => {
            out.push(tag::RUN);
            out.push(u8::try_from(query.name.len()).unwrap_or(u8::MAX));
            out.extend_from_slice(query.name.as_bytes());
            out.push(u8::try_from(query.params.len()).unwrap_or(u8::MAX));
            for param in &query.params {
                put_value(&mut out, param);
            }
        }
        core::Step::Pause { millis } => {
            out.push(tag::PAUSE);
            out.extend_from_slice(&millis.to_le_bytes());
        }
        core::Step::Yield(core::RecordYield::Execute(held)) => {
            out.push(tag::EXECUTE);
            out.extend_from_slice(&held.token.to_le_bytes());
            out.extend_from_slice(&held.created_millis.to_le_bytes());
            out.extend_from_slice(&held.lease_deadline_millis.to_le_bytes());
            let every = held
                .renew_every_millis
                .and_then(|every| i64::try_from(every).ok())
                .unwrap_or(-1);
            out.extend_from_slice(&every.to_le_bytes());
        }
        core::Step::Yield(core::RecordYield::Done(done)) => {
            out.push(tag::DONE);
            put_finished(&mut out, done);
        }
        core::Step::Fail(error) => return Err(error.into()),
        core::Step::Begin { .. } | core::Step::Commit | core::Step::Rollback => {
            return Err(MintidError::argument(
                "argument.internal",
                "the record driver asked for a transaction step it never asks for",
            ));
        }
    }
    Ok(out)
}

/// Reads packed rows: `u32` row count, then per row a `u8` column count and
/// its values. Anything else is `store.unexpected_row`.
fn unpack_rows(packed: &[u8]) -> Result<Vec<Vec<core::Value>>, MintidError> {
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
fn unpack_outcome(packed: &[u8]) -> Result<core::OperationOutcome, MintidError> {
    let mut reader = Reader(packed);
    let outcome = match reader.u8()? {
        0 => core::OperationOutcome::Succeeded(reader.response()?),
        1 => {
            let retryable = reader.u8()? != 0;
            let message = reader.text()?;
            let response = match reader.u8()? {
                0 => None,
                _ => Some(reader.response()?),
            };
            core::OperationOutcome::Failed {
                message,
                retryable,
                response,
            }
        }
        2 => core::OperationOutcome::NotAResponse {
            type_name: reader.text()?,
        },
        3 => core::OperationOutcome::Raised {
            message: reader.text()?,
        },
        _ => return Err(malformed("outcome")),
    };
    reader.end(outcome)
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Result<&[u8], MintidError> {
        if self.0.len() < count {
            return Err(malformed("answer"));
        }
        let (head, rest) = self.0.split_at(count);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, MintidError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, MintidError> {
        let mut word = [0; 4];
        word.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(word))
    }

    fn bytes(&mut self) -> Result<Vec<u8>, MintidError> {
        let length = self.u32()? as usize;
        Ok(self.take(length)?.to_vec())
    }

    fn text(&mut self) -> Result<String, MintidError> {
        String::from_utf8(self.bytes()?).map_err(|_| malformed("text"))
    }

    fn response(&mut self) -> Result<core::StoredResponse, MintidError> {
        Ok(core::StoredResponse {
            content_type: self.text()?,
            body: self.bytes()?,
        })
    }

    fn value(&mut self) -> Result<core::Value, MintidError> {
        match self.u8()? {
            value::NULL => Ok(core::Value::Null),
            value::INT => {
                let mut word = [0; 8];
                word.copy_from_slice(self.take(8)?);
                Ok(core::Value::Int(i64::from_le_bytes(word)))
            }
            value::TEXT => Ok(core::Value::Text(self.text()?)),
            value::BYTES => Ok(core::Value::Bytes(self.bytes()?)),
            _ => Err(malformed("value")),
        }
    }

    fn end<T>(self, value: T) -> Result<T, MintidError> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(malformed("answer"))
        }
    }
}

fn malformed(what: &str) -> MintidError {
    core::DriverError::Store(core::StoreError::unreadable_answer(&format!(
        "the packed {what} is not in the lane's layout"
    )))
    .into()
}

/// An error packed: `FAIL`, then code, detail, part, position, problem,
/// concern.
fn pack_error(out: &mut Vec<u8>, error: &MintidError) {
    out.clear();
    out.push(tag::FAIL);
    put_bytes(out, error.code().as_bytes());
    put_bytes(out, error.detail().as_bytes());
    let (part, position, problem) = error.place();
    put_optional(out, part.map(str::as_bytes));
    match position {
        None => out.push(0),
        Some(position) => {
            out.push(1);
            out.extend_from_slice(&position.to_le_bytes());
        }
    }
    put_optional(out, problem.map(str::as_bytes));
    put_bytes(out, error.concern().as_bytes());
}

/// The manifest and policy every driver of one store shares.
#[derive(Debug)]
pub struct Lane {
    manifest: core::Manifest,
    policy: mintid::record::RecordPolicy,
}

/// One request's driver and the buffer its last step is packed in.
#[derive(Debug)]
pub struct LaneDriver {
    /// The driver, or none when the core refused to make it.
    driver: Option<core::RecordDriver>,
    /// Why the core refused to make it.
    refused: MintidError,
    step: Vec<u8>,
}

impl LaneDriver {
    /// Packs `step` (or the error) into this driver's buffer.
    fn keep(&mut self, step: Result<core::RecordStep, MintidError>) {
        match step.and_then(pack) {
            Ok(packed) => self.step = packed,
            Err(error) => pack_error(&mut self.step, &error),
        }
    }
}

#[uniffi::export]
impl RecordDrivers {
    /// The record lane of these drivers: a handle for the C entry points
    /// `mintid_lane_*` (`docs/spec.md`, "The record lane"), freed with
    /// `mintid_lane_free`.
    pub fn lane(self: Arc<Self>) -> u64 {
        let lane = Box::new(Lane {
            manifest: self.manifest,
            policy: self.policy,
        });
        Box::into_raw(lane) as u64
    }
}

/// Copies `packed` to `out` when it fits in `cap` bytes; its length either way.
///
/// # Safety
/// `out` points to `cap` writable bytes (or is null with `cap` 0).
unsafe fn copy_out(packed: &[u8], out: *mut u8, cap: usize) -> usize {
    if packed.len() <= cap && !out.is_null() {
        // SAFETY: the caller's contract; `packed` is not inside `out`.
        unsafe { std::ptr::copy_nonoverlapping(packed.as_ptr(), out, packed.len()) };
    }
    packed.len()
}

/// Runs `work` on the driver behind `driver`, catching a panic, keeps the
/// packed step and copies it out as [`copy_out`] does.
///
/// # Safety
/// `driver` is a pointer from [`mintid_lane_record_new`] not yet freed,
/// used by one thread at a time; `out` as for [`copy_out`].
unsafe fn on_driver(
    driver: *mut LaneDriver,
    out: *mut u8,
    cap: usize,
    work: impl FnOnce(&mut core::RecordDriver) -> Result<core::RecordStep, MintidError>,
) -> usize {
    // SAFETY: the caller's contract.
    let lane_driver = unsafe { &mut *driver };
    let result = catch_unwind(AssertUnwindSafe(|| match lane_driver.driver.as_mut() {
        Some(driver) => work(driver),
        None => Err(lane_driver.refused.clone()),
    }))
    .unwrap_or_else(|_| Err(panicked()));
    lane_driver.keep(result);
    // SAFETY: the caller's contract.
    unsafe { copy_out(&lane_driver.step, out, cap) }
}

fn panicked() -> MintidError {
    MintidError::argument(
        "internal.panic",
        "the core panicked (a bug: please report it)",
    )
}

/// Reads `length` bytes at `data` (none for a null pointer).
///
/// # Safety
/// `data` points to `length` readable bytes, or is null with `length` 0.
unsafe fn slice<'a>(data: *const u8, length: usize) -> &'a [u8] {
    if data.is_null() || length == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(data, length) }
    }
}

/// Makes the driver of one request (free it with
/// [`mintid_lane_record_free`]): `way` 0 run once, 1 same transaction, 2
/// lease; the key's canonical text; the 32-byte digest; the key's creation
/// time (negative: none). A key or digest the core refuses makes a driver
/// whose every step is that error.
///
/// # Safety
/// `lane` comes from `RecordDrivers.lane()` and is not freed; `key` and
/// `fingerprint` point to their lengths of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_new(
    lane: u64,
    way: u8,
    key: *const u8,
    key_len: usize,
    fingerprint: *const u8,
    fingerprint_len: usize,
    key_created_millis: i64,
) -> *mut LaneDriver {
    // SAFETY: the caller's contract.
    let (lane, key, fingerprint) = unsafe {
        (
            &*(lane as *const Lane),
            slice(key, key_len),
            slice(fingerprint, fingerprint_len),
        )
    };
    let made = catch_unwind(|| {
        let key = mintid::key::IdempotencyKey::parse(key)?;
        let digest = crate::error::fixed_bytes::<32>("a fingerprint", fingerprint)?;
        let mut incoming =
            mintid::record::Incoming::new(mintid::fingerprint::Fingerprint::from_digest(digest));
        if let Ok(created) = u64::try_from(key_created_millis) {
            incoming = incoming.with_key_created_millis(created);
        }
        let way = match way {
            0 => core::Way::RunOnce,
            1 => core::Way::SameTransaction,
            2 => core::Way::Lease,
            _ => return Err(MintidError::argument("argument.internal", "no such way in")),
        };
        Ok(core::RecordDriver::new(
            lane.manifest,
            lane.policy,
            way,
            &key,
            incoming,
        ))
    })
    .unwrap_or_else(|_| Err(panicked()));
    let (driver, refused) = match made {
        Ok(driver) => (Some(driver), never_refused()),
        Err(error) => (None, error),
    };
    Box::into_raw(Box::new(LaneDriver {
        driver,
        refused,
        step: Vec::new(),
    }))
}

fn never_refused() -> MintidError {
    MintidError::argument("argument.internal", "this driver was made")
}

/// The first step, at `now_millis`, packed into `out` (when it fits in `cap`
/// bytes: otherwise [`mintid_lane_record_step`] copies it); its length. The
/// other `mintid_lane_record_*` steps answer the same way.
///
/// # Safety
/// As for `on_driver`: a live driver used by one thread at a time, `out`
/// pointing to `cap` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_start(
    driver: *mut LaneDriver,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe { on_driver(driver, out, cap, |driver| Ok(driver.start(now_millis))) }
}

/// Copies the last step again (after a step longer than the buffer).
///
/// # Safety
/// As for [`mintid_lane_record_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_step(
    driver: *mut LaneDriver,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe { copy_out(&(*driver).step, out, cap) }
}

/// Pushes an affected-row count; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_push_affected(
    driver: *mut LaneDriver,
    count: u64,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |driver| {
            Ok(driver.push(core::Answer::Affected(count), now_millis))
        })
    }
}

/// Pushes packed rows; the next step (`store.unexpected_row` for rows not
/// in the layout).
///
/// # Safety
/// As for [`mintid_lane_record_start`]; `rows` points to `rows_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_push_rows(
    driver: *mut LaneDriver,
    rows: *const u8,
    rows_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let rows = unsafe { slice(rows, rows_len) };
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |driver| {
            Ok(driver.push(core::Answer::Rows(unpack_rows(rows)?), now_millis))
        })
    }
}

/// Pushes a failed query: the executor's class (0 unique violation, 1
/// serialization, 2 connection lost, 3 constraint, 4 other) and the
/// driver's message; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`]; `message` points to `message_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_push_failed(
    driver: *mut LaneDriver,
    class: u8,
    message: *const u8,
    message_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let message = String::from_utf8_lossy(unsafe { slice(message, message_len) }).into_owned();
    let class = match class {
        0 => core::DbErrorClass::UniqueViolation,
        1 => core::DbErrorClass::Serialization,
        2 => core::DbErrorClass::ConnectionLost,
        3 => core::DbErrorClass::Constraint,
        _ => core::DbErrorClass::Other,
    };
    let error = core::DbError { class, message };
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |driver| {
            Ok(driver.push(core::Answer::Failed(error), now_millis))
        })
    }
}

/// Continues after a `Pause`; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_resume(
    driver: *mut LaneDriver,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe { on_driver(driver, out, cap, |driver| Ok(driver.resume())) }
}

/// Finishes with the packed outcome of the operation; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`]; `outcome` points to `outcome_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_finish(
    driver: *mut LaneDriver,
    outcome: *const u8,
    outcome_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let outcome = unsafe { slice(outcome, outcome_len) };
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |driver| {
            Ok(driver.finish(unpack_outcome(outcome)?, now_millis))
        })
    }
}

/// Frees a driver (null: nothing).
///
/// # Safety
/// `driver` comes from [`mintid_lane_record_new`], once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_free(driver: *mut LaneDriver) {
    if !driver.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(driver) });
    }
}

/// Frees a lane (0: nothing).
///
/// # Safety
/// `lane` comes from `RecordDrivers.lane()`, once, and no driver call on it
/// is running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_free(lane: u64) {
    if lane != 0 {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(lane as *mut Lane) });
    }
}

/// The canonical text of the key `kind`, `scope`, `id` (each UTF-8 of its
/// length; a part that is not is refused as the core refuses U+FFFD),
/// packed: `0` and the text's bytes, or a `FAIL` (`key.*`), copied as
/// [`mintid_lane_record_start`] copies a step (too long for `cap`: call
/// again with a larger buffer); its length.
///
/// # Safety
/// Each part points to its length of readable bytes; `out` to `cap`
/// writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_key_text(
    kind: *const u8,
    kind_len: usize,
    scope: *const u8,
    scope_len: usize,
    id: *const u8,
    id_len: usize,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let parts = unsafe {
        [
            slice(kind, kind_len),
            slice(scope, scope_len),
            slice(id, id_len),
        ]
    };
    let made = catch_unwind(|| {
        // A part that is not UTF-8 reads with U+FFFD where it breaks: the
        // core refuses that character, and says which part and where.
        let [kind, scope, id] = parts.map(String::from_utf8_lossy);
        Ok(mintid::key::IdempotencyKey::new(&kind, &scope, &id)?.to_string())
    })
    .unwrap_or_else(|_| Err(panicked()));
    let mut packed = Vec::new();
    match made {
        Ok(text) => {
            packed.push(0);
            packed.extend_from_slice(text.as_bytes());
        }
        Err(error) => pack_error(&mut packed, &error),
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(&packed, out, cap) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane() -> u64 {
        Box::into_raw(Box::new(Lane {
            manifest: core::Manifest::new(core::Dialect::Postgres, core::Placeholder::Numbered),
            policy: mintid::record::RecordPolicy::default(),
        })) as u64
    }

    /// Copies a step out through a buffer of `cap` bytes, again when too short.
    fn out(
        cap: usize,
        call: impl FnOnce(*mut u8, usize) -> usize,
        driver: *mut LaneDriver,
    ) -> Vec<u8> {
        let mut buffer = vec![0; cap];
        let length = call(buffer.as_mut_ptr(), cap);
        if length > cap {
            buffer = vec![0; length];
            // SAFETY: a live driver and a buffer of `length` bytes.
            assert_eq!(
                unsafe { mintid_lane_record_step(driver, buffer.as_mut_ptr(), length) },
                length
            );
        }
        buffer.truncate(length);
        buffer
    }

    fn new(lane: u64, key: &[u8], digest: &[u8]) -> *mut LaneDriver {
        // SAFETY: valid pointers.
        unsafe {
            mintid_lane_record_new(
                lane,
                0,
                key.as_ptr(),
                key.len(),
                digest.as_ptr(),
                digest.len(),
                -1,
            )
        }
    }

    fn code_of(packed: &[u8]) -> String {
        assert_eq!(packed[0], tag::FAIL, "not a failure: {packed:?}");
        let mut reader = Reader(&packed[1..]);
        reader.text().expect("a packed code")
    }

    #[test]
    fn a_fresh_key_runs_claim_then_complete_and_ends_executed() {
        let lane = lane();
        let driver = new(lane, b"order.create:tenant-1:abc", &[7; 32]);
        // SAFETY (every call below): a live driver and buffers of their lengths.
        let first = out(
            8,
            |o, c| unsafe { mintid_lane_record_start(driver, 1_000, o, c) },
            driver,
        );
        assert_eq!(first[0], tag::RUN);
        assert_eq!(&first[2..2 + usize::from(first[1])], b"claim");
        let mut rows = Vec::from(1u32.to_le_bytes());
        rows.push(1);
        rows.push(value::INT);
        rows.extend_from_slice(&1i64.to_le_bytes());
        let execute = out(
            64,
            |o, c| unsafe {
                mintid_lane_record_push_rows(driver, rows.as_ptr(), rows.len(), 1_001, o, c)
            },
            driver,
        );
        assert_eq!(execute[0], tag::EXECUTE);
        assert_eq!(execute[1..9], 1u64.to_le_bytes(), "the claim's token");
        let mut outcome = vec![0];
        for part in [&b"application/json"[..], b"{}"] {
            outcome.extend_from_slice(&u32::try_from(part.len()).unwrap().to_le_bytes());
            outcome.extend_from_slice(part);
        }
        let complete = out(
            512,
            |o, c| unsafe {
                mintid_lane_record_finish(driver, outcome.as_ptr(), outcome.len(), 1_002, o, c)
            },
            driver,
        );
        assert_eq!(&complete[2..2 + usize::from(complete[1])], b"complete");
        let done = out(
            512,
            |o, c| unsafe { mintid_lane_record_push_affected(driver, 1, 1_003, o, c) },
            driver,
        );
        assert_eq!(done, [tag::DONE, finished::EXECUTED]);
        // SAFETY: made once, freed once.
        unsafe {
            mintid_lane_record_free(driver);
            mintid_lane_free(lane);
        }
    }

    #[test]
    fn a_bad_key_or_digest_is_a_typed_failure_at_every_step() {
        let lane = lane();
        let driver = new(lane, b"no colons", &[7; 32]);
        // SAFETY (every call below): a live driver and buffers of their lengths.
        let first = out(
            512,
            |o, c| unsafe { mintid_lane_record_start(driver, 1, o, c) },
            driver,
        );
        assert!(code_of(&first).starts_with("key."), "{first:?}");
        let again = out(
            512,
            |o, c| unsafe { mintid_lane_record_resume(driver, o, c) },
            driver,
        );
        assert_eq!(code_of(&again), code_of(&first));
        // SAFETY: made once, freed once.
        unsafe { mintid_lane_record_free(driver) };
        let driver = new(lane, b"order.create:tenant-1:abc", &[7; 31]);
        let first = out(
            512,
            |o, c| unsafe { mintid_lane_record_start(driver, 1, o, c) },
            driver,
        );
        assert_eq!(code_of(&first), "argument.byte_length");
        // SAFETY: made once, freed once.
        unsafe {
            mintid_lane_record_free(driver);
            mintid_lane_free(lane);
        }
    }

    #[test]
    fn rows_or_an_outcome_out_of_layout_are_store_unexpected_row() {
        let lane = lane();
        let driver = new(lane, b"order.create:tenant-1:abc", &[7; 32]);
        // SAFETY (every call below): a live driver and buffers of their lengths.
        out(
            512,
            |o, c| unsafe { mintid_lane_record_start(driver, 1, o, c) },
            driver,
        );
        for rows in [&[1u8, 0, 0][..], &[1, 0, 0, 0, 1, 9], &[0, 0, 0, 0, 0]] {
            let step = out(
                512,
                |o, c| unsafe {
                    mintid_lane_record_push_rows(driver, rows.as_ptr(), rows.len(), 1_001, o, c)
                },
                driver,
            );
            assert_eq!(code_of(&step), "store.unexpected_row", "{rows:?}");
        }
        assert!(
            matches!(unpack_outcome(&[9]), Err(error) if error.code() == "store.unexpected_row")
        );
        assert!(
            matches!(unpack_outcome(&[2, 1, 0, 0, 0, 0xff]), Err(error) if error.code() == "store.unexpected_row")
        );
        // SAFETY: made once, freed once.
        unsafe {
            mintid_lane_record_free(driver);
            mintid_lane_free(lane);
        }
    }

    fn key_text(kind: &[u8], scope: &[u8], id: &[u8]) -> Vec<u8> {
        let mut buffer = vec![0; 8];
        let call = |buffer: &mut Vec<u8>| {
            // SAFETY: valid pointers and a buffer of its length.
            unsafe {
                mintid_lane_key_text(
                    kind.as_ptr(),
                    kind.len(),
                    scope.as_ptr(),
                    scope.len(),
                    id.as_ptr(),
                    id.len(),
                    buffer.as_mut_ptr(),
                    buffer.len(),
                )
            }
        };
        let length = call(&mut buffer);
        buffer.resize(length, 0);
        assert_eq!(call(&mut buffer), length);
        buffer
    }

    #[test]
    fn a_key_text_is_the_cores_or_its_typed_error() {
        assert_eq!(
            key_text(b"order.create", b"t:1", b"abc"),
            b"\0order.create:t%3A1:abc"
        );
        assert_eq!(
            code_of(&key_text(b"Order", b"t", b"abc")),
            "key.invalid_character"
        );
        assert_eq!(
            code_of(&key_text(b"order", b"t", &[b'a', 0xff])),
            "key.invalid_character"
        );
    }

    #[test]
    fn values_and_failures_pack_as_the_spec_says() {
        let mut packed = Vec::new();
        put_value(&mut packed, &core::Value::Text("é".into()));
        assert_eq!(packed, [value::TEXT, 2, 0, 0, 0, 0xc3, 0xa9]);
        let error = MintidError::argument("argument.internal", "why");
        pack_error(&mut packed, &error);
        assert_eq!(code_of(&packed), "argument.internal");
        assert_eq!(packed.len(), 1 + 4 + 17 + 4 + 3 + 1 + 1 + 1 + 4 + 8);
    }
}
