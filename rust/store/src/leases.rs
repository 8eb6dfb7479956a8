//! Worker-id leases over `worker_lease`, and [`LeasedSnowflake`], a
//! generator that issues IDs only while its lease is safe. The rules are the
//! core's lease drivers (`LeaseAcquisition`, `LeaseRenewal`, `LeaseRelease`)
//! and [`LeaseGuard`]; this module runs the `lease_*` statements they name.

use std::sync::Arc;
use std::time::Duration;

use mintid::store::{Answer, LeaseAcquisition, LeaseRelease, LeaseRenewal, Query, Value};
use mintid::{LeaseGuard, LeasePolicy, Snowflake, SnowflakeId};
use tokio::sync::watch;

use crate::backend::Backend;
use crate::error::Error;
use crate::steps::{Pushing, unreadable};
use crate::store::{Session, Store, StoreClock};

/// A row of `worker_lease`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerLeaseRow {
    /// The worker id.
    pub worker_id: u64,
    /// The holder's identity, or `None` when free.
    pub owner: Option<String>,
    /// The latest holder's fencing token.
    pub fencing_token: u64,
    /// When the lease ends (Unix ms).
    pub lease_deadline_millis: u64,
    /// The latest time IDs were issued up to (Unix ms).
    pub high_water_millis: u64,
}

/// Worker-id leases in one database, under one [`LeasePolicy`]: acquire,
/// renew and release are drivers of the core (every loop, retry, pause,
/// deadline and error code); this type runs the statements they name.
#[derive(Debug)]
pub struct WorkerLeases<DB: Backend> {
    store: Store<DB>,
    policy: LeasePolicy,
}

clone_fields!(WorkerLeases, store, policy);

impl<DB: Backend> WorkerLeases<DB> {
    /// Leases in `store` under `policy`.
    pub fn new(store: Store<DB>, policy: LeasePolicy) -> Self {
        Self { store, policy }
    }

    /// The store.
    pub fn store(&self) -> &Store<DB> {
        &self.store
    }

    /// The policy (its layout names the worker ids).
    pub fn policy(&self) -> &LeasePolicy {
        &self.policy
    }

    /// Takes the lowest usable free or expired worker id for `owner`
    /// (host/pod/process), seeding the table on first use, and returns once
    /// the new holder may issue (after an expired lease: the previous
    /// holder's clock-skew bound). A free row whose high-water mark lies too
    /// far ahead of this clock is skipped for the next one. With
    /// `timeout_millis`, waits up to that long for a worker id to become
    /// usable.
    ///
    /// Fails with `lease.no_worker_free`, `lease.high_water_ahead` (both
    /// without a timeout), `lease.acquire_timeout`, `store.unavailable`.
    pub async fn acquire(
        &self,
        owner: &str,
        timeout_millis: Option<u64>,
    ) -> Result<LeaseGuard, Error> {
        let manifest = Store::<DB>::manifest();
        let mut driver = LeaseAcquisition::new(manifest, self.policy, owner, timeout_millis);
        let first = driver.start(self.store.clock.now_millis());
        let acquisition = self.store.drive(&mut driver, first).await?;
        Ok(LeaseGuard::new(&acquisition, &self.policy))
    }

    /// Renews `guard`'s lease, storing `high_water_millis`; the guard learns
    /// the outcome. A renewal the clock refuses (`lease.clock_behind`,
    /// `lease.expired`) or the database does not answer counts as a failed
    /// attempt: the next one is due after the policy's retry delay.
    ///
    /// Fails with `lease.lost`, `lease.clock_behind`, `lease.expired`, …,
    /// `store.unavailable`.
    pub async fn renew(&self, guard: &LeaseGuard, high_water_millis: u64) -> Result<(), Error> {
        let mut renewal = LeaseRenewal::new(Store::<DB>::manifest());
        let clock = &self.store.clock;
        let first = renewal.start(guard, clock.now_millis(), high_water_millis);
        let mut driver = Pushing(|answer, now| renewal.push(guard, answer, now));
        self.store.drive(&mut driver, first).await.map(|_| ())
    }

