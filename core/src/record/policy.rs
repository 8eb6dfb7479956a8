//! How long leases and records last, and what concurrent duplicates get.

use super::RecordError;

/// The rules a host sets for its idempotency records.
///
/// Build one with [`RecordPolicy::new`] and the `with_…` methods, which check
/// every value; [`RecordPolicy::DEFAULT`] is a valid starting point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordPolicy {
    lease_millis: u64,
    retention_millis: u64,
    store_errors: bool,
    retry_after_millis: u64,
    max_wait_millis: u64,
    poll_millis: u64,
}

impl RecordPolicy {
    /// A 60 s lease, 24 h retention (as Stripe keeps keys), errors stored,
    /// a 1 s retry hint, and no waiting: a concurrent duplicate gets
    /// [`InProgress`](super::Decision::InProgress) at once (HTTP 409, as the
    /// IETF draft specifies).
    pub const DEFAULT: Self = Self {
        lease_millis: 60_000,
        retention_millis: 86_400_000,
        store_errors: true,
        retry_after_millis: 1_000,
        max_wait_millis: 0,
        poll_millis: 50,
    };

    /// The default policy with the given lease and retention.
    ///
    /// Fails with `record.invalid_policy` unless `1 ≤ lease_millis <
    /// retention_millis`: a lease that outlived retention would leave a
    /// running claim on a key that is already too old.
    pub const fn new(lease_millis: u64, retention_millis: u64) -> Result<Self, RecordError> {
        if lease_millis == 0 {
            return Err(RecordError::invalid_policy(
                "lease_millis",
                "must be at least 1",
            ));
        }
        if retention_millis <= lease_millis {
            return Err(RecordError::invalid_policy(
                "retention_millis",
                "must be longer than lease_millis",
            ));
        }
        Ok(Self {
            lease_millis,
            retention_millis,
            ..Self::DEFAULT
        })
    }

    /// Whether final failures are stored and replayed (`true`) or treated as
    /// retryable, releasing the key (`false`).
    pub const fn with_store_errors(self, store_errors: bool) -> Self {
        Self {
            store_errors,
            ..self
        }
    }

    /// The longest retry delay suggested to a concurrent duplicate
    /// (the `Retry-After` of HTTP 409). Fails with `record.invalid_policy`
    /// when zero.
    pub const fn with_retry_after_millis(
        self,
        retry_after_millis: u64,
    ) -> Result<Self, RecordError> {
        if retry_after_millis == 0 {
            return Err(RecordError::invalid_policy(
                "retry_after_millis",
                "must be at least 1",
            ));
        }
        Ok(Self {
            retry_after_millis,
            ..self
        })
    }

    /// Lets a concurrent duplicate wait up to `max_wait_millis` in total for
    /// the first request to finish, reloading the record every `poll_millis`
    /// at most; `max_wait_millis = 0` turns waiting off. Fails with
    /// `record.invalid_policy` when waiting is on and `poll_millis` is zero.
    pub const fn with_wait(
        self,
        max_wait_millis: u64,
        poll_millis: u64,
    ) -> Result<Self, RecordError> {
        if max_wait_millis > 0 && poll_millis == 0 {
            return Err(RecordError::invalid_policy(
                "poll_millis",
                "must be at least 1 when waiting",
            ));
        }
        Ok(Self {
            max_wait_millis,
            poll_millis,
            ..self
        })
    }

    /// How long a claim holds the key before another request may reclaim it.
    pub const fn lease_millis(&self) -> u64 {
        self.lease_millis
    }

    /// How long after its first claim a key is remembered.
    pub const fn retention_millis(&self) -> u64 {
        self.retention_millis
    }

    /// Whether final failures are stored and replayed.
    pub const fn store_errors(&self) -> bool {
        self.store_errors
    }

    /// The longest retry delay suggested to a concurrent duplicate.
    pub const fn retry_after_millis(&self) -> u64 {
        self.retry_after_millis
    }

    /// The longest total wait of a concurrent duplicate (0: no waiting).
    pub const fn max_wait_millis(&self) -> u64 {
        self.max_wait_millis
    }

    /// The longest pause between two loads of a waiting duplicate.
    pub const fn poll_millis(&self) -> u64 {
        self.poll_millis
    }
}

impl Default for RecordPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordErrorKind;

    #[test]
    fn default_is_what_new_checks() {
        let policy = RecordPolicy::new(60_000, 86_400_000).unwrap();
        assert_eq!(policy, RecordPolicy::default());
        assert!(policy.store_errors());
        assert_eq!(policy.max_wait_millis(), 0);
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let refused = [
            RecordPolicy::new(0, 10),
            RecordPolicy::new(10, 10),
            RecordPolicy::new(11, 10),
            RecordPolicy::DEFAULT.with_retry_after_millis(0),
            RecordPolicy::DEFAULT.with_wait(100, 0),
        ];
        for result in refused {
            assert_eq!(result.unwrap_err().kind(), RecordErrorKind::InvalidPolicy);
        }
        assert!(RecordPolicy::DEFAULT.with_wait(0, 0).is_ok());
    }

    #[test]
    fn builders_set_their_field_only() {
        let policy = RecordPolicy::new(5, 50)
            .unwrap()
            .with_store_errors(false)
            .with_retry_after_millis(7)
            .unwrap()
            .with_wait(30, 3)
            .unwrap();
        assert_eq!(
            (
                policy.lease_millis(),
                policy.retention_millis(),
                policy.store_errors(),
                policy.retry_after_millis(),
                policy.max_wait_millis(),
                policy.poll_millis()
            ),
            (5, 50, false, 7, 30, 3)
        );
    }
}
