//! The transactional outbox: message checks, batch claims, delivery and
//! retry decisions for a relay.

use crate::error::MintidError;
use mintid::outbox as core;

/// The status of an outbox message (the core's `OutboxStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum OutboxStatus {
    /// Waiting to be sent (or retried).
    Pending,
    /// Sent.
    Sent,
    /// Given up.
    Dead,
}

/// Reads a stored status text.
///
/// Fails with `outbox.unknown_status`.
#[uniffi::export]
pub fn outbox_status_parse(text: String) -> Result<OutboxStatus, MintidError> {
    Ok(match core::OutboxStatus::parse(&text)? {
        core::OutboxStatus::Pending => OutboxStatus::Pending,
        core::OutboxStatus::Sent => OutboxStatus::Sent,
        core::OutboxStatus::Dead => OutboxStatus::Dead,
    })
}

/// The stored text of a status.
#[uniffi::export]
pub fn outbox_status_text(status: OutboxStatus) -> String {
    let status = match status {
        OutboxStatus::Pending => core::OutboxStatus::Pending,
        OutboxStatus::Sent => core::OutboxStatus::Sent,
        OutboxStatus::Dead => core::OutboxStatus::Dead,
    };
    status.as_str().into()
}

/// How a relay claims and retries messages (the core's `RelayPolicy`), as
/// plain values; every use checks them (`outbox.invalid_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct RelayPolicy {
    /// How many messages one claim takes.
    pub batch_size: u64,
    /// How long a claim lasts.
    pub claim_millis: u64,
    /// The pause after the first failure.
    pub base_backoff_millis: u64,
    /// The longest pause.
    pub max_backoff_millis: u64,
    /// Up to this percentage of a pause is taken off at random.
    pub jitter_percent: u8,
    /// How many attempts a message gets.
    pub max_attempts: u64,
}

impl From<core::RelayPolicy> for RelayPolicy {
    fn from(policy: core::RelayPolicy) -> Self {
        Self {
            batch_size: policy.batch_size(),
            claim_millis: policy.claim_millis(),
            base_backoff_millis: policy.base_backoff_millis(),
            max_backoff_millis: policy.max_backoff_millis(),
            jitter_percent: policy.jitter_percent(),
            max_attempts: policy.max_attempts(),
        }
    }
}

impl TryFrom<RelayPolicy> for core::RelayPolicy {
    type Error = MintidError;

    fn try_from(policy: RelayPolicy) -> Result<Self, MintidError> {
        Ok(
            core::RelayPolicy::new(policy.batch_size, policy.claim_millis)?
                .with_backoff(
                    policy.base_backoff_millis,
                    policy.max_backoff_millis,
                    policy.jitter_percent,
                )?
                .with_max_attempts(policy.max_attempts)?,
        )
    }
}

/// A relay policy; every value left out keeps the core's default.
///
/// Fails with `outbox.invalid_policy`.
#[uniffi::export(default(
    batch_size = None,
    claim_millis = None,
    base_backoff_millis = None,
    max_backoff_millis = None,
    jitter_percent = None,
    max_attempts = None
))]
pub fn outbox_relay_policy_new(
    batch_size: Option<u64>,
    claim_millis: Option<u64>,
    base_backoff_millis: Option<u64>,
    max_backoff_millis: Option<u64>,
    jitter_percent: Option<u8>,
    max_attempts: Option<u64>,
) -> Result<RelayPolicy, MintidError> {
    let default = core::RelayPolicy::DEFAULT;
    let mut policy = core::RelayPolicy::new(
        batch_size.unwrap_or(default.batch_size()),
        claim_millis.unwrap_or(default.claim_millis()),
    )?;
    if base_backoff_millis.is_some() || max_backoff_millis.is_some() || jitter_percent.is_some() {
        policy = policy.with_backoff(
            base_backoff_millis.unwrap_or(policy.base_backoff_millis()),
            max_backoff_millis.unwrap_or(policy.max_backoff_millis()),
            jitter_percent.unwrap_or(policy.jitter_percent()),
        )?;
    }
    if let Some(attempts) = max_attempts {
        policy = policy.with_max_attempts(attempts)?;
    }
    Ok(policy.into())
}

/// The pause after the `attempts`-th failure, given a random `draw`.
///
/// Fails with `outbox.invalid_policy`.
#[uniffi::export]
pub fn outbox_backoff_millis(
    policy: RelayPolicy,
    attempts: u64,
    draw: u64,
) -> Result<u64, MintidError> {
    Ok(core::RelayPolicy::try_from(policy)?.backoff_millis(attempts, draw))
}

