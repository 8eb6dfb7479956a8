//! Taking a free or expired worker id.

use super::{LeaseError, LeasePolicy, WorkerLease};

/// A decided acquisition: the row to write by compare-and-set, and where the
/// new holder's IDs start.
///
/// The host writes [`lease`](Acquisition::lease) with `lease_take`, guarded by
/// [`expected_token`](Acquisition::expected_token); on one row it holds the
/// worker id, waits until its clock reaches
/// [`ready_at_millis`](Acquisition::ready_at_millis), and builds its generator
/// with `starting_after_unix_millis(start_after_millis)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Acquisition {
    /// The row to write: held, the next fencing token, the new deadline, and
    /// the start point as its high-water mark.
    pub lease: WorkerLease,
    /// The fencing token of the row as it was found (the compare-and-set guard).
    pub expected_token: u64,
    /// When the acquisition was decided, in Unix milliseconds (the
    /// `:now_millis` of `lease_take`).
    pub acquired_millis: u64,
    /// The new holder issues only IDs whose time lies after this Unix
    /// millisecond: the previous high-water mark, and for an expired lease the
    /// previous deadline too (the old holder never issued an ID at or past it).
    pub start_after_millis: u64,
    /// The first Unix millisecond at which the new holder may issue:
    /// `start_after + 1`, and for an expired lease at least the old deadline
    /// plus the policy's clock-skew bound.
    pub ready_at_millis: u64,
}

/// What `lease_count` says about the worker ids up to the policy's
/// `max_worker` when `lease_find` found none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseCount {
    /// How many rows exist (`worker_id ≤ max_worker`): column `present_count`.
    pub present: u64,
    /// How many of them are free or ended at the query's `now_millis`
    /// (column `free_count`), counted without locks (rows that concurrent acquisitions are taking
    /// count as free until they commit).
    pub free: u64,
}

/// What to do after `lease_find` found no row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoneFound {
    /// Some worker ids have no row yet: run `lease_seed`, then find again.
    Seed,
    /// Free rows exist but were locked by concurrent acquisitions (or a
    /// concurrent `lease_seed`): pause a few milliseconds and find again.
    Retry,
}

/// Decides what follows a `lease_find` that found nothing, from
/// `lease_count`: [`NoneFound::Seed`] while rows are missing,
/// [`NoneFound::Retry`] while some are free, and `lease.no_worker_free` when
/// every worker id has a row held by a live lease.
pub fn none_found(count: LeaseCount, policy: &LeasePolicy) -> Result<NoneFound, LeaseError> {
    if count.present <= policy.max_worker() {
        Ok(NoneFound::Seed)
    } else if count.free > 0 {
        Ok(NoneFound::Retry)
    } else {
        Err(LeaseError::no_worker_free(policy.max_worker()))
    }
}

/// Decides the acquisition of `row`, the row `lease_find` returned at
/// `now_millis`.
///
/// The rules:
/// 1. A worker id above the policy's range: `lease.worker_out_of_range`.
/// 2. A held row whose deadline is still ahead (`now < deadline`):
///    `lease.still_held` (the query never returns one).
/// 3. The new row: held, token + 1 (`lease.token_exhausted` at the maximum),
///    deadline `now + lease` (`lease.time_overflow`).
/// 4. Start point: a released row's high-water mark; for an expired row the
///    later of its high-water mark and its deadline. Ready time:
///    `start_after + 1`; for an expired row at least `deadline + max_skew`.
/// 5. A ready time more than `max_start_wait` after now:
///    `lease.high_water_ahead` (nothing is written).
pub fn acquire(
    row: &WorkerLease,
    now_millis: u64,
    policy: &LeasePolicy,
) -> Result<Acquisition, LeaseError> {
    if row.worker_id > policy.max_worker() {
        return Err(LeaseError::worker_out_of_range(
            row.worker_id,
            policy.max_worker(),
        ));
    }
    if row.held && now_millis < row.lease_deadline_millis {
        return Err(LeaseError::still_held(
            row.worker_id,
            row.lease_deadline_millis,
            now_millis,
        ));
    }
    let fencing_token = row
        .fencing_token
        .checked_add(1)
        .ok_or(LeaseError::token_exhausted(row.worker_id))?;
    let lease_deadline_millis = checked_add(now_millis, policy.lease_millis())?;
    let (start_after_millis, skew_ready) = if row.held {
        (
            row.high_water_millis.max(row.lease_deadline_millis),
            checked_add(row.lease_deadline_millis, policy.max_skew_millis())?,
        )
    } else {
        (row.high_water_millis, 0)
    };
    let ready_at_millis = checked_add(start_after_millis, 1)?.max(skew_ready);
    if ready_at_millis.saturating_sub(now_millis) > policy.max_start_wait_millis() {
        return Err(LeaseError::high_water_ahead(
            row.worker_id,
            ready_at_millis,
            now_millis,
            policy.max_start_wait_millis(),
        ));
    }
    Ok(Acquisition {
        lease: WorkerLease {
            worker_id: row.worker_id,
            fencing_token,
            lease_deadline_millis,
            high_water_millis: start_after_millis,
            held: true,
        },
        expected_token: row.fencing_token,
        acquired_millis: now_millis,
        start_after_millis,
        ready_at_millis,
    })
}

