//! The Redis fast path on the lane (`mintid_lane_fast_*`): the core's
//! `FastPath` with its calls, Redis's answers, verdicts and settled results
//! packed in `mintid-lane`'s layout (`docs/spec.md`, "The lane"). Every call
//! is pure, so a packed result longer than the caller's buffer is computed
//! again into one that fits. Every entry point catches a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mintid::store as core;

use crate::error::MintidError;
use crate::lane::{RecordLane, copy_out, panicked, slice};

/// The Redis fast path of one store on the lane (`mintid_lane_fast_*`,
/// freed with `mintid_lane_fast_free`): the core's `FastPath` under the
/// policy of `lane` (from `RecordDrivers.lane()`), entries living at most
/// `ttl_millis` when it is not negative.
///
/// # Safety
/// `lane` comes from `RecordDrivers.lane()` and is live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_new(lane: u64, ttl_millis: i64) -> *mut core::FastPath {
    // SAFETY: the caller's contract.
    let lane = unsafe { &*(lane as *const RecordLane) };
    let fast = core::FastPath::new(lane.policy);
    let fast = match u64::try_from(ttl_millis) {
        Ok(ttl) => fast.with_ttl_millis(ttl),
        Err(_) => fast,
    };
    Box::into_raw(Box::new(fast))
}

/// Frees a fast path from [`mintid_lane_fast_new`].
///
/// # Safety
/// `fast` comes from [`mintid_lane_fast_new`] and is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_free(fast: *mut core::FastPath) {
    if !fast.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(fast) });
    }
}

/// Runs `work` on a fast path, catching a panic, and copies what it packed
/// (or the packed failure) to `(out, cap)`; its length.
///
/// # Safety
/// `out` as for [`copy_out`].
unsafe fn on_fast(
    out: *mut u8,
    cap: usize,
    work: impl FnOnce(&mut Vec<u8>) -> Result<(), MintidError>,
) -> usize {
    let mut packed = Vec::new();
    let done =
        catch_unwind(AssertUnwindSafe(|| work(&mut packed))).unwrap_or_else(|_| Err(panicked()));
    if let Err(error) = done {
        mintid_lane::pack_error(&mut packed, &error);
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(&packed, out, cap) }
}

fn fast_key(key: &[u8]) -> Result<mintid::key::IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::parse(key)?)
}

fn fast_print(digest: &[u8]) -> Result<mintid::fingerprint::Fingerprint, MintidError> {
    let digest = crate::error::fixed_bytes::<32>("a fingerprint", digest)?;
    Ok(mintid::fingerprint::Fingerprint::from_digest(digest))
}

/// The `check` to run before the database for the key `(key, key_len)`
/// (canonical text) and fingerprint, packed (`0` none, `1` a script; `5` a
/// failure) into `(out, cap)` when it fits; its length. A longer answer is
/// computed again into a buffer that fits (these calls are pure).
///
/// # Safety
/// `fast` is live; the pointers point to their lengths of readable bytes;
/// `out` to `cap` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_check(
    fast: *const core::FastPath,
    key: *const u8,
    key_len: usize,
    fingerprint: *const u8,
    fingerprint_len: usize,
    key_created_millis: i64,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let (fast, key, fingerprint) = unsafe {
        (
            &*fast,
            slice(key, key_len),
            slice(fingerprint, fingerprint_len),
        )
    };
    // SAFETY: the caller's contract.
    unsafe {
        on_fast(out, cap, |packed| {
            let created = u64::try_from(key_created_millis).ok();
            let call = fast.check(
                &fast_key(key)?,
                &fast_print(fingerprint)?,
                created,
                now_millis,
            );
            mintid_lane::pack_call(packed, call.as_ref());
            Ok(())
        })
    }
}

/// What Redis's packed answer to a `check` means, as a packed verdict
/// (`0` miss, `1` fallback, `2` replay, `3` in progress; `5` a failure).
///
/// # Safety
/// As for [`mintid_lane_fast_check`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_read(
    fast: *const core::FastPath,
    fingerprint: *const u8,
    fingerprint_len: usize,
    answer: *const u8,
    answer_len: usize,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let (fast, fingerprint, answer) = unsafe {
        (
            &*fast,
            slice(fingerprint, fingerprint_len),
            slice(answer, answer_len),
        )
    };
    // SAFETY: the caller's contract.
    unsafe {
        on_fast(out, cap, |packed| {
            let answer = mintid_lane::unpack_answer(answer)?;
            let verdict = fast.read_check(&fast_print(fingerprint)?, &answer);
            mintid_lane::pack_verdict(packed, &verdict);
            Ok(())
        })
    }
}

/// The script that follows the database path (`settle` or `forget`) for
/// what it came to (`settled`, packed), packed as a call.
///
/// # Safety
/// As for [`mintid_lane_fast_check`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_settle(
    fast: *const core::FastPath,
    key: *const u8,
    key_len: usize,
    fingerprint: *const u8,
    fingerprint_len: usize,
    settled: *const u8,
    settled_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let (fast, key, fingerprint, settled) = unsafe {
        (
            &*fast,
            slice(key, key_len),
            slice(fingerprint, fingerprint_len),
            slice(settled, settled_len),
        )
    };
    // SAFETY: the caller's contract.
    unsafe {
        on_fast(out, cap, |packed| {
            let settled = mintid_lane::unpack_settled(settled)?;
            let call = fast.settle(
                &fast_key(key)?,
                &fast_print(fingerprint)?,
                &settled,
                now_millis,
            );
            mintid_lane::pack_call(packed, Some(&call));
            Ok(())
        })
    }
}

/// The script to run after a claim with this fence is written (a takeover
/// invalidates the entry), packed as a call (`0` none).
///
/// # Safety
/// As for [`mintid_lane_fast_check`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_fast_claimed(
    fast: *const core::FastPath,
    key: *const u8,
    key_len: usize,
    token: u64,
    created_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let (fast, key) = unsafe { (&*fast, slice(key, key_len)) };
    // SAFETY: the caller's contract.
    unsafe {
        on_fast(out, cap, |packed| {
            let held = core::Held {
                token,
                created_millis,
                lease_deadline_millis: 0,
                renew_every_millis: None,
            };
            let call = fast.claimed(&fast_key(key)?, &held);
            mintid_lane::pack_call(packed, call.as_ref());
            Ok(())
        })
    }
}
