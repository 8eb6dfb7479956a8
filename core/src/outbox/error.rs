//! The one error type of the outbox rules.

use alloc::string::String;
use core::fmt;

use crate::quote::QuotedStr;

/// The longest prefix of a rejected status text kept for the message.
const QUOTED_TEXT_MAX: usize = 32;

/// Why an outbox rule refused. See [`kind`](OutboxError::kind) and
/// [`code`](OutboxError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxError {
    detail: Detail,
}

/// The kinds of [`OutboxError`], each with a stable [`code`](OutboxErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutboxErrorKind {
    /// `outbox.invalid_policy`: a relay policy value is out of range.
    InvalidPolicy,
    /// `outbox.invalid_message`: a message's kind, business key or payload
    /// is outside the schema's limits.
    InvalidMessage,
    /// `outbox.unknown_status`: a status text is not `pending`, `sent` or `dead`.
    UnknownStatus,
    /// `outbox.claim_lost`: a mark was refused: the relay's claim on the
    /// message ended and another relay claimed it (or it is no longer pending).
    ClaimLost,
    /// `outbox.unexpected_rows`: a statement affected a number of rows its
    /// guarantees rule out (e.g. a MySQL connection with `CLIENT_FOUND_ROWS`).
    UnexpectedRows,
    /// `outbox.time_overflow`: a time plus a duration exceeds 64 bits.
    TimeOverflow,
}

impl OutboxErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidPolicy => "outbox.invalid_policy",
            Self::InvalidMessage => "outbox.invalid_message",
            Self::UnknownStatus => "outbox.unknown_status",
            Self::ClaimLost => "outbox.claim_lost",
            Self::UnexpectedRows => "outbox.unexpected_rows",
            Self::TimeOverflow => "outbox.time_overflow",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Detail {
    InvalidPolicy {
        field: &'static str,
        reason: &'static str,
    },
    InvalidMessage {
        field: &'static str,
        reason: &'static str,
    },
    UnknownStatus {
        text: String,
        len: usize,
    },
    ClaimLost {
        message_id: u64,
        claim_token: u64,
    },
    UnexpectedRows {
        statement: &'static str,
        rows: u64,
    },
    TimeOverflow {
        millis: u64,
        duration: u64,
    },
}

impl OutboxError {
    pub(crate) const fn invalid_policy(field: &'static str, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidPolicy { field, reason },
        }
    }

    pub(crate) const fn invalid_message(field: &'static str, reason: &'static str) -> Self {
        Self {
            detail: Detail::InvalidMessage { field, reason },
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

    pub(crate) const fn claim_lost(message_id: u64, claim_token: u64) -> Self {
        Self {
            detail: Detail::ClaimLost {
                message_id,
                claim_token,
            },
        }
    }

    pub(crate) const fn unexpected_rows(statement: &'static str, rows: u64) -> Self {
        Self {
            detail: Detail::UnexpectedRows { statement, rows },
        }
    }

    pub(crate) const fn time_overflow(millis: u64, duration: u64) -> Self {
        Self {
            detail: Detail::TimeOverflow { millis, duration },
        }
    }

    /// What went wrong.
    pub const fn kind(&self) -> OutboxErrorKind {
        match self.detail {
            Detail::InvalidPolicy { .. } => OutboxErrorKind::InvalidPolicy,
            Detail::InvalidMessage { .. } => OutboxErrorKind::InvalidMessage,
            Detail::UnknownStatus { .. } => OutboxErrorKind::UnknownStatus,
            Detail::ClaimLost { .. } => OutboxErrorKind::ClaimLost,
            Detail::UnexpectedRows { .. } => OutboxErrorKind::UnexpectedRows,
            Detail::TimeOverflow { .. } => OutboxErrorKind::TimeOverflow,
        }
    }

    /// The stable dotted code, e.g. `"outbox.claim_lost"`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for OutboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.detail {
            Detail::InvalidPolicy { field, reason } => {
                write!(f, "invalid relay policy: {field} {reason}")
            }
            Detail::InvalidMessage { field, reason } => {
                write!(f, "invalid outbox message: {field} {reason}")
            }
            Detail::UnknownStatus { text, len } if text.len() < *len => write!(
                f,
                "unknown outbox status {}… ({len} bytes): expected pending, sent or dead",
                QuotedStr(text)
            ),
            Detail::UnknownStatus { text, .. } => write!(
                f,
                "unknown outbox status {}: expected pending, sent or dead",
                QuotedStr(text)
            ),
            Detail::ClaimLost {
                message_id,
                claim_token,
            } => write!(
                f,
                "claim {claim_token} on message {message_id} is lost: it ended and another relay \
                 claimed the message, or the message is no longer pending"
            ),
            Detail::UnexpectedRows { statement, rows } => write!(
                f,
                "{statement} affected {rows} rows, which its guarantees rule out (is \
                 CLIENT_FOUND_ROWS set on a MySQL connection?)"
            ),
            Detail::TimeOverflow { millis, duration } => write!(
                f,
                "time {millis} ms plus {duration} ms does not fit in 64 bits"
            ),
        }
    }
}

impl core::error::Error for OutboxError {}
