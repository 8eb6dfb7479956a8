//! Worker-id leases: taking a free or expired worker id, and the guard a
//! holder consults before handing out IDs and while renewing.

use crate::error::MintidError;
use crate::snowflake::SnowflakeLayout;
use mintid::lease as core;
use mintid::snowflake::SnowflakeId;
use mintid_wire::guards::Registered;
use std::sync::Arc;

/// How worker ids are leased (the core's `LeasePolicy`). Each value left
/// out keeps the core's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Object)]
pub struct LeasePolicy(pub(crate) core::LeasePolicy);

#[uniffi::export]
impl LeasePolicy {
    /// A policy for the worker ids of `layout`.
    ///
    /// Fails with `lease.invalid_policy`.
    #[uniffi::constructor(default(
        lease_millis = None,
        renew_interval_millis = None,
        safety_margin_millis = None,
        renew_retry_millis = None,
        max_skew_millis = None,
        max_start_wait_millis = None
    ))]
    pub fn new(
        layout: Arc<SnowflakeLayout>,
        lease_millis: Option<u64>,
        renew_interval_millis: Option<u64>,
        safety_margin_millis: Option<u64>,
        renew_retry_millis: Option<u64>,
        max_skew_millis: Option<u64>,
        max_start_wait_millis: Option<u64>,
    ) -> Result<Arc<Self>, MintidError> {
        let mut policy = core::LeasePolicy::new(layout.core())?;
        if lease_millis.is_some()
            || renew_interval_millis.is_some()
            || safety_margin_millis.is_some()
        {
            policy = policy.with_lease(
                lease_millis.unwrap_or(policy.lease_millis()),
                renew_interval_millis.unwrap_or(policy.renew_interval_millis()),
                safety_margin_millis.unwrap_or(policy.safety_margin_millis()),
            )?;
        }
        if let Some(retry) = renew_retry_millis {
            policy = policy.with_renew_retry_millis(retry)?;
        }
        if let Some(skew) = max_skew_millis {
            policy = policy.with_max_skew_millis(skew);
        }
        if let Some(wait) = max_start_wait_millis {
            policy = policy.with_max_start_wait_millis(wait);
        }
        Ok(Arc::new(Self(policy)))
    }

    /// The layout whose worker ids are leased.
    pub fn layout(&self) -> Arc<SnowflakeLayout> {
        Arc::new(SnowflakeLayout::from_core(*self.0.layout()))
    }

    /// The highest worker id leased.
    pub fn max_worker(&self) -> u64 {
        self.0.max_worker()
    }

    /// How long a lease lasts from its acquisition or renewal.
    pub fn lease_millis(&self) -> u64 {
        self.0.lease_millis()
    }

    /// How often a holder renews.
    pub fn renew_interval_millis(&self) -> u64 {
        self.0.renew_interval_millis()
    }

    /// The pause before retrying a failed renewal.
    pub fn renew_retry_millis(&self) -> u64 {
        self.0.renew_retry_millis()
    }

    /// How long before its deadline a holder stops issuing.
    pub fn safety_margin_millis(&self) -> u64 {
        self.0.safety_margin_millis()
    }

    /// The clock skew between hosts that expired leases allow for.
    pub fn max_skew_millis(&self) -> u64 {
        self.0.max_skew_millis()
    }

    /// The longest a new holder may have to wait before it is ready.
    pub fn max_start_wait_millis(&self) -> u64 {
        self.0.max_start_wait_millis()
    }
}

/// One row of the `worker_lease` table, as the rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct WorkerLease {
    /// The worker id.
    pub worker_id: u64,
    /// The fencing token of the latest acquisition.
    pub fencing_token: u64,
    /// When the holder's lease ends (for a released row: when released), Unix ms.
    pub lease_deadline_millis: u64,
    /// The high-water mark (Unix ms).
    pub high_water_millis: u64,
    /// Whether a holder has the row.
    pub held: bool,
}

impl From<WorkerLease> for core::WorkerLease {
    fn from(row: WorkerLease) -> Self {
        Self {
            worker_id: row.worker_id,
            fencing_token: row.fencing_token,
            lease_deadline_millis: row.lease_deadline_millis,
            high_water_millis: row.high_water_millis,
            held: row.held,
        }
    }
}

impl From<core::WorkerLease> for WorkerLease {
    fn from(row: core::WorkerLease) -> Self {
        Self {
            worker_id: row.worker_id,
            fencing_token: row.fencing_token,
            lease_deadline_millis: row.lease_deadline_millis,
            high_water_millis: row.high_water_millis,
            held: row.held,
        }
    }
}

