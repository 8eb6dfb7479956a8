//! Taking a worker id as a driver: inside one write transaction, find the
//! lowest free or ended row, let the core decide, take it by compare-and-set;
//! a row the core cannot use now (its high-water mark too far ahead of this
//! clock) is skipped for the next one. When nothing is found: seed missing
//! rows, pause and retry while free rows are locked by concurrent
//! acquisitions, wait for a skipped row or a held one up to the caller's
//! deadline, or fail.

use alloc::string::String;

use super::limits;
use super::record_driver::{db_error, int};
use super::{Answer, DbErrorClass, DriverError, Manifest, Query, Step, Value};
use crate::lease::{
    self, Acquisition, LeaseCount, LeaseError, LeasePolicy, NoneFound, WorkerLease,
};

/// The pause before finding again while free rows are locked by concurrent
/// acquisitions, in milliseconds.
pub const LOCKED_RETRY_MILLIS: u64 = 5;

/// How many times an acquisition starts again after a serialization failure
/// or a deadlock, beyond one per worker id of the policy: each such failure
/// means a competing acquisition went on to take a row (InnoDB rolls back one
/// victim of a deadlock; PostgreSQL and SQLite refuse the later writer), so a
/// crowd of hosts starting at once settles within that many rounds.
const CONFLICT_RETRIES: u64 = super::record_driver::RETRIES as u64;

/// A step of an acquisition: its `Yield` is the acquisition taken, once its
/// holder may issue (any wait for the previous holder's clock skew is a
/// `Pause` before it).
pub type LeaseStep = Step<Acquisition>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Idle,
    Begun,
    Finding,
    Taking(Acquisition),
    Committing(After),
    Counting,
    Seeding,
    RollingBack(Option<DriverError>),
    Waiting,
    Readying(Acquisition),
    Ended,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum After {
    Taken(Acquisition),
    LostRace,
    NoneFound,
}

/// One acquisition of a worker id for `owner` under a [`LeasePolicy`].
///
/// Steps: `Begin { write: true }`, `Run(lease_find)`, the core's
/// [`lease::acquire`] on the row, `Run(lease_take)`, `Commit`, then a
/// `Pause` until the new holder may issue, then `Yield(acquisition)`. A row
/// whose high-water mark lies further ahead than the policy's
/// `max_start_wait` (released by a host whose clock ran fast) does not block
/// the others: the driver runs `lease_find_after` for the next candidate.
/// When nothing is found it commits and reads `lease_count`: missing rows are
/// seeded (`lease_seed`) and the search starts again; free rows locked by
/// concurrent acquisitions are retried after `LOCKED_RETRY_MILLIS`; with
/// every row held (or only skipped rows free), the driver waits until one
/// may be usable if the caller set a deadline that allows it, and otherwise
/// fails: `lease.no_worker_free`, `lease.high_water_ahead` (the soonest
/// skipped row), or `lease.acquire_timeout` once the deadline has passed.
#[derive(Debug, Clone)]
pub struct LeaseAcquisition {
    manifest: Manifest,
    policy: LeasePolicy,
    owner: String,
    timeout_millis: Option<u64>,
    /// The start plus the timeout, Unix ms.
    deadline_millis: Option<u64>,
    state: State,
    /// The highest worker id skipped in this search, and the soonest time a
    /// skipped row becomes usable.
    skipped: Option<(u64, u64, LeaseError)>,
    conflicts: u64,
}

impl LeaseAcquisition {
    /// An acquisition for `owner` (a host, pod or process name, made
    /// storable and cut to 255 bytes: [`limits::lease_owner`]), giving up
    /// `timeout_millis` after its start when set (`lease.acquire_timeout`).
    pub fn new(
        manifest: Manifest,
        policy: LeasePolicy,
        owner: &str,
        timeout_millis: Option<u64>,
    ) -> Self {
        Self {
            manifest,
            policy,
            owner: limits::lease_owner(owner),
            timeout_millis,
            deadline_millis: None,
            state: State::Idle,
            skipped: None,
            conflicts: 0,
        }
    }

    /// The first step, at `now_millis`.
    pub fn start(&mut self, now_millis: u64) -> LeaseStep {
        self.deadline_millis = self
            .timeout_millis
            .map(|timeout| now_millis.saturating_add(timeout));
        self.search(now_millis)
    }

