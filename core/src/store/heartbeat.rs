//! The heartbeat of a held record claim: when to renew, what a failed
//! renewal means, and when the heartbeat ends (`docs/spec.md`, "The
//! heartbeat").

use super::record_driver::{COMPLETION_PAUSE_MAX_MILLIS, RETRY_PAUSE_MILLIS};
use super::{Answer, DriverError, Held, Manifest, RecordRenewal, Step, StoreError, StoreErrorKind};
use crate::key::IdempotencyKey;
use crate::record::RecordPolicy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Beat {
    Idle,
    Sleeping,
    Renewing,
    Ended,
}

/// One schedule and one stop rule for the lease of a held claim while its
/// operation runs, around [`RecordRenewal`].
///
/// The host runs the heartbeat beside the operation (a thread or a task):
/// it sleeps each [`Step::Pause`], calls [`resume`](Self::resume), runs each
/// [`Step::Run`] and pushes the answer, and calls [`stop`](Self::stop) when
/// the operation returns. The heartbeat
/// * beats every [`Held::renew_every_millis`] after the last renewal (a
///   third of the lease), one renewal at a time, never sleeping past the
///   lease's deadline;
/// * after `store.unavailable` or `store.conflict` tries again while the
///   lease runs, its pauses doubling from [`RETRY_PAUSE_MILLIS`] up to
///   [`COMPLETION_PAUSE_MAX_MILLIS`] and cut at the deadline;
/// * ends with `Fail(store.record_lost)` when the record was taken over or
///   completed, or when the deadline passed before a renewal succeeded (it
///   never renews a lease that ran out), with `Fail` for any other failure,
///   and with `Yield(deadline)` once stopped (at once: nothing is left to
///   run). A claim with no `renew_every_millis` (inside a caller's
///   transaction) has no heartbeat: `start` yields at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordHeartbeat {
    renewal: RecordRenewal,
    /// The beat, in milliseconds; 0 for a claim without a heartbeat.
    every: u64,
    retry_pause: u64,
    beat: Beat,
}

impl RecordHeartbeat {
    /// The heartbeat of `held`, a claim of `key` under `policy`.
    pub fn new(
        manifest: Manifest,
        policy: RecordPolicy,
        key: &IdempotencyKey,
        held: &Held,
    ) -> Self {
        Self {
            renewal: RecordRenewal::new(manifest, policy, key, held),
            every: held.renew_every_millis.unwrap_or(0),
            retry_pause: RETRY_PAUSE_MILLIS,
            beat: Beat::Idle,
        }
    }

    /// The lease deadline as last renewed.
    pub const fn lease_deadline_millis(&self) -> u64 {
        self.renewal.lease_deadline_millis()
    }

    /// Start at `now_millis` (when the operation starts): the first pause.
    pub fn start(&mut self, now_millis: u64) -> Step<u64> {
        match (self.beat, self.every) {
            (Beat::Idle, 0) => self.stop(),
            (Beat::Idle, every) => self.sleep(every, now_millis),
            _ => self.misuse("start"),
        }
    }

    /// Resume after a pause, at `now_millis`: the renewal to run, or the end
    /// when the lease ran out meanwhile.
    pub fn resume(&mut self, now_millis: u64) -> Step<u64> {
        match self.beat {
            Beat::Sleeping if now_millis >= self.lease_deadline_millis() => self.lapsed(),
            Beat::Sleeping => {
                self.beat = Beat::Renewing;
                Step::Run(self.renewal.start(now_millis))
            }
            Beat::Ended => Step::Yield(self.lease_deadline_millis()),
            Beat::Idle | Beat::Renewing => self.misuse("resume"),
        }
    }

    /// Push the database's answer to the last query, at `now_millis`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> Step<u64> {
        match self.beat {
            Beat::Renewing => {}
            Beat::Ended => return Step::Yield(self.lease_deadline_millis()),
            Beat::Idle | Beat::Sleeping => return self.misuse("push"),
        }
        match self.renewal.push(answer) {
            Step::Yield(_) => {
                self.retry_pause = RETRY_PAUSE_MILLIS;
                self.sleep(self.every, now_millis)
            }
            Step::Fail(DriverError::Store(error))
                if matches!(
                    error.kind(),
                    StoreErrorKind::Unavailable | StoreErrorKind::Conflict
                ) =>
            {
                if now_millis >= self.lease_deadline_millis() {
                    return self.lapsed();
                }
                let pause = self.retry_pause;
                self.retry_pause = (pause * 2).min(COMPLETION_PAUSE_MAX_MILLIS);
                self.sleep(pause, now_millis)
            }
            Step::Fail(error) => self.end(error),
            step => step,
        }
    }

    /// The host stops the heartbeat (the operation returned): `Yield` of the
    /// lease deadline as last renewed. A renewal in flight is not waited for:
    /// its answer, pushed later, changes nothing.
    pub fn stop(&mut self) -> Step<u64> {
        self.beat = Beat::Ended;
        Step::Yield(self.lease_deadline_millis())
    }

    /// Sleep `millis` (at least 1), cut at the deadline.
    fn sleep(&mut self, millis: u64, now_millis: u64) -> Step<u64> {
        let left = self.lease_deadline_millis().saturating_sub(now_millis);
        if left == 0 {
            return self.lapsed();
        }
        self.beat = Beat::Sleeping;
        Step::Pause {
            millis: millis.min(left).max(1),
        }
    }

    fn lapsed(&mut self) -> Step<u64> {
        self.end(DriverError::Store(StoreError::new(
            StoreErrorKind::RecordLost,
            "the record's lease ran out before a renewal succeeded",
        )))
    }

    fn end(&mut self, error: DriverError) -> Step<u64> {
        self.beat = Beat::Ended;
        Step::Fail(error)
    }

    fn misuse(&mut self, call: &str) -> Step<u64> {
        self.end(DriverError::Store(StoreError::new(
            StoreErrorKind::QueryFailed,
            alloc::format!("{call} does not fit the heartbeat's state (a host bug)"),
        )))
    }
}
