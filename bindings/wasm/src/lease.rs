//! Worker-id leases: which Snowflake worker id a process may use, and until when.
//!
//! Rows cross as `[worker_id, fencing_token, lease_deadline, high_water, held]`
//! (`held` as 0 or 1).

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use mintid::lease::{
    self, Acquisition, LeaseCount, LeaseGuard, LeasePolicy, NoneFound, Renewal, WorkerLease,
};
use mintid::snowflake::SnowflakeId;
use mintid_wire::guards::Registered;
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};
use crate::snowflake::LayoutHandle;

fn row(fields: &[u64]) -> Result<WorkerLease, JsValue> {
    match *fields {
        [
            worker_id,
            fencing_token,
            lease_deadline_millis,
            high_water_millis,
            held,
        ] => Ok(WorkerLease {
            worker_id,
            fencing_token,
            lease_deadline_millis,
            high_water_millis,
            held: held != 0,
        }),
        _ => Err(type_error("a lease row has 5 fields")),
    }
}

fn row_fields(lease: &WorkerLease) -> [u64; 5] {
    [
        lease.worker_id,
        lease.fencing_token,
        lease.lease_deadline_millis,
        lease.high_water_millis,
        u64::from(lease.held),
    ]
}

/// A validated lease policy for a layout's worker ids.
#[wasm_bindgen]
pub struct LeasePolicyHandle(pub(crate) LeasePolicy);

#[wasm_bindgen]
impl LeasePolicyHandle {
    /// A policy (`lease.invalid_policy`); `None` keeps the core's default.
    #[wasm_bindgen(constructor)]
    pub fn new(
        layout: &LayoutHandle,
        lease_millis: Option<u64>,
        renew_interval_millis: Option<u64>,
        safety_margin_millis: Option<u64>,
        renew_retry_millis: Option<u64>,
        max_skew_millis: Option<u64>,
        max_start_wait_millis: Option<u64>,
    ) -> Result<LeasePolicyHandle, JsValue> {
        let mut policy = LeasePolicy::new(*layout.layout()).map_err(to_js)?;
        if lease_millis.is_some()
            || renew_interval_millis.is_some()
            || safety_margin_millis.is_some()
        {
            policy = policy
                .with_lease(
                    lease_millis.unwrap_or(policy.lease_millis()),
                    renew_interval_millis.unwrap_or(policy.renew_interval_millis()),
                    safety_margin_millis.unwrap_or(policy.safety_margin_millis()),
                )
                .map_err(to_js)?;
        }
        if let Some(millis) = renew_retry_millis {
            policy = policy.with_renew_retry_millis(millis).map_err(to_js)?;
        }
        if let Some(millis) = max_skew_millis {
            policy = policy.with_max_skew_millis(millis);
        }
        if let Some(millis) = max_start_wait_millis {
            policy = policy.with_max_start_wait_millis(millis);
        }
        Ok(Self(policy))
    }

    /// The largest worker id leased.
    #[wasm_bindgen(getter = maxWorker)]
    pub fn max_worker(&self) -> u64 {
        self.0.max_worker()
    }

    /// `[lease, renew_interval, renew_retry, safety_margin, max_skew, max_start_wait]` in ms.
    pub fn millis(&self) -> Vec<u64> {
        let p = &self.0;
        vec![
            p.lease_millis(),
            p.renew_interval_millis(),
            p.renew_retry_millis(),
            p.safety_margin_millis(),
            p.max_skew_millis(),
            p.max_start_wait_millis(),
        ]
    }
}

/// The acquisition of the row `lease_find` returned:
/// `[row to write (5 fields), expected_token, acquired, start_after, ready_at]`.
#[wasm_bindgen(js_name = leaseAcquire)]
pub fn lease_acquire(
    policy: &LeasePolicyHandle,
    found: Vec<u64>,
    now_millis: u64,
) -> Result<Vec<u64>, JsValue> {
    let acquisition = lease::acquire(&row(&found)?, now_millis, &policy.0).map_err(to_js)?;
    let mut fields = row_fields(&acquisition.lease).to_vec();
    fields.extend([
        acquisition.expected_token,
        acquisition.acquired_millis,
        acquisition.start_after_millis,
        acquisition.ready_at_millis,
    ]);
    Ok(fields)
}

/// What follows a `lease_find` that found nothing: `seed` or `retry`
/// (`lease.no_worker_free`).
#[wasm_bindgen(js_name = leaseNoneFound)]
pub fn lease_none_found(
    policy: &LeasePolicyHandle,
    present: u64,
    free: u64,
) -> Result<String, JsValue> {
    match lease::none_found(LeaseCount { present, free }, &policy.0).map_err(to_js)? {
        NoneFound::Seed => Ok("seed".into()),
        NoneFound::Retry => Ok("retry".into()),
    }
}

/// The guard of a written acquisition: admits IDs while the lease is safe;
/// registered for the wire while it lives (`wireId`).
#[wasm_bindgen]
pub struct LeaseGuardHandle(pub(crate) Registered);

