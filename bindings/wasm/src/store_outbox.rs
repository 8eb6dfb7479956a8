//! The outbox drivers of the core (`mintid::store::{OutboxEnqueue,
//! OutboxCleanup}`) for JS, in the shapes of `store.rs`: the host runs each
//! query and pushes the result back. The relay runs on the lane (`lane.rs`).

use alloc::string::String;
use js_sys::Uint8Array;
use mintid::outbox::Enqueued;
use mintid::store::{OutboxCleanup, OutboxEnqueue, Step};
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::store::{answer_of, bytes, manifest_of, never_asked, object, query_js};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A step of an enqueue. */
export type EnqueueStep = { kind: "run"; query: StoreQuery } | { kind: "done"; enqueued: "new" | "already_enqueued" };
/** An outbox message as stored. */
export interface StoredMessageData { messageId: bigint; kind: string; businessKey: string; payload: Uint8Array; status: "pending" | "sent" | "dead"; attempts: bigint; nextAttemptMillis: bigint; lastError: string | null; createdMillis: bigint; updatedMillis: bigint; }
"#;

fn kind(name: &str) -> (&'static str, JsValue) {
    ("kind", JsValue::from_str(name))
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
