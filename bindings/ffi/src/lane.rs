//! The lane: the C entry points the hosts called before the wire
//! (`mintid_lane_*`, `RecordDrivers.lane()`, `outbox_relay_lane`), kept
//! until every host has moved to the wire (`wire.rs`) and then deleted.
//! Each is a [`LaneDriver`]: a wire whose inputs and steps are rewritten
//! from and into the lane's layout (`mintid_wire::lane`); nothing about a
//! driver is decided here.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mintid::store as core;
use mintid_wire::lane::{FAST_REPORT_MAX, LaneDriver};
use mintid_wire::{Input, KeyParts, Spec};

use crate::error::MintidError;
use crate::outbox::RelayPolicy;
use crate::store::{Manifest, RecordDrivers};
use crate::wire::{copy_out, panicked, slice};

/// The manifest and policy every record driver of one store shares.
#[derive(Debug)]
pub struct RecordLane {
    manifest: core::Manifest,
    pub(crate) policy: mintid::record::RecordPolicy,
    /// The Redis fast path every driver of the lane has (with its TTL cap), if any.
    fast: Option<Option<u64>>,
}

/// A driver on the lane (a record driver or a relay run).
type Driver = LaneDriver<MintidError>;

#[uniffi::export]
impl RecordDrivers {
    /// The record lane of these drivers: a handle for the C entry points
    /// `mintid_lane_record_*`, freed with `mintid_lane_free`.
    pub fn lane(self: Arc<Self>) -> u64 {
        let lane = Box::new(RecordLane {
            manifest: self.manifest,
            policy: self.policy,
            fast: None,
        });
        Box::into_raw(lane) as u64
    }

    /// The record lane of these drivers with the Redis fast path in front
    /// of the database, entries living at most `ttl_millis` when given.
    /// Freed with `mintid_lane_free`.
    pub fn fast_lane(self: Arc<Self>, ttl_millis: Option<u64>) -> u64 {
        let lane = Box::new(RecordLane {
            manifest: self.manifest,
            policy: self.policy,
            fast: Some(ttl_millis),
        });
        Box::into_raw(lane) as u64
    }
}

/// One outbox relay run on the lane (`mintid_lane_relay_*`, freed with
/// `mintid_lane_relay_free`); a policy the core refuses makes a run whose
/// every step is `outbox.invalid_policy`.
#[uniffi::export]
pub fn outbox_relay_lane(manifest: Manifest, policy: RelayPolicy, seed: u64) -> u64 {
    let made = policy.try_into().map(|policy| Spec::Relay {
        manifest: manifest.into(),
        policy,
        seed,
    });
    Box::into_raw(Box::new(Driver::new(made))) as u64
}

/// Runs `work` on `driver`, catching a panic, and copies the step it
/// packed out as [`copy_out`] does.
///
/// # Safety
/// `driver` is a live pointer from this module's constructors, used by one
/// thread at a time; `out` as for [`copy_out`].
unsafe fn on_driver(
    driver: *mut Driver,
    out: *mut u8,
    cap: usize,
    work: impl FnOnce(&mut Driver),
) -> usize {
    // SAFETY: the caller's contract.
    let lane = unsafe { &mut *driver };
    if catch_unwind(AssertUnwindSafe(|| work(lane))).is_err() {
        lane.fail(&panicked());
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(lane.step(), out, cap) }
}

