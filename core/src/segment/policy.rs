//! How big segments are, when the next one is fetched, and how the step adapts.

use super::SegmentError;

/// The largest ID a segment may reach: SQL `BIGINT`.
pub(super) const MAX_ID: u64 = i64::MAX as u64;

/// The rules a host sets for a segment allocator.
///
/// Build one with [`SegmentPolicy::new`] (the step bounds) and the `with_…`
/// methods, which check every value; [`SegmentPolicy::DEFAULT`] is a valid
/// starting point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SegmentPolicy {
    initial_step: u64,
    min_step: u64,
    max_step: u64,
    fetch_at_percent: u8,
    grow_below_millis: u64,
    shrink_above_millis: u64,
}

impl SegmentPolicy {
    /// Steps from 1 000 (the first) within 100..=1 000 000, the next segment
    /// fetched once 10 % of the current one is used, the step doubled when a
    /// segment lasted under 15 minutes and halved when it lasted over 30
    /// (Meituan Leaf's rule).
    pub const DEFAULT: Self = Self {
        initial_step: 1_000,
        min_step: 100,
        max_step: 1_000_000,
        fetch_at_percent: 10,
        grow_below_millis: 15 * 60 * 1000,
        shrink_above_millis: 30 * 60 * 1000,
    };

    /// The default policy with these steps.
    ///
    /// Fails with `segment.invalid_policy` unless
    /// `1 ≤ min_step ≤ initial_step ≤ max_step ≤ 2^63 − 1`.
    pub const fn new(
        initial_step: u64,
        min_step: u64,
        max_step: u64,
    ) -> Result<Self, SegmentError> {
        if min_step == 0 {
            return Err(SegmentError::invalid_policy(
                "min_step",
                "must be at least 1",
            ));
        }
        if initial_step < min_step || initial_step > max_step {
            return Err(SegmentError::invalid_policy(
                "initial_step",
                "must lie within min_step..=max_step",
            ));
        }
        if max_step > MAX_ID {
            return Err(SegmentError::invalid_policy(
                "max_step",
                "must be at most 2^63 - 1",
            ));
        }
        Ok(Self {
            initial_step,
            min_step,
            max_step,
            ..Self::DEFAULT
        })
    }

    /// The same policy fetching the next segment once `percent` of the
    /// current one is used (0: as soon as a segment arrives; 100: only when
    /// it is used up, so callers wait). Fails with `segment.invalid_policy`
    /// above 100.
    pub const fn with_fetch_at_percent(self, percent: u8) -> Result<Self, SegmentError> {
        if percent > 100 {
            return Err(SegmentError::invalid_policy(
                "fetch_at_percent",
                "must be at most 100",
            ));
        }
        Ok(Self {
            fetch_at_percent: percent,
            ..self
        })
    }

    /// The same policy with other adaptation bounds: the step doubles when
    /// the previous segment lasted less than `grow_below_millis`, halves when
    /// it lasted more than `shrink_above_millis`. Fails with
    /// `segment.invalid_policy` unless `grow_below_millis ≤ shrink_above_millis`.
    pub const fn with_adaptation(
        self,
        grow_below_millis: u64,
        shrink_above_millis: u64,
    ) -> Result<Self, SegmentError> {
        if grow_below_millis > shrink_above_millis {
            return Err(SegmentError::invalid_policy(
                "grow_below_millis",
                "must not exceed shrink_above_millis",
            ));
        }
        Ok(Self {
            grow_below_millis,
            shrink_above_millis,
            ..self
        })
    }

    /// The step of the first fetch.
    pub const fn initial_step(&self) -> u64 {
        self.initial_step
    }

    /// The smallest step.
    pub const fn min_step(&self) -> u64 {
        self.min_step
    }

    /// The largest step.
    pub const fn max_step(&self) -> u64 {
        self.max_step
    }

    /// The share of the current segment used before the next is fetched, in percent.
    pub const fn fetch_at_percent(&self) -> u8 {
        self.fetch_at_percent
    }

    /// A segment that lasted less than this doubles the step.
    pub const fn grow_below_millis(&self) -> u64 {
        self.grow_below_millis
    }

    /// A segment that lasted more than this halves the step.
    pub const fn shrink_above_millis(&self) -> u64 {
        self.shrink_above_millis
    }

    /// The step after one that was fetched `lasted_millis` before the next
    /// fetch: doubled below the grow bound, halved above the shrink bound,
    /// kept between them, always within `min_step..=max_step`.
    pub const fn adapt(&self, step: u64, lasted_millis: u64) -> u64 {
        let next = if lasted_millis < self.grow_below_millis {
            step.saturating_mul(2)
        } else if lasted_millis > self.shrink_above_millis {
            step / 2
        } else {
            step
        };
        if next < self.min_step {
            self.min_step
        } else if next > self.max_step {
            self.max_step
        } else {
            next
        }
    }
}

impl Default for SegmentPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::SegmentErrorKind;

    #[test]
    fn default_is_what_new_checks() {
        assert_eq!(
            SegmentPolicy::new(1_000, 100, 1_000_000),
            Ok(SegmentPolicy::DEFAULT)
        );
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let refused = [
            SegmentPolicy::new(1, 0, 10),
            SegmentPolicy::new(5, 6, 10),
            SegmentPolicy::new(11, 6, 10),
            SegmentPolicy::new(11, 6, u64::MAX),
            SegmentPolicy::DEFAULT.with_fetch_at_percent(101),
            SegmentPolicy::DEFAULT.with_adaptation(2, 1),
        ];
        for result in refused {
            assert_eq!(result.unwrap_err().kind(), SegmentErrorKind::InvalidPolicy);
        }
    }

    #[test]
    fn adapt_doubles_halves_and_stays_in_bounds() {
        let policy = SegmentPolicy::DEFAULT;
        let minute = 60_000;
        assert_eq!(policy.adapt(1_000, 14 * minute), 2_000);
        assert_eq!(policy.adapt(1_000, 15 * minute), 1_000);
        assert_eq!(policy.adapt(1_000, 30 * minute), 1_000);
        assert_eq!(policy.adapt(1_000, 30 * minute + 1), 500);
        assert_eq!(policy.adapt(150, u64::MAX), 100);
        assert_eq!(policy.adapt(800_000, 0), 1_000_000);
    }
}
