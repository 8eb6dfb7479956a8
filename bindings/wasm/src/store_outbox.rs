//! The outbox drivers of the core (`mintid::store::{OutboxEnqueue,
//! OutboxRelay, OutboxCleanup}`) for JS, in the shapes of `store.rs`: the
//! host runs each query, calls the user's send function when told and pushes
//! the result back. The relay loop and its send decision are the core's.

use alloc::string::String;
use js_sys::Uint8Array;
use mintid::outbox::Enqueued;
use mintid::store::{
    ClaimedMessage, OutboxCleanup, OutboxEnqueue, OutboxRelay, RelayReport, RelayYield, Step,
};
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::outbox::RelayPolicyHandle;
use crate::store::{answer_of, bytes, manifest_of, never_asked, object, query_js};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A message of a claimed batch, to send. */
export interface ClaimedMessageData { messageId: bigint; kind: string; businessKey: string; payload: Uint8Array; attempts: bigint; createdMillis: bigint; }
/** What one relay run did. */
export interface RelayReportData { sent: bigint; retried: bigint; dead: bigint; givenUp: bigint; claimLost: bigint; released: bigint; }
/** A step of a relay run; a failure is the call's error. */
export type RelayStep =
  | { kind: "run"; query: StoreQuery }
  | { kind: "pause"; millis: bigint }
  | { kind: "send"; message: ClaimedMessageData }
  | { kind: "done"; report: RelayReportData };
/** A step of an enqueue. */
export type EnqueueStep = { kind: "run"; query: StoreQuery } | { kind: "done"; enqueued: "new" | "already_enqueued" };
/** An outbox message as stored. */
export interface StoredMessageData { messageId: bigint; kind: string; businessKey: string; payload: Uint8Array; status: "pending" | "sent" | "dead"; attempts: bigint; nextAttemptMillis: bigint; lastError: string | null; createdMillis: bigint; updatedMillis: bigint; }
"#;

fn kind(name: &str) -> (&'static str, JsValue) {
    ("kind", JsValue::from_str(name))
}

fn message_js(message: &ClaimedMessage) -> JsValue {
    object(&[
        ("messageId", message.message_id.into()),
        ("kind", JsValue::from_str(&message.kind)),
        ("businessKey", JsValue::from_str(&message.business_key)),
        ("payload", bytes(&message.payload)),
        ("attempts", message.attempts.into()),
        ("createdMillis", message.created_millis.into()),
    ])
}

fn report_js(report: &RelayReport) -> JsValue {
    object(&[
        ("sent", report.sent.into()),
        ("retried", report.retried.into()),
        ("dead", report.dead.into()),
        ("givenUp", report.given_up.into()),
        ("claimLost", report.claim_lost.into()),
        ("released", report.released.into()),
    ])
}

fn relay_step(step: mintid::store::RelayStep) -> Result<JsValue, JsValue> {
    Ok(match step {
        Step::Run(query) => object(&[kind("run"), ("query", query_js(&query))]),
        Step::Pause { millis } => object(&[kind("pause"), ("millis", millis.into())]),
        Step::Yield(RelayYield::Send(message)) => {
            object(&[kind("send"), ("message", message_js(&message))])
        }
        Step::Yield(RelayYield::Done(report)) => {
            object(&[kind("done"), ("report", report_js(&report))])
        }
        Step::Fail(error) => return Err(to_js(error)),
        Step::Begin { .. } | Step::Commit | Step::Rollback => {
            return Err(never_asked("a transaction step"));
        }
    })
}

/// One relay run (`mintid::store::OutboxRelay`).
#[wasm_bindgen(js_name = OutboxRelayDriver)]
pub struct OutboxRelayDriver(OutboxRelay);

#[wasm_bindgen(js_class = OutboxRelayDriver)]
impl OutboxRelayDriver {
    /// A run over `manifest`'s statements under `policy`; `seed` (a random
    /// u64) gives its claim tokens and jitter.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        policy: &RelayPolicyHandle,
        seed: u64,
    ) -> Result<OutboxRelayDriver, JsValue> {
        Ok(Self(OutboxRelay::new(
            manifest_of(&manifest)?,
            policy.0,
            seed,
        )))
    }

    /// The first step, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "RelayStep")]
    pub fn start(&mut self, now_millis: u64) -> Result<JsValue, JsValue> {
        relay_step(self.0.start(now_millis))
    }

    /// Push the database's answer to the last `run`.
    #[wasm_bindgen(unchecked_return_type = "RelayStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
        now_millis: u64,
    ) -> Result<JsValue, JsValue> {
        relay_step(self.0.push(answer_of(&answer)?, now_millis))
    }

    /// Continue after a `pause`.
    #[wasm_bindgen(unchecked_return_type = "RelayStep")]
    pub fn resume(&mut self) -> Result<JsValue, JsValue> {
        relay_step(self.0.resume())
    }

    /// The message of the last `send` was sent, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "RelayStep")]
    pub fn sent(&mut self, now_millis: u64) -> Result<JsValue, JsValue> {
        relay_step(self.0.sent(now_millis))
    }

    /// The send of the last `send` failed with `error`, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "RelayStep")]
    pub fn failed(&mut self, error: &str, now_millis: u64) -> Result<JsValue, JsValue> {
        relay_step(self.0.failed(error, now_millis))
    }
}

