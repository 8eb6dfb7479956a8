//! The one error type of the worker-id lease rules.

use core::fmt;

/// Why a lease rule refused. See [`kind`](LeaseError::kind) and
/// [`code`](LeaseError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseError {
    detail: Detail,
}

/// The kinds of [`LeaseError`], each with a stable [`code`](LeaseErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LeaseErrorKind {
    /// `lease.invalid_policy`: a policy value is out of range.
    InvalidPolicy,
    /// `lease.no_worker_free`: every worker id of the layout is held by a
    /// live lease.
    NoWorkerFree,
    /// `lease.worker_out_of_range`: a stored worker id does not fit the
    /// layout's worker field.
    WorkerOutOfRange,
    /// `lease.still_held`: the row offered for acquisition is held by a lease
    /// that has not ended.
    StillHeld,
    /// `lease.high_water_ahead`: the worker id's high-water mark lies further
    /// ahead of this clock than the policy lets a new holder wait.
    HighWaterAhead,
    /// `lease.token_exhausted`: the fencing token cannot be bumped.
    TokenExhausted,
    /// `lease.time_overflow`: a time plus a policy duration exceeds 64 bits.
    TimeOverflow,
    /// `lease.not_ready`: the new holder must not issue yet (the previous
    /// holder's possible clock skew, or a high-water mark ahead of the clock).
    NotReady,
    /// `lease.clock_behind`: a renewal would not extend the deadline already
    /// written (`now + lease ≤ deadline`): the clock went back. Nothing is
    /// written; retry later.
    ClockBehind,
    /// `lease.expired`: the lease's stop point has passed (no renewal
    /// succeeded in time); no more IDs until a new lease is acquired.
    Expired,
    /// `lease.lost`: a renewal was refused: another process holds the worker
    /// id now.
    Lost,
    /// `lease.released`: the lease was released; no more IDs.
    Released,
    /// `lease.foreign_id`: an ID checked against the lease does not fit its
    /// layout, carries another worker id, or lies before the lease's start
    /// point.
    ForeignId,
    /// `lease.acquire_timeout`: no worker id could be taken before the
    /// caller's deadline.
    AcquireTimeout,
}

impl LeaseErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidPolicy => "lease.invalid_policy",
            Self::NoWorkerFree => "lease.no_worker_free",
            Self::WorkerOutOfRange => "lease.worker_out_of_range",
            Self::StillHeld => "lease.still_held",
            Self::HighWaterAhead => "lease.high_water_ahead",
            Self::TokenExhausted => "lease.token_exhausted",
            Self::TimeOverflow => "lease.time_overflow",
            Self::NotReady => "lease.not_ready",
            Self::ClockBehind => "lease.clock_behind",
            Self::Expired => "lease.expired",
            Self::Lost => "lease.lost",
            Self::Released => "lease.released",
            Self::ForeignId => "lease.foreign_id",
            Self::AcquireTimeout => "lease.acquire_timeout",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    AcquireTimeout {
        deadline: u64,
        usable_at: Option<u64>,
    },
    InvalidPolicy {
        field: &'static str,
        reason: &'static str,
    },
    NoWorkerFree {
        max_worker: u64,
    },
    WorkerOutOfRange {
        worker_id: u64,
        max_worker: u64,
    },
    StillHeld {
        worker_id: u64,
        lease_deadline: u64,
        now: u64,
    },
    HighWaterAhead {
        worker_id: u64,
        ready_at: u64,
        now: u64,
        max_wait: u64,
    },
    TokenExhausted {
        worker_id: u64,
    },
    TimeOverflow {
        millis: u64,
        duration: u64,
    },
    NotReady {
        ready_at: u64,
        now: u64,
    },
    ClockBehind {
        deadline: u64,
        renewed_deadline: u64,
    },
    Expired {
        stop_at: u64,
        at: u64,
    },
    Lost {
        worker_id: u64,
        fencing_token: u64,
    },
    Released {
        worker_id: u64,
    },
    WrongWorker {
        worker: u64,
        worker_id: u64,
    },
    BeforeStart {
        unix_millis: u64,
        start_after: u64,
    },
    NotInLayout {
        id: u64,
    },
}

