//! The idempotency record state machine and its HTTP mapping, as plain
//! values: a host loads a row, asks [`record_decide`], runs the SQL the
//! decision names and feeds the result back through [`record_complete`] or
//! [`record_fail`].

use crate::error::{MintidError, fixed_bytes};
use mintid::fingerprint::Fingerprint;
use mintid::record as core;
use std::sync::Arc;

/// Where a record is in its life (the core's `Status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RecordStatus {
    /// Claimed; the operation runs.
    Pending,
    /// Completed; its response is replayed.
    Succeeded,
    /// Failed for good; its error is replayed.
    Failed,
    /// Failed in a way worth retrying; the next request runs again.
    FailedRetryable,
}

impl From<core::Status> for RecordStatus {
    fn from(status: core::Status) -> Self {
        match status {
            core::Status::Pending => Self::Pending,
            core::Status::Succeeded => Self::Succeeded,
            core::Status::Failed => Self::Failed,
            core::Status::FailedRetryable => Self::FailedRetryable,
        }
    }
}

impl From<RecordStatus> for core::Status {
    fn from(status: RecordStatus) -> Self {
        match status {
            RecordStatus::Pending => Self::Pending,
            RecordStatus::Succeeded => Self::Succeeded,
            RecordStatus::Failed => Self::Failed,
            RecordStatus::FailedRetryable => Self::FailedRetryable,
        }
    }
}

/// The stored state of one idempotency key: one row of the shared schema.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Record {
    /// Where the record is in its life.
    pub status: RecordStatus,
    /// The fingerprint (32 digest bytes) of the payload that first used the key.
    pub fingerprint: Vec<u8>,
    /// The fencing token of the latest claim.
    pub token: u64,
    /// While pending: when the holder's lease ends (Unix ms).
    pub lease_deadline_millis: u64,
    /// When the key was first claimed (Unix ms).
    pub created_millis: u64,
    /// When the record leaves retention (Unix ms).
    pub expires_millis: u64,
}

impl From<core::Record> for Record {
    fn from(record: core::Record) -> Self {
        Self {
            status: record.status.into(),
            fingerprint: record.fingerprint.as_bytes().to_vec(),
            token: record.token,
            lease_deadline_millis: record.lease_deadline_millis,
            created_millis: record.created_millis,
            expires_millis: record.expires_millis,
        }
    }
}

fn fingerprint(bytes: &[u8]) -> Result<Fingerprint, MintidError> {
    fixed_bytes::<32>("a fingerprint", bytes).map(Fingerprint::from_digest)
}

impl TryFrom<&Record> for core::Record {
    type Error = MintidError;

    fn try_from(record: &Record) -> Result<Self, MintidError> {
        Ok(Self {
            status: record.status.into(),
            fingerprint: fingerprint(&record.fingerprint)?,
            token: record.token,
            lease_deadline_millis: record.lease_deadline_millis,
            created_millis: record.created_millis,
            expires_millis: record.expires_millis,
        })
    }
}

/// What identifies one claim of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Fence {
    /// The fencing token.
    pub token: u64,
    /// The record's creation time (Unix ms).
    pub created_millis: u64,
}

impl From<core::Fence> for Fence {
    fn from(fence: core::Fence) -> Self {
        Self {
            token: fence.token,
            created_millis: fence.created_millis,
        }
    }
}

impl From<Fence> for core::Fence {
    fn from(fence: Fence) -> Self {
        Self {
            token: fence.token,
            created_millis: fence.created_millis,
        }
    }
}

/// The rules a host sets for its records (the core's `RecordPolicy`), as
/// plain values; [`CheckedRecordPolicy::new`] checks them (`record.invalid_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct RecordPolicy {
    /// How long a claim holds the key before another request may reclaim it.
    pub lease_millis: u64,
    /// How long a record is kept, from the key's creation.
    pub retention_millis: u64,
    /// Whether final failures are stored and replayed.
    pub store_errors: bool,
    /// The longest retry delay suggested to a concurrent duplicate.
    pub retry_after_millis: u64,
    /// How long a duplicate waits for the first request (0: not at all).
    pub max_wait_millis: u64,
    /// How often a waiting duplicate reloads the record.
    pub poll_millis: u64,
}

