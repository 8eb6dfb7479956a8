//! What a holder checks before handing out IDs, and its heartbeat.

use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use super::acquire::checked_add;
use super::{Acquisition, LeaseError, LeasePolicy};
use crate::snowflake::SnowflakeId;

const LIVE: u8 = 0;
const LOST: u8 = 1;
const RELEASED: u8 = 2;

/// A renewal to write with `lease_renew`: its fields are the query's
/// parameters. Made by [`LeaseGuard::renewal`]; report the affected-row count
/// to [`LeaseGuard::renewed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Renewal {
    /// The leased worker id.
    pub worker_id: u64,
    /// The holder's fencing token (the guard).
    pub fencing_token: u64,
    /// The new deadline: `now + lease`.
    pub lease_deadline_millis: u64,
    /// The high-water mark to store: the last timestamp issued.
    pub high_water_millis: u64,
    /// The host's clock when the renewal was made; the write is refused once
    /// the stored deadline is not after it.
    pub now_millis: u64,
}

/// A release to write with `lease_release` on clean shutdown: its fields are
/// the query's parameters. Made by [`LeaseGuard::release`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Release {
    /// The leased worker id.
    pub worker_id: u64,
    /// The holder's fencing token (the guard).
    pub fencing_token: u64,
    /// The final high-water mark: the next holder starts after it.
    pub high_water_millis: u64,
    /// The host's clock at release.
    pub now_millis: u64,
}

/// A held lease, shared by the threads that hand out IDs and the heartbeat
/// that renews it. Every method takes `&self` and costs a few atomic loads.
///
/// * Before handing out an ID, [`admit`](Self::admit) it (the ID's own time
///   must lie after the start point and before the stop point, and it must
///   carry the leased worker id): this is what makes IDs unique across
///   holders. [`check`](Self::check) reads the clock instead, a cheap early
///   refusal before generating; it does not replace `admit` (a thread may
///   pause between the check and the ID).
/// * The heartbeat sleeps until [`next_renewal_at_millis`](Self::next_renewal_at_millis),
///   writes [`renewal`](Self::renewal) with `lease_renew`, and reports the
///   row count to [`renewed`](Self::renewed) (or a failed attempt to
///   [`renewal_failed`](Self::renewal_failed)).
/// * On shutdown, stop issuing, then write [`release`](Self::release) with
///   `lease_release`.
///
/// The **stop point** is the deadline of the last renewal known written
/// minus the safety margin. The next holder of the worker id starts after the
/// deadline, so an ID admitted before the stop point can never be issued
/// again, whatever the clocks of the two hosts say.
#[derive(Debug)]
pub struct LeaseGuard {
    policy: LeasePolicy,
    worker_id: u64,
    fencing_token: u64,
    start_after_millis: u64,
    ready_at_millis: u64,
    deadline: AtomicU64,
    renew_at: AtomicU64,
    high_water: AtomicU64,
    state: AtomicU8,
}

impl LeaseGuard {
    /// The guard of an acquisition the host has written (`lease_take`
    /// affected one row).
    pub fn new(acquisition: &Acquisition, policy: &LeasePolicy) -> Self {
        Self {
            policy: *policy,
            worker_id: acquisition.lease.worker_id,
            fencing_token: acquisition.lease.fencing_token,
            start_after_millis: acquisition.start_after_millis,
            ready_at_millis: acquisition.ready_at_millis,
            deadline: AtomicU64::new(acquisition.lease.lease_deadline_millis),
            renew_at: AtomicU64::new(
                acquisition
                    .acquired_millis
                    .saturating_add(policy.renew_interval_millis()),
            ),
            high_water: AtomicU64::new(acquisition.start_after_millis),
            state: AtomicU8::new(LIVE),
        }
    }

    /// The leased worker id: the generator's worker.
    pub fn worker_id(&self) -> u64 {
        self.worker_id
    }

    /// The holder's fencing token.
    pub fn fencing_token(&self) -> u64 {
        self.fencing_token
    }

