//! The one error type of the record state machine.

use alloc::string::String;
use core::fmt;

use crate::quote::QuotedStr;

use super::{Fence, Status};

/// The longest prefix of a rejected status text kept for the message.
const QUOTED_TEXT_MAX: usize = 32;

/// Why a record operation was refused. See [`kind`](RecordError::kind) and
/// [`code`](RecordError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    detail: Detail,
}

/// The kinds of [`RecordError`], each with a stable [`code`](RecordErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordErrorKind {
    /// `record.stale_token`: the fence presented is not the record's latest
    /// claim (another worker reclaimed the key).
    StaleToken,
    /// `record.not_pending`: the claim is current, but the record was already
    /// completed or failed.
    NotPending,
    /// `record.claim_conflict`: the record changed between loading it and
    /// writing the claim (another worker claimed first); load and decide again.
    ClaimConflict,
    /// `record.claim_expired`: the claim's lease ended before it was written
    /// (it was decided too long ago); load the record and decide again.
    ClaimExpired,
    /// `record.token_exhausted`: the fencing token is at its maximum and
    /// cannot be bumped.
    TokenExhausted,
    /// `record.time_overflow`: a time plus a policy duration exceeds 64 bits.
    TimeOverflow,
    /// `record.invalid_policy`: a policy duration is out of range.
    InvalidPolicy,
    /// `record.unknown_status`: a status text is not one of the four.
    UnknownStatus,
}

impl RecordErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::StaleToken => "record.stale_token",
            Self::NotPending => "record.not_pending",
            Self::ClaimConflict => "record.claim_conflict",
            Self::ClaimExpired => "record.claim_expired",
            Self::TokenExhausted => "record.token_exhausted",
            Self::TimeOverflow => "record.time_overflow",
            Self::InvalidPolicy => "record.invalid_policy",
            Self::UnknownStatus => "record.unknown_status",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    StaleToken {
        presented: Fence,
        current: Fence,
    },
    Removed {
        presented: Fence,
    },
    NotPending {
        status: Status,
    },
    ClaimConflict,
    ClaimExpired {
        lease_deadline: u64,
    },
    TokenExhausted,
    TimeOverflow {
        millis: u64,
        duration: u64,
    },
    InvalidPolicy {
        field: &'static str,
        reason: &'static str,
    },
    UnknownStatus {
        text: String,
        len: usize,
    },
}

impl RecordError {
    pub(crate) const fn stale_token(presented: Fence, current: Fence) -> Self {
        Self {
            detail: Detail::StaleToken { presented, current },
        }
    }

    pub(crate) const fn not_pending(status: Status) -> Self {
        Self {
            detail: Detail::NotPending { status },
        }
    }

    /// `record.stale_token` for a holder whose record is gone (removed by
    /// cleanup after retention) when it writes.
    pub(crate) const fn removed(presented: Fence) -> Self {
        Self {
            detail: Detail::Removed { presented },
        }
    }

    pub(crate) const fn claim_conflict() -> Self {
        Self {
            detail: Detail::ClaimConflict,
        }
    }

    pub(crate) const fn claim_expired(lease_deadline: u64) -> Self {
        Self {
            detail: Detail::ClaimExpired { lease_deadline },
        }
    }

    pub(crate) const fn token_exhausted() -> Self {
        Self {
            detail: Detail::TokenExhausted,
        }
    }

    pub(crate) const fn time_overflow(millis: u64, duration: u64) -> Self {
        Self {
            detail: Detail::TimeOverflow { millis, duration },
        }
    }

    pub(crate) const fn invalid_policy(field: &'static str, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidPolicy { field, reason },
        }
    }

    pub(crate) fn unknown_status(text: &str) -> Self {
        let quoted = text
            .char_indices()
            .take_while(|(at, c)| at + c.len_utf8() <= QUOTED_TEXT_MAX)
            .map(|(_, c)| c)
            .collect();
        Self {
            detail: Detail::UnknownStatus {
                text: quoted,
                len: text.len(),
            },
        }
    }

    /// What went wrong.
    pub const fn kind(&self) -> RecordErrorKind {
        match self.detail {
            Detail::StaleToken { .. } | Detail::Removed { .. } => RecordErrorKind::StaleToken,
            Detail::NotPending { .. } => RecordErrorKind::NotPending,
            Detail::ClaimConflict => RecordErrorKind::ClaimConflict,
            Detail::ClaimExpired { .. } => RecordErrorKind::ClaimExpired,
            Detail::TokenExhausted => RecordErrorKind::TokenExhausted,
            Detail::TimeOverflow { .. } => RecordErrorKind::TimeOverflow,
            Detail::InvalidPolicy { .. } => RecordErrorKind::InvalidPolicy,
            Detail::UnknownStatus { .. } => RecordErrorKind::UnknownStatus,
        }
    }

    /// The stable dotted code, e.g. `"record.stale_token"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Detail::StaleToken { presented, current } => write!(
                f,
                "stale fencing token {} (record created at {} ms): the key was reclaimed, \
                 its current token is {} (record created at {} ms)",
                presented.token, presented.created_millis, current.token, current.created_millis
            ),
            Detail::Removed { presented } => write!(
                f,
                "stale fencing token {} (record created at {} ms): the record was removed \
                 before this write",
                presented.token, presented.created_millis
            ),
            Detail::NotPending { status } => write!(
                f,
                "the record is no longer pending: its status is already {status}"
            ),
            Detail::ClaimConflict => f.write_str(
                "the record changed since it was loaded (another worker claimed the key): \
                 load it and decide again",
            ),
            Detail::ClaimExpired { lease_deadline } => write!(
                f,
                "the claim's lease ended at {lease_deadline} ms before it was written: \
                 load the record and decide again"
            ),
            Detail::TokenExhausted => {
                f.write_str("the fencing token is at its maximum (2^64 - 1) and cannot be bumped")
            }
            Detail::TimeOverflow { millis, duration } => write!(
                f,
                "time {millis} ms plus {duration} ms does not fit in 64 bits"
            ),
            Detail::InvalidPolicy { field, reason } => {
                write!(f, "invalid record policy: {field} {reason}")
            }
            Detail::UnknownStatus { text, len } if text.len() < *len => write!(
                f,
                "unknown record status {}… ({len} bytes): expected pending, succeeded, \
                 failed or failed_retryable",
                QuotedStr(text)
            ),
            Detail::UnknownStatus { text, .. } => write!(
                f,
                "unknown record status {}: expected pending, succeeded, failed or \
                 failed_retryable",
                QuotedStr(text)
            ),
        }
    }
}

impl core::error::Error for RecordError {}
