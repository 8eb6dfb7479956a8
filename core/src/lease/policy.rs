//! How long worker-id leases last, when they are renewed and when a holder
//! stops.

use super::LeaseError;
use crate::snowflake::SnowflakeLayout;

/// The most worker ids a lease table holds (16 worker bits): the schema
/// checks `worker_id` to 0–65535, and `lease_seed` creates the rows of
/// `0..=max_worker` in one statement.
pub const MAX_LEASED_WORKERS: u64 = 65_536;

/// The rules a host sets for its worker-id leases.
///
/// Build one with [`LeasePolicy::new`] (the layout's worker range, the
/// default timings) and the `with_…` methods, which check every value.
///
/// ```text
///   acquire/renew sent at t ──────── renew at t + renew_interval ── stop at t + lease − margin ── deadline t + lease
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeasePolicy {
    layout: SnowflakeLayout,
    lease_millis: u64,
    renew_interval_millis: u64,
    renew_retry_millis: u64,
    safety_margin_millis: u64,
    max_skew_millis: u64,
    max_start_wait_millis: u64,
}

impl LeasePolicy {
    /// Leases on the [`CLASSIC`](SnowflakeLayout::CLASSIC) layout's 1024
    /// worker ids with the default timings of [`new`](Self::new).
    pub const DEFAULT: Self = Self {
        layout: SnowflakeLayout::CLASSIC,
        lease_millis: 30_000,
        renew_interval_millis: 10_000,
        renew_retry_millis: 1_000,
        safety_margin_millis: 5_000,
        max_skew_millis: 1_000,
        max_start_wait_millis: 10_000,
    };

    /// Leases on the worker ids of `layout` with the default timings: a 30 s
    /// lease renewed every 10 s (a third of it), retried every 1 s after a
    /// failed renewal, a 5 s safety margin (the holder stops 25 s after its
    /// last successful renewal was sent), a 1 s clock-skew bound, and at most
    /// 10 s of waiting for a high-water mark ahead of the clock.
    ///
    /// Fails with `lease.invalid_policy` when the layout has more than
    /// [`MAX_LEASED_WORKERS`] worker ids.
    pub const fn new(layout: SnowflakeLayout) -> Result<Self, LeaseError> {
        if layout.max_worker() >= MAX_LEASED_WORKERS {
            return Err(LeaseError::invalid_policy(
                "layout",
                "has more than 65536 worker ids (at most 16 worker bits can be leased)",
            ));
        }
        Ok(Self {
            layout,
            ..Self::DEFAULT
        })
    }

    /// The same policy with another lease length, renewal interval and
    /// safety margin.
    ///
    /// Fails with `lease.invalid_policy` unless `1 ≤ renew_interval_millis`
    /// and `renew_interval_millis + safety_margin_millis < lease_millis`: a
    /// holder must get at least one renewal attempt before it stops.
    pub const fn with_lease(
        self,
        lease_millis: u64,
        renew_interval_millis: u64,
        safety_margin_millis: u64,
    ) -> Result<Self, LeaseError> {
        if renew_interval_millis == 0 {
            return Err(LeaseError::invalid_policy(
                "renew_interval_millis",
                "must be at least 1",
            ));
        }
        match renew_interval_millis.checked_add(safety_margin_millis) {
            Some(before_stop) if before_stop < lease_millis => Ok(Self {
                lease_millis,
                renew_interval_millis,
                safety_margin_millis,
                ..self
            }),
            _ => Err(LeaseError::invalid_policy(
                "lease_millis",
                "must be longer than renew_interval_millis + safety_margin_millis",
            )),
        }
    }

    /// The same policy with another pause before retrying a failed renewal.
    /// Fails with `lease.invalid_policy` when zero.
    pub const fn with_renew_retry_millis(
        self,
        renew_retry_millis: u64,
    ) -> Result<Self, LeaseError> {
        if renew_retry_millis == 0 {
            return Err(LeaseError::invalid_policy(
                "renew_retry_millis",
                "must be at least 1",
            ));
        }
        Ok(Self {
            renew_retry_millis,
            ..self
        })
    }

    /// The same policy with another bound on the clock skew between hosts:
    /// a new holder of an **expired** lease waits until the old deadline plus
    /// this before it issues.
    pub const fn with_max_skew_millis(self, max_skew_millis: u64) -> Self {
        Self {
            max_skew_millis,
            ..self
        }
    }

    /// The same policy with another bound on how long a new holder may have
    /// to wait before it is ready; a longer wait is `lease.high_water_ahead`.
    pub const fn with_max_start_wait_millis(self, max_start_wait_millis: u64) -> Self {
        Self {
            max_start_wait_millis,
            ..self
        }
    }

    /// The layout whose worker ids are leased.
    pub const fn layout(&self) -> &SnowflakeLayout {
        &self.layout
    }

    /// The largest worker id (the `:max_worker` of `lease_find` and `lease_seed`).
    pub const fn max_worker(&self) -> u64 {
        self.layout.max_worker()
    }

    /// How long a lease runs after the acquisition or renewal that set it.
    pub const fn lease_millis(&self) -> u64 {
        self.lease_millis
    }

    /// How long after a successful renewal (or the acquisition) the next
    /// renewal is due.
    pub const fn renew_interval_millis(&self) -> u64 {
        self.renew_interval_millis
    }

    /// How long after a failed renewal attempt the next one is due.
    pub const fn renew_retry_millis(&self) -> u64 {
        self.renew_retry_millis
    }

    /// How long before the deadline a holder stops issuing.
    pub const fn safety_margin_millis(&self) -> u64 {
        self.safety_margin_millis
    }

    /// The bound on the clock skew between hosts.
    pub const fn max_skew_millis(&self) -> u64 {
        self.max_skew_millis
    }

    /// The longest wait a new holder accepts before it may issue.
    pub const fn max_start_wait_millis(&self) -> u64 {
        self.max_start_wait_millis
    }
}

impl Default for LeasePolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lease::LeaseErrorKind;

    #[test]
    fn defaults() {
        let policy = LeasePolicy::default();
        assert_eq!(LeasePolicy::new(SnowflakeLayout::CLASSIC), Ok(policy));
        assert_eq!(policy.max_worker(), 1023);
        assert_eq!(
            (
                policy.lease_millis(),
                policy.renew_interval_millis(),
                policy.renew_retry_millis(),
                policy.safety_margin_millis(),
                policy.max_skew_millis(),
                policy.max_start_wait_millis()
            ),
            (30_000, 10_000, 1_000, 5_000, 1_000, 10_000)
        );
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let wide = SnowflakeLayout::new(30, 17, 16, 0, 1).unwrap();
        let refused = [
            LeasePolicy::new(wide),
            LeasePolicy::default().with_lease(10, 0, 1),
            LeasePolicy::default().with_lease(10, 5, 5),
            LeasePolicy::default().with_lease(10, 9, 1),
            LeasePolicy::default().with_lease(u64::MAX, u64::MAX, 1),
            LeasePolicy::default().with_renew_retry_millis(0),
        ];
        for result in refused {
            assert_eq!(result.unwrap_err().kind(), LeaseErrorKind::InvalidPolicy);
        }
        let sixteen = SnowflakeLayout::new(30, 16, 16, 0, 1).unwrap();
        assert_eq!(LeasePolicy::new(sixteen).unwrap().max_worker(), 65_535);
        assert!(LeasePolicy::default().with_lease(10, 5, 4).is_ok());
        assert!(LeasePolicy::default().with_lease(3, 1, 0).is_ok());
    }
}