impl From<core::RecordPolicy> for RecordPolicy {
    fn from(policy: core::RecordPolicy) -> Self {
        Self {
            lease_millis: policy.lease_millis(),
            retention_millis: policy.retention_millis(),
            store_errors: policy.store_errors(),
            retry_after_millis: policy.retry_after_millis(),
            max_wait_millis: policy.max_wait_millis(),
            poll_millis: policy.poll_millis(),
        }
    }
}

impl TryFrom<RecordPolicy> for core::RecordPolicy {
    type Error = MintidError;

    fn try_from(policy: RecordPolicy) -> Result<Self, MintidError> {
        Ok(
            core::RecordPolicy::new(policy.lease_millis, policy.retention_millis)?
                .with_store_errors(policy.store_errors)
                .with_retry_after_millis(policy.retry_after_millis)?
                .with_wait(policy.max_wait_millis, policy.poll_millis)?,
        )
    }
}

/// The core's default policy.
#[uniffi::export]
pub fn record_policy_default() -> RecordPolicy {
    core::RecordPolicy::DEFAULT.into()
}

/// A policy the core has checked, held by the core: a host makes one per
/// policy and passes it to every decision, so no call lowers or checks the
/// values again.
#[derive(Debug, uniffi::Object)]
pub struct CheckedRecordPolicy(core::RecordPolicy);

#[uniffi::export]
impl CheckedRecordPolicy {
    /// Checks `policy` and keeps it.
    ///
    /// Fails with `record.invalid_policy`.
    #[uniffi::constructor]
    pub fn new(policy: RecordPolicy) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(policy.try_into()?)))
    }
}

/// What the core needs to know about an incoming request.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Incoming {
    /// The fingerprint (32 digest bytes) of the request's payload.
    pub fingerprint: Vec<u8>,
    /// When the key was created (Unix ms), when known.
    pub key_created_millis: Option<u64>,
    /// How long the request has already waited for a concurrent duplicate.
    pub waited_millis: u64,
}

/// The state a compare-and-set claim expects to replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct Expected {
    /// The fence of the record as it was loaded.
    pub fence: Fence,
    /// The status of the record as it was loaded.
    pub status: RecordStatus,
}

/// A claim on a key: the row to write, and what it must replace (none: insert).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Claim {
    /// The record to write: pending, with the new token and lease.
    pub record: Record,
    /// `None` to insert; otherwise the record the claim replaces.
    pub expected: Option<Expected>,
}

impl From<core::Claim> for Claim {
    fn from(claim: core::Claim) -> Self {
        Self {
            record: claim.record.into(),
            expected: claim.expected.map(|expected| Expected {
                fence: expected.fence.into(),
                status: expected.status.into(),
            }),
        }
    }
}

impl TryFrom<&Claim> for core::Claim {
    type Error = MintidError;

    fn try_from(claim: &Claim) -> Result<Self, MintidError> {
        Ok(Self {
            record: (&claim.record).try_into()?,
            expected: claim.expected.map(|expected| core::Expected {
                fence: expected.fence.into(),
                status: expected.status.into(),
            }),
        })
    }
}

/// What a stored result was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Outcome {
    /// A completed request's response.
    Succeeded,
    /// The error of a request that failed for good.
    Failed,
}

impl From<core::Outcome> for Outcome {
    fn from(outcome: core::Outcome) -> Self {
        match outcome {
            core::Outcome::Succeeded => Self::Succeeded,
            core::Outcome::Failed => Self::Failed,
        }
    }
}

/// The HTTP problems of the idempotency rules (the core's `Problem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Problem {
    /// 400: no key.
    MissingKey,
    /// 400: a key that breaks the key rules.
    MalformedKey,
    /// 400: a request ID that does not verify.
    InvalidRequestId,
    /// 400: the request ID's grant expired (the client needs a new grant).
    GrantExpired,
    /// 409: the first request is still running.
    InProgress,
    /// 422: the key was used with another payload.
    FingerprintMismatch,
    /// 400: the key is older than retention (never run again).
    KeyTooOld,
    /// 503: storage is unavailable.
    StorageUnavailable,
    /// 400: a JSON content type with a body that is not JSON.
    MalformedBody,
}

