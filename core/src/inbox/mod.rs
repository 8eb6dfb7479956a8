//! The inbox: idempotent consumers of redelivered messages.
//!
//! A consumer takes each message in its own transaction: the core's
//! [`InboxConsume`](crate::store::InboxConsume) driver claims
//! `(consumer, message id)` in the table `inbox_message` inside that
//! transaction, the handler runs, and the claim commits with the handler's
//! writes, or neither does. A redelivery of a committed message is a
//! duplicate, skipped and reported, never run; a crash before the commit
//! leaves nothing, so the redelivery runs it once.
//!
//! An inbox row is kept for the consumer's declared retention. A row deleted
//! before the broker's last redelivery would let that redelivery run again,
//! so [`InboxPolicy::new`] refuses a retention shorter than the redelivery
//! horizon the caller declares (`inbox.retention_too_short`). The rules are
//! in `docs/spec.md`, "Inbox".

use alloc::format;
use alloc::string::String;
use core::fmt;

use crate::quote::QuotedStr;

/// The longest consumer name, in bytes (ASCII).
pub const MAX_CONSUMER_BYTES: usize = 64;
/// The longest message id, in bytes (UTF-8).
pub const MAX_MESSAGE_ID_BYTES: usize = 255;
/// The longest retention or redelivery horizon: 100 years of 365.25 days, in
/// milliseconds.
pub const MAX_RETENTION_MILLIS: u64 = 3_155_760_000_000;

/// How long a consumer's inbox rows are kept, checked against how long its
/// broker may redeliver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InboxPolicy {
    retention_millis: u64,
    redelivery_horizon_millis: u64,
}

impl InboxPolicy {
    /// Rows kept `retention_millis` after their message was received, for a
    /// broker that redelivers a message at most `redelivery_horizon_millis`
    /// after its first delivery (its retry schedule's total, a stream's
    /// `max_age`, a provider's documented retry window).
    ///
    /// Fails with `inbox.invalid_policy` for a retention of 0 or either value
    /// above 100 years, and `inbox.retention_too_short` for a retention
    /// below the horizon.
    pub fn new(retention_millis: u64, redelivery_horizon_millis: u64) -> Result<Self, InboxError> {
        for (field, value) in [
            ("retention_millis", retention_millis),
            ("redelivery_horizon_millis", redelivery_horizon_millis),
        ] {
            if value > MAX_RETENTION_MILLIS {
                return Err(InboxError::new(
                    InboxErrorKind::InvalidPolicy,
                    format!(
                        "invalid inbox policy: {field} must be at most 100 years ({MAX_RETENTION_MILLIS}), got {value}"
                    ),
                ));
            }
        }
        if retention_millis == 0 {
            return Err(InboxError::new(
                InboxErrorKind::InvalidPolicy,
                "invalid inbox policy: retention_millis must be at least 1, got 0".into(),
            ));
        }
        if retention_millis < redelivery_horizon_millis {
            return Err(InboxError::new(
                InboxErrorKind::RetentionTooShort,
                format!(
                    "inbox retention {retention_millis} ms is shorter than the redelivery horizon \
                     {redelivery_horizon_millis} ms: a message redelivered after its row is \
                     deleted would run again"
                ),
            ));
        }
        Ok(Self {
            retention_millis,
            redelivery_horizon_millis,
        })
    }

    /// How long rows are kept, in milliseconds.
    pub const fn retention_millis(&self) -> u64 {
        self.retention_millis
    }

    /// The declared redelivery horizon, in milliseconds.
    pub const fn redelivery_horizon_millis(&self) -> u64 {
        self.redelivery_horizon_millis
    }
}

/// Checks a consumer name (1 to 64 bytes of printable ASCII) and a message
/// id (1 to 255 bytes, no U+0000): `inbox.invalid_message` names the fault.
pub fn check_message(consumer: &str, message_id: &str) -> Result<(), InboxError> {
    let refuse = |field: &str, value: &str, reason: &str| {
        Err(InboxError::new(
            InboxErrorKind::InvalidMessage,
            format!(
                "invalid inbox message: {field} {} {reason}",
                QuotedStr(value)
            ),
        ))
    };
    if consumer.is_empty()
        || consumer.len() > MAX_CONSUMER_BYTES
        || !consumer.bytes().all(|b| b.is_ascii_graphic())
    {
        return refuse(
            "consumer",
            consumer,
            "must be 1 to 64 bytes of printable ASCII without spaces",
        );
    }
    if message_id.is_empty() || message_id.len() > MAX_MESSAGE_ID_BYTES || message_id.contains('\0')
    {
        return refuse(
            "message_id",
            message_id,
            "must be 1 to 255 bytes without U+0000",
        );
    }
    Ok(())
}

/// Why an inbox rule refused. See [`kind`](InboxError::kind) and
/// [`code`](InboxError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxError {
    kind: InboxErrorKind,
    message: String,
}

/// The kinds of [`InboxError`], each with a stable [`code`](InboxErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InboxErrorKind {
    /// `inbox.invalid_policy`: a retention of 0, or a duration above 100 years.
    InvalidPolicy,
    /// `inbox.retention_too_short`: a retention below the redelivery horizon.
    RetentionTooShort,
    /// `inbox.invalid_message`: a consumer name or message id outside the
    /// schema's limits.
    InvalidMessage,
}

impl InboxErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidPolicy => "inbox.invalid_policy",
            Self::RetentionTooShort => "inbox.retention_too_short",
            Self::InvalidMessage => "inbox.invalid_message",
        }
    }
}

impl InboxError {
    fn new(kind: InboxErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What went wrong.
    pub const fn kind(&self) -> InboxErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"inbox.retention_too_short"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for InboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for InboxError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_must_cover_the_redelivery_horizon() {
        assert!(InboxPolicy::new(86_400_000, 86_400_000).is_ok());
        let short = InboxPolicy::new(3_600_000, 86_400_000).unwrap_err();
        assert_eq!(short.code(), "inbox.retention_too_short");
        assert_eq!(
            InboxPolicy::new(0, 0).unwrap_err().code(),
            "inbox.invalid_policy"
        );
        assert_eq!(
            InboxPolicy::new(MAX_RETENTION_MILLIS + 1, 1)
                .unwrap_err()
                .code(),
            "inbox.invalid_policy"
        );
    }

    #[test]
    fn consumer_and_message_id_fit_the_schema() {
        assert!(check_message("billing", "evt_1").is_ok());
        for (consumer, id) in [
            ("", "x"),
            ("a b", "x"),
            ("é", "x"),
            ("c", ""),
            ("c", "a\0b"),
        ] {
            assert_eq!(
                check_message(consumer, id).unwrap_err().code(),
                "inbox.invalid_message"
            );
        }
        assert!(check_message(&"c".repeat(65), "x").is_err());
        assert!(check_message("c", &"x".repeat(256)).is_err());
    }
}