    /// IDs are issued only after this Unix millisecond: build the generator
    /// with `starting_after_unix_millis(start_after_millis)`.
    pub fn start_after_millis(&self) -> u64 {
        self.start_after_millis
    }

    /// The holder issues nothing before its clock reaches this Unix millisecond.
    pub fn ready_at_millis(&self) -> u64 {
        self.ready_at_millis
    }

    /// The deadline of the last renewal (or the acquisition) known written.
    pub fn lease_deadline_millis(&self) -> u64 {
        self.deadline.load(Ordering::SeqCst)
    }

    /// The stop point: the deadline minus the safety margin. No ID whose time
    /// is at or past it is admitted, and [`check`](Self::check) fails from it on.
    pub fn stop_at_millis(&self) -> u64 {
        self.lease_deadline_millis()
            .saturating_sub(self.policy.safety_margin_millis())
    }

    /// When the next renewal is due, in Unix milliseconds.
    pub fn next_renewal_at_millis(&self) -> u64 {
        self.renew_at.load(Ordering::SeqCst)
    }

    /// Whether the lease is neither lost nor released.
    pub fn is_live(&self) -> bool {
        self.state.load(Ordering::SeqCst) == LIVE
    }

    /// Whether a renewal is due at `now_millis` (and the lease is live).
    pub fn renew_due(&self, now_millis: u64) -> bool {
        self.is_live() && now_millis >= self.next_renewal_at_millis()
    }

    /// Whether the holder may issue at `now_millis`: `lease.lost`,
    /// `lease.released`, `lease.expired` from the stop point on, or
    /// `lease.not_ready` before the ready time.
    pub fn check(&self, now_millis: u64) -> Result<(), LeaseError> {
        self.live()?;
        let stop_at = self.stop_at_millis();
        if now_millis >= stop_at {
            return Err(LeaseError::expired(stop_at, now_millis));
        }
        if now_millis < self.ready_at_millis {
            return Err(LeaseError::not_ready(self.ready_at_millis, now_millis));
        }
        Ok(())
    }

    /// Whether `id`, just made by the lease's generator, may be handed out:
    /// the lease is live (`lease.lost`, `lease.released`); the ID fits the
    /// layout and carries the leased worker id, and its time lies after the
    /// start point (`lease.foreign_id`); its tick reaches the ready time
    /// (`lease.not_ready`); its time lies before the stop point
    /// (`lease.expired`). A refused ID must be dropped.
    pub fn admit(&self, id: SnowflakeId) -> Result<(), LeaseError> {
        self.live()?;
        let layout = self.policy.layout();
        let parts = layout
            .decode(id)
            .map_err(|_| LeaseError::not_in_layout(id.get()))?;
        if parts.worker != self.worker_id {
            return Err(LeaseError::wrong_worker(parts.worker, self.worker_id));
        }
        if parts.unix_millis <= self.start_after_millis {
            return Err(LeaseError::before_start(
                parts.unix_millis,
                self.start_after_millis,
            ));
        }
        if parts.unix_millis.saturating_add(layout.tick_millis()) <= self.ready_at_millis {
            return Err(LeaseError::not_ready(
                self.ready_at_millis,
                parts.unix_millis,
            ));
        }
        let stop_at = self.stop_at_millis();
        if parts.unix_millis >= stop_at {
            return Err(LeaseError::expired(stop_at, parts.unix_millis));
        }
        Ok(())
    }

    /// [`admit`](Self::admit) for every ID of a batch (raw values, as
    /// `Snowflake::fill` writes them); the first refusal is returned.
    pub fn admit_all(&self, ids: &[u64]) -> Result<(), LeaseError> {
        ids.iter().try_for_each(|&id| {
            let id = SnowflakeId::new(id).map_err(|_| LeaseError::not_in_layout(id))?;
            self.admit(id)
        })
    }

