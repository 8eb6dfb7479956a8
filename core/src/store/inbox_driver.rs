//! The inbox as drivers: [`InboxConsume`] (one delivered message: claim it
//! in the consumer's transaction, let the handler run, mark it processed,
//! commit, or skip a duplicate) and [`InboxCleanup`] (expired rows deleted
//! in bounded batches). The rules are in `docs/spec.md`, "Inbox".

use alloc::string::String;

use super::limits;
use super::record_driver::{db_error, int};
use super::renewal::batch_deleted;
use super::{Answer, DbError, DbErrorClass, DriverError, Manifest, Query, Step, StoreError};
use super::{StoreErrorKind, Value};
use crate::inbox::{InboxPolicy, check_message};

/// How a consumed message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consumed {
    /// The handler ran and its claim is written (committed, when the driver
    /// owns the transaction).
    Processed,
    /// The consumer already took this message: the handler did not run.
    Duplicate,
    /// The handler failed: nothing of it may commit (the driver rolled its
    /// own transaction back; in the caller's transaction the caller rolls
    /// back). The host raises the handler's own error; a redelivery runs it
    /// again.
    HandlerFailed,
}

impl Consumed {
    /// `processed`, `duplicate` or `handler_failed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Consumed::Processed => "processed",
            Consumed::Duplicate => "duplicate",
            Consumed::HandlerFailed => "handler_failed",
        }
    }
}

/// What an inbox consume hands its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InboxYield {
    /// The message is claimed: run the handler now, on the same connection
    /// and transaction, then call [`InboxConsume::handled`] or
    /// [`InboxConsume::handler_failed`].
    Handle,
    /// The protocol's end.
    Done(Consumed),
}

/// A step of an inbox consume.
pub type InboxStep = Step<InboxYield>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Idle,
    Beginning,
    Claiming,
    Handling,
    Marking,
    Committing,
    /// Rolling back, then this end.
    RollingBack(Ending),
    Ended,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ending {
    Done(Consumed),
    Fail(DriverError),
}

/// One delivered message taken by a consumer, exactly once per consumer and
/// message id, in one transaction with the handler's writes.
///
/// Steps, when the driver owns the transaction (`own_transaction`):
/// `Begin { write: true }`, `Run(inbox_claim)`; 1 row yields
/// [`InboxYield::Handle`]; 0 rows (or MySQL's unique violation) is a
/// duplicate: `Rollback`, then [`Consumed::Duplicate`]. After
/// [`handled`](Self::handled): `Run(inbox_processed)`, `Commit`,
/// [`Consumed::Processed`]; after [`handler_failed`](Self::handler_failed):
/// `Rollback`, [`Consumed::HandlerFailed`]. Any database failure rolls back
/// and fails (`store.*`): nothing committed, so the redelivery runs the
/// handler once. In the caller's transaction the same without `Begin`,
/// `Commit` and `Rollback`: the caller commits after `Processed` and rolls
/// back after anything else.
#[derive(Debug, Clone)]
pub struct InboxConsume {
    manifest: Manifest,
    policy: InboxPolicy,
    consumer: String,
    message_id: String,
    own_transaction: bool,
    state: State,
}

impl InboxConsume {
    /// A consume of `message_id` by `consumer` under `policy`;
    /// `own_transaction`: the driver begins and ends the transaction (on a
    /// connection of the host's pool) instead of running inside the
    /// caller's.
    pub fn new(
        manifest: Manifest,
        policy: InboxPolicy,
        consumer: &str,
        message_id: &str,
        own_transaction: bool,
    ) -> Self {
        Self {
            manifest,
            policy,
            consumer: consumer.into(),
            message_id: message_id.into(),
            own_transaction,
            state: State::Idle,
        }
    }

    /// The first step, at `now_millis`: `inbox.invalid_message` (nothing is
    /// written) for a consumer or message id outside the schema's limits,
    /// else `Begin` (own transaction) or the claim.
    pub fn start(&mut self, now_millis: u64) -> InboxStep {
        if self.state != State::Idle {
            return self.misuse("start");
        }
        if let Err(error) = check_message(&self.consumer, &self.message_id) {
            return self.fail(error.into());
        }
        if self.own_transaction {
            self.state = State::Beginning;
            return Step::Begin { write: true };
        }
        self.claim(now_millis)
    }

    fn claim(&mut self, now_millis: u64) -> InboxStep {
        self.state = State::Claiming;
        let expires = now_millis.saturating_add(self.policy.retention_millis());
        Step::Run(self.query("inbox_claim", now_millis, Some(expires)))
    }

