//! The outbox drivers of the core (`mintid::store::{OutboxEnqueue,
//! OutboxRelay, OutboxCleanup}`) for Python and Kotlin: the host runs each
//! query, calls the user's send function when told, and pushes the result
//! back. The relay loop, the send decision, retries, limits and error codes
//! are the core's.

use std::sync::{Arc, Mutex};

use crate::error::MintidError;
use crate::outbox::{Enqueued, RelayPolicy};
use crate::store::{CleanupStep, Manifest, StoreAnswer, StoreQuery, lock, never_asked};
use mintid::store as core;

/// A message of a claimed batch, to send.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ClaimedMessage {
    /// Its id.
    pub message_id: u64,
    /// Its kind.
    pub kind: String,
    /// Its business key.
    pub business_key: String,
    /// Its payload.
    pub payload: Vec<u8>,
    /// The sends started so far, this one included.
    pub attempts: u64,
    /// When it was enqueued (Unix ms).
    pub created_millis: u64,
}

/// What one relay run did (`mintid::store::RelayReport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct RelayReport {
    /// Messages sent.
    pub sent: u64,
    /// Messages whose send failed, due again after the backoff.
    pub retried: u64,
    /// Messages whose last attempt failed: dead.
    pub dead: u64,
    /// Messages whose attempts had run out before this claim: dead unsent.
    pub given_up: u64,
    /// Marks that found another relay's claim (`outbox.claim_lost`).
    pub claim_lost: u64,
    /// Messages given back unsent before the claim's end, claimed again.
    pub released: u64,
}

impl From<core::RelayReport> for RelayReport {
    fn from(report: core::RelayReport) -> Self {
        Self {
            sent: report.sent,
            retried: report.retried,
            dead: report.dead,
            given_up: report.given_up,
            claim_lost: report.claim_lost,
            released: report.released,
        }
    }
}

/// A step of a relay run. A failure is the call's error.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum RelayStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Sleep, then call `resume`.
    Pause {
        /// How long, in milliseconds.
        millis: u64,
    },
    /// Send this message now, then call `sent` or `failed`.
    Send {
        /// The message.
        message: ClaimedMessage,
    },
    /// Nothing is due any more.
    Done {
        /// What the run did.
        report: RelayReport,
    },
}

fn relay_step(step: core::RelayStep) -> Result<RelayStep, MintidError> {
    Ok(match step {
        core::Step::Run(query) => RelayStep::Run {
            query: query.into(),
        },
        core::Step::Pause { millis } => RelayStep::Pause { millis },
        core::Step::Yield(core::RelayYield::Send(message)) => RelayStep::Send {
            message: ClaimedMessage {
                message_id: message.message_id,
                kind: message.kind,
                business_key: message.business_key,
                payload: message.payload,
                attempts: message.attempts,
                created_millis: message.created_millis,
            },
        },
        core::Step::Yield(core::RelayYield::Done(report)) => RelayStep::Done {
            report: report.into(),
        },
        core::Step::Fail(error) => return Err(error.into()),
        core::Step::Begin { .. } | core::Step::Commit | core::Step::Rollback => {
            return never_asked();
        }
    })
}

/// One relay run (`mintid::store::OutboxRelay`).
#[derive(Debug, uniffi::Object)]
pub struct OutboxRelay(Mutex<core::OutboxRelay>);

#[uniffi::export]
impl OutboxRelay {
    /// A run over `manifest`'s statements under `policy`; `seed` (a random
    /// u64) gives its claim tokens and jitter. Fails with
    /// `outbox.invalid_policy`.
    #[uniffi::constructor]
    pub fn new(
        manifest: Manifest,
        policy: RelayPolicy,
        seed: u64,
    ) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(Mutex::new(core::OutboxRelay::new(
            manifest.into(),
            policy.try_into()?,
            seed,
        )))))
    }

    /// The first step, at `now_millis`.
    pub fn start(&self, now_millis: u64) -> Result<RelayStep, MintidError> {
        relay_step(lock(&self.0).start(now_millis))
    }

    /// Push the database's answer to the last `Run`.
    pub fn push(&self, answer: StoreAnswer, now_millis: u64) -> Result<RelayStep, MintidError> {
        relay_step(lock(&self.0).push(answer.into(), now_millis))
    }

    /// Continue after a `Pause`.
    pub fn resume(&self) -> Result<RelayStep, MintidError> {
        relay_step(lock(&self.0).resume())
    }

    /// The message of the last `Send` was sent, at `now_millis`.
    pub fn sent(&self, now_millis: u64) -> Result<RelayStep, MintidError> {
        relay_step(lock(&self.0).sent(now_millis))
    }

    /// The send of the last `Send` failed with `error`, at `now_millis`.
    pub fn failed(&self, error: String, now_millis: u64) -> Result<RelayStep, MintidError> {
        relay_step(lock(&self.0).failed(&error, now_millis))
    }

    /// The report so far (for a run that failed).
    pub fn report(&self) -> RelayReport {
        lock(&self.0).report().into()
    }
}

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