impl From<core::Problem> for Problem {
    fn from(problem: core::Problem) -> Self {
        match problem {
            core::Problem::MissingKey => Self::MissingKey,
            core::Problem::MalformedKey => Self::MalformedKey,
            core::Problem::InvalidRequestId => Self::InvalidRequestId,
            core::Problem::GrantExpired => Self::GrantExpired,
            core::Problem::InProgress => Self::InProgress,
            core::Problem::FingerprintMismatch => Self::FingerprintMismatch,
            core::Problem::KeyTooOld => Self::KeyTooOld,
            core::Problem::StorageUnavailable => Self::StorageUnavailable,
            core::Problem::MalformedBody => Self::MalformedBody,
        }
    }
}

impl From<Problem> for core::Problem {
    fn from(problem: Problem) -> Self {
        match problem {
            Problem::MissingKey => Self::MissingKey,
            Problem::MalformedKey => Self::MalformedKey,
            Problem::InvalidRequestId => Self::InvalidRequestId,
            Problem::GrantExpired => Self::GrantExpired,
            Problem::InProgress => Self::InProgress,
            Problem::FingerprintMismatch => Self::FingerprintMismatch,
            Problem::KeyTooOld => Self::KeyTooOld,
            Problem::StorageUnavailable => Self::StorageUnavailable,
            Problem::MalformedBody => Self::MalformedBody,
        }
    }
}

/// What an HTTP answer with a problem carries (RFC 9457 `problem+json`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ProblemDetails {
    /// The problem.
    pub problem: Problem,
    /// Its stable name, e.g. `in_progress`.
    pub name: String,
    /// The HTTP status code.
    pub status: u16,
    /// The `type` URI.
    pub type_uri: String,
    /// The `title`.
    pub title: String,
}

/// The details of a problem.
#[uniffi::export]
pub fn record_problem_details(problem: Problem) -> ProblemDetails {
    let core = core::Problem::from(problem);
    ProblemDetails {
        problem,
        name: core.name().into(),
        status: core.status(),
        type_uri: core.type_uri().into(),
        title: core.title().into(),
    }
}

/// The details of every problem.
#[uniffi::export]
pub fn record_problems() -> Vec<ProblemDetails> {
    core::Problem::ALL
        .into_iter()
        .map(|problem| record_problem_details(problem.into()))
        .collect()
}

/// What to do with an incoming request, with what the HTTP answer needs.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Decision {
    /// The stable name: `execute`, `replay`, `in_progress`, `wait`,
    /// `fingerprint_mismatch` or `key_too_old`.
    pub name: String,
    /// For `execute`: the claim to write, then run the operation.
    pub claim: Option<Claim>,
    /// For `replay`: which stored result to return.
    pub outcome: Option<Outcome>,
    /// For `in_progress`: the suggested retry delay in milliseconds.
    pub retry_after_millis: Option<u64>,
    /// For `in_progress`: the `Retry-After` seconds to send.
    pub retry_after_secs: Option<u64>,
    /// For `wait`: the pause before deciding again, in milliseconds.
    pub poll_millis: Option<u64>,
    /// For the refusing decisions: the problem to answer with.
    pub problem: Option<Problem>,
}

impl From<core::Decision> for Decision {
    fn from(decision: core::Decision) -> Self {
        let mut out = Self {
            name: decision.name().into(),
            claim: None,
            outcome: None,
            retry_after_millis: None,
            retry_after_secs: decision.retry_after_secs(),
            poll_millis: None,
            problem: decision.problem().map(Problem::from),
        };
        match decision {
            core::Decision::Execute(claim) => out.claim = Some(claim.into()),
            core::Decision::Replay(core::Outcome::Succeeded) => {
                out.outcome = Some(Outcome::Succeeded)
            }
            core::Decision::Replay(core::Outcome::Failed) => out.outcome = Some(Outcome::Failed),
            core::Decision::InProgress { retry_after_millis } => {
                out.retry_after_millis = Some(retry_after_millis)
            }
            core::Decision::Wait { poll_millis } => out.poll_millis = Some(poll_millis),
            core::Decision::FingerprintMismatch | core::Decision::KeyTooOld => {}
        }
        out
    }
}

