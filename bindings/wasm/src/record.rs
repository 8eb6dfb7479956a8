//! The idempotency record state machine: decisions, claims, completion.
//!
//! A record crosses as [`RecordFields`] (its fingerprint in text form), a
//! decision as [`DecisionFields`].

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use mintid::fingerprint::Fingerprint;
use mintid::record::{
    self, Claim, Decision, Expected, Failure, Fence, Incoming, Problem, Record, RecordPolicy,
    Status,
};
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};

/// One key's stored record, field by field.
#[wasm_bindgen(getter_with_clone)]
#[derive(Clone)]
pub struct RecordFields {
    /// `pending`, `succeeded`, `failed` or `failed_retryable`.
    pub status: String,
    /// The payload fingerprint, `sha256:…`.
    pub fingerprint: String,
    /// The fencing token of the latest claim.
    pub token: u64,
    /// When the holder's lease ends (Unix ms).
    #[wasm_bindgen(js_name = leaseDeadlineMillis)]
    pub lease_deadline_millis: u64,
    /// When the key was first claimed (Unix ms).
    #[wasm_bindgen(js_name = createdMillis)]
    pub created_millis: u64,
    /// When the record leaves retention (Unix ms).
    #[wasm_bindgen(js_name = expiresMillis)]
    pub expires_millis: u64,
}

#[wasm_bindgen]
impl RecordFields {
    /// A record from its fields.
    #[wasm_bindgen(constructor)]
    pub fn new(
        status: String,
        fingerprint: String,
        token: u64,
        lease_deadline_millis: u64,
        created_millis: u64,
        expires_millis: u64,
    ) -> RecordFields {
        Self {
            status,
            fingerprint,
            token,
            lease_deadline_millis,
            created_millis,
            expires_millis,
        }
    }
}

impl RecordFields {
    fn of(record: &Record) -> Self {
        Self {
            status: record.status.as_str().into(),
            fingerprint: record.fingerprint.to_string(),
            token: record.token,
            lease_deadline_millis: record.lease_deadline_millis,
            created_millis: record.created_millis,
            expires_millis: record.expires_millis,
        }
    }

    fn record(&self) -> Result<Record, JsValue> {
        Ok(Record {
            status: Status::parse(&self.status).map_err(to_js)?,
            fingerprint: fingerprint(&self.fingerprint)?,
            token: self.token,
            lease_deadline_millis: self.lease_deadline_millis,
            created_millis: self.created_millis,
            expires_millis: self.expires_millis,
        })
    }
}

fn fingerprint(text: &str) -> Result<Fingerprint, JsValue> {
    Fingerprint::parse(text.as_bytes()).map_err(to_js)
}

fn optional_record(record: Option<RecordFields>) -> Result<Option<Record>, JsValue> {
    record.as_ref().map(RecordFields::record).transpose()
}

/// A validated record policy.
#[wasm_bindgen]
pub struct RecordPolicyHandle(RecordPolicy);

#[wasm_bindgen]
impl RecordPolicyHandle {
    /// A policy (`record.invalid_policy`); `None` keeps the core's default
    /// for the optional settings.
    #[wasm_bindgen(constructor)]
    pub fn new(
        lease_millis: Option<u64>,
        retention_millis: Option<u64>,
        store_errors: Option<bool>,
        retry_after_millis: Option<u64>,
        max_wait_millis: Option<u64>,
        poll_millis: Option<u64>,
    ) -> Result<RecordPolicyHandle, JsValue> {
        let default = RecordPolicy::DEFAULT;
        let mut policy = RecordPolicy::new(
            lease_millis.unwrap_or(default.lease_millis()),
            retention_millis.unwrap_or(default.retention_millis()),
        )
        .map_err(to_js)?;
        if let Some(store_errors) = store_errors {
            policy = policy.with_store_errors(store_errors);
        }
        if let Some(millis) = retry_after_millis {
            policy = policy.with_retry_after_millis(millis).map_err(to_js)?;
        }
        if max_wait_millis.is_some() || poll_millis.is_some() {
            let max_wait = max_wait_millis.unwrap_or(policy.max_wait_millis());
            let poll = poll_millis.unwrap_or(policy.poll_millis());
            policy = policy.with_wait(max_wait, poll).map_err(to_js)?;
        }
        Ok(Self(policy))
    }

