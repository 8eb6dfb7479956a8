//! Packing a driver's step (`docs/spec.md`, "The wire", the step tables):
//! the common steps once, each kind's yield and done after its tag.

use alloc::vec::Vec;

use mintid::outbox::Enqueued;
use mintid::record::Outcome;
use mintid::store::{
    EnqueueStep, FastReport, Finished, LeaseStep, MigrationStep, MigrationYield, RecordStep,
    RecordYield, RedisCall, RelayStep, RelayYield, SegmentStep, Step, StoredMessage, StoredRecord,
    StoredResponse, TakeAction, Taken,
};

use crate::write::{pack_error, put_bytes, put_list, put_optional, put_u64, put_value};
use crate::{Refusal, tag};

/// Packs `step` into `out` (cleared first), its yield by `put_yield`
/// (which writes the yield's own tag); a `Fail` packs as [`pack_error`].
fn pack<Y, E: Refusal>(out: &mut Vec<u8>, step: Step<Y>, put_yield: impl FnOnce(&mut Vec<u8>, Y)) {
    out.clear();
    match step {
        Step::Run(query) => {
            out.push(tag::RUN);
            put_bytes(out, query.name);
            put_list(out, query.params.iter(), put_value);
        }
        Step::Pause { millis } => {
            out.push(tag::PAUSE);
            put_u64(out, millis);
        }
        Step::Begin { write } => out.extend_from_slice(&[tag::BEGIN, u8::from(write)]),
        Step::Commit => out.push(tag::COMMIT),
        Step::Rollback => out.push(tag::ROLLBACK),
        Step::Yield(yielded) => put_yield(out, yielded),
        Step::Fail(error) => pack_error(out, &E::from(error)),
    }
}

/// Packs a record driver's step: execute (`YIELD`), its end (`DONE`), its
/// Redis step (`REDIS`), or a common step.
pub fn record<E: Refusal>(out: &mut Vec<u8>, step: RecordStep) {
    pack::<_, E>(out, step, |out, yielded| match yielded {
        RecordYield::Execute(held) => {
            out.push(tag::YIELD);
            put_bytes(out, b"execute");
            put_u64(out, held.token);
            put_u64(out, held.created_millis);
            put_u64(out, held.lease_deadline_millis);
            put_optional(out, held.renew_every_millis, put_u64);
        }
        RecordYield::Done(done) => {
            out.push(tag::DONE);
            put_finished(out, done);
        }
        RecordYield::Redis(call) => put_redis_call(out, &call),
    });
}

/// The record's end: the decision's name, then what it came to.
fn put_finished(out: &mut Vec<u8>, done: Finished) {
    put_bytes(out, done.decision());
    match done {
        Finished::Executed => out.push(0),
        Finished::OperationFailed { stored } => out.extend_from_slice(&[1, u8::from(stored)]),
        Finished::Replay {
            outcome,
            response,
            error,
        } => {
            out.extend_from_slice(&[2, u8::from(!matches!(outcome, Outcome::Succeeded))]);
            put_optional(out, response.as_ref(), put_response);
            put_optional(out, error.as_deref(), put_bytes);
        }
        Finished::InProgress { retry_after_millis } => {
            out.push(3);
            put_u64(out, retry_after_millis);
        }
        Finished::FingerprintMismatch => out.push(4),
        Finished::KeyTooOld => out.push(5),
        Finished::OperationFailedUnrecorded { store_error } => {
            out.push(6);
            put_bytes(out, store_error.code());
            put_bytes(out, alloc::format!("{store_error}").as_bytes());
        }
    }
}

fn put_response(out: &mut Vec<u8>, response: &StoredResponse) {
    put_bytes(out, &response.content_type);
    put_bytes(out, &response.body);
}