impl LeaseError {
    pub(crate) const fn invalid_policy(field: &'static str, reason: &'static str) -> Self {
        Self::new(Detail::InvalidPolicy { field, reason })
    }

    /// `lease.acquire_timeout`: nothing could be taken by `deadline`; a
    /// skipped worker id becomes usable at `usable_at`, when one was seen.
    pub(crate) const fn acquire_timeout(deadline: u64, usable_at: Option<u64>) -> Self {
        Self::new(Detail::AcquireTimeout {
            deadline,
            usable_at,
        })
    }

    pub(crate) const fn no_worker_free(max_worker: u64) -> Self {
        Self::new(Detail::NoWorkerFree { max_worker })
    }

    pub(crate) const fn worker_out_of_range(worker_id: u64, max_worker: u64) -> Self {
        Self::new(Detail::WorkerOutOfRange {
            worker_id,
            max_worker,
        })
    }

    pub(crate) const fn still_held(worker_id: u64, lease_deadline: u64, now: u64) -> Self {
        Self::new(Detail::StillHeld {
            worker_id,
            lease_deadline,
            now,
        })
    }

    pub(crate) const fn high_water_ahead(
        worker_id: u64,
        ready_at: u64,
        now: u64,
        max_wait: u64,
    ) -> Self {
        Self::new(Detail::HighWaterAhead {
            worker_id,
            ready_at,
            now,
            max_wait,
        })
    }

    pub(crate) const fn token_exhausted(worker_id: u64) -> Self {
        Self::new(Detail::TokenExhausted { worker_id })
    }

