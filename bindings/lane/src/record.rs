//! The record driver on the lane: one request's steps, packed.

use alloc::vec::Vec;

use mintid::record::Outcome;
use mintid::store::{Answer, Finished, RecordDriver, RecordStep, RecordYield};

use crate::fast::{pack_report, put_redis_call, unpack_answer};

use crate::lane::{Driven, Lane};
use crate::read::unpack_outcome;
use crate::write::{put_bytes, put_optional};
use crate::{Refusal, tag};

/// The tag of a packed [`Finished`] (after [`tag::DONE`]).
mod finished {
    pub const EXECUTED: u8 = 0;
    pub const OPERATION_FAILED: u8 = 1;
    pub const REPLAY: u8 = 2;
    pub const IN_PROGRESS: u8 = 3;
    pub const FINGERPRINT_MISMATCH: u8 = 4;
    pub const KEY_TOO_OLD: u8 = 5;
    pub const OPERATION_FAILED_UNRECORDED: u8 = 6;
}

impl Driven for RecordDriver {
    type Yield = RecordYield;

    fn push(&mut self, answer: Answer, now_millis: u64) -> RecordStep {
        RecordDriver::push(self, answer, now_millis)
    }

    fn resume(&mut self) -> RecordStep {
        RecordDriver::resume(self)
    }

    fn put_yield(out: &mut Vec<u8>, yielded: RecordYield) {
        put_yield(out, yielded);
    }
}

impl<E: Refusal> Lane<RecordDriver, E> {
    /// Finishes with the packed outcome of the operation
    /// ([`unpack_outcome`]).
    pub fn finish(&mut self, outcome: &[u8], now_millis: u64) -> &[u8] {
        match unpack_outcome(outcome) {
            Ok(outcome) => self.drive(|driver| driver.finish(outcome, now_millis)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Pushes Redis's packed answer to the last Redis step
    /// ([`unpack_answer`]).
    pub fn push_redis(&mut self, answer: &[u8], now_millis: u64) -> &[u8] {
        match unpack_answer(answer) {
            Ok(answer) => self.drive(|driver| driver.push_redis(answer, now_millis)),
            Err(error) => self.fail(&E::from(error)),
        }
    }

    /// Packs what the fast path came to since the last report into `out`
    /// ([`pack_report`]).
    pub fn take_fast_report(&mut self, out: &mut Vec<u8>) {
        pack_report(out, self.driver.take_fast_report());
    }
}

fn put_yield(out: &mut Vec<u8>, yielded: RecordYield) {
    match yielded {
        RecordYield::Execute(held) => {
            out.push(tag::YIELD);
            out.extend_from_slice(&held.token.to_le_bytes());
            out.extend_from_slice(&held.created_millis.to_le_bytes());
            out.extend_from_slice(&held.lease_deadline_millis.to_le_bytes());
            let every = held
                .renew_every_millis
                .and_then(|every| i64::try_from(every).ok())
                .unwrap_or(-1);
            out.extend_from_slice(&every.to_le_bytes());
        }
        RecordYield::Done(done) => {
            out.push(tag::DONE);
            put_finished(out, done);
        }
        RecordYield::Redis(call) => {
            out.push(tag::REDIS);
            put_redis_call(out, &call);
        }
    }
}

/// Packs a record protocol's end (after the `DONE` tag).
fn put_finished(out: &mut Vec<u8>, done: Finished) {
    match done {
        Finished::Executed => out.push(finished::EXECUTED),
        Finished::OperationFailed { stored } => {
            out.extend_from_slice(&[finished::OPERATION_FAILED, u8::from(stored)]);
        }
        Finished::Replay {
            outcome,
            response,
            error,
        } => {
            let succeeded = matches!(outcome, Outcome::Succeeded);
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
        Finished::InProgress { retry_after_millis } => {
            out.push(finished::IN_PROGRESS);
            out.extend_from_slice(&retry_after_millis.to_le_bytes());
        }
        Finished::FingerprintMismatch => out.push(finished::FINGERPRINT_MISMATCH),
        Finished::OperationFailedUnrecorded { store_error } => {
            out.push(finished::OPERATION_FAILED_UNRECORDED);
            put_bytes(out, store_error.code().as_bytes());
            put_bytes(out, alloc::format!("{store_error}").as_bytes());
        }
        Finished::KeyTooOld => out.push(finished::KEY_TOO_OLD),
    }
}