/// `REDIS`: the `EVAL` flag, the script's name, its source (`EVAL`) or
/// SHA-1 (`EVALSHA`), the keys, the arguments.
fn put_redis_call(out: &mut Vec<u8>, call: &RedisCall) {
    out.extend_from_slice(&[tag::REDIS, u8::from(call.eval)]);
    put_bytes(out, call.script);
    put_bytes(
        out,
        if call.eval { call.source } else { call.sha1 }.as_bytes(),
    );
    put_list(out, call.keys.iter(), put_bytes);
    put_list(out, call.args.iter(), put_bytes);
}

/// Packs the fast path's report into `out` (cleared first): `REPORT`, the
/// optional lookup verdict, the failed writes.
pub fn report(out: &mut Vec<u8>, report: FastReport) {
    out.clear();
    out.push(tag::REPORT);
    put_optional(out, report.lookup, put_bytes);
    out.extend_from_slice(&report.write_failures.to_le_bytes());
}

/// Packs a relay run's step: a message to send (`YIELD`) or the run's
/// report (`DONE`).
pub fn relay<E: Refusal>(out: &mut Vec<u8>, step: RelayStep) {
    pack::<_, E>(out, step, |out, yielded| match yielded {
        RelayYield::Send(message) => {
            out.push(tag::YIELD);
            put_u64(out, message.message_id);
            put_bytes(out, message.kind);
            put_bytes(out, message.business_key);
            put_bytes(out, &message.payload);
            put_u64(out, message.attempts);
            put_u64(out, message.created_millis);
        }
        RelayYield::Done(report) => {
            out.push(tag::DONE);
            for count in [
                report.sent,
                report.retried,
                report.dead,
                report.given_up,
                report.claim_lost,
                report.released,
                report.mark_failed,
            ] {
                put_u64(out, count);
            }
        }
    });
}

/// Packs the step of a driver that ends with one number: a renewal's new
/// lease deadline, a cleanup's deleted count (`DONE`, `u64`).
pub fn number<E: Refusal>(out: &mut Vec<u8>, step: Step<u64>) {
    pack::<_, E>(out, step, |out, number| {
        out.push(tag::DONE);
        put_u64(out, number);
    });
}

/// Packs a heartbeat's step: its pause as `YIELD`, `millis` and the lease
/// deadline as last renewed (so the host's deadline moves with every beat,
/// at no crossing of its own), its end as [`number`].
pub fn heartbeat<E: Refusal>(out: &mut Vec<u8>, step: Step<u64>, deadline_millis: u64) {
    if let Step::Pause { millis } = step {
        out.clear();
        out.push(tag::YIELD);
        put_u64(out, millis);
        put_u64(out, deadline_millis);
    } else {
        number::<E>(out, step);
    }
}

/// Packs a record load's step: `DONE` and the optional record.
pub fn record_load<E: Refusal>(out: &mut Vec<u8>, step: Step<Option<StoredRecord>>) {
    pack::<_, E>(out, step, |out, stored| {
        out.push(tag::DONE);
        put_optional(out, stored, |out, stored| {
            let record = &stored.record;
            put_bytes(out, record.status.as_str());
            out.extend_from_slice(record.fingerprint.as_bytes());
            for number in [
                record.token,
                record.lease_deadline_millis,
                record.created_millis,
                record.expires_millis,
            ] {
                put_u64(out, number);
            }
            put_optional(out, stored.response.as_ref(), put_response);
            put_optional(out, stored.error.as_deref(), put_bytes);
        });
    });
}

/// Packs an outbox load's step: `DONE` and the optional message.
pub fn outbox_load<E: Refusal>(out: &mut Vec<u8>, step: Step<Option<StoredMessage>>) {
    pack::<_, E>(out, step, |out, message| {
        out.push(tag::DONE);
        put_optional(out, message, |out, message| {
            put_u64(out, message.message_id);
            put_bytes(out, message.kind);
            put_bytes(out, message.business_key);
            put_bytes(out, &message.payload);
            put_bytes(out, message.status.as_str());
            put_u64(out, message.attempts);
            put_u64(out, message.next_attempt_millis);
            put_optional(out, message.last_error.as_deref(), put_bytes);
            put_u64(out, message.created_millis);
            put_u64(out, message.updated_millis);
        });
    });
}

