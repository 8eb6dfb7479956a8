//! The clock rollback policy, as a value hosts can build.

/// What a generator does when the clock goes backwards (the core's
/// `RollbackPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RollbackPolicy {
    /// Fail at once.
    Fail,
    /// Wait for the clock to catch up, for at most `max_millis` of rollback.
    Wait {
        /// The largest rollback waited out, in milliseconds.
        max_millis: u64,
    },
    /// Keep issuing from the last timestamp while the clock is at most
    /// `max_millis` behind it.
    Logical {
        /// The largest gap between the logical and the wall clock, in milliseconds.
        max_millis: u64,
    },
}

impl From<RollbackPolicy> for mintid::RollbackPolicy {
    fn from(policy: RollbackPolicy) -> Self {
        match policy {
            RollbackPolicy::Fail => Self::Fail,
            RollbackPolicy::Wait { max_millis } => Self::Wait { max_millis },
            RollbackPolicy::Logical { max_millis } => Self::Logical { max_millis },
        }
    }
}

impl From<mintid::RollbackPolicy> for RollbackPolicy {
    fn from(policy: mintid::RollbackPolicy) -> Self {
        match policy {
            mintid::RollbackPolicy::Fail => Self::Fail,
            mintid::RollbackPolicy::Wait { max_millis } => Self::Wait { max_millis },
            mintid::RollbackPolicy::Logical { max_millis } => Self::Logical { max_millis },
        }
    }
}
