//! The light entry points: plain C functions for the ID hot paths, for a
//! host that opens the library without its generated bindings (Python's
//! `mintid._library`: the first ID of a program should not wait for
//! 16,000 lines of generated code to load).
//!
//! Each wraps the uniffi object's own method (same rules, same errors) and
//! answers in one crossing, into the host's buffer: `0`, the 8-byte freshness
//! bound of the batch (the last Unix millisecond at which its IDs may go
//! out, little-endian), then the IDs; or a packed refusal in the wire's
//! layout (`FAIL`, code, detail, ...: `docs/spec.md`, "The wire"). An answer
//! longer than the buffer is not copied and its length is returned: the host
//! asks again with a larger buffer (the IDs of the lost answer are never
//! issued again). Every entry point catches a panic (`internal.panic`).
//! Layout in `docs/spec.md`, "The light entry points".

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mintid::uuid::TextForm;

use crate::error::MintidError;
use crate::snowflake::{Snowflake, SnowflakeLayout};
use crate::uuid7::{Uuid7Generator, text_of};
use crate::wire::{copy_out, panicked, slice};

/// Packs what `work` made (after the `0` of an answer) or its refusal, and
/// copies it out as [`copy_out`] does.
///
/// # Safety
/// `out` points to `cap` writable bytes (or is null with `cap` 0).
unsafe fn answer(
    out: *mut u8,
    cap: usize,
    work: impl FnOnce(&mut Vec<u8>) -> Result<(), MintidError>,
) -> usize {
    let mut packed = vec![0u8];
    let made =
        catch_unwind(AssertUnwindSafe(|| work(&mut packed))).unwrap_or_else(|_| Err(panicked()));
    if let Err(error) = made {
        mintid_wire::pack_error(&mut packed, &error);
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(&packed, out, cap) }
}

/// [`answer`] with what `work` makes from the generator `generator` points
/// to.
///
/// # Safety
/// `generator` points to a live `G`; `out` to `cap` writable bytes.
unsafe fn answer_from<G>(
    generator: *const G,
    out: *mut u8,
    cap: usize,
    work: impl FnOnce(&G, &mut Vec<u8>) -> Result<(), MintidError>,
) -> usize {
    // SAFETY: the caller's contract.
    let generator = unsafe { &*generator };
    // SAFETY: the caller's contract.
    unsafe { answer(out, cap, |packed| work(generator, packed)) }
}

/// The freshness bound of the next UUIDv7 batch, then its IDs as `put`
/// appends their 16-byte forms.
fn put_uuid7_batch(
    generator: &Uuid7Generator,
    handed_out: u32,
    packed: &mut Vec<u8>,
    put: impl FnOnce(&mut Vec<u8>, &[u8]) -> Result<(), MintidError>,
) -> Result<(), MintidError> {
    let (fresh, bytes) = generator.batch(handed_out)?;
    packed.extend_from_slice(&fresh.to_le_bytes());
    put(packed, &bytes)
}

/// A UUIDv7 generator on the system clock and the per-thread random
/// generator with the core's default policy (`Uuid7Generator::new()`),
/// freed with [`mintid_light_uuid7_free`].
#[unsafe(no_mangle)]
pub extern "C" fn mintid_light_uuid7_new() -> *const Uuid7Generator {
    Arc::into_raw(Uuid7Generator::new(None, None, None))
}

/// The next batch for the host's ID buffer after one that handed out
/// `handed_out` IDs (`Uuid7Generator::next_batch`): after the freshness
/// bound, the IDs, 16 bytes each, most significant first.
///
/// # Safety
/// `generator` from [`mintid_light_uuid7_new`], not freed; `out` pointing to
/// `cap` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_uuid7_batch(
    generator: *const Uuid7Generator,
    handed_out: u32,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        answer_from(generator, out, cap, |generator, packed| {
            put_uuid7_batch(generator, handed_out, packed, |packed, bytes| {
                packed.extend_from_slice(bytes);
                Ok(())
            })
        })
    }
}

/// [`mintid_light_uuid7_batch`] in the hyphenated form
/// (`Uuid7Generator::next_text_batch`): after the freshness bound, the IDs
/// separated by single spaces.
///
/// # Safety
/// As for [`mintid_light_uuid7_batch`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_uuid7_text_batch(
    generator: *const Uuid7Generator,
    handed_out: u32,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        answer_from(generator, out, cap, |generator, packed| {
            put_uuid7_batch(generator, handed_out, packed, |packed, bytes| {
                packed.extend_from_slice(text_of(bytes, TextForm::Hyphenated)?.as_bytes());
                Ok(())
            })
        })
    }
}

/// `count` new IDs, 16 bytes each (`Uuid7Generator::next_bytes`), after a
/// freshness bound of 0 (the host hands them out at once).
///
/// # Safety
/// As for [`mintid_light_uuid7_batch`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_uuid7_bytes(
    generator: *const Uuid7Generator,
    count: u32,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        answer_from(generator, out, cap, |generator, packed| {
            packed.extend_from_slice(&0u64.to_le_bytes());
            packed.extend_from_slice(&generator.fill(count)?);
            Ok(())
        })
    }
}