/// Decides what to do with `incoming`, given the stored record of its key
/// (none when there is no row) and the time `now_millis`.
///
/// Fails with `record.time_overflow`, `record.token_exhausted` or
/// `argument.byte_length`.
#[uniffi::export]
pub fn record_decide(
    existing: Option<Record>,
    incoming: Incoming,
    now_millis: u64,
    policy: Arc<CheckedRecordPolicy>,
) -> Result<Decision, MintidError> {
    let existing = existing.as_ref().map(core::Record::try_from).transpose()?;
    let mut core_incoming = core::Incoming::new(fingerprint(&incoming.fingerprint)?)
        .with_waited_millis(incoming.waited_millis);
    if let Some(created) = incoming.key_created_millis {
        core_incoming = core_incoming.with_key_created_millis(created);
    }
    Ok(core::decide(existing.as_ref(), &core_incoming, now_millis, &policy.0)?.into())
}

/// Applies a claim at `now_millis` to the record storage holds then, as the
/// adapter's SQL does; returns the record written.
///
/// Fails with `record.claim_expired` or `record.claim_conflict`.
#[uniffi::export]
pub fn record_claim_apply(
    claim: Claim,
    current: Option<Record>,
    now_millis: u64,
) -> Result<Record, MintidError> {
    let current = current.as_ref().map(core::Record::try_from).transpose()?;
    let claim = core::Claim::try_from(&claim)?;
    Ok(claim.apply(current.as_ref(), now_millis)?.into())
}

/// How an operation failed, as its holder reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Failure {
    /// Worth retrying: the key is released.
    Retryable,
    /// Final: the error is stored and replayed (if the policy stores errors).
    Final,
}

/// The record after its holder (`fence`) completed the operation.
///
/// Fails with `record.stale_token` or `record.not_pending`.
#[uniffi::export]
pub fn record_complete(record: Record, fence: Fence) -> Result<Record, MintidError> {
    Ok(core::Record::try_from(&record)?
        .complete(fence.into())?
        .into())
}

/// The record after its holder (`fence`) failed the operation.
///
/// Fails with `record.stale_token`, `record.not_pending` or `argument.byte_length`.
#[uniffi::export]
pub fn record_fail(
    record: Record,
    fence: Fence,
    failure: Failure,
    policy: Arc<CheckedRecordPolicy>,
) -> Result<Record, MintidError> {
    let failure = match failure {
        Failure::Retryable => core::Failure::Retryable,
        Failure::Final => core::Failure::Final,
    };
    Ok(core::Record::try_from(&record)?
        .fail(fence.into(), failure, &policy.0)?
        .into())
}

/// Whether cleanup may delete the record at `now_millis`.
///
/// Fails with `argument.byte_length`.
#[uniffi::export]
pub fn record_is_removable(record: Record, now_millis: u64) -> Result<bool, MintidError> {
    Ok(core::Record::try_from(&record)?.is_removable(now_millis))
}

/// Reads a status text (`pending`, `succeeded`, `failed`, `failed_retryable`).
///
/// Fails with `record.unknown_status`.
#[uniffi::export]
pub fn record_status_parse(text: String) -> Result<RecordStatus, MintidError> {
    Ok(core::Status::parse(&text)?.into())
}

/// The text of a status, as stored.
#[uniffi::export]
pub fn record_status_text(status: RecordStatus) -> String {
    core::Status::from(status).as_str().into()
}

/// The `Retry-After` seconds for a delay in milliseconds (rounded up, at least 1).
#[uniffi::export]
pub fn record_retry_after_secs(millis: u64) -> u64 {
    core::retry_after_secs(millis)
}

/// The HTTP header names and values of the idempotency rules.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct HttpConstants {
    /// The content type of problem answers.
    pub problem_content_type: String,
    /// The header that marks a replayed answer.
    pub replayed_header: String,
    /// Its value.
    pub replayed_value: String,
    /// The header carrying a retry delay in seconds.
    pub retry_after_header: String,
}

/// The HTTP header names and values of the idempotency rules.
#[uniffi::export]
pub fn record_http_constants() -> HttpConstants {
    HttpConstants {
        problem_content_type: core::PROBLEM_CONTENT_TYPE.into(),
        replayed_header: core::REPLAYED_HEADER.into(),
        replayed_value: core::REPLAYED_VALUE.into(),
        retry_after_header: core::RETRY_AFTER_HEADER.into(),
    }
}