    fn query(&self, name: &'static str, now_millis: u64, expires: Option<u64>) -> Query {
        self.manifest.query(name, |param| match param {
            "consumer" => Some(Value::Text(self.consumer.clone())),
            "inbox_message_id" => Some(Value::Text(self.message_id.clone())),
            "now_millis" => Some(int(now_millis)),
            "expires_millis" => expires.map(int),
            _ => None,
        })
    }

    /// Push the answer to the last `Run`, `Begin`, `Commit` or `Rollback`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> InboxStep {
        let state = core::mem::replace(&mut self.state, State::Ended);
        match (state, answer) {
            (State::Beginning, Answer::Affected(_)) => self.claim(now_millis),
            (State::Beginning, Answer::Failed(error)) => self.fail(db_error(&error, false).into()),
            (State::Claiming, Answer::Affected(1)) => {
                self.state = State::Handling;
                Step::Yield(InboxYield::Handle)
            }
            (State::Claiming, Answer::Affected(0)) => self.end(Ending::Done(Consumed::Duplicate)),
            (State::Claiming, Answer::Failed(error))
                if error.class == DbErrorClass::UniqueViolation =>
            {
                self.end(Ending::Done(Consumed::Duplicate))
            }
            (State::Claiming, Answer::Failed(error)) => {
                self.end(Ending::Fail(db_error(&error, false).into()))
            }
            (State::Marking, Answer::Affected(1)) if self.own_transaction => {
                self.state = State::Committing;
                Step::Commit
            }
            (State::Marking, Answer::Affected(1)) => {
                self.fail_or_done(Ending::Done(Consumed::Processed))
            }
            (State::Marking, Answer::Failed(error)) => {
                self.end(Ending::Fail(after_handler(&error)))
            }
            (State::Committing, Answer::Affected(_)) => {
                self.fail_or_done(Ending::Done(Consumed::Processed))
            }
            (State::Committing, Answer::Failed(error)) => self.fail(after_handler(&error)),
            (State::RollingBack(ending), _) => self.fail_or_done(ending),
            (State::Claiming | State::Marking, _) => {
                self.end(Ending::Fail(unexpected("an inbox statement")))
            }
            (state, _) => {
                self.state = state;
                self.misuse("push")
            }
        }
    }

    /// The handler returned: mark the claim processed, at `now_millis`.
    pub fn handled(&mut self, now_millis: u64) -> InboxStep {
        if self.state != State::Handling {
            return self.misuse("handled");
        }
        self.state = State::Marking;
        Step::Run(self.query("inbox_processed", now_millis, None))
    }

    /// The handler failed (raised, returned an error, was cancelled):
    /// nothing of it may commit.
    pub fn handler_failed(&mut self) -> InboxStep {
        if self.state != State::Handling {
            return self.misuse("handler_failed");
        }
        self.end(Ending::Done(Consumed::HandlerFailed))
    }

    /// Ends with `ending`, rolling back first when the driver owns the
    /// transaction.
    fn end(&mut self, ending: Ending) -> InboxStep {
        if self.own_transaction {
            self.state = State::RollingBack(ending);
            Step::Rollback
        } else {
            self.fail_or_done(ending)
        }
    }

    fn fail_or_done(&mut self, ending: Ending) -> InboxStep {
        self.state = State::Ended;
        match ending {
            Ending::Done(consumed) => Step::Yield(InboxYield::Done(consumed)),
            Ending::Fail(error) => Step::Fail(error),
        }
    }

    fn fail(&mut self, error: DriverError) -> InboxStep {
        self.fail_or_done(Ending::Fail(error))
    }

    fn misuse(&mut self, call: &str) -> InboxStep {
        let error = StoreError::new(
            StoreErrorKind::UnexpectedRow,
            alloc::format!("an inbox consume cannot take {call} now"),
        );
        if matches!(self.state, State::Idle | State::Ended) {
            self.fail(error.into())
        } else {
            self.end(Ending::Fail(error.into()))
        }
    }
}

/// A failure after the handler ran: nothing commits, the redelivery runs it.
fn after_handler(error: &DbError) -> DriverError {
    if error.class == DbErrorClass::ConnectionLost {
        return StoreError::new(
            StoreErrorKind::Unavailable,
            "the database became unavailable after the handler ran: nothing of it committed, a \
             redelivery runs it again",
        )
        .with_db(error.class, &error.message)
        .into();
    }
    db_error(error, false).into()
}

