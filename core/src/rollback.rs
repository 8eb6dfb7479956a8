//! What a generator does when the clock goes backwards.

/// The policy a generator applies when the clock reads earlier than the last
/// timestamp it issued (an NTP step, a VM resumed from a snapshot).
///
/// No policy ever returns a duplicate: the worst outcome of each is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RollbackPolicy {
    /// Return an error at once.
    Fail,
    /// Wait for the clock to catch up, for at most `max_millis` milliseconds
    /// of rollback, then return an error. A rollback larger than the bound
    /// fails at once without waiting.
    Wait {
        /// The largest rollback waited out, in milliseconds.
        max_millis: u64,
    },
    /// Keep issuing from the last timestamp (a logical clock that does not
    /// move backwards), as long as the wall clock is at most `max_millis`
    /// behind it; beyond that, return an error.
    Logical {
        /// The largest gap between the logical and the wall clock, in milliseconds.
        max_millis: u64,
    },
}

impl RollbackPolicy {
    /// The default: wait out a rollback of up to 5 ms, as Meituan Leaf does.
    pub const DEFAULT: Self = Self::Wait { max_millis: 5 };

    /// The largest rollback this policy tolerates, in milliseconds.
    pub const fn tolerance_millis(self) -> u64 {
        match self {
            Self::Fail => 0,
            Self::Wait { max_millis } | Self::Logical { max_millis } => max_millis,
        }
    }
}

impl Default for RollbackPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_waits_five_millis() {
        assert_eq!(
            RollbackPolicy::default(),
            RollbackPolicy::Wait { max_millis: 5 }
        );
        assert_eq!(RollbackPolicy::default().tolerance_millis(), 5);
        assert_eq!(RollbackPolicy::Fail.tolerance_millis(), 0);
        assert_eq!(
            RollbackPolicy::Logical { max_millis: 9 }.tolerance_millis(),
            9
        );
    }
}