    /// The renewal to write at `now_millis`, storing `high_water_millis` (the
    /// generator's `high_water_unix_millis`, or the start point before the first
    /// ID; the stored mark never goes down).
    ///
    /// Fails with `lease.lost` or `lease.released`, with `lease.expired` once
    /// the deadline has passed (too late: acquire a new lease), with
    /// `lease.clock_behind` when `now + lease` would not extend the deadline
    /// (the clock went back: count it as a failed attempt), and with
    /// `lease.time_overflow`. A renewal always extends the deadline, so
    /// `lease_renew` always changes its row.
    pub fn renewal(&self, now_millis: u64, high_water_millis: u64) -> Result<Renewal, LeaseError> {
        self.live()?;
        let deadline = self.lease_deadline_millis();
        if now_millis >= deadline {
            return Err(LeaseError::expired(deadline, now_millis));
        }
        let lease_deadline_millis = checked_add(now_millis, self.policy.lease_millis())?;
        if lease_deadline_millis <= deadline {
            return Err(LeaseError::clock_behind(deadline, lease_deadline_millis));
        }
        Ok(Renewal {
            worker_id: self.worker_id,
            fencing_token: self.fencing_token,
            lease_deadline_millis,
            high_water_millis: high_water_millis.max(self.high_water.load(Ordering::SeqCst)),
            now_millis,
        })
    }

    /// Records the outcome of writing `renewal`: `rows` is the affected-row
    /// count of `lease_renew`. One row extends the lease (the deadline and
    /// stop point move on, the next renewal is due an interval after the
    /// renewal was made); any other count means the lease is lost
    /// (`lease.lost`, and every later check fails).
    pub fn renewed(&self, renewal: &Renewal, rows: u64) -> Result<(), LeaseError> {
        if rows != 1 {
            self.state
                .compare_exchange(LIVE, LOST, Ordering::SeqCst, Ordering::SeqCst)
                .ok();
            return Err(LeaseError::lost(self.worker_id, self.fencing_token));
        }
        self.deadline
            .fetch_max(renewal.lease_deadline_millis, Ordering::SeqCst);
        self.high_water
            .fetch_max(renewal.high_water_millis, Ordering::SeqCst);
        self.renew_at.fetch_max(
            renewal
                .now_millis
                .saturating_add(self.policy.renew_interval_millis()),
            Ordering::SeqCst,
        );
        Ok(())
    }

    /// Records a renewal attempt that failed without an answer (the database
    /// could not be reached): the next attempt is due the policy's retry
    /// pause after `now_millis`. The stop point does not move.
    pub fn renewal_failed(&self, now_millis: u64) {
        self.renew_at.store(
            now_millis.saturating_add(self.policy.renew_retry_millis()),
            Ordering::SeqCst,
        );
    }