    /// Releases `guard`'s lease with the high-water mark; whether the row
    /// was still this holder's. The guard stops issuing first.
    ///
    /// Fails with `store.unavailable`: the lease then ends at its deadline.
    pub async fn release(&self, guard: &LeaseGuard, high_water_millis: u64) -> Result<bool, Error> {
        self.release_after_stop(guard, || high_water_millis).await
    }

    /// [`release`](Self::release) with the high-water mark read after the
    /// guard stopped issuing (a generator's own high-water time).
    async fn release_after_stop(
        &self,
        guard: &LeaseGuard,
        high_water_millis: impl FnOnce() -> u64,
    ) -> Result<bool, Error> {
        let mut release = LeaseRelease::new(Store::<DB>::manifest(), guard);
        let clock = &self.store.clock;
        let first = release.start(guard, clock.now_millis(), high_water_millis());
        let mut driver = Pushing(|answer, _now| release.push(answer));
        self.store.drive(&mut driver, first).await
    }

    /// The row of `worker_id`, or `None`.
    pub async fn load(&self, worker_id: u64) -> Result<Option<WorkerLeaseRow>, Error> {
        let id = i64::try_from(worker_id).unwrap_or(i64::MAX);
        let params = vec![Value::Int(id)];
        let query = Query {
            name: "lease_load",
            params,
        };
        let answer = Session::new(&self.store).run(query).await;
        let rows = match answer {
            Answer::Rows(rows) => rows,
            Answer::Failed(error) => return Err(mintid::store::database_failure(&error).into()),
            Answer::Affected(_) => return Err(unreadable("lease_load")),
        };
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let int = |at: usize| {
            row.get(at)
                .and_then(Value::as_int)
                .and_then(|v| u64::try_from(v).ok())
        };
        let read = || {
            Some(WorkerLeaseRow {
                worker_id: int(0)?,
                owner: row.get(1)?.as_text().map(String::from),
                fencing_token: int(2)?,
                lease_deadline_millis: int(3)?,
                high_water_millis: int(4)?,
            })
        };
        read().map(Some).ok_or_else(|| unreadable("lease_load"))
    }
}

/// A Snowflake generator on a leased worker id, on the leases' policy's
/// layout: it starts after the previous holder's high-water mark, renews
/// the lease from a tokio task when the guard says the next renewal is due,
/// and refuses to issue (a `lease.*` error) once the lease is lost or could
/// not be renewed before its stop point. [`close`](Self::close) stops the
/// heartbeat and releases the lease with the generator's own high-water
/// time, read after it stopped issuing.
#[derive(Debug)]
pub struct LeasedSnowflake<DB: Backend> {
    inner: Arc<Leased<DB>>,
    stop: watch::Sender<bool>,
    heartbeat: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

#[derive(Debug)]
struct Leased<DB: Backend> {
    leases: WorkerLeases<DB>,
    guard: LeaseGuard,
    snowflake: Snowflake<StoreClock>,
}

impl<DB: Backend> Leased<DB> {
    fn high_water_millis(&self) -> u64 {
        let start = self.guard.start_after_millis();
        self.snowflake
            .high_water_unix_millis()
            .map_or(start, |issued| issued.max(start))
    }
}

impl<DB: Backend> LeasedSnowflake<DB> {
    /// Acquires a worker id for `owner` (waiting until the new holder may
    /// issue, and up to `timeout_millis` for a usable worker id), and starts
    /// the heartbeat.
    ///
    /// Fails as [`WorkerLeases::acquire`] does.
    pub async fn acquire(
        leases: WorkerLeases<DB>,
        owner: &str,
        timeout_millis: Option<u64>,
    ) -> Result<Self, Error> {
        let guard = leases.acquire(owner, timeout_millis).await?;
        Self::new(leases, guard)
    }

