//! The Redis fast path as steps of the record driver: the `check` before
//! the database, the takeover's `forget` after a reclaim, and the `settle`
//! or `forget` after the database path, in one order for every host
//! (`docs/spec.md`, "The fast path").

use alloc::string::String;

use super::Step;
use super::fast_path::{FastAnswer, FastPath, FastVerdict, RedisCall, Settled};
use super::record_driver::{Finished, Held, RecordStep, RecordYield, StoredRecord, StoredResponse};
use crate::fingerprint::Fingerprint;
use crate::key::IdempotencyKey;
use crate::record::{Outcome, Status};

/// What this request's fast path said, for the host's metrics: taken with
/// [`RecordDriver::take_fast_report`](super::RecordDriver::take_fast_report),
/// each event once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastReport {
    /// The check's verdict since the last report (`hit`, `miss` or
    /// `fallback`: [`FastVerdict::as_str`], the `verdict` attribute of
    /// `mintid.fast_path.lookups`), if one was answered.
    pub lookup: Option<&'static str>,
    /// How many writes to Redis after the database path failed since the
    /// last report (`mintid.fast_path.write_failures`).
    pub write_failures: u32,
}

/// What the database was told to keep, for the `settle` after its commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Written {
    /// The response a completion stores.
    Response(StoredResponse),
    /// The final failure a `fail` stores: its error text (cut as stored)
    /// and optional response.
    Failure {
        message: String,
        response: Option<StoredResponse>,
    },
}

/// One request's fast path: its entry and what its steps came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fast {
    path: FastPath,
    entry: String,
    /// The check was answered: what follows the database path is written
    /// to Redis.
    checked: bool,
    /// The check set this request's claiming marker (it answered nil).
    marked: bool,
    /// The claim this request holds.
    held: Option<Held>,
    /// What the last write of the database path stores.
    written: Option<Written>,
    /// The last call, sent again by `EVAL` after `NOSCRIPT`.
    call: Option<RedisCall>,
    report: FastReport,
}

impl Fast {
    pub(crate) fn new(path: FastPath, key: &IdempotencyKey) -> Self {
        Self {
            path,
            entry: FastPath::entry(key),
            checked: false,
            marked: false,
            held: None,
            written: None,
            call: None,
            report: FastReport::default(),
        }
    }

    /// The `check` before the database (none for a key too old by its own
    /// time), as the step to hand over.
    pub(crate) fn check(
        &mut self,
        fingerprint: &Fingerprint,
        key_created_millis: Option<u64>,
        now_millis: u64,
    ) -> Option<RecordStep> {
        let call =
            self.path
                .check_entry(&self.entry, fingerprint, key_created_millis, now_millis)?;
        Some(self.send(call))
    }

    /// The same call again by `EVAL` when the node answered `NOSCRIPT` to
    /// it by `EVALSHA`; `None` to read the answer.
    pub(crate) fn again(&mut self, answer: &FastAnswer) -> Option<RecordStep> {
        if *answer != FastAnswer::NoScript {
            return None;
        }
        let again = self.call.as_ref().and_then(RedisCall::by_eval)?;
        Some(self.send(again))
    }

    /// Reads the check's answer: the verdict, counted for the report.
    pub(crate) fn checked(
        &mut self,
        fingerprint: &Fingerprint,
        answer: &FastAnswer,
    ) -> FastVerdict {
        self.call = None;
        let verdict = self.path.read_check(fingerprint, answer);
        self.checked = true;
        self.marked = *answer == FastAnswer::Nil;
        self.report.lookup = Some(verdict.as_str());
        verdict
    }

    /// Reads a write's answer: a failure is counted for the report.
    pub(crate) fn wrote(&mut self, answer: &FastAnswer) {
        self.call = None;
        if matches!(answer, FastAnswer::Failed(_) | FastAnswer::NoScript) {
            self.report.write_failures = self.report.write_failures.saturating_add(1);
        }
    }

    /// Keeps what the database path's last write stores.
    pub(crate) fn remember(&mut self, written: Written) {
        self.written = Some(written);
    }

    /// The report since the last one.
    pub(crate) fn take_report(&mut self) -> FastReport {
        core::mem::take(&mut self.report)
    }

    /// The write to Redis that goes before `step` reaches the host, if one
    /// does (only after an answered check): a takeover's `forget` before
    /// the operation runs; after the database path, `settle` of a committed
    /// result (one this request wrote, or a replay the database served),
    /// else `forget` of this request's marker or older fence.
    pub(crate) fn before(
        &mut self,
        step: &RecordStep,
        stored: Option<&StoredRecord>,
        fingerprint: &Fingerprint,
        now_millis: u64,
    ) -> Option<RedisCall> {
        if !self.checked {
            return None;
        }
        let settled = match step {
            Step::Yield(yielded) => match yielded {
                RecordYield::Execute(held) => {
                    self.held = Some(*held);
                    return self.path.claimed_entry(&self.entry, held);
                }
                RecordYield::Done(finished) => self.settled(finished, stored),
                RecordYield::Redis(_) => return None,
            },
            Step::Fail(_) => Settled::Other { held: self.held },
            _ => return None,
        };
        if settled == (Settled::Other { held: None }) && !self.marked {
            return None;
        }
        Some(
            self.path
                .settle_entry(&self.entry, fingerprint, &settled, now_millis),
        )
    }

    fn settled(&mut self, finished: &Finished, stored: Option<&StoredRecord>) -> Settled {
        let written = self.written.take();
        match (finished, written, self.held) {
            (Finished::Executed, Some(Written::Response(response)), Some(held)) => {
                Settled::Executed { held, response }
            }
            (
                Finished::OperationFailed { stored: true },
                Some(Written::Failure { message, response }),
                Some(held),
            ) => Settled::FailedStored {
                held,
                message,
                response,
            },
            (
                Finished::Replay {
                    outcome,
                    response,
                    error,
                },
                _,
                _,
            ) => match stored.map(|stored| stored.record) {
                Some(record) if matches!(record.status, Status::Succeeded | Status::Failed) => {
                    let held = Held {
                        token: record.token,
                        created_millis: record.created_millis,
                        lease_deadline_millis: record.lease_deadline_millis,
                        renew_every_millis: None,
                    };
                    match outcome {
                        Outcome::Succeeded => Settled::Executed {
                            held,
                            response: response.clone().unwrap_or(StoredResponse {
                                content_type: String::new(),
                                body: alloc::vec::Vec::new(),
                            }),
                        },
                        Outcome::Failed => Settled::FailedStored {
                            held,
                            message: error.clone().unwrap_or_default(),
                            response: response.clone(),
                        },
                    }
                }
                _ => Settled::Other { held: self.held },
            },
            _ => Settled::Other { held: self.held },
        }
    }

    /// `call` as the step to hand over, kept to send again after
    /// `NOSCRIPT`.
    pub(crate) fn send(&mut self, call: RedisCall) -> RecordStep {
        self.call = Some(call.clone());
        Step::Yield(RecordYield::Redis(call))
    }
}