    /// `[lease, retention, retry_after, max_wait, poll]` in milliseconds.
    pub fn millis(&self) -> Vec<u64> {
        let p = &self.0;
        vec![
            p.lease_millis(),
            p.retention_millis(),
            p.retry_after_millis(),
            p.max_wait_millis(),
            p.poll_millis(),
        ]
    }

    /// Whether final failures are stored and replayed.
    #[wasm_bindgen(getter = storeErrors)]
    pub fn store_errors(&self) -> bool {
        self.0.store_errors()
    }
}

/// What to do with an incoming request, field by field.
#[wasm_bindgen(getter_with_clone)]
pub struct DecisionFields {
    /// `execute`, `replay`, `in_progress`, `wait`, `fingerprint_mismatch` or `key_too_old`.
    pub name: String,
    /// For `execute`: the record to write.
    pub claim: Option<RecordFields>,
    /// For `execute` replacing a record: `[token, created_millis]` it expects.
    #[wasm_bindgen(js_name = expectedFence)]
    pub expected_fence: Option<Vec<u64>>,
    /// For `execute` replacing a record: the status it expects.
    #[wasm_bindgen(js_name = expectedStatus)]
    pub expected_status: Option<String>,
    /// For `replay`: `succeeded` or `failed`.
    pub outcome: Option<String>,
    /// For `in_progress`: the suggested retry delay in milliseconds.
    #[wasm_bindgen(js_name = retryAfterMillis)]
    pub retry_after_millis: Option<u64>,
    /// For `in_progress`: the `Retry-After` seconds.
    #[wasm_bindgen(js_name = retryAfterSecs)]
    pub retry_after_secs: Option<u64>,
    /// For `wait`: the pause before deciding again, in milliseconds.
    #[wasm_bindgen(js_name = pollMillis)]
    pub poll_millis: Option<u64>,
    /// For the refusing decisions: the problem's name.
    pub problem: Option<String>,
}

impl DecisionFields {
    fn of(decision: &Decision) -> Self {
        let mut fields = Self {
            name: decision.name().into(),
            claim: None,
            expected_fence: None,
            expected_status: None,
            outcome: None,
            retry_after_millis: None,
            retry_after_secs: decision.retry_after_secs(),
            poll_millis: None,
            problem: decision.problem().map(|problem| problem.name().into()),
        };
        match decision {
            Decision::Execute(claim) => {
                fields.claim = Some(RecordFields::of(&claim.record));
                if let Some(expected) = claim.expected {
                    fields.expected_fence =
                        Some(vec![expected.fence.token, expected.fence.created_millis]);
                    fields.expected_status = Some(expected.status.as_str().into());
                }
            }
            Decision::Replay(outcome) => fields.outcome = Some(outcome.as_str().into()),
            Decision::InProgress { retry_after_millis } => {
                fields.retry_after_millis = Some(*retry_after_millis);
            }
            Decision::Wait { poll_millis } => fields.poll_millis = Some(*poll_millis),
            Decision::FingerprintMismatch | Decision::KeyTooOld => {}
        }
        fields
    }
}

/// The decision for a request with payload `fingerprint` given the stored
/// `record` of its key (if any) at `now_millis`.
#[wasm_bindgen(js_name = recordDecide)]
pub fn record_decide(
    record: Option<RecordFields>,
    fingerprint_text: &str,
    key_created_millis: Option<u64>,
    waited_millis: u64,
    now_millis: u64,
    policy: &RecordPolicyHandle,
) -> Result<DecisionFields, JsValue> {
    let existing = optional_record(record)?;
    let mut incoming =
        Incoming::new(fingerprint(fingerprint_text)?).with_waited_millis(waited_millis);
    if let Some(created) = key_created_millis {
        incoming = incoming.with_key_created_millis(created);
    }
    record::decide(existing.as_ref(), &incoming, now_millis, &policy.0)
        .map(|decision| DecisionFields::of(&decision))
        .map_err(to_js)
}