/// Packs an enqueue's step: `DONE`, `0` new or `1` already enqueued.
pub fn enqueue<E: Refusal>(out: &mut Vec<u8>, step: EnqueueStep) {
    pack::<_, E>(out, step, |out, enqueued| {
        let already = matches!(enqueued, Enqueued::AlreadyEnqueued);
        out.extend_from_slice(&[tag::DONE, u8::from(already)]);
    });
}

/// Packs a migrator's step: `YIELD`, `version u32`, the statement (text);
/// `DONE`, the list of versions (`u32` each); or a common step.
pub fn migration<E: Refusal>(out: &mut Vec<u8>, step: MigrationStep) {
    pack::<_, E>(out, step, |out, yielded| match yielded {
        MigrationYield::Execute { version, sql } => {
            out.push(tag::YIELD);
            out.extend_from_slice(&version.to_le_bytes());
            put_bytes(out, sql);
        }
        MigrationYield::Done(versions) => {
            out.push(tag::DONE);
            put_list(out, versions.iter(), |out, version| {
                out.extend_from_slice(&version.to_le_bytes());
            });
        }
    });
}

/// Packs a segment take's answer into `out` (cleared first): `TAKEN`,
/// `first`, `count`, the action (`0` hand out, `1` fetch beside, `2` fetch
/// now, `3` wait) and the longest wait (0 unless wait).
pub fn taken(out: &mut Vec<u8>, taken: Taken) {
    let (action, wait_millis) = match taken.action() {
        TakeAction::HandOut => (0, 0),
        TakeAction::FetchBeside => (1, 0),
        TakeAction::FetchNow => (2, 0),
        TakeAction::Wait { millis } => (3, millis),
    };
    out.clear();
    out.push(tag::TAKEN);
    put_u64(out, taken.first);
    put_u64(out, taken.count);
    out.push(action);
    put_u64(out, wait_millis);
}

/// Packs a segment fetch's step: `DONE`, the installed segment's `max_id`
/// and `step`.
pub fn segment<E: Refusal>(out: &mut Vec<u8>, step: SegmentStep) {
    pack::<_, E>(out, step, |out, row| {
        out.push(tag::DONE);
        put_u64(out, row.max_id);
        put_u64(out, row.step);
    });
}

/// Packs the answer to a segment's `abandon` or `forked` into `out`
/// (cleared first): a bare `YIELD`, nothing to run.
pub fn idle(out: &mut Vec<u8>) {
    out.clear();
    out.push(tag::YIELD);
}

/// Packs a lease acquisition's step: `DONE`, then `worker_id`,
/// `fencing_token`, `lease_deadline_millis`, `start_after_millis`,
/// `ready_at_millis`, `acquired_millis`, `high_water_millis`,
/// `expected_token` (the row written is held).
pub fn acquisition<E: Refusal>(out: &mut Vec<u8>, step: LeaseStep) {
    pack::<_, E>(out, step, |out, made| {
        out.push(tag::DONE);
        for number in [
            made.lease.worker_id,
            made.lease.fencing_token,
            made.lease.lease_deadline_millis,
            made.start_after_millis,
            made.ready_at_millis,
            made.acquired_millis,
            made.lease.high_water_millis,
            made.expected_token,
        ] {
            put_u64(out, number);
        }
    });
}

/// Packs a lease release's step: `DONE`, `1` when the row was still this
/// holder's.
pub fn released<E: Refusal>(out: &mut Vec<u8>, step: Step<bool>) {
    pack::<_, E>(out, step, |out, released| {
        out.extend_from_slice(&[tag::DONE, u8::from(released)]);
    });
}
