//! The transactional outbox: relay claims, retries and row-count checks.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use mintid::outbox::{self, AfterFailure, Delivery, Enqueued, OutboxStatus, RelayPolicy};
use wasm_bindgen::prelude::*;

use crate::error::to_js;

/// A validated relay policy.
#[wasm_bindgen]
pub struct RelayPolicyHandle(pub(crate) RelayPolicy);

#[wasm_bindgen]
impl RelayPolicyHandle {
    /// A policy (`outbox.invalid_policy`); `None` keeps the core's default.
    #[wasm_bindgen(constructor)]
    pub fn new(
        batch_size: Option<u64>,
        claim_millis: Option<u64>,
        base_backoff_millis: Option<u64>,
        max_backoff_millis: Option<u64>,
        jitter_percent: Option<u8>,
        max_attempts: Option<u64>,
    ) -> Result<RelayPolicyHandle, JsValue> {
        let default = RelayPolicy::DEFAULT;
        let mut policy = RelayPolicy::new(
            batch_size.unwrap_or(default.batch_size()),
            claim_millis.unwrap_or(default.claim_millis()),
        )
        .map_err(to_js)?;
        if base_backoff_millis.is_some() || max_backoff_millis.is_some() || jitter_percent.is_some()
        {
            policy = policy
                .with_backoff(
                    base_backoff_millis.unwrap_or(policy.base_backoff_millis()),
                    max_backoff_millis.unwrap_or(policy.max_backoff_millis()),
                    jitter_percent.unwrap_or(policy.jitter_percent()),
                )
                .map_err(to_js)?;
        }
        if let Some(attempts) = max_attempts {
            policy = policy.with_max_attempts(attempts).map_err(to_js)?;
        }
        Ok(Self(policy))
    }

    /// `[batch_size, claim, base_backoff, max_backoff, max_attempts, jitter_percent]`.
    pub fn settings(&self) -> Vec<u64> {
        let p = &self.0;
        vec![
            p.batch_size(),
            p.claim_millis(),
            p.base_backoff_millis(),
            p.max_backoff_millis(),
            p.max_attempts(),
            u64::from(p.jitter_percent()),
        ]
    }

    /// The pause before the next attempt after `attempts` failures; `draw` is random.
    #[wasm_bindgen(js_name = backoffMillis)]
    pub fn backoff_millis(&self, attempts: u64, draw: u64) -> u64 {
        self.0.backoff_millis(attempts, draw)
    }

    /// A batch claim at `now_millis`: `[claim_token, claimed_until, batch_size, now]`.
    pub fn claim(&self, now_millis: u64, draw: u64) -> Result<Vec<u64>, JsValue> {
        let claim = self.0.claim(now_millis, draw).map_err(to_js)?;
        Ok(vec![
            claim.claim_token,
            claim.claimed_until_millis,
            claim.batch_size,
            claim.now_millis,
        ])
    }

    /// `send` or `give_up` for a message at its `attempts`-th attempt.
    pub fn delivery(&self, attempts: u64) -> String {
        match self.0.delivery(attempts) {
            Delivery::Send => "send".into(),
            Delivery::GiveUp => "give_up".into(),
        }
    }

    /// The next attempt's time after a failure, or `None` when the message is dead.
    #[wasm_bindgen(js_name = afterFailure)]
    pub fn after_failure(
        &self,
        attempts: u64,
        now_millis: u64,
        draw: u64,
    ) -> Result<Option<u64>, JsValue> {
        match self
            .0
            .after_failure(attempts, now_millis, draw)
            .map_err(to_js)?
        {
            AfterFailure::Retry {
                next_attempt_millis,
            } => Ok(Some(next_attempt_millis)),
            AfterFailure::Dead => Ok(None),
        }
    }
}

/// The text of an outbox status (`outbox.unknown_status`).
#[wasm_bindgen(js_name = outboxStatus)]
pub fn outbox_status(text: &str) -> Result<String, JsValue> {
    OutboxStatus::parse(text)
        .map(|status| status.as_str().into())
        .map_err(to_js)
}

/// `new` or `already_enqueued` from `outbox_enqueue`'s affected rows.
#[wasm_bindgen(js_name = outboxEnqueued)]
pub fn outbox_enqueued(rows: u64) -> Result<String, JsValue> {
    Enqueued::from_rows(rows)
        .map(|enqueued| enqueued.name().into())
        .map_err(to_js)
}

/// Checks `outbox_mark`'s affected rows (`outbox.claim_lost`, `outbox.unexpected_rows`).
#[wasm_bindgen(js_name = outboxCheckMarked)]
pub fn outbox_check_marked(rows: u64, message_id: u64, claim_token: u64) -> Result<(), JsValue> {
    outbox::check_marked(rows, message_id, claim_token).map_err(to_js)
}

/// Checks a message before it is enqueued (`outbox.invalid_message`).
#[wasm_bindgen(js_name = outboxCheckMessage)]
pub fn outbox_check_message(
    kind: &str,
    business_key: &str,
    payload_len: usize,
) -> Result<(), JsValue> {
    outbox::check_message(kind, business_key, payload_len).map_err(to_js)
}
