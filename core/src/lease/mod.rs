//! Worker-id leases: Snowflake worker ids taken from a database table instead
//! of configuration, renewed on a heartbeat, recycled when their holder dies.
//!
//! Everything here is pure: the host runs the named queries of
//! `schema/<dialect>/queries.sql` and feeds the rows back.
//!
//! ```text
//!   BEGIN; lease_find(max_worker, now)        ── none ─▶ COMMIT; none_found(lease_count(…)):
//!                                                 Seed: lease_seed, start again; Retry: pause, start again;
//!                                                 lease.no_worker_free
//!          acquire(&row, now, policy)          ─▶ Acquisition (token + 1, deadline, start point)
//!          lease_take(…) = 1 row; COMMIT      ─▶ LeaseGuard::new; wait for ready_at;
//!                                                 Snowflake::builder(…).starting_after_unix_millis(start_after)
//!   every ID:   guard.admit(id)               (time after the start point, before the stop point)
//!   heartbeat:  guard.renewal(now, hw) ─▶ lease_renew ─▶ guard.renewed(&renewal, rows)
//!   shutdown:   guard.release(now, hw) ─▶ lease_release
//! ```
//!
//! The full rules, with the clock-skew bound, are in `docs/spec.md`, section
//! "Worker-id leases, segments and the outbox".

mod acquire;
mod error;
#[cfg(target_has_atomic = "64")]
mod guard;
mod policy;

pub use acquire::{Acquisition, LeaseCount, NoneFound, acquire, none_found};
pub use error::{LeaseError, LeaseErrorKind};
#[cfg(target_has_atomic = "64")]
pub use guard::{LeaseGuard, Release, Renewal};
pub use policy::{LeasePolicy, MAX_LEASED_WORKERS};

/// One row of the `worker_lease` table, as the rules read it.
///
/// The holder's identity (`owner`, text) stays in the adapter: the rules only
/// need to know whether the row is held (`owner IS NOT NULL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorkerLease {
    /// The worker id, within the layout's range.
    pub worker_id: u64,
    /// The fencing token of the latest acquisition (0 for a row never held;
    /// one more for every acquisition).
    pub fencing_token: u64,
    /// When the holder's lease ends, in Unix milliseconds (for a released
    /// row: when it was released).
    pub lease_deadline_millis: u64,
    /// The high-water mark: no ID of this worker id was issued with a time
    /// after it, except by a holder whose lease has not yet ended or which
    /// ended without a release (then up to its deadline).
    pub high_water_millis: u64,
    /// Whether a holder has the row (`owner IS NOT NULL`); false for a row
    /// never held or released.
    pub held: bool,
}
