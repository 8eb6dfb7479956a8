//! The inbox (idempotent consumers) over `inbox_message`, driven by the
//! core's `InboxConsume` and `InboxCleanup`: a delivered message is claimed
//! in the caller's transaction, the handler runs on the same connection,
//! and the claim commits with the handler's writes. Every rule is the core's.

use mintid::inbox::InboxPolicy;
use mintid::store::{Consumed, InboxCleanup, InboxConsume, InboxYield, Step};

use crate::backend::Backend;
use crate::error::Error;
use crate::steps::{Pushing, drive, unexpected_step};
use crate::store::{Session, Store};

/// What [`Inbox::consume`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consumption<T> {
    /// The handler ran, with this result; its writes and the inbox row
    /// commit together when the caller commits.
    Processed(T),
    /// The consumer already took this message: the handler did not run
    /// (acknowledge the message to the broker).
    Duplicate,
}

/// The inbox of one database, under one [`InboxPolicy`].
pub struct Inbox<DB: Backend> {
    store: Store<DB>,
    policy: InboxPolicy,
}

clone_fields!(Inbox, store, policy);

impl<DB: Backend> std::fmt::Debug for Inbox<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("store", &self.store)
            .field("policy", &self.policy)
            .finish()
    }
}

impl<DB: Backend> Inbox<DB> {
    /// The inbox in `store`: rows kept for `policy`'s retention (which the
    /// core made sure covers the broker's redelivery horizon).
    pub fn new(store: Store<DB>, policy: InboxPolicy) -> Self {
        Self { store, policy }
    }

    /// The store.
    pub fn store(&self) -> &Store<DB> {
        &self.store
    }

    /// Takes `message_id` for `consumer` on the caller's `conn`, inside its
    /// transaction (e.g. `&mut *tx` of a `sqlx::Transaction`; on SQLite
    /// begin it with `BEGIN IMMEDIATE`): the message is claimed, `handler`
    /// runs on the same connection, and the claim is marked processed. A
    /// message this consumer already took is [`Consumption::Duplicate`] and
    /// `handler` does not run; a concurrent delivery of the same message
    /// waits for this transaction and then finds it a duplicate.
    ///
    /// Commit after `Processed` (or `Duplicate`); after an error roll back
    /// (dropping the transaction does): nothing of the handler commits, so
    /// the broker's redelivery runs it once. The error is the handler's own,
    /// or a store error (`inbox.invalid_message`, `store.*`) converted into
    /// it.
    pub async fn consume<T, E>(
        &self,
        conn: &mut DB::Connection,
        consumer: &str,
        message_id: &str,
        handler: impl AsyncFnOnce(&mut DB::Connection) -> Result<T, E>,
    ) -> Result<Consumption<T>, E>
    where
        E: From<Error>,
    {
        let clock = &self.store.clock;
        let mut driver = InboxConsume::new(
            Store::<DB>::manifest(),
            self.policy,
            consumer,
            message_id,
            false,
        );
        let first = driver.start(clock.now_millis());
        match self.drive(conn, &mut driver, first).await? {
            InboxYield::Handle => {}
            InboxYield::Done(Consumed::Duplicate) => return Ok(Consumption::Duplicate),
            InboxYield::Done(_) => return Err(Error::from(unexpected_step("an inbox end")).into()),
        }
        let value = match handler(&mut *conn).await {
            Ok(value) => value,
            Err(error) => {
                // The core's verdict (handler_failed) needs no statement in
                // the caller's transaction: the caller rolls back.
                let _ = driver.handler_failed();
                return Err(error);
            }
        };
        let step = driver.handled(clock.now_millis());
        match self.drive(conn, &mut driver, step).await? {
            InboxYield::Done(Consumed::Processed) => Ok(Consumption::Processed(value)),
            _ => Err(Error::from(unexpected_step("an inbox end")).into()),
        }
    }

    async fn drive(
        &self,
        conn: &mut DB::Connection,
        driver: &mut InboxConsume,
        first: Step<InboxYield>,
    ) -> Result<InboxYield, Error> {
        let mut pushing = Pushing(|answer, now| driver.push(answer, now));
        drive(&mut Session::caller(&self.store, conn), &mut pushing, first).await
    }

    /// Deletes the inbox rows past their expiry, `batch_size` per statement
    /// until a batch comes back short; the total.
    pub async fn cleanup(&self, batch_size: u64) -> Result<u64, Error> {
        let now = self.store.clock.now_millis();
        let mut cleanup = InboxCleanup::new(Store::<DB>::manifest(), now, batch_size);
        let first = cleanup.start();
        let mut driver = Pushing(|answer, _now| cleanup.push(answer));
        self.store.drive(&mut driver, first).await
    }
}
