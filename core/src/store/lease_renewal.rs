//! Renewing and releasing a held worker-id lease as drivers: the guard
//! decides, the host runs `lease_renew` or `lease_release` and pushes the
//! affected-row count back.

use super::record_driver::{db_error, int};
use super::{Answer, DriverError, Manifest, Step, StoreError, StoreErrorKind};
use crate::lease::{LeaseErrorKind, LeaseGuard, Renewal};

/// One renewal of a held lease (the heartbeat's beat), deciding everything
/// the guard does not: what a refusal, a failure and the answer mean.
///
/// Steps: [`start`](Self::start) gives `Run(lease_renew)`, [`push`](Self::push)
/// its affected-row count gives `Yield(deadline)`; every refusal is a `Fail`:
///
/// * `lease.clock_behind`: the clock went back (`now + lease` would not
///   extend the stored deadline). Nothing is written; it **counts as a failed
///   attempt**, so the next one is due the policy's retry pause later, like a
///   renewal the database did not answer. The stop point does not move.
/// * a database failure (`store.unavailable`, `store.conflict`, …): a failed
///   attempt too.
/// * `lease.expired`: the deadline passed, too late to renew (acquire a new
///   lease); counted as a failed attempt as well, so a heartbeat that keeps
///   going tries again only after the retry pause.
/// * `lease.lost` (no row changed: another holder has the worker id; for
///   good), `lease.released`: the guard is no longer live and nothing is
///   due.
///
/// The host's heartbeat sleeps until the guard's `next_renewal_at_millis`
/// and starts a renewal with the generator's own high-water time.
#[derive(Debug, Clone)]
pub struct LeaseRenewal {
    manifest: Manifest,
    pending: Option<Renewal>,
}

impl LeaseRenewal {
    /// A renewal over `manifest`'s statements.
    pub fn new(manifest: Manifest) -> Self {
        Self {
            manifest,
            pending: None,
        }
    }

    /// Start renewing `guard` at `now_millis`, storing `high_water_millis`
    /// (the generator's high-water time, or its start point before the first
    /// ID; the stored mark never goes down).
    pub fn start(
        &mut self,
        guard: &LeaseGuard,
        now_millis: u64,
        high_water_millis: u64,
    ) -> Step<u64> {
        match guard.renewal(now_millis, high_water_millis) {
            Ok(renewal) => {
                let query = self.manifest.query("lease_renew", |param| match param {
                    "worker_id" => Some(int(renewal.worker_id)),
                    "fencing_token" => Some(int(renewal.fencing_token)),
                    "lease_deadline_millis" => Some(int(renewal.lease_deadline_millis)),
                    "high_water_millis" => Some(int(renewal.high_water_millis)),
                    "now_millis" => Some(int(renewal.now_millis)),
                    _ => None,
                });
                self.pending = Some(renewal);
                Step::Run(query)
            }
            Err(error) => {
                if matches!(
                    error.kind(),
                    LeaseErrorKind::ClockBehind | LeaseErrorKind::Expired
                ) {
                    guard.renewal_failed(now_millis);
                }
                Step::Fail(error.into())
            }
        }
    }

    /// Push the answer to `lease_renew`, at `now_millis`.
    pub fn push(&mut self, guard: &LeaseGuard, answer: Answer, now_millis: u64) -> Step<u64> {
        let Some(renewal) = self.pending.take() else {
            return Step::Fail(unexpected("a renewal's answer came before its query"));
        };
        match answer {
            Answer::Affected(rows) => match guard.renewed(&renewal, rows) {
                Ok(()) => Step::Yield(guard.lease_deadline_millis()),
                Err(error) => Step::Fail(error.into()),
            },
            Answer::Failed(error) => {
                guard.renewal_failed(now_millis);
                Step::Fail(DriverError::Store(db_error(&error, false)))
            }
            Answer::Rows(_) => {
                guard.renewal_failed(now_millis);
                Step::Fail(unexpected(
                    "the answer to lease_renew is not an affected-row count",
                ))
            }
        }
    }
}

/// The release of a held lease on clean shutdown.
///
/// [`new`](Self::new) stops the guard at once (every later `check` and
/// `admit` fails with `lease.released`); only then does the host read its
/// generator's high-water time, so that no ID can be issued after the mark
/// stored. [`start`](Self::start) gives `Run(lease_release)`, or
/// `Yield(false)` without a query when the lease was already lost or
/// released; [`push`](Self::push) gives `Yield(true)` when the row was still
/// this holder's. A database failure is a `Fail` (`store.unavailable`, …):
/// the lease then runs out at its deadline.
#[derive(Debug, Clone)]
pub struct LeaseRelease {
    manifest: Manifest,
    was_live: bool,
    started: bool,
}

impl LeaseRelease {
    /// The release of `guard`'s lease over `manifest`'s statements: `guard`
    /// stops issuing now.
    pub fn new(manifest: Manifest, guard: &LeaseGuard) -> Self {
        Self {
            manifest,
            was_live: guard.stop_issuing(),
            started: false,
        }
    }

    /// Start the release at `now_millis`, storing `high_water_millis`: the
    /// generator's high-water time, read after [`new`](Self::new).
    pub fn start(
        &mut self,
        guard: &LeaseGuard,
        now_millis: u64,
        high_water_millis: u64,
    ) -> Step<bool> {
        if !self.was_live {
            return Step::Yield(false);
        }
        self.started = true;
        let release = guard.release(now_millis, high_water_millis);
        Step::Run(self.manifest.query("lease_release", |param| match param {
            "worker_id" => Some(int(release.worker_id)),
            "fencing_token" => Some(int(release.fencing_token)),
            "high_water_millis" => Some(int(release.high_water_millis)),
            "now_millis" => Some(int(release.now_millis)),
            _ => None,
        }))
    }

    /// Push the answer to `lease_release`.
    pub fn push(&mut self, answer: Answer) -> Step<bool> {
        if !core::mem::take(&mut self.started) {
            return Step::Fail(unexpected("a release's answer came before its query"));
        }
        match answer {
            Answer::Affected(rows) => Step::Yield(rows == 1),
            Answer::Failed(error) => Step::Fail(DriverError::Store(db_error(&error, false))),
            Answer::Rows(_) => Step::Fail(unexpected(
                "the answer to lease_release is not an affected-row count",
            )),
        }
    }
}

fn unexpected(message: &'static str) -> DriverError {
    DriverError::Store(StoreError::new(StoreErrorKind::UnexpectedRow, message))
}
