//! How a relay claims, retries and gives up.

use super::OutboxError;

/// The rules a host sets for its outbox relays.
///
/// Build one with [`RelayPolicy::new`] and the `with_…` methods, which check
/// every value; [`RelayPolicy::DEFAULT`] is a valid starting point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RelayPolicy {
    batch_size: u64,
    claim_millis: u64,
    base_backoff_millis: u64,
    max_backoff_millis: u64,
    jitter_percent: u8,
    max_attempts: u64,
}

impl RelayPolicy {
    /// Batches of 100, a claim held 60 s, backoff from 1 s doubling up to
    /// 10 minutes with up to 50 % jitter, dead after 10 attempts.
    pub const DEFAULT: Self = Self {
        batch_size: 100,
        claim_millis: 60_000,
        base_backoff_millis: 1_000,
        max_backoff_millis: 600_000,
        jitter_percent: 50,
        max_attempts: 10,
    };

    /// The default policy with these batch size and claim length.
    ///
    /// Fails with `outbox.invalid_policy` unless both are at least 1.
    pub const fn new(batch_size: u64, claim_millis: u64) -> Result<Self, OutboxError> {
        if batch_size == 0 {
            return Err(OutboxError::invalid_policy(
                "batch_size",
                "must be at least 1",
            ));
        }
        if claim_millis == 0 {
            return Err(OutboxError::invalid_policy(
                "claim_millis",
                "must be at least 1",
            ));
        }
        Ok(Self {
            batch_size,
            claim_millis,
            ..Self::DEFAULT
        })
    }

    /// The same policy with another backoff: the `n`-th failed attempt waits
    /// `min(max, base × 2^(n−1))`, less up to `jitter_percent` of it.
    ///
    /// Fails with `outbox.invalid_policy` unless `1 ≤ base ≤ max` and
    /// `jitter_percent ≤ 100`.
    pub const fn with_backoff(
        self,
        base_backoff_millis: u64,
        max_backoff_millis: u64,
        jitter_percent: u8,
    ) -> Result<Self, OutboxError> {
        if base_backoff_millis == 0 || base_backoff_millis > max_backoff_millis {
            return Err(OutboxError::invalid_policy(
                "base_backoff_millis",
                "must lie within 1..=max_backoff_millis",
            ));
        }
        if jitter_percent > 100 {
            return Err(OutboxError::invalid_policy(
                "jitter_percent",
                "must be at most 100",
            ));
        }
        Ok(Self {
            base_backoff_millis,
            max_backoff_millis,
            jitter_percent,
            ..self
        })
    }

    /// The same policy giving up after `max_attempts` attempts. Fails with
    /// `outbox.invalid_policy` when zero.
    pub const fn with_max_attempts(self, max_attempts: u64) -> Result<Self, OutboxError> {
        if max_attempts == 0 {
            return Err(OutboxError::invalid_policy(
                "max_attempts",
                "must be at least 1",
            ));
        }
        Ok(Self {
            max_attempts,
            ..self
        })
    }

    /// The most messages one claim takes.
    pub const fn batch_size(&self) -> u64 {
        self.batch_size
    }

    /// How long a claim holds its messages.
    pub const fn claim_millis(&self) -> u64 {
        self.claim_millis
    }

    /// The backoff after the first failed attempt.
    pub const fn base_backoff_millis(&self) -> u64 {
        self.base_backoff_millis
    }

    /// The longest backoff.
    pub const fn max_backoff_millis(&self) -> u64 {
        self.max_backoff_millis
    }

    /// How much of a backoff the jitter may take off, in percent.
    pub const fn jitter_percent(&self) -> u8 {
        self.jitter_percent
    }

    /// How many attempts a message gets before it is dead.
    pub const fn max_attempts(&self) -> u64 {
        self.max_attempts
    }

    /// The pause after the `attempts`-th failed attempt (0 counts as 1),
    /// given a random `draw` the host passes in (any `u64`, uniform):
    /// `d = min(max, base × 2^(attempts−1))`, `spread = floor(d × jitter / 100)`,
    /// pause `= d − (draw mod (spread + 1))`, so it lies in `d − spread ..= d`.
    pub const fn backoff_millis(&self, attempts: u64, draw: u64) -> u64 {
        let doublings = attempts.saturating_sub(1);
        let full = if doublings >= 64 {
            self.max_backoff_millis
        } else {
            let grown = (self.base_backoff_millis as u128) << doublings;
            if grown > self.max_backoff_millis as u128 {
                self.max_backoff_millis
            } else {
                grown as u64
            }
        };
        let spread = full as u128 * self.jitter_percent as u128 / 100;
        // spread ≤ full, so the result lies in 0..=full and fits.
        (full as u128 - draw as u128 % (spread + 1)) as u64
    }
}

impl Default for RelayPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::OutboxErrorKind;

    #[test]
    fn out_of_range_values_are_refused() {
        let refused = [
            RelayPolicy::new(0, 1),
            RelayPolicy::new(1, 0),
            RelayPolicy::DEFAULT.with_backoff(0, 10, 0),
            RelayPolicy::DEFAULT.with_backoff(11, 10, 0),
            RelayPolicy::DEFAULT.with_backoff(1, 10, 101),
            RelayPolicy::DEFAULT.with_max_attempts(0),
        ];
        for result in refused {
            assert_eq!(result.unwrap_err().kind(), OutboxErrorKind::InvalidPolicy);
        }
        assert_eq!(RelayPolicy::new(100, 60_000), Ok(RelayPolicy::DEFAULT));
    }

    #[test]
    fn backoff_doubles_to_the_cap_less_the_jitter() {
        let policy = RelayPolicy::DEFAULT;
        assert_eq!(policy.backoff_millis(1, 0), 1_000);
        assert_eq!(policy.backoff_millis(0, 0), 1_000);
        assert_eq!(policy.backoff_millis(3, 0), 4_000);
        assert_eq!(policy.backoff_millis(3, 2_000), 2_000);
        assert_eq!(policy.backoff_millis(3, 2_001), 4_000);
        assert_eq!(policy.backoff_millis(11, 0), 600_000);
        assert_eq!(
            policy.backoff_millis(u64::MAX, u64::MAX),
            600_000 - u64::MAX % 300_001
        );
        let max = RelayPolicy::DEFAULT
            .with_backoff(u64::MAX, u64::MAX, 100)
            .unwrap();
        assert_eq!(max.backoff_millis(70, 5), u64::MAX - 5);
    }
}
