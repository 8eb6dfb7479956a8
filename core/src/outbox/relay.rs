//! Enqueueing, claiming, and what a relay does after each send.

use super::{OutboxError, RelayPolicy};

/// The largest payload the schema stores: 1 MiB.
pub const MAX_PAYLOAD_BYTES: usize = 1_048_576;
/// The longest message kind: 64 bytes of printable ASCII.
pub const MAX_KIND_BYTES: usize = 64;
/// The longest business key: 255 bytes of UTF-8.
pub const MAX_BUSINESS_KEY_BYTES: usize = 255;

/// Checks a message before `outbox_enqueue`: `kind` is 1–64 bytes of
/// printable ASCII (`!`..=`~`), `business_key` 1–255 bytes, the payload at
/// most 1 MiB. Fails with `outbox.invalid_message`, naming the field.
pub fn check_message(
    kind: &str,
    business_key: &str,
    payload_len: usize,
) -> Result<(), OutboxError> {
    if kind.is_empty() || kind.len() > MAX_KIND_BYTES {
        return Err(OutboxError::invalid_message(
            "kind",
            "must be 1 to 64 bytes",
        ));
    }
    if !kind.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(OutboxError::invalid_message(
            "kind",
            "must be printable ASCII without spaces",
        ));
    }
    if business_key.contains('\0') {
        return Err(OutboxError::invalid_message(
            "business_key",
            "must not contain U+0000 (PostgreSQL cannot store it)",
        ));
    }
    if business_key.is_empty() || business_key.len() > MAX_BUSINESS_KEY_BYTES {
        return Err(OutboxError::invalid_message(
            "business_key",
            "must be 1 to 255 bytes",
        ));
    }
    if payload_len > MAX_PAYLOAD_BYTES {
        return Err(OutboxError::invalid_message(
            "payload",
            "must be at most 1048576 bytes",
        ));
    }
    Ok(())
}

/// What `outbox_enqueue` did, read from its affected-row count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enqueued {
    /// The message was inserted (1 row): it commits with the caller's
    /// transaction.
    New,
    /// A message with the same kind and business key already exists (0 rows):
    /// a replay of the same business event, not an error. `outbox_load`
    /// returns it.
    AlreadyEnqueued,
}

impl Enqueued {
    /// Reads the affected-row count of `outbox_enqueue`: 1 → [`New`](Self::New),
    /// 0 → [`AlreadyEnqueued`](Self::AlreadyEnqueued), anything else
    /// `outbox.unexpected_rows`.
    pub const fn from_rows(rows: u64) -> Result<Self, OutboxError> {
        match rows {
            0 => Ok(Self::AlreadyEnqueued),
            1 => Ok(Self::New),
            _ => Err(OutboxError::unexpected_rows("outbox_enqueue", rows)),
        }
    }

    /// `new` or `already_enqueued`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::New => "new",
            Self::AlreadyEnqueued => "already_enqueued",
        }
    }
}

/// One claim of a batch: the parameters of `outbox_claim`, then of
/// `outbox_claimed` (the token) and of every mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchClaim {
    /// Identifies this claim: 1..=2^63 − 1, from a random draw. Every mark is
    /// guarded by it.
    pub claim_token: u64,
    /// The claim holds its messages until this Unix millisecond; while
    /// claimed, a message's `next_attempt_millis` is this time, so a relay
    /// that dies leaves its messages due again when the claim ends.
    pub claimed_until_millis: u64,
    /// The most messages to claim.
    pub batch_size: u64,
    /// The host's clock when the claim was made: only messages due by then
    /// are claimed.
    pub now_millis: u64,
}

impl BatchClaim {
    /// Whether the relay may still start sending a claimed message at
    /// `now_millis` (the claim has not ended).
    pub const fn is_live(&self, now_millis: u64) -> bool {
        now_millis < self.claimed_until_millis
    }
}

/// The `last_error` a relay writes when it gives a message up without
/// sending it ([`Delivery::GiveUp`]).
pub const ATTEMPTS_EXHAUSTED: &str = "outbox.attempts_exhausted";

/// What to do with a claimed message, by its attempt count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// Send it, then mark it sent (or report the failure).
    Send,
    /// Its attempts are used up without a report (earlier relays died
    /// while sending it): mark it dead without sending, with the error
    /// [`ATTEMPTS_EXHAUSTED`].
    GiveUp,
}

/// What to write after a failed send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AfterFailure {
    /// Mark it for a retry (`outbox_mark_retry`) at this Unix millisecond.
    Retry {
        /// When the message is due again.
        next_attempt_millis: u64,
    },
    /// Mark it dead (`outbox_mark_dead`): the attempts are used up.
    Dead,
}

impl RelayPolicy {
    /// The claim of a batch at `now_millis`, with `draw` (a random `u64`)
    /// for its token: `claim_token = max(1, draw >> 1)`,
    /// `claimed_until = now + claim_millis` (`outbox.time_overflow`).
    pub const fn claim(&self, now_millis: u64, draw: u64) -> Result<BatchClaim, OutboxError> {
        let Some(claimed_until_millis) = now_millis.checked_add(self.claim_millis()) else {
            return Err(OutboxError::time_overflow(now_millis, self.claim_millis()));
        };
        let token = draw >> 1;
        Ok(BatchClaim {
            claim_token: if token == 0 { 1 } else { token },
            claimed_until_millis,
            batch_size: self.batch_size(),
            now_millis,
        })
    }