/// The claim of a batch: the parameters of `outbox_claim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct BatchClaim {
    /// The claim's token.
    pub claim_token: u64,
    /// When the claim ends (Unix ms).
    pub claimed_until_millis: u64,
    /// How many messages to claim.
    pub batch_size: u64,
    /// When the claim was made (Unix ms).
    pub now_millis: u64,
}

/// The claim of a batch at `now_millis`, its token from a random `draw`.
///
/// Fails with `outbox.invalid_policy` or `outbox.time_overflow`.
#[uniffi::export]
pub fn outbox_claim(
    policy: RelayPolicy,
    now_millis: u64,
    draw: u64,
) -> Result<BatchClaim, MintidError> {
    let claim = core::RelayPolicy::try_from(policy)?.claim(now_millis, draw)?;
    Ok(BatchClaim {
        claim_token: claim.claim_token,
        claimed_until_millis: claim.claimed_until_millis,
        batch_size: claim.batch_size,
        now_millis: claim.now_millis,
    })
}

/// What to do with a claimed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Delivery {
    /// Send it.
    Send,
    /// Its attempts are used up: mark it dead without sending.
    GiveUp,
}

/// What to do with a claimed message whose `attempts` column counts this claim.
///
/// Fails with `outbox.invalid_policy`.
#[uniffi::export]
pub fn outbox_delivery(policy: RelayPolicy, attempts: u64) -> Result<Delivery, MintidError> {
    Ok(
        match core::RelayPolicy::try_from(policy)?.delivery(attempts) {
            core::Delivery::Send => Delivery::Send,
            core::Delivery::GiveUp => Delivery::GiveUp,
        },
    )
}

/// What to write after a failed send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum AfterFailure {
    /// Retry at this Unix millisecond.
    Retry {
        /// When the message is due again.
        next_attempt_millis: u64,
    },
    /// Mark it dead: the attempts are used up.
    Dead,
}

/// What to write after the send of a message with `attempts` attempts
/// failed at `now_millis`, given a random `draw`.
///
/// Fails with `outbox.invalid_policy` or `outbox.time_overflow`.
#[uniffi::export]
pub fn outbox_after_failure(
    policy: RelayPolicy,
    attempts: u64,
    now_millis: u64,
    draw: u64,
) -> Result<AfterFailure, MintidError> {
    let policy = core::RelayPolicy::try_from(policy)?;
    Ok(match policy.after_failure(attempts, now_millis, draw)? {
        core::AfterFailure::Retry {
            next_attempt_millis,
        } => AfterFailure::Retry {
            next_attempt_millis,
        },
        core::AfterFailure::Dead => AfterFailure::Dead,
    })
}

/// What `outbox_enqueue` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Enqueued {
    /// The message was inserted.
    New,
    /// A message with the same business key was already there.
    AlreadyEnqueued,
}

/// Reads the affected-row count of `outbox_enqueue`.
///
/// Fails with `outbox.unexpected_rows`.
#[uniffi::export]
pub fn outbox_enqueued(rows: u64) -> Result<Enqueued, MintidError> {
    Ok(match core::Enqueued::from_rows(rows)? {
        core::Enqueued::New => Enqueued::New,
        core::Enqueued::AlreadyEnqueued => Enqueued::AlreadyEnqueued,
    })
}

/// Reads the affected-row count of a mark of `message_id` under `claim_token`.
///
/// Fails with `outbox.claim_lost` or `outbox.unexpected_rows`.
#[uniffi::export]
pub fn outbox_check_marked(
    rows: u64,
    message_id: u64,
    claim_token: u64,
) -> Result<(), MintidError> {
    Ok(core::check_marked(rows, message_id, claim_token)?)
}

/// Checks a message before `outbox_enqueue`.
///
/// Fails with `outbox.invalid_message`.
#[uniffi::export]
pub fn outbox_check_message(
    kind: String,
    business_key: String,
    payload_len: u64,
) -> Result<(), MintidError> {
    let payload_len = usize::try_from(payload_len).unwrap_or(usize::MAX);
    Ok(core::check_message(&kind, &business_key, payload_len)?)
}

/// The `last_error` a relay writes when it gives a message up unsent.
#[uniffi::export]
pub fn outbox_attempts_exhausted_error() -> String {
    core::ATTEMPTS_EXHAUSTED.into()
}