fn unexpected(what: &str) -> DriverError {
    StoreError::new(
        StoreErrorKind::UnexpectedRow,
        alloc::format!("the answer to {what} is not what the query returns"),
    )
    .into()
}

/// Deletes inbox rows past their expiry, in batches until one comes back
/// short.
#[derive(Debug, Clone)]
pub struct InboxCleanup {
    query: Query,
    batch_size: u64,
    deleted: u64,
}

impl InboxCleanup {
    /// A cleanup of the rows expired at `now_millis`, `batch_size` (at
    /// least 1) per statement.
    pub fn new(manifest: Manifest, now_millis: u64, batch_size: u64) -> Self {
        let batch_size = limits::batch_size(batch_size);
        Self {
            query: manifest.query("inbox_cleanup", |param| match param {
                "now_millis" => Some(int(now_millis)),
                "batch_size" => Some(int(batch_size)),
                _ => None,
            }),
            batch_size,
            deleted: 0,
        }
    }

    /// The first step: the first batch.
    pub fn start(&self) -> Step<u64> {
        Step::Run(self.query.clone())
    }

    /// Push a batch's answer: `Run` for the next batch, `Yield(total)` when
    /// done, or `Fail`.
    pub fn push(&mut self, answer: Answer) -> Step<u64> {
        batch_deleted(&mut self.deleted, self.batch_size, answer, "inbox_cleanup")
            .unwrap_or_else(|| Step::Run(self.query.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Dialect, Placeholder};

    fn consume(own: bool) -> InboxConsume {
        let manifest = Manifest::new(Dialect::Postgres, Placeholder::Numbered);
        let policy = InboxPolicy::new(10_000, 5_000).unwrap();
        InboxConsume::new(manifest, policy, "billing", "evt_1", own)
    }

    fn run_name(step: &InboxStep) -> &'static str {
        match step {
            Step::Run(query) => query.name,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn own_transaction_claims_handles_marks_and_commits() {
        let mut driver = consume(true);
        assert_eq!(driver.start(1), Step::Begin { write: true });
        let claim = driver.push(Answer::Affected(0), 1);
        let Step::Run(query) = &claim else {
            panic!("{claim:?}")
        };
        assert_eq!(query.name, "inbox_claim");
        // consumer, id, now, expires = now + retention
        assert_eq!(query.params[3], Value::Int(10_001));
        assert_eq!(
            driver.push(Answer::Affected(1), 1),
            Step::Yield(InboxYield::Handle)
        );
        assert_eq!(run_name(&driver.handled(2)), "inbox_processed");
        assert_eq!(driver.push(Answer::Affected(1), 2), Step::Commit);
        assert_eq!(
            driver.push(Answer::Affected(0), 2),
            Step::Yield(InboxYield::Done(Consumed::Processed))
        );
    }

    #[test]
    fn a_duplicate_or_a_failed_handler_rolls_back() {
        let mut driver = consume(true);
        driver.start(1);
        driver.push(Answer::Affected(0), 1);
        assert_eq!(driver.push(Answer::Affected(0), 1), Step::Rollback);
        assert_eq!(
            driver.push(Answer::Affected(0), 1),
            Step::Yield(InboxYield::Done(Consumed::Duplicate))
        );
        let mut driver = consume(true);
        driver.start(1);
        driver.push(Answer::Affected(0), 1);
        driver.push(Answer::Affected(1), 1);
        assert_eq!(driver.handler_failed(), Step::Rollback);
        assert_eq!(
            driver.push(Answer::Affected(0), 1),
            Step::Yield(InboxYield::Done(Consumed::HandlerFailed))
        );
    }

    #[test]
    fn in_the_callers_transaction_mysqls_violation_is_a_duplicate() {
        let mut driver = consume(false);
        assert_eq!(run_name(&driver.start(1)), "inbox_claim");
        let violation = DbError {
            class: DbErrorClass::UniqueViolation,
            message: "Duplicate entry".into(),
        };
        assert_eq!(
            driver.push(Answer::Failed(violation), 1),
            Step::Yield(InboxYield::Done(Consumed::Duplicate))
        );
        let mut driver = consume(false);
        driver.start(1);
        driver.push(Answer::Affected(1), 1);
        driver.handled(2);
        let lost = DbError {
            class: DbErrorClass::ConnectionLost,
            message: "gone".into(),
        };
        let Step::Fail(error) = driver.push(Answer::Failed(lost), 2) else {
            panic!()
        };
        assert_eq!(error.code(), "store.unavailable");
    }
}