    /// What to do with a claimed message whose `attempts` column (counting
    /// this claim) is given: send it while `attempts ≤ max_attempts`, else
    /// give up.
    pub const fn delivery(&self, attempts: u64) -> Delivery {
        if attempts <= self.max_attempts() {
            Delivery::Send
        } else {
            Delivery::GiveUp
        }
    }

    /// What to write after the send of a message with `attempts` attempts
    /// (counting this one) failed at `now_millis`, given a random `draw`:
    /// dead once `attempts ≥ max_attempts`, else a retry after
    /// [`backoff_millis`](Self::backoff_millis) (`outbox.time_overflow`).
    pub const fn after_failure(
        &self,
        attempts: u64,
        now_millis: u64,
        draw: u64,
    ) -> Result<AfterFailure, OutboxError> {
        if attempts >= self.max_attempts() {
            return Ok(AfterFailure::Dead);
        }
        let pause = self.backoff_millis(attempts, draw);
        match now_millis.checked_add(pause) {
            Some(next_attempt_millis) => Ok(AfterFailure::Retry {
                next_attempt_millis,
            }),
            None => Err(OutboxError::time_overflow(now_millis, pause)),
        }
    }
}

/// Reads the affected-row count of a mark (`outbox_mark_sent`,
/// `outbox_mark_retry`, `outbox_mark_dead`) of `message_id` under
/// `claim_token`: 1 is done; 0 is `outbox.claim_lost` (the claim ended and
/// another relay claimed the message, which may then be sent twice: delivery
/// is at least once); anything else `outbox.unexpected_rows`.
pub const fn check_marked(rows: u64, message_id: u64, claim_token: u64) -> Result<(), OutboxError> {
    match rows {
        1 => Ok(()),
        0 => Err(OutboxError::claim_lost(message_id, claim_token)),
        _ => Err(OutboxError::unexpected_rows("an outbox mark", rows)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::OutboxErrorKind;

    #[test]
    fn message_limits() {
        assert_eq!(
            check_message("order.created", "order-1", MAX_PAYLOAD_BYTES),
            Ok(())
        );
        let kind_64 = "k".repeat(64);
        let key_255 = "é".repeat(127) + "x";
        assert_eq!(check_message(&kind_64, &key_255, 0), Ok(()));
        for (kind, key, len) in [
            ("", "k", 0),
            (&*"k".repeat(65), "k", 0),
            ("with space", "k", 0),
            ("kind", "", 0),
            ("kind", &*"é".repeat(128), 0),
            ("kind", "k", MAX_PAYLOAD_BYTES + 1),
        ] {
            let error = check_message(kind, key, len).unwrap_err();
            assert_eq!(error.kind(), OutboxErrorKind::InvalidMessage);
        }
    }

    #[test]
    fn rows_are_read_strictly() {
        assert_eq!(Enqueued::from_rows(1), Ok(Enqueued::New));
        assert_eq!(Enqueued::from_rows(0), Ok(Enqueued::AlreadyEnqueued));
        assert_eq!(
            Enqueued::from_rows(2).unwrap_err().kind(),
            OutboxErrorKind::UnexpectedRows
        );
        assert_eq!(check_marked(1, 5, 6), Ok(()));
        assert_eq!(
            check_marked(0, 5, 6).unwrap_err().kind(),
            OutboxErrorKind::ClaimLost
        );
        assert_eq!(
            check_marked(3, 5, 6).unwrap_err().kind(),
            OutboxErrorKind::UnexpectedRows
        );
    }

    #[test]
    fn claims_attempts_and_failures() {
        let policy = RelayPolicy::DEFAULT.with_max_attempts(3).unwrap();
        let claim = policy.claim(1_000, 1).unwrap();
        assert_eq!(
            (
                claim.claim_token,
                claim.claimed_until_millis,
                claim.batch_size
            ),
            (1, 61_000, 100)
        );
        assert_eq!(
            policy.claim(0, u64::MAX).unwrap().claim_token,
            i64::MAX as u64
        );
        assert!(claim.is_live(60_999) && !claim.is_live(61_000));
        assert_eq!(
            policy.claim(u64::MAX, 0).unwrap_err().kind(),
            OutboxErrorKind::TimeOverflow
        );
        assert_eq!(policy.delivery(3), Delivery::Send);
        assert_eq!(policy.delivery(4), Delivery::GiveUp);
        assert_eq!(
            policy.after_failure(2, 10_000, 0),
            Ok(AfterFailure::Retry {
                next_attempt_millis: 12_000
            })
        );
        assert_eq!(policy.after_failure(3, 10_000, 0), Ok(AfterFailure::Dead));
        assert_eq!(
            policy.after_failure(1, u64::MAX, 0).unwrap_err().kind(),
            OutboxErrorKind::TimeOverflow
        );
    }
}