    pub(crate) const fn time_overflow(millis: u64, duration: u64) -> Self {
        Self::new(Detail::TimeOverflow { millis, duration })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn not_ready(ready_at: u64, now: u64) -> Self {
        Self::new(Detail::NotReady { ready_at, now })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn clock_behind(deadline: u64, renewed_deadline: u64) -> Self {
        Self::new(Detail::ClockBehind {
            deadline,
            renewed_deadline,
        })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn expired(stop_at: u64, at: u64) -> Self {
        Self::new(Detail::Expired { stop_at, at })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn lost(worker_id: u64, fencing_token: u64) -> Self {
        Self::new(Detail::Lost {
            worker_id,
            fencing_token,
        })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn released(worker_id: u64) -> Self {
        Self::new(Detail::Released { worker_id })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn wrong_worker(worker: u64, worker_id: u64) -> Self {
        Self::new(Detail::WrongWorker { worker, worker_id })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn before_start(unix_millis: u64, start_after: u64) -> Self {
        Self::new(Detail::BeforeStart {
            unix_millis,
            start_after,
        })
    }

    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the guard reports it
    pub(crate) const fn not_in_layout(id: u64) -> Self {
        Self::new(Detail::NotInLayout { id })
    }

    const fn new(detail: Detail) -> Self {
        Self { detail }
    }

    /// What went wrong.
    pub const fn kind(&self) -> LeaseErrorKind {
        match self.detail {
            Detail::InvalidPolicy { .. } => LeaseErrorKind::InvalidPolicy,
            Detail::NoWorkerFree { .. } => LeaseErrorKind::NoWorkerFree,
            Detail::AcquireTimeout { .. } => LeaseErrorKind::AcquireTimeout,
            Detail::WorkerOutOfRange { .. } => LeaseErrorKind::WorkerOutOfRange,
            Detail::StillHeld { .. } => LeaseErrorKind::StillHeld,
            Detail::HighWaterAhead { .. } => LeaseErrorKind::HighWaterAhead,
            Detail::TokenExhausted { .. } => LeaseErrorKind::TokenExhausted,
            Detail::TimeOverflow { .. } => LeaseErrorKind::TimeOverflow,
            Detail::NotReady { .. } => LeaseErrorKind::NotReady,
            Detail::ClockBehind { .. } => LeaseErrorKind::ClockBehind,
            Detail::Expired { .. } => LeaseErrorKind::Expired,
            Detail::Lost { .. } => LeaseErrorKind::Lost,
            Detail::Released { .. } => LeaseErrorKind::Released,
            Detail::WrongWorker { .. }
            | Detail::BeforeStart { .. }
            | Detail::NotInLayout { .. } => LeaseErrorKind::ForeignId,
        }
    }

    /// When the worker id refused as [`HighWaterAhead`](LeaseErrorKind::HighWaterAhead)
    /// (or a lease [`NotReady`](LeaseErrorKind::NotReady)) may first issue, in
    /// Unix milliseconds.
    pub const fn ready_at_millis(&self) -> Option<u64> {
        match self.detail {
            Detail::HighWaterAhead { ready_at, .. } | Detail::NotReady { ready_at, .. } => {
                Some(ready_at)
            }
            _ => None,
        }
    }

    /// The stable dotted code, e.g. `"lease.no_worker_free"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for LeaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail {
            Detail::InvalidPolicy { field, reason } => {
                write!(f, "invalid lease policy: {field} {reason}")
            }
            Detail::AcquireTimeout {
                deadline,
                usable_at: Some(usable_at),
            } => write!(
                f,
                "no worker id could be taken by the deadline {deadline} ms: the soonest a \
                 skipped one becomes usable is {usable_at} ms"
            ),
            Detail::AcquireTimeout { deadline, .. } => write!(
                f,
                "no worker id could be taken by the deadline {deadline} ms: all are held"
            ),
            Detail::NoWorkerFree { max_worker } => write!(
                f,
                "no worker id is free: all of 0..={max_worker} are held by live leases"
            ),
            Detail::WorkerOutOfRange {
                worker_id,
                max_worker,
            } => write!(
                f,
                "stored worker id {worker_id} is out of the layout's range 0..={max_worker}"
            ),
            Detail::StillHeld {
                worker_id,
                lease_deadline,
                now,
            } => write!(
                f,
                "worker id {worker_id} is still held: its lease runs until {lease_deadline} ms, \
                 now is {now} ms"
            ),
            Detail::HighWaterAhead {
                worker_id,
                ready_at,
                now,
                max_wait,
            } => write!(
                f,
                "worker id {worker_id} may issue only from {ready_at} ms, {} ms after now \
                 ({now} ms), more than the {max_wait} ms a new holder may wait: is this clock \
                 behind?",
                ready_at.saturating_sub(now)
            ),
            Detail::TokenExhausted { worker_id } => write!(
                f,
                "the fencing token of worker id {worker_id} is at its maximum and cannot be bumped"
            ),
            Detail::TimeOverflow { millis, duration } => write!(
                f,
                "time {millis} ms plus {duration} ms does not fit in 64 bits"
            ),
            Detail::NotReady { ready_at, now } => write!(
                f,
                "the lease may issue only from {ready_at} ms on; now is {now} ms"
            ),
            Detail::ClockBehind {
                deadline,
                renewed_deadline,
            } => write!(
                f,
                "a renewal now would end the lease at {renewed_deadline} ms, not after its \
                 deadline {deadline} ms: the clock went back"
            ),
            Detail::Expired { stop_at, at } => write!(
                f,
                "the lease ended at {stop_at} ms (no renewal in time) and {at} ms is past it: \
                 acquire a new lease"
            ),
            Detail::Lost {
                worker_id,
                fencing_token,
            } => write!(
                f,
                "the lease on worker id {worker_id} (token {fencing_token}) is lost: another \
                 process holds it now"
            ),
            Detail::Released { worker_id } => {
                write!(f, "the lease on worker id {worker_id} was released")
            }
            Detail::WrongWorker { worker, worker_id } => write!(
                f,
                "the ID carries worker {worker}, but the lease is on worker id {worker_id}"
            ),
            Detail::BeforeStart {
                unix_millis,
                start_after,
            } => write!(
                f,
                "the ID carries time {unix_millis} ms, not after the lease's start point {start_after} ms"
            ),
            Detail::NotInLayout { id } => {
                write!(f, "the ID {id} is not of the lease's Snowflake layout")
            }
        }
    }
}

impl core::error::Error for LeaseError {}
