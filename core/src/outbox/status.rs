//! The status column of an outbox message.

use core::fmt;
use core::str::FromStr;

use super::OutboxError;

/// Where a message is in its life. Stored as the stable text of
/// [`as_str`](OutboxStatus::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutboxStatus {
    /// Waiting to be sent (or claimed by a relay that is sending it).
    Pending,
    /// Sent; kept until cleanup.
    Sent,
    /// Given up on after the policy's attempts; kept for an operator.
    Dead,
}

impl OutboxStatus {
    /// Every status, in declaration order.
    pub const ALL: [OutboxStatus; 3] = [
        OutboxStatus::Pending,
        OutboxStatus::Sent,
        OutboxStatus::Dead,
    ];

    /// The stable text stored in the status column: `pending`, `sent` or `dead`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OutboxStatus::Pending => "pending",
            OutboxStatus::Sent => "sent",
            OutboxStatus::Dead => "dead",
        }
    }

    /// Reads the text of [`as_str`](OutboxStatus::as_str) (exactly,
    /// case-sensitive); anything else is `outbox.unknown_status`.
    pub fn parse(text: &str) -> Result<OutboxStatus, OutboxError> {
        OutboxStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| OutboxError::unknown_status(text))
    }
}

impl fmt::Display for OutboxStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for OutboxStatus {
    type Err = OutboxError;

    fn from_str(text: &str) -> Result<OutboxStatus, OutboxError> {
        OutboxStatus::parse(text)
    }
}
