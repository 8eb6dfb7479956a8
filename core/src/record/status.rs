//! The status column of a record.

use core::fmt;
use core::str::FromStr;

use super::RecordError;

/// Where a record is in its life. Stored as the stable text of
/// [`as_str`](Status::as_str).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// Claimed by a holder whose lease runs until the record's deadline.
    Pending,
    /// Completed; the stored response is replayed to duplicates.
    Succeeded,
    /// Failed for good; the stored error is replayed to duplicates.
    Failed,
    /// Failed in a way worth retrying; the next request with the key runs again.
    FailedRetryable,
}

impl Status {
    /// Every status, in declaration order.
    pub const ALL: [Status; 4] = [
        Status::Pending,
        Status::Succeeded,
        Status::Failed,
        Status::FailedRetryable,
    ];

    /// The stable text stored in the status column: `pending`, `succeeded`,
    /// `failed` or `failed_retryable`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::FailedRetryable => "failed_retryable",
        }
    }

    /// Reads the text of [`as_str`](Status::as_str) (exactly, case-sensitive).
    pub fn parse(text: &str) -> Result<Status, RecordError> {
        Status::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
            .ok_or_else(|| RecordError::unknown_status(text))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Status {
    type Err = RecordError;

    fn from_str(text: &str) -> Result<Status, RecordError> {
        Status::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordErrorKind;
    use alloc::string::ToString;

    #[test]
    fn text_round_trips() {
        for status in Status::ALL {
            assert_eq!(Status::parse(status.as_str()), Ok(status));
            assert_eq!(status.to_string(), status.as_str());
        }
    }

    #[test]
    fn unknown_text_is_rejected() {
        for text in ["", "PENDING", "done", "failed "] {
            let error = Status::parse(text).unwrap_err();
            assert_eq!(error.kind(), RecordErrorKind::UnknownStatus);
            assert_eq!(error.code(), "record.unknown_status");
        }
    }
}
