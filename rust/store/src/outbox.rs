//! The transactional outbox over `outbox_message`, driven by the core's
//! outbox drivers (`OutboxEnqueue`, `OutboxRelay`, `OutboxCleanup`): enqueue
//! in the caller's transaction; [`Outbox::relay`] runs the core's relay loop,
//! calling `send` when the core says so. Every rule is the core's.

use std::fmt::Display;
use std::sync::Arc;

use mintid::outbox::Enqueued;
use mintid::store::{
    ClaimedMessage, OutboxCleanup, OutboxEnqueue, OutboxRelay, RelayReport, RelayYield,
    StoredMessage, outbox_load_query, read_outbox_load,
};
use mintid::{Entropy, RelayPolicy, ThreadEntropy};

use crate::backend::Backend;
use crate::error::Error;
use crate::steps::{Pushing, drive};
use crate::store::{Session, Store};

/// A message to enqueue: one per `kind` and `business_key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxMessage {
    /// Its id (a Snowflake).
    pub message_id: u64,
    /// What kind of event it is.
    pub kind: String,
    /// The business key it is about; one message per kind and key.
    pub business_key: String,
    /// Its payload.
    pub payload: Vec<u8>,
}

type Draw = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The outbox in one database, under one [`RelayPolicy`].
pub struct Outbox<DB: Backend> {
    store: Store<DB>,
    policy: RelayPolicy,
    draw: Draw,
}

clone_fields!(Outbox, store, policy, draw);

impl<DB: Backend> std::fmt::Debug for Outbox<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("store", &self.store)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<DB: Backend> Outbox<DB> {
    /// The outbox in `store` under `policy`; each relay run draws its random
    /// `u64` (claim tokens and jitter) from the thread's entropy.
    pub fn new(store: Store<DB>, policy: RelayPolicy) -> Self {
        let draw: Draw = Arc::new(|| {
            let mut bytes = [0; 8];
            ThreadEntropy.fill_bytes(&mut bytes);
            u64::from_le_bytes(bytes)
        });
        Self {
            store,
            policy,
            draw,
        }
    }

    /// The same outbox drawing each relay run's random `u64` from `draw`.
    pub fn with_draw(mut self, draw: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.draw = Arc::new(draw);
        self
    }

    /// The store.
    pub fn store(&self) -> &Store<DB> {
        &self.store
    }

    /// Inserts `message` on the caller's `conn` (e.g. `&mut *tx` of a
    /// `sqlx::Transaction`), inside its business transaction; a second
    /// message for the same kind and business key is
    /// [`Enqueued::AlreadyEnqueued`], not an error.
    ///
    /// Fails with `outbox.invalid_message` (nothing written) or a `store.*`
    /// error (roll the transaction back).
    pub async fn enqueue(
        &self,
        conn: &mut DB::Connection,
        message: &OutboxMessage,
    ) -> Result<Enqueued, Error> {
        let mut enqueue = OutboxEnqueue::new(
            Store::<DB>::manifest(),
            message.message_id,
            &message.kind,
            &message.business_key,
            message.payload.clone(),
        );
        let clock = &self.store.clock;
        let first = enqueue.start(clock.now_millis());
        let mut driver = Pushing(|answer, _now| enqueue.push(answer));
        drive(&mut Session::caller(&self.store, conn), &mut driver, first).await
    }

    /// Relays until nothing is due: the core claims batches, decides before
    /// each message whether its claim still covers a send, and calls `send`;
    /// a `send` that returns an error fails that attempt (its text is
    /// stored, cut to 1024 bytes). What happened, message by message.
    ///
    /// Fails with a `store.*` error when the database fails on every retry.
    pub async fn relay<F, E>(&self, mut send: F) -> Result<RelayReport, Error>
    where
        F: AsyncFnMut(&ClaimedMessage) -> Result<(), E>,
        E: Display,
    {
        let clock = &self.store.clock;
        let mut relay = OutboxRelay::new(Store::<DB>::manifest(), self.policy, (self.draw)());
        let mut session = Session::new(&self.store);
        let mut step = relay.start(clock.now_millis());
        loop {
            match drive(&mut session, &mut relay, step).await? {
                RelayYield::Done(report) => {
                    crate::telemetry::relayed(&report);
                    return Ok(report);
                }
                RelayYield::Send(message) => {
                    step = match send(&message).await {
                        Ok(()) => relay.sent(clock.now_millis()),
                        Err(error) => relay.failed(&error.to_string(), clock.now_millis()),
                    };
                }
            }
        }
    }

    /// The message of `kind` and `business_key`, or `None`.
    pub async fn load(
        &self,
        kind: &str,
        business_key: &str,
    ) -> Result<Option<StoredMessage>, Error> {
        let query = outbox_load_query(Store::<DB>::manifest(), kind, business_key);
        let answer = Session::new(&self.store).run(query).await;
        Ok(read_outbox_load(&answer)?)
    }

    /// Deletes sent messages last updated at or before `sent_before_millis`,
    /// `batch_size` per statement until a batch comes back short; the total.
    /// Dead messages are kept.
    pub async fn cleanup(&self, sent_before_millis: u64, batch_size: u64) -> Result<u64, Error> {
        let mut cleanup =
            OutboxCleanup::new(Store::<DB>::manifest(), sent_before_millis, batch_size);
        let first = cleanup.start();
        let mut driver = Pushing(|answer, _now| cleanup.push(answer));
        self.store.drive(&mut driver, first).await
    }
}