/// The entry points every driver on the lane has, named
/// `mintid_lane_<prefix>_*`: copy the last step again, push an affected
/// count, packed rows or a failed query, resume, free.
macro_rules! lane_entry_points {
    ($step:ident, $affected:ident, $rows:ident, $failed:ident, $resume:ident, $free:ident) => {
        /// Copies the last step again (after a step longer than the buffer).
        ///
        /// # Safety
        /// A live driver; `out` pointing to `cap` writable bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $step(driver: *mut Driver, out: *mut u8, cap: usize) -> usize {
            // SAFETY: the caller's contract.
            unsafe { copy_out((*driver).step(), out, cap) }
        }

        /// Pushes an affected-row count; the next step.
        ///
        /// # Safety
        /// As for the step entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $affected(
            driver: *mut Driver,
            count: u64,
            now_millis: u64,
            out: *mut u8,
            cap: usize,
        ) -> usize {
            // SAFETY: the caller's contract.
            unsafe {
                on_driver(driver, out, cap, |lane| {
                    lane.push(now_millis, Input::Affected(count));
                })
            }
        }

        /// Pushes packed rows; the next step.
        ///
        /// # Safety
        /// As for the step entry point; `rows` points to `rows_len`
        /// readable bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $rows(
            driver: *mut Driver,
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
                on_driver(driver, out, cap, |lane| {
                    lane.push_rows(rows, now_millis);
                })
            }
        }

        /// Pushes a failed query: the executor's class and the driver's
        /// message; the next step.
        ///
        /// # Safety
        /// As for the step entry point; `message` points to `message_len`
        /// readable bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $failed(
            driver: *mut Driver,
            class: u8,
            message: *const u8,
            message_len: usize,
            now_millis: u64,
            out: *mut u8,
            cap: usize,
        ) -> usize {
            // SAFETY: the caller's contract.
            let message = unsafe { slice(message, message_len) };
            // SAFETY: the caller's contract.
            unsafe {
                on_driver(driver, out, cap, |lane| {
                    lane.push_failed(class, message, now_millis);
                })
            }
        }

        /// Continues after a `Pause`; the next step.
        ///
        /// # Safety
        /// As for the step entry point.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $resume(driver: *mut Driver, out: *mut u8, cap: usize) -> usize {
            // SAFETY: the caller's contract.
            unsafe {
                on_driver(driver, out, cap, |lane| {
                    lane.push(0, Input::Resume);
                })
            }
        }

        /// Frees a driver (null: nothing).
        ///
        /// # Safety
        /// `driver` comes from this kind's constructor, once.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $free(driver: *mut Driver) {
            if !driver.is_null() {
                // SAFETY: the caller's contract.
                drop(unsafe { Box::from_raw(driver) });
            }
        }
    };
}

lane_entry_points!(
    mintid_lane_record_step,
    mintid_lane_record_push_affected,
    mintid_lane_record_push_rows,
    mintid_lane_record_push_failed,
    mintid_lane_record_resume,
    mintid_lane_record_free
);

lane_entry_points!(
    mintid_lane_relay_step,
    mintid_lane_relay_push_affected,
    mintid_lane_relay_push_rows,
    mintid_lane_relay_push_failed,
    mintid_lane_relay_resume,
    mintid_lane_relay_free
);

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
) -> *mut Driver {
    // SAFETY: the caller's contract.
    let (lane, key, fingerprint) = unsafe {
        (
            &*(lane as *const RecordLane),
            slice(key, key_len),
            slice(fingerprint, fingerprint_len),
        )
    };
    let made = catch_unwind(|| {
        let key = mintid::key::IdempotencyKey::parse(key)?;
        let digest = crate::error::fixed_bytes::<32>("a fingerprint", fingerprint)?;
        let way = match way {
            0 => core::Way::RunOnce,
            1 => core::Way::SameTransaction,
            2 => core::Way::Lease,
            _ => return Err(MintidError::argument("argument.internal", "no such way in")),
        };
        Ok(Spec::Record {
            manifest: lane.manifest,
            policy: lane.policy,
            way,
            fast: lane.fast,
            key: KeyParts {
                kind: key.kind().into(),
                scope: key.scope().into(),
                id: key.id().into(),
            },
            digest,
            key_created_millis: u64::try_from(key_created_millis).ok(),
        })
    })
    .unwrap_or_else(|_| Err(panicked()));
    Box::into_raw(Box::new(Driver::new(made)))
}

/// The first step, at `now_millis`, packed into `out` (when it fits in `cap`
/// bytes: otherwise [`mintid_lane_record_step`] copies it); its length.
///
/// # Safety
/// As for `on_driver`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_start(
    driver: *mut Driver,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |lane| {
            lane.push(now_millis, Input::Start);
        })
    }
}

/// Finishes with the packed outcome of the operation; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`]; `outcome` points to `outcome_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_finish(
    driver: *mut Driver,
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
        on_driver(driver, out, cap, |lane| {
            lane.finish(outcome, now_millis);
        })
    }
}

/// Pushes Redis's packed answer to the last Redis step; the next step.
///
/// # Safety
/// As for [`mintid_lane_record_start`]; `answer` points to `answer_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_push_redis(
    driver: *mut Driver,
    answer: *const u8,
    answer_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let answer = unsafe { slice(answer, answer_len) };
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |lane| {
            lane.push_redis(answer, now_millis);
        })
    }
}