    /// Stops issuing on clean shutdown, before the generator's high-water
    /// time is read for [`release`](Self::release): from now on every check
    /// and admission fails with `lease.released`. Whether the lease was live
    /// until now (neither lost nor released).
    pub fn stop_issuing(&self) -> bool {
        self.state
            .compare_exchange(LIVE, RELEASED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Ends the lease on clean shutdown: from now on every check fails with
    /// `lease.released`. Returns the release to write, storing the final
    /// `high_water_millis` (the generator's `high_water_unix_millis`, read after
    /// the threads issuing IDs have stopped; never below the mark stored).
    pub fn release(&self, now_millis: u64, high_water_millis: u64) -> Release {
        self.state
            .compare_exchange(LIVE, RELEASED, Ordering::SeqCst, Ordering::SeqCst)
            .ok();
        Release {
            worker_id: self.worker_id,
            fencing_token: self.fencing_token,
            high_water_millis: high_water_millis.max(self.high_water.load(Ordering::SeqCst)),
            now_millis,
        }
    }

    fn live(&self) -> Result<(), LeaseError> {
        match self.state.load(Ordering::SeqCst) {
            LIVE => Ok(()),
            RELEASED => Err(LeaseError::released(self.worker_id)),
            _ => Err(LeaseError::lost(self.worker_id, self.fencing_token)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::{LeaseErrorKind, WorkerLease, acquire};
    use crate::snowflake::SnowflakeLayout;

    fn policy() -> LeasePolicy {
        LeasePolicy::new(SnowflakeLayout::new(41, 10, 12, 0, 1).unwrap()).unwrap()
    }

    fn guard(now: u64) -> LeaseGuard {
        let policy = policy();
        let free = WorkerLease {
            worker_id: 7,
            fencing_token: 0,
            lease_deadline_millis: 0,
            high_water_millis: 0,
            held: false,
        };
        LeaseGuard::new(&acquire(&free, now, &policy).unwrap(), &policy)
    }

    fn id(unix_millis: u64, worker: u64) -> SnowflakeId {
        policy().layout().compose(unix_millis, worker, 0).unwrap()
    }

    #[test]
    fn admits_ids_between_the_start_and_the_stop_point() {
        let guard = guard(1_000);
        assert_eq!(guard.stop_at_millis(), 26_000);
        assert_eq!(guard.admit(id(1_000, 7)), Ok(()));
        assert_eq!(guard.admit(id(25_999, 7)), Ok(()));
        assert_eq!(
            guard.admit(id(26_000, 7)).unwrap_err().kind(),
            LeaseErrorKind::Expired
        );
        assert_eq!(
            guard.admit(id(0, 7)).unwrap_err().kind(),
            LeaseErrorKind::ForeignId
        );
        assert_eq!(
            guard.admit(id(2_000, 6)).unwrap_err().kind(),
            LeaseErrorKind::ForeignId
        );
        assert_eq!(
            guard.admit_all(&[u64::MAX]).unwrap_err().kind(),
            LeaseErrorKind::ForeignId
        );
        assert_eq!(guard.check(25_999), Ok(()));
        assert_eq!(
            guard.check(26_000).unwrap_err().kind(),
            LeaseErrorKind::Expired
        );
    }

    #[test]
    fn a_renewal_moves_the_stop_point_a_refused_one_loses_the_lease() {
        let guard = guard(1_000);
        assert!(!guard.renew_due(10_999));
        assert!(guard.renew_due(11_000));
        let renewal = guard.renewal(11_000, 9_000).unwrap();
        assert_eq!(
            renewal,
            Renewal {
                worker_id: 7,
                fencing_token: 1,
                lease_deadline_millis: 41_000,
                high_water_millis: 9_000,
                now_millis: 11_000,
            }
        );
        guard.renewed(&renewal, 1).unwrap();
        assert_eq!(
            (guard.stop_at_millis(), guard.next_renewal_at_millis()),
            (36_000, 21_000)
        );
        guard.renewal_failed(21_000);
        assert_eq!(guard.next_renewal_at_millis(), 22_000);
        let late = guard.renewal(22_000, 8_000).unwrap();
        assert_eq!(late.high_water_millis, 9_000, "the mark never goes down");
        assert_eq!(
            guard.renewed(&late, 0).unwrap_err().kind(),
            LeaseErrorKind::Lost
        );
        assert_eq!(
            guard.check(22_000).unwrap_err().kind(),
            LeaseErrorKind::Lost
        );
        assert!(!guard.renew_due(99_000));
    }

    #[test]
    fn no_renewal_after_the_deadline_and_nothing_after_release() {
        let guard = guard(1_000);
        assert_eq!(
            guard.renewal(31_000, 0).unwrap_err().kind(),
            LeaseErrorKind::Expired
        );
        let release = guard.release(20_000, 19_000);
        assert_eq!(
            (
                release.worker_id,
                release.fencing_token,
                release.high_water_millis
            ),
            (7, 1, 19_000)
        );
        assert_eq!(
            guard.check(20_000).unwrap_err().kind(),
            LeaseErrorKind::Released
        );
        assert_eq!(
            guard.admit(id(2_000, 7)).unwrap_err().kind(),
            LeaseErrorKind::Released
        );
    }
}