    /// A generator on `guard`, a lease `leases` acquired and that may issue
    /// now; its heartbeat starts on the tokio runtime.
    pub fn new(leases: WorkerLeases<DB>, guard: LeaseGuard) -> Result<Self, Error> {
        let clock = leases.store.clock.clone();
        let snowflake = Snowflake::builder(*leases.policy.layout(), guard.worker_id(), clock)
            .starting_after_unix_millis(guard.start_after_millis())
            .build()
            .map_err(Error::Snowflake)?;
        let inner = Arc::new(Leased {
            leases,
            guard,
            snowflake,
        });
        let (stop, stopped) = watch::channel(false);
        let heartbeat =
            std::sync::Mutex::new(Some(tokio::spawn(beat(Arc::clone(&inner), stopped))));
        Ok(Self {
            inner,
            stop,
            heartbeat,
        })
    }

    /// The leased worker id.
    pub fn worker_id(&self) -> u64 {
        self.inner.guard.worker_id()
    }

    /// The lease's guard.
    pub fn guard(&self) -> &LeaseGuard {
        &self.inner.guard
    }

    /// No ID issued so far carries a later time (Unix ms): the generator's
    /// own high-water time, or the lease's start point before the first ID.
    pub fn high_water_millis(&self) -> u64 {
        self.inner.high_water_millis()
    }

    /// The next ID, admitted by the lease's guard.
    ///
    /// Fails with `lease.expired`, `lease.lost`, `lease.released`, … once
    /// the lease is unsafe, or the generator's `snowflake.*` error.
    pub fn next_id(&self) -> Result<SnowflakeId, Error> {
        let inner = &self.inner;
        inner
            .guard
            .check(inner.leases.store.clock.now_millis())
            .map_err(|error| Error::Driver(error.into()))?;
        let id = inner.snowflake.next_id().map_err(Error::Snowflake)?;
        inner
            .guard
            .admit(id)
            .map_err(|error| Error::Driver(error.into()))?;
        Ok(id)
    }

    /// [`release`](Self::release), by Rust's usual name for an end.
    pub async fn close(&self) -> Result<bool, Error> {
        self.release().await
    }

    /// Stops the heartbeat and releases the lease, storing the generator's
    /// high-water time read after it stopped issuing; whether the row was
    /// still this holder's (`false` once released), as `release()` answers
    /// in every host.
    ///
    /// Fails with `store.unavailable` when the release cannot be written:
    /// the lease then ends at its deadline, and the next holder waits out
    /// the clock-skew bound.
    pub async fn release(&self) -> Result<bool, Error> {
        let _ = self.stop.send(true);
        let heartbeat = self.heartbeat_handle();
        if let Some(heartbeat) = heartbeat {
            // A renewal in flight ends first, for at most the core's shutdown
            // wait (then it is dropped: its lease ends at its deadline); a
            // heartbeat that panicked is gone.
            crate::store::wait_at_most_shutdown(heartbeat).await;
        }
        let inner = &self.inner;
        inner
            .leases
            .release_after_stop(&inner.guard, || inner.high_water_millis())
            .await
    }
}

impl<DB: Backend> LeasedSnowflake<DB> {
    fn heartbeat_handle(&self) -> Option<tokio::task::JoinHandle<()>> {
        self.heartbeat
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

impl<DB: Backend> Drop for LeasedSnowflake<DB> {
    fn drop(&mut self) {
        // Dropped without close: the heartbeat stops, the lease ends at its deadline.
        if let Some(heartbeat) = self.heartbeat_handle() {
            heartbeat.abort();
        }
    }
}

/// The heartbeat: renews when the guard says the next renewal is due, until
/// the lease is over or the generator closes. A failed renewal is counted by
/// the core; `next_id` reports it.
async fn beat<DB: Backend>(inner: Arc<Leased<DB>>, mut stopped: watch::Receiver<bool>) {
    while inner.guard.is_live() {
        let now = inner.leases.store.clock.now_millis();
        let wait = inner.guard.next_renewal_at_millis().saturating_sub(now);
        if tokio::time::timeout(Duration::from_millis(wait), stopped.changed())
            .await
            .is_ok()
        {
            return;
        }
        let _ = inner
            .leases
            .renew(&inner.guard, inner.high_water_millis())
            .await;
    }
}
