//! The decision for an incoming request, given the stored record of its key.

use super::{Fence, Problem, Record, RecordError, RecordPolicy, Status, retry_after_secs};
use crate::fingerprint::Fingerprint;

/// What the core needs to know about an incoming request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Incoming {
    /// The fingerprint of the request's payload.
    pub fingerprint: Fingerprint,
    /// When the key was created, in Unix milliseconds, when that is known:
    /// the timestamp of a verified request ID (its UUIDv7), or a creation
    /// time the caller vouches for. `None` when the key carries no time (a
    /// business id): then only a record still in storage can show the key is
    /// too old.
    pub key_created_millis: Option<u64>,
    /// How long this request has already waited for a concurrent duplicate,
    /// in milliseconds (0 on the first call; add each
    /// [`Decision::Wait`]'s pause).
    pub waited_millis: u64,
}

impl Incoming {
    /// A request with this fingerprint, no key time, that has not waited.
    pub const fn new(fingerprint: Fingerprint) -> Self {
        Self {
            fingerprint,
            key_created_millis: None,
            waited_millis: 0,
        }
    }

    /// The same request with the key's creation time.
    pub const fn with_key_created_millis(self, key_created_millis: u64) -> Self {
        Self {
            key_created_millis: Some(key_created_millis),
            ..self
        }
    }

    /// The same request after waiting `waited_millis` in total.
    pub const fn with_waited_millis(self, waited_millis: u64) -> Self {
        Self {
            waited_millis,
            ..self
        }
    }
}

/// What a stored result was, for [`Decision::Replay`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The stored response of a completed request.
    Succeeded,
    /// The stored error of a request that failed for good.
    Failed,
}

impl Outcome {
    /// `succeeded` or `failed`, as the record's status text.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => Status::Succeeded.as_str(),
            Outcome::Failed => Status::Failed.as_str(),
        }
    }
}

/// The state a compare-and-set claim expects to replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Expected {
    /// The fence of the record as it was loaded.
    pub fence: Fence,
    /// The status of the record as it was loaded.
    pub status: Status,
}

/// A claim on a key: the row to write, and what it must replace.
///
/// With [`expected`](Claim::expected) `None` the adapter inserts the row if
/// the key has none (`INSERT … ON CONFLICT DO NOTHING`); otherwise it updates
/// the row only if it still has the expected token, creation time and status
/// (compare-and-set); either way only while the claim's lease deadline is
/// still ahead of the store's clock. When no row was written, load the
/// record and [`decide`] again. [`Claim::apply`] is the same rule in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Claim {
    /// The record to write: pending, with the new fencing token and lease.
    pub record: Record,
    /// `None` to insert a new record; otherwise the record the claim replaces.
    pub expected: Option<Expected>,
}

impl Claim {
    /// The fence the new holder presents when it completes or fails.
    pub const fn fence(&self) -> Fence {
        self.record.fence()
    }

    /// Applies the claim at `now_millis` to `current`, the record as storage
    /// holds it then, as the adapter's SQL does: returns the record written;
    /// `record.claim_expired` when the claim's own lease has already ended
    /// (it was decided too long ago: a late insert could otherwise bring back
    /// a removed record under a fence already granted); `record.claim_conflict`
    /// when `current` is not what the claim expects.
    pub fn apply(&self, current: Option<&Record>, now_millis: u64) -> Result<Record, RecordError> {
        if now_millis >= self.record.lease_deadline_millis {
            return Err(RecordError::claim_expired(
                self.record.lease_deadline_millis,
            ));
        }
        let matches = match (self.expected, current) {
            (None, None) => true,
            (Some(expected), Some(current)) => {
                current.fence() == expected.fence && current.status == expected.status
            }
            _ => false,
        };
        if matches {
            Ok(self.record)
        } else {
            Err(RecordError::claim_conflict())
        }
    }
}

/// What to do with an incoming request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Write the claim, then run the operation (if the claim was written).
    Execute(Claim),
    /// Do not run: return the stored result.
    Replay(Outcome),
    /// Another request holds the key; answer "in progress" and suggest a
    /// retry after this many milliseconds (at least 1).
    InProgress {
        /// The suggested delay before a retry, in milliseconds.
        retry_after_millis: u64,
    },
    /// Another request holds the key; pause this many milliseconds (at least
    /// 1), then load the record and decide again with the time waited added
    /// to [`Incoming::waited_millis`].
    Wait {
        /// The pause before loading the record again, in milliseconds.
        poll_millis: u64,
    },
    /// The key was first used with a different payload: refuse.
    FingerprintMismatch,
    /// The key is older than retention: refuse loudly, never run again.
    KeyTooOld,
}

impl Decision {
    /// The stable name of the decision: `execute`, `replay`, `in_progress`,
    /// `wait`, `fingerprint_mismatch` or `key_too_old`.
    pub const fn name(&self) -> &'static str {
        match self {
            Decision::Execute(_) => "execute",
            Decision::Replay(_) => "replay",
            Decision::InProgress { .. } => "in_progress",
            Decision::Wait { .. } => "wait",
            Decision::FingerprintMismatch => "fingerprint_mismatch",
            Decision::KeyTooOld => "key_too_old",
        }
    }

    /// The problem to answer with, for the decisions that refuse the request.
    /// `None` for [`Execute`](Decision::Execute), [`Replay`](Decision::Replay)
    /// and [`Wait`](Decision::Wait).
    pub const fn problem(&self) -> Option<Problem> {
        match self {
            Decision::InProgress { .. } => Some(Problem::InProgress),
            Decision::FingerprintMismatch => Some(Problem::FingerprintMismatch),
            Decision::KeyTooOld => Some(Problem::KeyTooOld),
            Decision::Execute(_) | Decision::Replay(_) | Decision::Wait { .. } => None,
        }
    }

    /// The `Retry-After` seconds to send with the answer, if any.
    pub const fn retry_after_secs(&self) -> Option<u64> {
        match self {
            Decision::InProgress { retry_after_millis } => {
                Some(retry_after_secs(*retry_after_millis))
            }
            _ => None,
        }
    }
}