/// Applies a claim (`claim` to write, replacing the expected fence and
/// status, if any) to `current` at `now_millis`, as storage does.
#[wasm_bindgen(js_name = recordApplyClaim)]
pub fn record_apply_claim(
    claim: RecordFields,
    expected_fence: Option<Vec<u64>>,
    expected_status: Option<String>,
    current: Option<RecordFields>,
    now_millis: u64,
) -> Result<RecordFields, JsValue> {
    let expected = match (expected_fence.as_deref(), expected_status) {
        (Some(&[token, created_millis]), Some(status)) => Some(Expected {
            fence: Fence {
                token,
                created_millis,
            },
            status: Status::parse(&status).map_err(to_js)?,
        }),
        (None, None) => None,
        _ => return Err(type_error("an expected claim needs its fence and status")),
    };
    let claim = Claim {
        record: claim.record()?,
        expected,
    };
    let current = optional_record(current)?;
    claim
        .apply(current.as_ref(), now_millis)
        .map(|record| RecordFields::of(&record))
        .map_err(to_js)
}

/// The record after the holder of the claim `(token, created_millis)` completed it.
#[wasm_bindgen(js_name = recordComplete)]
pub fn record_complete(
    record: RecordFields,
    token: u64,
    created_millis: u64,
) -> Result<RecordFields, JsValue> {
    let fence = Fence {
        token,
        created_millis,
    };
    record
        .record()?
        .complete(fence)
        .map(|record| RecordFields::of(&record))
        .map_err(to_js)
}

/// The record after the holder of the claim failed it (`retryable` or not).
#[wasm_bindgen(js_name = recordFail)]
pub fn record_fail(
    record: RecordFields,
    token: u64,
    created_millis: u64,
    retryable: bool,
    policy: &RecordPolicyHandle,
) -> Result<RecordFields, JsValue> {
    let fence = Fence {
        token,
        created_millis,
    };
    let failure = if retryable {
        Failure::Retryable
    } else {
        Failure::Final
    };
    record
        .record()?
        .fail(fence, failure, &policy.0)
        .map(|record| RecordFields::of(&record))
        .map_err(to_js)
}

/// Whether cleanup may delete the record at `now_millis`.
#[wasm_bindgen(js_name = recordIsRemovable)]
pub fn record_is_removable(record: RecordFields, now_millis: u64) -> Result<bool, JsValue> {
    Ok(record.record()?.is_removable(now_millis))
}

/// The text of a status (`record.unknown_status`).
#[wasm_bindgen(js_name = recordStatus)]
pub fn record_status(text: &str) -> Result<String, JsValue> {
    Status::parse(text)
        .map(|status| status.as_str().into())
        .map_err(to_js)
}

/// `[status, type, title]` of the problem named `name`, if there is one.
#[wasm_bindgen(js_name = problemDetails)]
pub fn problem_details(name: &str) -> Option<Vec<String>> {
    Problem::ALL
        .iter()
        .find(|problem| problem.name() == name)
        .map(|problem| {
            vec![
                problem.status().to_string(),
                problem.type_uri().into(),
                problem.title().into(),
            ]
        })
}

/// The `Retry-After` seconds for a delay in milliseconds.
#[wasm_bindgen(js_name = retryAfterSecs)]
pub fn retry_after_secs(millis: u64) -> u64 {
    record::retry_after_secs(millis)
}

/// `[problem content type, replayed header, replayed value, retry-after header]`.
#[wasm_bindgen(js_name = httpConstants)]
pub fn http_constants() -> Vec<String> {
    vec![
        record::PROBLEM_CONTENT_TYPE.into(),
        record::REPLAYED_HEADER.into(),
        record::REPLAYED_VALUE.into(),
        record::RETRY_AFTER_HEADER.into(),
    ]
}