impl LeaseGuardHandle {
    /// The registered guard of `acquisition` under `policy`.
    pub(crate) fn made(acquisition: &Acquisition, policy: &LeasePolicy) -> Self {
        Self(Registered::new(LeaseGuard::new(acquisition, policy)))
    }
}

#[wasm_bindgen]
impl LeaseGuardHandle {
    /// The guard of `acquisition` (as [`lease_acquire`] returned it).
    #[wasm_bindgen(constructor)]
    pub fn new(
        policy: &LeasePolicyHandle,
        acquisition: Vec<u64>,
    ) -> Result<LeaseGuardHandle, JsValue> {
        let (lease, rest) = acquisition
            .split_first_chunk::<5>()
            .ok_or_else(|| type_error("an acquisition has 9 fields"))?;
        let [
            expected_token,
            acquired_millis,
            start_after_millis,
            ready_at_millis,
        ] = *rest
        else {
            return Err(type_error("an acquisition has 9 fields"));
        };
        let acquisition = Acquisition {
            lease: row(lease)?,
            expected_token,
            acquired_millis,
            start_after_millis,
            ready_at_millis,
        };
        Ok(Self::made(&acquisition, &policy.0))
    }

    /// The serial a lease renew or release wire names this guard by
    /// (`docs/spec.md`, "The wire", the guard registry): never reused, and
    /// refused by a wire once this handle is freed.
    #[wasm_bindgen(getter, js_name = wireId)]
    pub fn wire_id(&self) -> u64 {
        self.0.wire_id()
    }

    /// Fails once the lease can no longer be trusted at `now_millis`.
    pub fn check(&self, now_millis: u64) -> Result<(), JsValue> {
        self.0.check(now_millis).map_err(to_js)
    }

    /// Fails unless `id` is this worker's and within the lease's safe window.
    pub fn admit(&self, id: u64) -> Result<(), JsValue> {
        let id = SnowflakeId::new(id).map_err(to_js)?;
        self.0.admit(id).map_err(to_js)
    }

    /// [`admit`](Self::admit) for a batch.
    #[wasm_bindgen(js_name = admitAll)]
    pub fn admit_all(&self, ids: Vec<u64>) -> Result<(), JsValue> {
        self.0.admit_all(&ids).map_err(to_js)
    }

    /// Whether a renewal is due at `now_millis`.
    #[wasm_bindgen(js_name = renewDue)]
    pub fn renew_due(&self, now_millis: u64) -> bool {
        self.0.renew_due(now_millis)
    }

    /// The renewal to write: `[worker_id, fencing_token, lease_deadline, high_water, now]`.
    pub fn renewal(&self, now_millis: u64, high_water_millis: u64) -> Result<Vec<u64>, JsValue> {
        let r = self
            .0
            .renewal(now_millis, high_water_millis)
            .map_err(to_js)?;
        Ok(vec![
            r.worker_id,
            r.fencing_token,
            r.lease_deadline_millis,
            r.high_water_millis,
            r.now_millis,
        ])
    }

    /// Records the affected-row count of a written renewal.
    pub fn renewed(&self, renewal: Vec<u64>, rows: u64) -> Result<(), JsValue> {
        let [
            worker_id,
            fencing_token,
            lease_deadline_millis,
            high_water_millis,
            now_millis,
        ] = *renewal
        else {
            return Err(type_error("a renewal has 5 fields"));
        };
        let renewal = Renewal {
            worker_id,
            fencing_token,
            lease_deadline_millis,
            high_water_millis,
            now_millis,
        };
        self.0.renewed(&renewal, rows).map_err(to_js)
    }

    /// Records that a renewal could not be written at `now_millis`.
    #[wasm_bindgen(js_name = renewalFailed)]
    pub fn renewal_failed(&self, now_millis: u64) {
        self.0.renewal_failed(now_millis);
    }

    /// The release to write: `[worker_id, fencing_token, high_water, now]`.
    pub fn release(&self, now_millis: u64, high_water_millis: u64) -> Vec<u64> {
        let r = self.0.release(now_millis, high_water_millis);
        vec![
            r.worker_id,
            r.fencing_token,
            r.high_water_millis,
            r.now_millis,
        ]
    }

    /// `[worker_id, fencing_token, start_after, ready_at, lease_deadline, stop_at, next_renewal_at]`.
    pub fn state(&self) -> Vec<u64> {
        let g = &self.0;
        vec![
            g.worker_id(),
            g.fencing_token(),
            g.start_after_millis(),
            g.ready_at_millis(),
            g.lease_deadline_millis(),
            g.stop_at_millis(),
            g.next_renewal_at_millis(),
        ]
    }

    /// Whether the lease is live (not lost, not released).
    #[wasm_bindgen(getter = isLive)]
    pub fn is_live(&self) -> bool {
        self.0.is_live()
    }
}
