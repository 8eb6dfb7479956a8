//! Reading the clock under a rollback policy.

use super::error::Uuid7Error;
use crate::{Clock, RollbackPolicy};

/// Reads `clock` and applies `policy` if it reads earlier than `high`, the
/// latest reading the generator has used.
///
/// Returns the reading to generate with: one at or after `high`, or (under
/// [`RollbackPolicy::Logical`]) an earlier one within the bound, which makes
/// the generator continue from its last state. Rollback is measured against
/// the clock, not against the last ID's timestamp, which counter rollover
/// may have carried ahead of the clock.
pub(super) fn read_clock<C: Clock + ?Sized>(
    clock: &C,
    policy: RollbackPolicy,
    high: u64,
) -> Result<u64, Uuid7Error> {
    let now = clock.now_millis();
    if now >= high {
        return Ok(now);
    }
    let behind = high - now;
    match policy {
        RollbackPolicy::Logical { max_millis } if behind <= max_millis => Ok(now),
        RollbackPolicy::Wait { max_millis } if behind <= max_millis => {
            wait_until(clock, high, max_millis)
                .ok_or(Uuid7Error::clock_rollback(behind, policy, true))
        }
        _ => Err(Uuid7Error::clock_rollback(behind, policy, false)),
    }
}

/// Pauses until `clock` reads at least `high`, for at most `max_millis` of
/// pauses in total; returns that reading, or `None` if the time ran out.
fn wait_until<C: Clock + ?Sized>(clock: &C, high: u64, max_millis: u64) -> Option<u64> {
    let target_micros = high.saturating_mul(1000);
    let mut budget = max_millis.saturating_mul(1000);
    while budget > 0 {
        let step = target_micros
            .saturating_sub(clock.now_micros())
            .max(1)
            .min(budget);
        clock.pause(step);
        budget -= step;
        let now = clock.now_millis();
        if now >= high {
            return Some(now);
        }
    }
    None
}

#[cfg(all(test, target_has_atomic = "64"))]
mod tests {
    use super::*;
    use crate::ManualClock;

    const WAIT_5: RollbackPolicy = RollbackPolicy::Wait { max_millis: 5 };
    const LOGICAL_5: RollbackPolicy = RollbackPolicy::Logical { max_millis: 5 };

    #[test]
    fn a_clock_at_or_after_the_high_mark_is_read_as_is() {
        let clock = ManualClock::new(100);
        for policy in [RollbackPolicy::Fail, WAIT_5, LOGICAL_5] {
            assert_eq!(read_clock(&clock, policy, 100), Ok(100));
            assert_eq!(read_clock(&clock, policy, 99), Ok(100));
        }
    }

    #[test]
    fn fail_fails_at_once() {
        let clock = ManualClock::new(99);
        assert_eq!(
            read_clock(&clock, RollbackPolicy::Fail, 100),
            Err(Uuid7Error::clock_rollback(1, RollbackPolicy::Fail, false))
        );
    }

    #[test]
    fn logical_bridges_up_to_its_bound() {
        let clock = ManualClock::new(95);
        assert_eq!(read_clock(&clock, LOGICAL_5, 100), Ok(95));
        assert_eq!(
            read_clock(&clock, LOGICAL_5, 101),
            Err(Uuid7Error::clock_rollback(6, LOGICAL_5, false))
        );
    }

    #[test]
    fn wait_waits_for_a_moving_clock() {
        let clock = ManualClock::new(97).advancing_on_pause();
        assert_eq!(read_clock(&clock, WAIT_5, 100), Ok(100));
        assert_eq!(clock.now_micros(), 100_000);
    }

    #[test]
    fn wait_gives_up_on_a_stuck_clock_or_a_long_rollback() {
        let stuck = ManualClock::new(97);
        assert_eq!(
            read_clock(&stuck, WAIT_5, 100),
            Err(Uuid7Error::clock_rollback(3, WAIT_5, true))
        );
        let moving = ManualClock::new(90).advancing_on_pause();
        assert_eq!(
            read_clock(&moving, WAIT_5, 100),
            Err(Uuid7Error::clock_rollback(10, WAIT_5, false))
        );
        assert_eq!(
            moving.now_millis(),
            90,
            "a rollback beyond the bound is not waited for"
        );
    }
}
