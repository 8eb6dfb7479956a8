//! The worker-id lease drivers of the core (`mintid::store::LeaseAcquisition`,
//! `LeaseRenewal`, `LeaseRelease`) for Python and Kotlin: the host pulls a
//! [`LeaseStep`], runs it on its database and pushes the answer back. Every
//! loop, pause, retry, deadline and error code is the core's.

use std::sync::{Arc, Mutex};

use crate::error::MintidError;
use crate::lease::{LeaseGuard, LeasePolicy};
use crate::store::{Manifest, StoreAnswer, StoreQuery, lock};
use mintid::store as core;

/// A step of a lease driver. A failure is the call's error.
#[derive(Debug, Clone, uniffi::Enum)]
pub enum LeaseStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Sleep this long (outside any transaction), then call `resume`.
    Pause {
        /// How long, in milliseconds.
        millis: u64,
    },
    /// Begin a transaction on the connection the next queries run on
    /// (`write`: SQLite's `BEGIN IMMEDIATE`), then push `Affected(0)`.
    Begin {
        /// Whether the transaction writes.
        write: bool,
    },
    /// Commit the transaction, then push `Affected(0)` (or the failure).
    Commit,
    /// Roll the transaction back, then push `Affected(0)`.
    Rollback,
    /// Acquired: the guard of the new lease; its holder may issue now.
    Acquired {
        /// The lease's guard.
        guard: Arc<LeaseGuard>,
    },
    /// Renewed: the lease now ends at this time (Unix ms).
    Renewed {
        /// The new deadline.
        lease_deadline_millis: u64,
    },
    /// Released: whether the row was still this holder's.
    Released {
        /// Whether `lease_release` changed the row.
        released: bool,
    },
}

fn step<Y>(
    step: core::Step<Y>,
    done: impl FnOnce(Y) -> LeaseStep,
) -> Result<LeaseStep, MintidError> {
    Ok(match step {
        core::Step::Run(query) => LeaseStep::Run {
            query: query.into(),
        },
        core::Step::Pause { millis } => LeaseStep::Pause { millis },
        core::Step::Begin { write } => LeaseStep::Begin { write },
        core::Step::Commit => LeaseStep::Commit,
        core::Step::Rollback => LeaseStep::Rollback,
        core::Step::Yield(value) => done(value),
        core::Step::Fail(error) => return Err(error.into()),
    })
}

/// Taking a worker id for an owner (`mintid::store::LeaseAcquisition`).
#[derive(Debug, uniffi::Object)]
pub struct LeaseAcquisition {
    driver: Mutex<core::LeaseAcquisition>,
    policy: mintid::lease::LeasePolicy,
}

#[uniffi::export]
impl LeaseAcquisition {
    /// An acquisition for `owner` under `policy` over `manifest`'s
    /// statements, giving up `timeout_millis` after its start when set
    /// (`lease.acquire_timeout`).
    #[uniffi::constructor]
    pub fn new(
        manifest: Manifest,
        policy: Arc<LeasePolicy>,
        owner: String,
        timeout_millis: Option<u64>,
    ) -> Arc<Self> {
        Arc::new(Self {
            driver: Mutex::new(core::LeaseAcquisition::new(
                manifest.into(),
                policy.0,
                &owner,
                timeout_millis,
            )),
            policy: policy.0,
        })
    }

    /// The first step, at `now_millis`.
    pub fn start(&self, now_millis: u64) -> Result<LeaseStep, MintidError> {
        self.acquired(lock(&self.driver).start(now_millis))
    }

    /// Push the answer to the last `Run`, `Begin`, `Commit` or `Rollback`.
    ///
    /// Fails with `lease.no_worker_free`, `lease.high_water_ahead`,
    /// `lease.acquire_timeout`, `store.unavailable`, `store.conflict`, ….
    pub fn push(&self, answer: StoreAnswer, now_millis: u64) -> Result<LeaseStep, MintidError> {
        self.acquired(lock(&self.driver).push(answer.into(), now_millis))
    }

    /// Continue after a `Pause`, at `now_millis`.
    pub fn resume(&self, now_millis: u64) -> Result<LeaseStep, MintidError> {
        self.acquired(lock(&self.driver).resume(now_millis))
    }
}

impl LeaseAcquisition {
    fn acquired(&self, next: core::LeaseStep) -> Result<LeaseStep, MintidError> {
        step(next, |made| LeaseStep::Acquired {
            guard: Arc::new(LeaseGuard::made(&made, &self.policy)),
        })
    }
}

/// One renewal of a held lease (`mintid::store::LeaseRenewal`): the guard
/// learns the outcome (a refused or failed renewal is counted by it).
#[derive(Debug, uniffi::Object)]
pub struct LeaseRenewal {
    driver: Mutex<core::LeaseRenewal>,
    guard: Arc<LeaseGuard>,
}

#[uniffi::export]
impl LeaseRenewal {
    /// A renewal of `guard`'s lease over `manifest`'s statements.
    #[uniffi::constructor]
    pub fn new(manifest: Manifest, guard: Arc<LeaseGuard>) -> Arc<Self> {
        Arc::new(Self {
            driver: Mutex::new(core::LeaseRenewal::new(manifest.into())),
            guard,
        })
    }

    /// Start at `now_millis`, storing `high_water_millis` (the generator's
    /// high-water time). Fails with `lease.clock_behind` (counted as a
    /// failed attempt), `lease.expired`, `lease.lost`, `lease.released`.
    pub fn start(&self, now_millis: u64, high_water_millis: u64) -> Result<LeaseStep, MintidError> {
        let next = lock(&self.driver).start(&self.guard.0, now_millis, high_water_millis);
        step(next, renewed)
    }

    /// Push the answer to `lease_renew`. Fails with `lease.lost`,
    /// `store.unavailable` (counted as a failed attempt), ….
    pub fn push(&self, answer: StoreAnswer, now_millis: u64) -> Result<LeaseStep, MintidError> {
        let next = lock(&self.driver).push(&self.guard.0, answer.into(), now_millis);
        step(next, renewed)
    }
}

fn renewed(lease_deadline_millis: u64) -> LeaseStep {
    LeaseStep::Renewed {
        lease_deadline_millis,
    }
}

/// The release of a held lease on shutdown (`mintid::store::LeaseRelease`).
#[derive(Debug, uniffi::Object)]
pub struct LeaseRelease {
    driver: Mutex<core::LeaseRelease>,
    guard: Arc<LeaseGuard>,
}

#[uniffi::export]
impl LeaseRelease {
    /// The release of `guard`'s lease: the guard stops issuing at once; read
    /// the generator's high-water time after this, for `start`.
    #[uniffi::constructor]
    pub fn new(manifest: Manifest, guard: Arc<LeaseGuard>) -> Arc<Self> {
        Arc::new(Self {
            driver: Mutex::new(core::LeaseRelease::new(manifest.into(), &guard.0)),
            guard,
        })
    }

    /// Start at `now_millis`, storing `high_water_millis`.
    pub fn start(&self, now_millis: u64, high_water_millis: u64) -> Result<LeaseStep, MintidError> {
        let next = lock(&self.driver).start(&self.guard.0, now_millis, high_water_millis);
        step(next, released)
    }

    /// Push the answer to `lease_release`. Fails with `store.unavailable`, ….
    pub fn push(&self, answer: StoreAnswer) -> Result<LeaseStep, MintidError> {
        step(lock(&self.driver).push(answer.into()), released)
    }
}

fn released(released: bool) -> LeaseStep {
    LeaseStep::Released { released }
}