    /// Push the answer to the last `Run`, `Begin`, `Commit` or `Rollback`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> LeaseStep {
        if let Answer::Failed(error) = &answer {
            return self.failed(error, now_millis);
        }
        match core::mem::replace(&mut self.state, State::Ended) {
            State::Begun => self.find(now_millis, None),
            State::Finding => match answer {
                Answer::Rows(rows) => match rows.first() {
                    None => self.commit(After::NoneFound),
                    Some(row) => self.found(row, now_millis),
                },
                _ => self.rollback(Some(unexpected())),
            },
            State::Taking(made) => match answer {
                Answer::Affected(1) => self.commit(After::Taken(made)),
                Answer::Affected(_) => self.commit(After::LostRace),
                _ => self.rollback(Some(unexpected())),
            },
            State::Committing(After::Taken(made)) => {
                let wait = made.ready_at_millis.saturating_sub(now_millis);
                if wait > 0 {
                    self.state = State::Readying(made);
                    Step::Pause { millis: wait }
                } else {
                    self.end(made)
                }
            }
            State::Committing(After::LostRace) => self.search(now_millis),
            State::Committing(After::NoneFound) => match self.skipped.clone() {
                Some((_, usable_at, error)) => self.wait_until(usable_at, now_millis, error),
                None => {
                    self.state = State::Counting;
                    Step::Run(self.window("lease_count", now_millis, None))
                }
            },
            State::Counting => match answer {
                Answer::Rows(rows) => self.counted(rows.first().map(|r| r.as_slice()), now_millis),
                _ => self.fail(unexpected()),
            },
            State::Seeding => self.search(now_millis),
            State::RollingBack(Some(error)) => self.fail(error),
            State::RollingBack(None) => self.pause(self.conflict_pause(), now_millis),
            state => {
                self.state = state;
                self.fail(unexpected())
            }
        }
    }

    /// Continue after a `Pause`, at `now_millis`.
    pub fn resume(&mut self, now_millis: u64) -> LeaseStep {
        match core::mem::replace(&mut self.state, State::Ended) {
            State::Readying(made) => self.end(made),
            State::Waiting => self.search(now_millis),
            state => {
                self.state = state;
                self.fail(unexpected())
            }
        }
    }

    /// A new search: a write transaction, unless the deadline has passed.
    fn search(&mut self, now_millis: u64) -> LeaseStep {
        if let Some(deadline) = self.deadline_millis {
            if now_millis >= deadline {
                let usable_at = self.skipped.as_ref().map(|(_, at, _)| *at);
                return self.fail(LeaseError::acquire_timeout(deadline, usable_at).into());
            }
        }
        self.skipped = None;
        self.state = State::Begun;
        Step::Begin { write: true }
    }

    fn window(&self, name: &'static str, now: u64, after: Option<u64>) -> Query {
        let max_worker = self.policy.max_worker();
        self.manifest.query(name, |param| match param {
            "max_worker" => Some(int(max_worker)),
            "now_millis" => Some(int(now)),
            "after_worker" => Some(after.map_or(Value::Int(-1), int)),
            _ => None,
        })
    }

    fn find(&mut self, now: u64, after: Option<u64>) -> LeaseStep {
        self.state = State::Finding;
        let name = if after.is_some() {
            "lease_find_after"
        } else {
            "lease_find"
        };
        Step::Run(self.window(name, now, after))
    }

    fn found(&mut self, row: &[Value], now: u64) -> LeaseStep {
        let Some(found) = read_lease(row) else {
            return self.rollback(Some(unexpected()));
        };
        match lease::acquire(&found, now, &self.policy) {
            Ok(made) => {
                let owner = Value::Text(self.owner.clone());
                let query = self.manifest.query("lease_take", |param| match param {
                    "worker_id" => Some(int(made.lease.worker_id)),
                    "owner" => Some(owner.clone()),
                    "fencing_token" => Some(int(made.lease.fencing_token)),
                    "lease_deadline_millis" => Some(int(made.lease.lease_deadline_millis)),
                    "high_water_millis" => Some(int(made.lease.high_water_millis)),
                    "expected_token" => Some(int(made.expected_token)),
                    "now_millis" => Some(int(made.acquired_millis)),
                    _ => None,
                });
                self.state = State::Taking(made);
                Step::Run(query)
            }
            Err(error) if error.kind() == lease::LeaseErrorKind::HighWaterAhead => {
                // Usable once the clock is within max_start_wait of its ready time.
                let usable_at = error.ready_at_millis().map_or(now, |ready| {
                    ready.saturating_sub(self.policy.max_start_wait_millis())
                });
                let soonest = match self.skipped.clone() {
                    Some((_, at, first)) if at <= usable_at => (at, first),
                    _ => (usable_at, error),
                };
                self.skipped = Some((found.worker_id, soonest.0, soonest.1));
                self.find(now, Some(found.worker_id))
            }
            Err(error) => self.rollback(Some(error.into())),
        }
    }

    fn counted(&mut self, row: Option<&[Value]>, now: u64) -> LeaseStep {
        let count = row.and_then(|row| {
            let read = |at: usize| {
                row.get(at)
                    .and_then(Value::as_int)
                    .and_then(|v| u64::try_from(v).ok())
            };
            Some(LeaseCount {
                present: read(0)?,
                free: read(1)?,
            })
        });
        let Some(count) = count else {
            return self.fail(unexpected());
        };
        match lease::none_found(count, &self.policy) {
            Ok(NoneFound::Seed) => {
                self.state = State::Seeding;
                Step::Run(self.window("lease_seed", now, None))
            }
            Ok(NoneFound::Retry) => self.pause(LOCKED_RETRY_MILLIS, now),
            Err(error) => {
                // Every row is held: wait for the soonest possible end while the
                // deadline allows (a lease ends at the latest a lease period on).
                let poll = self.policy.renew_retry_millis().max(1);
                self.wait_until(now.saturating_add(poll), now, error)
            }
        }
    }

    /// Wait until `usable_at` if the deadline allows it, else fail with `error`.
    fn wait_until(&mut self, usable_at: u64, now: u64, error: LeaseError) -> LeaseStep {
        match self.deadline_millis {
            Some(deadline) if now < deadline => {
                let until = usable_at.clamp(now.saturating_add(1), deadline);
                self.pause(until - now, now)
            }
            Some(deadline) => {
                self.fail(LeaseError::acquire_timeout(deadline, Some(usable_at)).into())
            }
            None => self.fail(error.into()),
        }
    }

    fn pause(&mut self, millis: u64, _now: u64) -> LeaseStep {
        self.state = State::Waiting;
        Step::Pause {
            millis: millis.max(1),
        }
    }

    fn commit(&mut self, after: After) -> LeaseStep {
        self.state = State::Committing(after);
        Step::Commit
    }

    fn rollback(&mut self, error: Option<DriverError>) -> LeaseStep {
        self.state = State::RollingBack(error);
        Step::Rollback
    }

    fn failed(&mut self, error: &super::DbError, now: u64) -> LeaseStep {
        let in_transaction = matches!(
            self.state,
            State::Begun | State::Finding | State::Taking(_) | State::Committing(_)
        );
        let budget = self
            .policy
            .max_worker()
            .saturating_add(1)
            .saturating_add(CONFLICT_RETRIES);
        if error.class == DbErrorClass::Serialization && self.conflicts < budget {
            self.conflicts += 1;
            if in_transaction {
                return self.rollback(None);
            }
            return self.pause(self.conflict_pause(), now);
        }
        let failure = DriverError::Store(db_error(error, false));
        if in_transaction && error.class != DbErrorClass::ConnectionLost {
            return self.rollback(Some(failure));
        }
        self.fail(failure)
    }

    /// The pause before searching again after a conflict: 1 to
    /// [`LOCKED_RETRY_MILLIS`] ms, spread by the owner and the round, so that
    /// the hosts a deadlock rolled back do not all start again at once.
    fn conflict_pause(&self) -> u64 {
        let spread = self.owner.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        });
        1 + (u64::from(spread) + self.conflicts) % LOCKED_RETRY_MILLIS
    }

    fn end(&mut self, made: Acquisition) -> LeaseStep {
        self.state = State::Ended;
        Step::Yield(made)
    }

    fn fail(&mut self, error: DriverError) -> LeaseStep {
        self.state = State::Ended;
        Step::Fail(error)
    }
}

/// Reads a `lease_find` row: `worker_id, owner, fencing_token,
/// lease_deadline_millis, high_water_millis`.
fn read_lease(row: &[Value]) -> Option<WorkerLease> {
    let int = |at: usize| row.get(at)?.as_int().and_then(|v| u64::try_from(v).ok());
    Some(WorkerLease {
        worker_id: int(0)?,
        held: !matches!(row.get(1)?, Value::Null),
        fencing_token: int(2)?,
        lease_deadline_millis: int(3)?,
        high_water_millis: int(4)?,
    })
}

fn unexpected() -> DriverError {
    DriverError::Store(super::StoreError::new(
        super::StoreErrorKind::UnexpectedRow,
        "a lease query's answer is not of its result kind",
    ))
}