/// The generator's rollback policy: its kind (0 fail, 1 wait, 2 logical),
/// and its bound in milliseconds written to `max_millis` (0 for fail).
///
/// # Safety
/// `generator` as for [`mintid_light_uuid7_batch`]; `max_millis` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_uuid7_policy(
    generator: *const Uuid7Generator,
    max_millis: *mut u64,
) -> u8 {
    use crate::rollback::RollbackPolicy;
    // SAFETY: the caller's contract.
    let (kind, bound) = match unsafe { &*generator }.policy() {
        RollbackPolicy::Fail => (0, 0),
        RollbackPolicy::Wait { max_millis } => (1, max_millis),
        RollbackPolicy::Logical { max_millis } => (2, max_millis),
    };
    // SAFETY: the caller's contract.
    unsafe { *max_millis = bound };
    kind
}

/// Frees a generator of [`mintid_light_uuid7_new`].
///
/// # Safety
/// `generator` from [`mintid_light_uuid7_new`], freed once, unused after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_uuid7_free(generator: *const Uuid7Generator) {
    // SAFETY: the caller's contract.
    drop(unsafe { Arc::from_raw(generator) });
}

/// A Snowflake generator for `worker` in the preset layout `preset` (UTF-8,
/// `preset_len` bytes) on the system clock with the core's default policies
/// (`Snowflake::new`), starting after the ID `after_id` when `has_after` is
/// not 0; freed with [`mintid_light_snowflake_free`]. A refusal returns null
/// and is packed into `out` as an answer is (its length into `*len`).
///
/// # Safety
/// `preset` points to `preset_len` readable bytes; `out` to `cap` writable
/// bytes; `len` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // a C signature: one argument per field
pub unsafe extern "C" fn mintid_light_snowflake_new(
    preset: *const u8,
    preset_len: usize,
    worker: u64,
    has_after: u8,
    after_id: u64,
    out: *mut u8,
    cap: usize,
    len: *mut usize,
) -> *const Snowflake {
    // SAFETY: the caller's contract.
    let name = String::from_utf8_lossy(unsafe { slice(preset, preset_len) }).into_owned();
    let mut made = None;
    // SAFETY: the caller's contract.
    let packed_len = unsafe {
        answer(out, cap, |_| {
            let layout = SnowflakeLayout::preset(name)?;
            let after = (has_after != 0).then_some(after_id);
            made = Some(Snowflake::new(
                layout, worker, None, None, after, None, None,
            )?);
            Ok(())
        })
    };
    // SAFETY: the caller's contract.
    unsafe { *len = packed_len };
    made.map_or(std::ptr::null(), Arc::into_raw)
}

/// The next batch for the host's ID buffer after one that handed out
/// `handed_out` IDs (`Snowflake::next_batch`): after the freshness bound,
/// the IDs, 8 little-endian bytes each.
///
/// # Safety
/// `generator` from [`mintid_light_snowflake_new`], not freed; `out`
/// pointing to `cap` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_snowflake_batch(
    generator: *const Snowflake,
    handed_out: u32,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        answer_from(generator, out, cap, |generator, packed| {
            let (fresh, ids) = generator.batch(handed_out)?;
            put_ids(packed, fresh, &ids);
            Ok(())
        })
    }
}

/// `count` new consecutive IDs (`Snowflake::next_bytes`), 8 little-endian
/// bytes each, after a freshness bound of 0.
///
/// # Safety
/// As for [`mintid_light_snowflake_batch`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_snowflake_ids(
    generator: *const Snowflake,
    count: u32,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        answer_from(generator, out, cap, |generator, packed| {
            put_ids(packed, 0, &generator.fill(count)?);
            Ok(())
        })
    }
}

/// The generator's worker id.
///
/// # Safety
/// As for [`mintid_light_snowflake_batch`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_snowflake_worker(generator: *const Snowflake) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { &*generator }.worker()
}

/// 1 and the highest ID issued (`Snowflake::high_water`) written to
/// `high_water`, or 0 when none was.
///
/// # Safety
/// As for [`mintid_light_snowflake_batch`]; `high_water` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_snowflake_high_water(
    generator: *const Snowflake,
    high_water: *mut u64,
) -> u8 {
    // SAFETY: the caller's contract.
    match unsafe { &*generator }.high_water() {
        Some(id) => {
            // SAFETY: the caller's contract.
            unsafe { *high_water = id };
            1
        }
        None => 0,
    }
}

/// Frees a generator of [`mintid_light_snowflake_new`].
///
/// # Safety
/// `generator` from [`mintid_light_snowflake_new`], freed once, unused after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_light_snowflake_free(generator: *const Snowflake) {
    // SAFETY: the caller's contract.
    drop(unsafe { Arc::from_raw(generator) });
}

/// Reseeds the calling thread's random generator (`reseed_thread_entropy`),
/// for a host's fork child.
#[unsafe(no_mangle)]
pub extern "C" fn mintid_light_reseed_thread_entropy() {
    crate::sources::reseed_thread_entropy();
}

/// The freshness bound, then `ids`, 8 little-endian bytes each.
fn put_ids(packed: &mut Vec<u8>, fresh: u64, ids: &[u64]) {
    packed.reserve(8 + ids.len() * 8);
    packed.extend_from_slice(&fresh.to_le_bytes());
    for id in ids {
        packed.extend_from_slice(&id.to_le_bytes());
    }
}