/// A decided acquisition: the row to write by compare-and-set, and where the
/// new holder's IDs start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Acquisition {
    /// The row to write.
    pub lease: WorkerLease,
    /// The fencing token of the row as found (the compare-and-set guard).
    pub expected_token: u64,
    /// When the acquisition was decided (Unix ms).
    pub acquired_millis: u64,
    /// The new holder issues only IDs whose time lies after this Unix ms.
    pub start_after_millis: u64,
    /// The first Unix ms at which the new holder may issue.
    pub ready_at_millis: u64,
}

impl From<core::Acquisition> for Acquisition {
    fn from(acquisition: core::Acquisition) -> Self {
        Self {
            lease: acquisition.lease.into(),
            expected_token: acquisition.expected_token,
            acquired_millis: acquisition.acquired_millis,
            start_after_millis: acquisition.start_after_millis,
            ready_at_millis: acquisition.ready_at_millis,
        }
    }
}

impl From<Acquisition> for core::Acquisition {
    fn from(acquisition: Acquisition) -> Self {
        Self {
            lease: acquisition.lease.into(),
            expected_token: acquisition.expected_token,
            acquired_millis: acquisition.acquired_millis,
            start_after_millis: acquisition.start_after_millis,
            ready_at_millis: acquisition.ready_at_millis,
        }
    }
}

/// Decides the acquisition of `row`, the row `lease_find` returned at `now_millis`.
///
/// Fails with `lease.worker_out_of_range`, `lease.still_held`,
/// `lease.token_exhausted`, `lease.time_overflow` or `lease.high_water_ahead`.
#[uniffi::export]
pub fn lease_acquire(
    row: WorkerLease,
    now_millis: u64,
    policy: Arc<LeasePolicy>,
) -> Result<Acquisition, MintidError> {
    Ok(core::acquire(&row.into(), now_millis, &policy.0)?.into())
}

/// What to do after `lease_find` found no row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum LeaseNoneFound {
    /// Some worker ids have no row yet: run `lease_seed`, then find again.
    Seed,
    /// Free rows were locked by concurrent acquisitions: pause, find again.
    Retry,
}

/// Decides what follows a `lease_find` that found nothing, from
/// `lease_count`'s `present` and `free` counts.
///
/// Fails with `lease.no_worker_free`.
#[uniffi::export]
pub fn lease_none_found(
    present: u64,
    free: u64,
    policy: Arc<LeasePolicy>,
) -> Result<LeaseNoneFound, MintidError> {
    let count = core::LeaseCount { present, free };
    Ok(match core::none_found(count, &policy.0)? {
        core::NoneFound::Seed => LeaseNoneFound::Seed,
        core::NoneFound::Retry => LeaseNoneFound::Retry,
    })
}

/// A renewal to write with `lease_renew`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Renewal {
    /// The leased worker id.
    pub worker_id: u64,
    /// The holder's fencing token.
    pub fencing_token: u64,
    /// The new deadline.
    pub lease_deadline_millis: u64,
    /// The high-water mark to store.
    pub high_water_millis: u64,
    /// The host's clock when the renewal was made.
    pub now_millis: u64,
}

impl From<core::Renewal> for Renewal {
    fn from(renewal: core::Renewal) -> Self {
        Self {
            worker_id: renewal.worker_id,
            fencing_token: renewal.fencing_token,
            lease_deadline_millis: renewal.lease_deadline_millis,
            high_water_millis: renewal.high_water_millis,
            now_millis: renewal.now_millis,
        }
    }
}

impl From<Renewal> for core::Renewal {
    fn from(renewal: Renewal) -> Self {
        Self {
            worker_id: renewal.worker_id,
            fencing_token: renewal.fencing_token,
            lease_deadline_millis: renewal.lease_deadline_millis,
            high_water_millis: renewal.high_water_millis,
            now_millis: renewal.now_millis,
        }
    }
}

/// A release to write with `lease_release` on clean shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Release {
    /// The leased worker id.
    pub worker_id: u64,
    /// The holder's fencing token.
    pub fencing_token: u64,
    /// The final high-water mark.
    pub high_water_millis: u64,
    /// The host's clock at release.
    pub now_millis: u64,
}

/// A held lease (the core's `LeaseGuard`), shared by the threads that hand
/// out IDs and the heartbeat that renews it, and registered for the wire
/// while it lives (`wire_id`).
#[derive(Debug, uniffi::Object)]
pub struct LeaseGuard(pub(crate) Registered);

