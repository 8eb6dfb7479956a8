//! The outbox drivers of the core (`mintid::store::{OutboxEnqueue,
//! OutboxCleanup}`) for Python and Kotlin: the host runs each query and
//! pushes the result back. The relay runs on the wire (`wire.rs`).

use std::sync::{Arc, Mutex};

use crate::error::MintidError;
use crate::outbox::Enqueued;
use crate::store::{CleanupStep, Manifest, StoreAnswer, StoreQuery, lock, never_asked};
use mintid::store as core;

/// A step of an enqueue.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum EnqueueStep {
    /// Run this query (on the caller's connection) and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// What the enqueue did.
    Done {
        /// New, or already enqueued.
        enqueued: Enqueued,
    },
}

fn enqueue_step(step: core::EnqueueStep) -> Result<EnqueueStep, MintidError> {
    Ok(match step {
        core::Step::Run(query) => EnqueueStep::Run {
            query: query.into(),
        },
        core::Step::Yield(enqueued) => EnqueueStep::Done {
            enqueued: match enqueued {
                mintid::outbox::Enqueued::New => Enqueued::New,
                mintid::outbox::Enqueued::AlreadyEnqueued => Enqueued::AlreadyEnqueued,
            },
        },
        core::Step::Fail(error) => return Err(error.into()),
        _ => return never_asked(),
    })
}

/// One message enqueued (`mintid::store::OutboxEnqueue`).
#[derive(Debug, uniffi::Object)]
pub struct OutboxEnqueue(Mutex<core::OutboxEnqueue>);

#[uniffi::export]
impl OutboxEnqueue {
    /// An enqueue of one message.
    #[uniffi::constructor]
    pub fn new(
        manifest: Manifest,
        message_id: u64,
        kind: String,
        business_key: String,
        payload: Vec<u8>,
    ) -> Arc<Self> {
        Arc::new(Self(Mutex::new(core::OutboxEnqueue::new(
            manifest.into(),
            message_id,
            &kind,
            &business_key,
            payload,
        ))))
    }

    /// The first step, at `now_millis` (`outbox.invalid_message`: nothing written).
    pub fn start(&self, now_millis: u64) -> Result<EnqueueStep, MintidError> {
        enqueue_step(lock(&self.0).start(now_millis))
    }

    /// Push the answer to the last `Run`.
    pub fn push(&self, answer: StoreAnswer) -> Result<EnqueueStep, MintidError> {
        enqueue_step(lock(&self.0).push(answer.into()))
    }
}

/// Sent messages deleted in batches (`mintid::store::OutboxCleanup`).
#[derive(Debug, uniffi::Object)]
pub struct OutboxCleanup(Mutex<core::OutboxCleanup>);

fn cleanup_step(step: core::Step<u64>) -> Result<CleanupStep, MintidError> {
    match step {
        core::Step::Run(query) => Ok(CleanupStep::Run {
            query: query.into(),
        }),
        core::Step::Yield(deleted) => Ok(CleanupStep::Done { deleted }),
        core::Step::Fail(error) => Err(error.into()),
        _ => never_asked(),
    }
}

#[uniffi::export]
impl OutboxCleanup {
    /// A cleanup of the messages sent at or before `sent_before_millis`,
    /// `batch_size` per statement.
    #[uniffi::constructor]
    pub fn new(manifest: Manifest, sent_before_millis: u64, batch_size: u64) -> Arc<Self> {
        Arc::new(Self(Mutex::new(core::OutboxCleanup::new(
            manifest.into(),
            sent_before_millis,
            batch_size,
        ))))
    }

    /// The first step.
    pub fn start(&self) -> Result<CleanupStep, MintidError> {
        cleanup_step(lock(&self.0).start())
    }

    /// Push a batch's answer.
    pub fn push(&self, answer: StoreAnswer) -> Result<CleanupStep, MintidError> {
        cleanup_step(lock(&self.0).push(answer.into()))
    }
}

/// An outbox message as stored.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredMessage {
    /// Its id.
    pub message_id: u64,
    /// Its kind.
    pub kind: String,
    /// Its business key.
    pub business_key: String,
    /// Its payload.
    pub payload: Vec<u8>,
    /// `pending`, `sent` or `dead`.
    pub status: String,
    /// The sends started so far.
    pub attempts: u64,
    /// When it is next due (Unix ms).
    pub next_attempt_millis: u64,
    /// The last failed send's error text.
    pub last_error: Option<String>,
    /// When it was enqueued (Unix ms).
    pub created_millis: u64,
    /// When it was last written (Unix ms).
    pub updated_millis: u64,
}

/// The query that loads the message of `kind` and `business_key`.
#[uniffi::export]
pub fn outbox_load_query(manifest: Manifest, kind: String, business_key: String) -> StoreQuery {
    core::outbox_load_query(manifest.into(), &kind, &business_key).into()
}

/// Reads the answer to [`outbox_load_query`]: the message, or none.
#[uniffi::export]
pub fn outbox_read_message(answer: StoreAnswer) -> Result<Option<StoredMessage>, MintidError> {
    Ok(
        core::read_outbox_load(&answer.into())?.map(|message| StoredMessage {
            message_id: message.message_id,
            kind: message.kind,
            business_key: message.business_key,
            payload: message.payload,
            status: message.status.as_str().into(),
            attempts: message.attempts,
            next_attempt_millis: message.next_attempt_millis,
            last_error: message.last_error,
            created_millis: message.created_millis,
            updated_millis: message.updated_millis,
        }),
    )
}