/// Decides what to do with `incoming`, given the stored record of its key
/// (`None` when there is none) and the time `now_millis`.
///
/// The rules, in order:
/// 1. A key whose creation time is known and at least the retention old
///    (`now ≥ key_created + retention`) is [`KeyTooOld`](Decision::KeyTooOld).
/// 2. No record: [`Execute`](Decision::Execute) a new claim (token 1,
///    created now, expiring `retention` after the later of now and the key's
///    creation time).
/// 3. A record past its expiry: [`KeyTooOld`](Decision::KeyTooOld).
/// 4. A different fingerprint: [`FingerprintMismatch`](Decision::FingerprintMismatch).
/// 5. By status: succeeded or failed replay; failed_retryable is reclaimed;
///    pending is reclaimed once `now ≥ lease deadline`, otherwise the caller
///    [`Wait`](Decision::Wait)s while the policy allows, then gets
///    [`InProgress`](Decision::InProgress).
///
/// A reclaim keeps the record's creation and expiry, bumps the token and
/// renews the lease, by compare-and-set on the loaded record.
///
/// Errors: `record.time_overflow` when now plus the lease or retention
/// exceeds 64 bits, `record.token_exhausted` when the token cannot be bumped.
pub fn decide(
    existing: Option<&Record>,
    incoming: &Incoming,
    now_millis: u64,
    policy: &RecordPolicy,
) -> Result<Decision, RecordError> {
    let retention = policy.retention_millis();
    let key_too_old = incoming
        .key_created_millis
        .and_then(|created| created.checked_add(retention))
        .is_some_and(|limit| now_millis >= limit);
    if key_too_old {
        return Ok(Decision::KeyTooOld);
    }
    let Some(record) = existing else {
        return fresh_claim(incoming, now_millis, policy).map(Decision::Execute);
    };
    if record.is_expired(now_millis) {
        return Ok(Decision::KeyTooOld);
    }
    if record.fingerprint != incoming.fingerprint {
        return Ok(Decision::FingerprintMismatch);
    }
    match record.status {
        Status::Succeeded => Ok(Decision::Replay(Outcome::Succeeded)),
        Status::Failed => Ok(Decision::Replay(Outcome::Failed)),
        Status::FailedRetryable => reclaim(record, now_millis, policy).map(Decision::Execute),
        Status::Pending => match record.lease_deadline_millis.checked_sub(now_millis) {
            Some(lease_left) if lease_left > 0 => Ok(concurrent(lease_left, incoming, policy)),
            _ => reclaim(record, now_millis, policy).map(Decision::Execute),
        },
    }
}

fn lease_deadline(now_millis: u64, policy: &RecordPolicy) -> Result<u64, RecordError> {
    now_millis
        .checked_add(policy.lease_millis())
        .ok_or(RecordError::time_overflow(
            now_millis,
            policy.lease_millis(),
        ))
}

fn fresh_claim(
    incoming: &Incoming,
    now_millis: u64,
    policy: &RecordPolicy,
) -> Result<Claim, RecordError> {
    let retained_from = incoming
        .key_created_millis
        .map_or(now_millis, |created| created.max(now_millis));
    let expires_millis =
        retained_from
            .checked_add(policy.retention_millis())
            .ok_or(RecordError::time_overflow(
                retained_from,
                policy.retention_millis(),
            ))?;
    Ok(Claim {
        record: Record {
            status: Status::Pending,
            fingerprint: incoming.fingerprint,
            token: 1,
            lease_deadline_millis: lease_deadline(now_millis, policy)?,
            created_millis: now_millis,
            expires_millis,
        },
        expected: None,
    })
}

fn reclaim(record: &Record, now_millis: u64, policy: &RecordPolicy) -> Result<Claim, RecordError> {
    let token = record
        .token
        .checked_add(1)
        .ok_or(RecordError::token_exhausted())?;
    Ok(Claim {
        record: Record {
            status: Status::Pending,
            token,
            lease_deadline_millis: lease_deadline(now_millis, policy)?,
            ..*record
        },
        expected: Some(Expected {
            fence: record.fence(),
            status: record.status,
        }),
    })
}

/// A pending record whose lease has `lease_left` (≥ 1) milliseconds to run:
/// wait or answer in progress.
fn concurrent(lease_left: u64, incoming: &Incoming, policy: &RecordPolicy) -> Decision {
    let wait_left = policy
        .max_wait_millis()
        .saturating_sub(incoming.waited_millis);
    if wait_left > 0 {
        Decision::Wait {
            poll_millis: policy.poll_millis().min(wait_left).min(lease_left),
        }
    } else {
        Decision::InProgress {
            retry_after_millis: policy.retry_after_millis().min(lease_left),
        }
    }
}