/// Takes what the driver's fast path came to since the last report, packed
/// into `out`; its length. With `cap` under [`FAST_REPORT_MAX`] nothing is
/// taken and that size is the answer.
///
/// # Safety
/// As for [`mintid_lane_record_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_record_fast_report(
    driver: *mut Driver,
    out: *mut u8,
    cap: usize,
) -> usize {
    if cap < FAST_REPORT_MAX {
        return FAST_REPORT_MAX;
    }
    let mut packed = Vec::with_capacity(FAST_REPORT_MAX);
    // SAFETY: the caller's contract.
    let lane = unsafe { &mut *driver };
    if catch_unwind(AssertUnwindSafe(|| lane.take_fast_report(&mut packed))).is_err() {
        packed = vec![0; 5];
    }
    // SAFETY: the caller's contract.
    unsafe { copy_out(&packed, out, cap) }
}

/// The first step of a relay run, at `now_millis`.
///
/// # Safety
/// As for [`mintid_lane_record_start`], with a relay from `outbox_relay_lane`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_relay_start(
    driver: *mut Driver,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |lane| {
            lane.push(now_millis, Input::Start);
        })
    }
}

/// The message of the last send was sent, at `now_millis`; the next step.
///
/// # Safety
/// As for [`mintid_lane_relay_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_relay_sent(
    driver: *mut Driver,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |lane| {
            lane.push(now_millis, Input::Sent);
        })
    }
}

/// The last send failed with `error` (bytes the core makes storable), at
/// `now_millis`; the next step.
///
/// # Safety
/// As for [`mintid_lane_relay_start`]; `error` points to `error_len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_relay_failed(
    driver: *mut Driver,
    error: *const u8,
    error_len: usize,
    now_millis: u64,
    out: *mut u8,
    cap: usize,
) -> usize {
    // SAFETY: the caller's contract.
    let error = unsafe { slice(error, error_len) }.to_vec();
    // SAFETY: the caller's contract.
    unsafe {
        on_driver(driver, out, cap, |lane| {
            lane.push(now_millis, Input::SendFailed(error));
        })
    }
}

/// Frees a record lane (0: nothing).
///
/// # Safety
/// `lane` comes from `RecordDrivers.lane()`, once, and no driver call on it
/// is running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mintid_lane_free(lane: u64) {
    if lane != 0 {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(lane as *mut RecordLane) });
    }
}

