//! Renewing a held record's lease (the heartbeat of `run once` and of a
//! held lease), and cleaning up expired records.

use super::limits;
use super::record_driver::{KeyParams, db_error, int, read_record};
use super::{Answer, DriverError, Held, Manifest, Query, Step, StoreError, StoreErrorKind};
use crate::key::IdempotencyKey;
use crate::record::{Fence, RecordPolicy, Status};

/// The heartbeat of one held claim: each renewal moves the lease deadline to
/// `now + lease` (and always forward, so the row changes and MySQL's
/// affected-row count reads right with or without `CLIENT_FOUND_ROWS`).
///
/// A renewal that changes no row loads the record: still pending under this
/// fence (an earlier renewal's answer was lost), it counts as renewed;
/// otherwise the key was taken over or completed and the renewal yields
/// `store.record_lost`. A database that is unavailable yields
/// `store.unavailable`: the host tries again at the next beat while the
/// lease runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRenewal {
    params: KeyParams,
    policy: RecordPolicy,
    fence: Fence,
    deadline: u64,
    pending: u64,
    checking: bool,
}

impl RecordRenewal {
    /// The heartbeat of `held`, a claim of `key` under `policy`.
    pub fn new(
        manifest: Manifest,
        policy: RecordPolicy,
        key: &IdempotencyKey,
        held: &Held,
    ) -> Self {
        Self {
            params: KeyParams::new(manifest, key),
            policy,
            fence: held.fence(),
            deadline: held.lease_deadline_millis,
            pending: held.lease_deadline_millis,
            checking: false,
        }
    }

    /// The heartbeat of `claim` (a record driver's own, between two tries of
    /// its completion), whose lease runs until `deadline`.
    pub(crate) fn of_claim(
        params: KeyParams,
        policy: RecordPolicy,
        claim: crate::record::Claim,
        deadline: u64,
    ) -> Self {
        Self {
            params,
            policy,
            fence: claim.fence(),
            deadline,
            pending: deadline,
            checking: false,
        }
    }

    /// The lease deadline as last renewed.
    pub const fn lease_deadline_millis(&self) -> u64 {
        self.deadline
    }

    /// Start a renewal at `now_millis`: the `renew` query to run.
    pub fn start(&mut self, now_millis: u64) -> Query {
        self.checking = false;
        let next = now_millis
            .saturating_add(self.policy.lease_millis())
            .max(self.deadline.saturating_add(1));
        self.pending = next;
        self.params
            .fenced("renew", self.fence, now_millis, |param| match param {
                "lease_deadline_millis" => Some(int(next)),
                _ => None,
            })
    }

    /// Push the database's answer: `Yield(deadline)` when renewed,
    /// `Run(load)` to check a renewal that changed no row, or `Fail`.
    pub fn push(&mut self, answer: Answer) -> Step<u64> {
        match answer {
            Answer::Failed(error) => Step::Fail(DriverError::Store(db_error(&error, true))),
            Answer::Affected(1) if !self.checking => {
                self.deadline = self.pending;
                Step::Yield(self.deadline)
            }
            Answer::Affected(_) if !self.checking => {
                self.checking = true;
                Step::Run(self.params.load())
            }
            Answer::Rows(rows) if self.checking => {
                let held = match rows.first().map(|row| read_record(row)) {
                    Some(Ok(stored)) => (stored.record.fence() == self.fence
                        && stored.record.status == Status::Pending)
                        .then_some(stored.record.lease_deadline_millis),
                    Some(Err(error)) => return Step::Fail(error),
                    None => None,
                };
                if let Some(deadline) = held {
                    self.deadline = deadline;
                    Step::Yield(deadline)
                } else {
                    Step::Fail(DriverError::Store(StoreError::new(
                        StoreErrorKind::RecordLost,
                        "the record's lease was lost: the key was taken over or completed",
                    )))
                }
            }
            _ => Step::Fail(DriverError::Store(StoreError::new(
                StoreErrorKind::UnexpectedRow,
                "the answer to a renewal is not of the query's result kind",
            ))),
        }
    }
}

/// Deletes expired records in batches until a batch comes back short: a
/// pending record only once its lease has passed too.
#[derive(Debug, Clone)]
pub struct RecordCleanup {
    manifest: Manifest,
    batch_size: u64,
    deleted: u64,
}

impl RecordCleanup {
    /// A cleanup over `manifest`'s statements, `batch_size` (at least 1)
    /// records per statement.
    pub fn new(manifest: Manifest, batch_size: u64) -> Self {
        Self {
            manifest,
            batch_size: limits::batch_size(batch_size),
            deleted: 0,
        }
    }

    /// The next batch's query, at `now_millis`.
    pub fn next(&self, now_millis: u64) -> Query {
        self.manifest.query("cleanup", |param| match param {
            "now_millis" => Some(int(now_millis)),
            "batch_size" => Some(int(self.batch_size)),
            _ => None,
        })
    }

    /// Push a batch's answer: `Run` for the next batch (call
    /// [`next`](Self::next)), `Yield(total)` when done, or `Fail`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> Step<u64> {
        batch_deleted(&mut self.deleted, self.batch_size, answer, "cleanup")
            .unwrap_or_else(|| Step::Run(self.next(now_millis)))
    }
}

/// Adds a batch's affected-row count to `deleted`: `None` when the batch was
/// full (run the next one), else `Yield(total)`, or `Fail` for a failed or
/// unreadable answer to the cleanup query `name`.
pub(crate) fn batch_deleted(
    deleted: &mut u64,
    batch_size: u64,
    answer: Answer,
    name: &str,
) -> Option<Step<u64>> {
    match answer {
        Answer::Affected(count) => {
            *deleted = deleted.saturating_add(count);
            (count < batch_size).then_some(Step::Yield(*deleted))
        }
        Answer::Failed(error) => Some(Step::Fail(DriverError::Store(db_error(&error, false)))),
        Answer::Rows(_) => Some(Step::Fail(DriverError::Store(StoreError::new(
            StoreErrorKind::UnexpectedRow,
            alloc::format!("the answer to {name} is not an affected-row count"),
        )))),
    }
}