pub(super) fn checked_add(millis: u64, duration: u64) -> Result<u64, LeaseError> {
    millis
        .checked_add(duration)
        .ok_or(LeaseError::time_overflow(millis, duration))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::LeaseErrorKind;

    fn row(held: bool, token: u64, deadline: u64, high_water: u64) -> WorkerLease {
        WorkerLease {
            worker_id: 3,
            fencing_token: token,
            lease_deadline_millis: deadline,
            high_water_millis: high_water,
            held,
        }
    }

    #[test]
    fn a_fresh_row_starts_at_its_high_water_mark() {
        let policy = LeasePolicy::default();
        let acquisition = acquire(&row(false, 0, 0, 0), 1_000, &policy).unwrap();
        assert_eq!(
            acquisition.lease,
            WorkerLease {
                worker_id: 3,
                fencing_token: 1,
                lease_deadline_millis: 31_000,
                high_water_millis: 0,
                held: true,
            }
        );
        assert_eq!(
            (
                acquisition.expected_token,
                acquisition.start_after_millis,
                acquisition.ready_at_millis
            ),
            (0, 0, 1)
        );
    }

    #[test]
    fn an_expired_row_waits_out_the_skew_after_its_deadline() {
        let policy = LeasePolicy::default();
        let acquisition = acquire(&row(true, 4, 50_000, 42_000), 50_000, &policy).unwrap();
        assert_eq!(acquisition.start_after_millis, 50_000);
        assert_eq!(acquisition.ready_at_millis, 51_000);
        assert_eq!(acquisition.lease.fencing_token, 5);
        assert_eq!(acquisition.lease.high_water_millis, 50_000);
    }

    #[test]
    fn refusals() {
        let policy = LeasePolicy::default();
        let cases = [
            (row(true, 1, 2_000, 0), 1_999, LeaseErrorKind::StillHeld),
            (
                row(false, u64::MAX, 0, 0),
                0,
                LeaseErrorKind::TokenExhausted,
            ),
            (row(false, 1, 0, 0), u64::MAX, LeaseErrorKind::TimeOverflow),
            (
                row(false, 1, 0, 20_000),
                9_999,
                LeaseErrorKind::HighWaterAhead,
            ),
            (
                WorkerLease {
                    worker_id: 1024,
                    ..row(false, 0, 0, 0)
                },
                0,
                LeaseErrorKind::WorkerOutOfRange,
            ),
        ];
        for (found, now, kind) in cases {
            assert_eq!(acquire(&found, now, &policy).unwrap_err().kind(), kind);
        }
        assert!(acquire(&row(false, 1, 0, 20_000), 10_001, &policy).is_ok());
    }

    #[test]
    fn none_found_seeds_retries_or_gives_up() {
        let policy = LeasePolicy::default();
        let count = |present, free| none_found(LeaseCount { present, free }, &policy);
        assert_eq!(count(0, 0), Ok(NoneFound::Seed));
        assert_eq!(count(1023, 0), Ok(NoneFound::Seed));
        assert_eq!(count(1024, 3), Ok(NoneFound::Retry));
        assert_eq!(
            count(1024, 0).unwrap_err().kind(),
            LeaseErrorKind::NoWorkerFree
        );
    }
}