/// One message enqueued (`mintid::store::OutboxEnqueue`).
#[wasm_bindgen(js_name = OutboxEnqueueDriver)]
pub struct OutboxEnqueueDriver(OutboxEnqueue);

fn enqueue_step(step: mintid::store::EnqueueStep) -> Result<JsValue, JsValue> {
    match step {
        Step::Run(query) => Ok(object(&[kind("run"), ("query", query_js(&query))])),
        Step::Yield(enqueued) => {
            let name = match enqueued {
                Enqueued::New => "new",
                Enqueued::AlreadyEnqueued => "already_enqueued",
            };
            Ok(object(&[
                kind("done"),
                ("enqueued", JsValue::from_str(name)),
            ]))
        }
        Step::Fail(error) => Err(to_js(error)),
        _ => Err(never_asked("a pause or a transaction step")),
    }
}

#[wasm_bindgen(js_class = OutboxEnqueueDriver)]
impl OutboxEnqueueDriver {
    /// An enqueue of one message.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        message_id: u64,
        kind: String,
        business_key: String,
        payload: Uint8Array,
    ) -> Result<OutboxEnqueueDriver, JsValue> {
        Ok(Self(OutboxEnqueue::new(
            manifest_of(&manifest)?,
            message_id,
            &kind,
            &business_key,
            payload.to_vec(),
        )))
    }

    /// The first step, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "EnqueueStep")]
    pub fn start(&mut self, now_millis: u64) -> Result<JsValue, JsValue> {
        enqueue_step(self.0.start(now_millis))
    }

    /// Push the answer to the last `run`.
    #[wasm_bindgen(unchecked_return_type = "EnqueueStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
    ) -> Result<JsValue, JsValue> {
        enqueue_step(self.0.push(answer_of(&answer)?))
    }
}

/// Sent messages deleted in batches (`mintid::store::OutboxCleanup`).
#[wasm_bindgen(js_name = OutboxCleanupDriver)]
pub struct OutboxCleanupDriver(OutboxCleanup);

fn cleanup_step(step: Step<u64>) -> Result<JsValue, JsValue> {
    match step {
        Step::Run(query) => Ok(object(&[kind("run"), ("query", query_js(&query))])),
        Step::Yield(deleted) => Ok(object(&[kind("done"), ("deleted", deleted.into())])),
        Step::Fail(error) => Err(to_js(error)),
        _ => Err(never_asked("a pause or a transaction step")),
    }
}

#[wasm_bindgen(js_class = OutboxCleanupDriver)]
impl OutboxCleanupDriver {
    /// A cleanup of the messages sent at or before `sent_before_millis`,
    /// `batch_size` per statement.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        sent_before_millis: u64,
        batch_size: u64,
    ) -> Result<OutboxCleanupDriver, JsValue> {
        Ok(Self(OutboxCleanup::new(
            manifest_of(&manifest)?,
            sent_before_millis,
            batch_size,
        )))
    }

    /// The first step.
    #[wasm_bindgen(unchecked_return_type = "CleanupStep")]
    pub fn start(&self) -> Result<JsValue, JsValue> {
        cleanup_step(self.0.start())
    }

    /// Push a batch's answer.
    #[wasm_bindgen(unchecked_return_type = "CleanupStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
    ) -> Result<JsValue, JsValue> {
        cleanup_step(self.0.push(answer_of(&answer)?))
    }
}

/// The query that loads the message of `kind` and `business_key`.
#[wasm_bindgen(js_name = outboxLoadQuery, unchecked_return_type = "StoreQuery")]
pub fn outbox_load_query(
    #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
    kind: &str,
    business_key: &str,
) -> Result<JsValue, JsValue> {
    Ok(query_js(&mintid::store::outbox_load_query(
        manifest_of(&manifest)?,
        kind,
        business_key,
    )))
}

/// Reads the answer to `outboxLoadQuery`: the message, or `null`.
#[wasm_bindgen(js_name = outboxReadMessage, unchecked_return_type = "StoredMessageData | null")]
pub fn outbox_read_message(
    #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
) -> Result<JsValue, JsValue> {
    let message = mintid::store::read_outbox_load(&answer_of(&answer)?).map_err(to_js)?;
    Ok(match message {
        None => JsValue::NULL,
        Some(message) => object(&[
            ("messageId", message.message_id.into()),
            ("kind", JsValue::from_str(&message.kind)),
            ("businessKey", JsValue::from_str(&message.business_key)),
            ("payload", bytes(&message.payload)),
            ("status", JsValue::from_str(message.status.as_str())),
            ("attempts", message.attempts.into()),
            ("nextAttemptMillis", message.next_attempt_millis.into()),
            (
                "lastError",
                message
                    .last_error
                    .as_deref()
                    .map_or(JsValue::NULL, JsValue::from_str),
            ),
            ("createdMillis", message.created_millis.into()),
            ("updatedMillis", message.updated_millis.into()),
        ]),
    })
}