/// The canonical text of a key, as [`crate::wire::mintid_wire_key_text`]
/// answers.
///
/// # Safety
/// As for [`crate::wire::mintid_wire_key_text`].
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
    // SAFETY: the caller's contract, passed on.
    unsafe {
        crate::wire::mintid_wire_key_text(kind, kind_len, scope, scope_len, id, id_len, out, cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mintid_wire::lane::lane_outcome;
    use mintid_wire::{tag, value};

    fn lane() -> u64 {
        Box::into_raw(Box::new(RecordLane {
            manifest: core::Manifest::new(core::Dialect::Postgres, core::Placeholder::Numbered),
            policy: mintid::record::RecordPolicy::default(),
            fast: None,
        })) as u64
    }

    #[test]
    fn a_fast_lane_checks_redis_first_sends_eval_after_noscript_and_reports() {
        let policy = mintid::record::RecordPolicy::default();
        let lane = Box::into_raw(Box::new(RecordLane {
            manifest: core::Manifest::new(core::Dialect::Postgres, core::Placeholder::Numbered),
            policy,
            fast: Some(None),
        })) as u64;
        let driver = new(lane, b"order.create:tenant-1:abc", &[7; 32]);
        // SAFETY (every call below): a live driver and buffers of their lengths.
        let check = out(
            8,
            |o, c| unsafe { mintid_lane_record_start(driver, 1_000, o, c) },
            driver,
        );
        assert_eq!(
            &check[..8],
            [tag::REDIS, 0, 5, b'c', b'h', b'e', b'c', b'k']
        );
        assert_eq!(&check[12..52], core::CHECK.sha1.as_bytes());
        let no_script = [3];
        let again = out(
            8,
            |o, c| unsafe {
                mintid_lane_record_push_redis(driver, no_script.as_ptr(), 1, 1_000, o, c)
            },
            driver,
        );
        assert_eq!(&again[..3], [tag::REDIS, 1, 5]);
        let length = u32::from_le_bytes(again[8..12].try_into().unwrap()) as usize;
        assert_eq!(&again[12..12 + length], core::CHECK.source.as_bytes());
        let nil = [0];
        let claim = out(
            8,
            |o, c| unsafe { mintid_lane_record_push_redis(driver, nil.as_ptr(), 1, 1_000, o, c) },
            driver,
        );
        assert_eq!(claim[0], tag::RUN);
        let mut report = [0; FAST_REPORT_MAX];
        // SAFETY: a live driver and a buffer of its length.
        let short = unsafe { mintid_lane_record_fast_report(driver, report.as_mut_ptr(), 4) };
        assert_eq!(short, FAST_REPORT_MAX, "too short: nothing taken");
        // SAFETY: as above.
        let length =
            unsafe { mintid_lane_record_fast_report(driver, report.as_mut_ptr(), report.len()) };
        assert_eq!(&report[..length], [4, b'm', b'i', b's', b's', 0, 0, 0, 0]);
        // SAFETY: as above.
        let length =
            unsafe { mintid_lane_record_fast_report(driver, report.as_mut_ptr(), report.len()) };
        assert_eq!(&report[..length], [0, 0, 0, 0, 0], "taken once");
        // SAFETY: freed once.
        unsafe {
            mintid_lane_record_free(driver);
            mintid_lane_free(lane);
        }
    }

    /// Copies a step out through a buffer of `cap` bytes, again when too short.
    fn out(cap: usize, call: impl FnOnce(*mut u8, usize) -> usize, driver: *mut Driver) -> Vec<u8> {
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

    fn new(lane: u64, key: &[u8], digest: &[u8]) -> *mut Driver {
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
        let length = u32::from_le_bytes(packed[1..5].try_into().unwrap()) as usize;
        String::from_utf8(packed[5..5 + length].to_vec()).expect("a packed code")
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
        assert_eq!(execute[0], tag::YIELD);
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
        assert_eq!(done, [tag::DONE, 0]);
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
        assert!(matches!(lane_outcome(&[9]), Err(error) if error.code() == "store.unexpected_row"));
        assert!(
            matches!(lane_outcome(&[2, 1, 0, 0, 0, 0xff]), Err(error) if error.code() == "store.unexpected_row")
        );
        // SAFETY: made once, freed once.
        unsafe {
            mintid_lane_record_free(driver);
            mintid_lane_free(lane);
        }
    }

    fn relay(policy: RelayPolicy) -> *mut Driver {
        let manifest = Manifest {
            dialect: crate::store::Dialect::Sqlite,
            placeholder: crate::store::Placeholder::Question,
        };
        outbox_relay_lane(manifest, policy, 7) as *mut Driver
    }

    #[test]
    fn a_relay_claims_first_and_a_refused_policy_fails_every_step() {
        let policy = RelayPolicy::from(mintid::outbox::RelayPolicy::default());
        let driver = relay(policy);
        let mut buffer = vec![0; 1024];
        // SAFETY (every call below): a live relay and a buffer of its length.
        let length =
            unsafe { mintid_lane_relay_start(driver, 1_000, buffer.as_mut_ptr(), buffer.len()) };
        assert_eq!(buffer[0], tag::RUN, "{:?}", &buffer[..length]);
        assert_eq!(&buffer[2..2 + usize::from(buffer[1])], b"outbox_claim");
        let length = unsafe {
            mintid_lane_relay_push_affected(driver, 0, 1_001, buffer.as_mut_ptr(), buffer.len())
        };
        assert_eq!(
            &buffer[2..2 + usize::from(buffer[1])],
            b"outbox_claimed",
            "{:?}",
            &buffer[..length]
        );
        let rows = 0u32.to_le_bytes();
        let length = unsafe {
            mintid_lane_relay_push_rows(
                driver,
                rows.as_ptr(),
                rows.len(),
                1_002,
                buffer.as_mut_ptr(),
                buffer.len(),
            )
        };
        assert_eq!(buffer[0], tag::DONE, "nothing due: {:?}", &buffer[..length]);
        assert_eq!(length, 1 + 7 * 8);
        // SAFETY: made once, freed once.
        unsafe { mintid_lane_relay_free(driver) };
        let driver = relay(RelayPolicy {
            batch_size: 0,
            ..policy
        });
        let length =
            unsafe { mintid_lane_relay_sent(driver, 1, buffer.as_mut_ptr(), buffer.len()) };
        assert_eq!(code_of(&buffer[..length]), "outbox.invalid_policy");
        // SAFETY: made once, freed once.
        unsafe { mintid_lane_relay_free(driver) };
    }
}