impl LeaseGuard {
    /// The registered guard of `acquisition` under `policy`.
    pub(crate) fn made(acquisition: &core::Acquisition, policy: &core::LeasePolicy) -> Self {
        Self(Registered::new(core::LeaseGuard::new(acquisition, policy)))
    }
}

#[uniffi::export]
impl LeaseGuard {
    /// The guard of an acquisition the host has written.
    #[uniffi::constructor]
    pub fn new(acquisition: Acquisition, policy: Arc<LeasePolicy>) -> Arc<Self> {
        Arc::new(Self::made(&acquisition.into(), &policy.0))
    }

    /// The serial a lease renew or release wire names this guard by
    /// (`docs/spec.md`, "The wire", the guard registry): never reused, and
    /// refused by a wire once this guard is dropped.
    pub fn wire_id(&self) -> u64 {
        self.0.wire_id()
    }

    /// The leased worker id.
    pub fn worker_id(&self) -> u64 {
        self.0.worker_id()
    }

    /// The holder's fencing token.
    pub fn fencing_token(&self) -> u64 {
        self.0.fencing_token()
    }

    /// IDs are issued only after this Unix ms.
    pub fn start_after_millis(&self) -> u64 {
        self.0.start_after_millis()
    }

    /// The holder issues nothing before its clock reaches this Unix ms.
    pub fn ready_at_millis(&self) -> u64 {
        self.0.ready_at_millis()
    }

    /// The deadline of the last renewal known written.
    pub fn lease_deadline_millis(&self) -> u64 {
        self.0.lease_deadline_millis()
    }

    /// The stop point: the deadline minus the safety margin.
    pub fn stop_at_millis(&self) -> u64 {
        self.0.stop_at_millis()
    }

    /// When the next renewal is due.
    pub fn next_renewal_at_millis(&self) -> u64 {
        self.0.next_renewal_at_millis()
    }

    /// Whether the lease is neither lost nor released.
    pub fn is_live(&self) -> bool {
        self.0.is_live()
    }

    /// Whether a renewal is due at `now_millis`.
    pub fn renew_due(&self, now_millis: u64) -> bool {
        self.0.renew_due(now_millis)
    }

    /// Whether the holder may issue at `now_millis`.
    ///
    /// Fails with `lease.lost`, `lease.released`, `lease.expired` or `lease.not_ready`.
    pub fn check(&self, now_millis: u64) -> Result<(), MintidError> {
        Ok(self.0.check(now_millis)?)
    }

    /// Whether an ID may be handed out.
    ///
    /// Fails with `snowflake.id_out_of_range`, `lease.foreign_id`,
    /// `lease.not_ready`, `lease.expired`, `lease.lost` or `lease.released`.
    pub fn admit(&self, id: u64) -> Result<(), MintidError> {
        Ok(self.0.admit(SnowflakeId::new(id)?)?)
    }

    /// [`admit`](Self::admit) for every ID of a batch; the first refusal is returned.
    pub fn admit_all(&self, ids: Vec<u64>) -> Result<(), MintidError> {
        Ok(self.0.admit_all(&ids)?)
    }

    /// The renewal to write at `now_millis`, storing `high_water_millis`.
    ///
    /// Fails with `lease.lost`, `lease.released`, `lease.clock_behind` or
    /// `lease.time_overflow`.
    pub fn renewal(&self, now_millis: u64, high_water_millis: u64) -> Result<Renewal, MintidError> {
        Ok(self.0.renewal(now_millis, high_water_millis)?.into())
    }

    /// Reports how many rows `lease_renew` changed for `renewal`.
    ///
    /// Fails with `lease.lost` (the lease is lost from then on).
    pub fn renewed(&self, renewal: Renewal, rows: u64) -> Result<(), MintidError> {
        Ok(self.0.renewed(&renewal.into(), rows)?)
    }

    /// Reports a renewal attempt that failed (storage unreachable).
    pub fn renewal_failed(&self, now_millis: u64) {
        self.0.renewal_failed(now_millis)
    }

    /// The release to write on clean shutdown; the guard admits nothing after.
    pub fn release(&self, now_millis: u64, high_water_millis: u64) -> Release {
        let release = self.0.release(now_millis, high_water_millis);
        Release {
            worker_id: release.worker_id,
            fencing_token: release.fencing_token,
            high_water_millis: release.high_water_millis,
            now_millis: release.now_millis,
        }
    }
}
