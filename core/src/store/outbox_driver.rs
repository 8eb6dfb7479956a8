//! The outbox protocol as drivers: [`OutboxEnqueue`] (one message, in the
//! caller's transaction), [`OutboxRelay`] (the relay loop: claim a batch,
//! decide before each send whether the claim still covers it, mark each
//! result, give back what the claim can no longer cover, claim again until
//! nothing is due) and [`OutboxCleanup`] (sent messages deleted in batches).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::limits::{self, OUTBOX_ERROR_MAX_BYTES, storable_text};
use super::record_driver::{RETRIES, RETRY_PAUSE_MILLIS, db_error, int};
use super::renewal::batch_deleted;
use super::{Answer, DbError, DbErrorClass, DriverError, Manifest, Query, Step, StoreError};
use super::{StoreErrorKind, Value};
use crate::outbox::{
    ATTEMPTS_EXHAUSTED, AfterFailure, BatchClaim, Delivery, Enqueued, OutboxError, OutboxStatus,
    RelayPolicy, check_marked, check_message,
};

/// A step of an enqueue: its `Yield` is what the enqueue did.
pub type EnqueueStep = Step<Enqueued>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EnqueueState {
    Idle,
    Inserting,
    Loading,
    Ended,
}

/// One message enqueued on the caller's connection, inside its business
/// transaction (no query is retried: the transaction is the caller's).
///
/// Steps: `Run(outbox_enqueue)`; 1 row is [`Enqueued::New`], 0 rows
/// [`Enqueued::AlreadyEnqueued`] (PostgreSQL and SQLite: `ON CONFLICT DO
/// NOTHING`). A unique violation (MySQL's plain `INSERT`, whatever the
/// client's `CLIENT_FOUND_ROWS` flag) runs `outbox_load` for the kind and
/// business key: a message there is [`Enqueued::AlreadyEnqueued`]; none means
/// the message id is another message's: `store.query_failed` (class
/// `unique_violation`).
#[derive(Debug, Clone)]
pub struct OutboxEnqueue {
    manifest: Manifest,
    message_id: u64,
    kind: String,
    business_key: String,
    payload: Vec<u8>,
    state: EnqueueState,
    violation: Option<DbError>,
}

impl OutboxEnqueue {
    /// An enqueue of one message.
    pub fn new(
        manifest: Manifest,
        message_id: u64,
        kind: &str,
        business_key: &str,
        payload: Vec<u8>,
    ) -> Self {
        Self {
            manifest,
            message_id,
            kind: kind.into(),
            business_key: business_key.into(),
            payload,
            state: EnqueueState::Idle,
            violation: None,
        }
    }

    /// The first step, at `now_millis`: `outbox.invalid_message` (nothing is
    /// written) for a message id above 2^63 − 1 or a kind, business key or
    /// payload outside the schema's limits, else the insert.
    pub fn start(&mut self, now_millis: u64) -> EnqueueStep {
        if let Err(error) = check_message(&self.kind, &self.business_key, self.payload.len()) {
            return self.end(Step::Fail(error.into()));
        }
        if self.message_id > i64::MAX as u64 {
            let error = OutboxError::invalid_message("message_id", "must be at most 2^63 - 1");
            return self.end(Step::Fail(error.into()));
        }
        self.state = EnqueueState::Inserting;
        Step::Run(self.manifest.query("outbox_enqueue", |param| match param {
            "message_id" => Some(int(self.message_id)),
            "kind" => Some(Value::Text(self.kind.clone())),
            "business_key" => Some(Value::Text(self.business_key.clone())),
            "payload" => Some(Value::Bytes(self.payload.clone())),
            "now_millis" => Some(int(now_millis)),
            _ => None,
        }))
    }

    /// Push the answer to the last `Run`.
    pub fn push(&mut self, answer: Answer) -> EnqueueStep {
        let state = core::mem::replace(&mut self.state, EnqueueState::Ended);
        let step = match (state, answer) {
            (EnqueueState::Inserting, Answer::Affected(rows)) => match Enqueued::from_rows(rows) {
                Ok(enqueued) => Step::Yield(enqueued),
                Err(error) => Step::Fail(error.into()),
            },
            (EnqueueState::Inserting, Answer::Failed(error))
                if error.class == DbErrorClass::UniqueViolation =>
            {
                self.violation = Some(error);
                self.state = EnqueueState::Loading;
                return Step::Run(outbox_load_query(
                    self.manifest,
                    &self.kind,
                    &self.business_key,
                ));
            }
            (EnqueueState::Loading, Answer::Rows(rows)) => match (rows.first(), &self.violation) {
                (Some(_), _) => Step::Yield(Enqueued::AlreadyEnqueued),
                (None, Some(violation)) => Step::Fail(db_error(violation, false).into()),
                (None, None) => Step::Fail(unexpected("the enqueue's load")),
            },
            // The load after a violation failed (PostgreSQL aborts the caller's
            // transaction on any error): report the violation itself.
            (EnqueueState::Loading, Answer::Failed(_)) => match &self.violation {
                Some(violation) => Step::Fail(db_error(violation, false).into()),
                None => Step::Fail(unexpected("the enqueue's load")),
            },
            (_, Answer::Failed(error)) => Step::Fail(db_error(&error, false).into()),
            _ => Step::Fail(unexpected("an enqueue step")),
        };
        self.end(step)
    }

    fn end(&mut self, step: EnqueueStep) -> EnqueueStep {
        self.state = EnqueueState::Ended;
        step
    }
}

/// The query that loads the message of `kind` and `business_key`.
pub fn outbox_load_query(manifest: Manifest, kind: &str, business_key: &str) -> Query {
    manifest.query("outbox_load", |param| match param {
        "kind" => Some(Value::Text(kind.into())),
        "business_key" => Some(Value::Text(business_key.into())),
        _ => None,
    })
}

/// An outbox message as stored (a row of `outbox_load`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Its id.
    pub message_id: u64,
    /// Its kind.
    pub kind: String,
    /// Its business key.
    pub business_key: String,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Pending, sent or dead.
    pub status: OutboxStatus,
    /// The sends started so far (a relay that died while sending counts).
    pub attempts: u64,
    /// When it is next due (while claimed: when the claim ends), Unix ms.
    pub next_attempt_millis: u64,
    /// The last failed send's error text (at most 1024 bytes), if any.
    pub last_error: Option<String>,
    /// When it was enqueued, Unix ms.
    pub created_millis: u64,
    /// When it was last written, Unix ms.
    pub updated_millis: u64,
}

/// Reads the answer to [`outbox_load_query`]: the message, or `None`.
pub fn read_outbox_load(answer: &Answer) -> Result<Option<StoredMessage>, DriverError> {
    let row = match answer {
        Answer::Rows(rows) => match rows.first() {
            None => return Ok(None),
            Some(row) => row,
        },
        Answer::Failed(error) => return Err(db_error(error, false).into()),
        Answer::Affected(_) => return Err(unexpected("outbox_load")),
    };
    let bad = || unexpected("an outbox_load row");
    let status = OutboxStatus::parse(row.get(4).and_then(Value::as_text).ok_or_else(bad)?)?;
    let last_error = match row.get(8) {
        Some(Value::Null) => None,
        Some(value) => Some(String::from(value.as_text().ok_or_else(bad)?)),
        None => return Err(bad()),
    };
    Ok(Some(StoredMessage {
        message_id: uint(row, 0).ok_or_else(bad)?,
        kind: row.get(1).and_then(Value::as_text).ok_or_else(bad)?.into(),
        business_key: row.get(2).and_then(Value::as_text).ok_or_else(bad)?.into(),
        payload: row
            .get(3)
            .and_then(Value::as_bytes)
            .ok_or_else(bad)?
            .to_vec(),
        status,
        attempts: uint(row, 5).ok_or_else(bad)?,
        next_attempt_millis: uint(row, 6).ok_or_else(bad)?,
        last_error,
        created_millis: uint(row, 9).ok_or_else(bad)?,
        updated_millis: uint(row, 10).ok_or_else(bad)?,
    }))
}

/// A message of a claimed batch, handed to the host to send.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// When it was enqueued, Unix ms.
    pub created_millis: u64,
}

/// What one relay run did, message by message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RelayReport {
    /// Messages sent and marked sent.
    pub sent: u64,
    /// Messages whose send failed, due again after the policy's backoff.
    pub retried: u64,
    /// Messages whose send failed for the last time: marked dead.
    pub dead: u64,
    /// Messages whose attempts had run out before this claim (relays died
    /// while sending them): marked dead without sending.
    pub given_up: u64,
    /// Messages whose mark found another relay's claim (`outbox.claim_lost`):
    /// this relay's claim had ended and the message was claimed again; the
    /// other relay owns it now. Counted, and the run goes on.
    pub claim_lost: u64,
    /// Messages given back unsent because this relay's claim would end before
    /// their send could (`outbox_release`): claimed again at once.
    pub released: u64,
    /// Messages whose mark failed for good (a database error that is not a
    /// broken connection nor a conflict, e.g. a constraint): the message
    /// stays claimed until its claim ends and is then sent again; the other
    /// messages are not touched, and the run goes on.
    pub mark_failed: u64,
}

/// What an [`OutboxRelay`] hands its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayYield {
    /// Send this message now, then push [`OutboxRelay::sent`] or
    /// [`OutboxRelay::failed`].
    Send(ClaimedMessage),
    /// Nothing is due any more: the run's report.
    Done(RelayReport),
}

/// A step of a relay run.
pub type RelayStep = Step<RelayYield>;

/// Which mark a relay is writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Sent,
    Retried,
    Dead,
    GivenUp,
}

/// The message a mark is for, and what its row holds once the mark landed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OwnMark {
    message_id: u64,
    kind: String,
    business_key: String,
    status: OutboxStatus,
    /// The claim token the row keeps (a retry mark clears it to 0).
    claim_token: u64,
    /// The due time a retry mark writes.
    next_attempt_millis: Option<u64>,
}

impl OwnMark {
    /// Whether `row` (an `outbox_load` row) holds what this mark writes.
    fn found_in(&self, row: &[Value]) -> bool {
        let loaded = read_outbox_load(&Answer::Rows(alloc::vec![row.to_vec()]));
        let Ok(Some(message)) = loaded else {
            return false;
        };
        message.message_id == self.message_id
            && message.status == self.status
            && uint(row, 7) == Some(self.claim_token)
            && self
                .next_attempt_millis
                .is_none_or(|due| due == message.next_attempt_millis)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RelayState {
    Idle,
    Claiming,
    Reading,
    Sending {
        message: Box<ClaimedMessage>,
    },
    Marking {
        query: Query,
        mark: Mark,
        own: Box<OwnMark>,
    },
    /// A retried mark changed no row: the message's load tells the state its
    /// own earlier try wrote (its reply was lost) from a lost claim.
    CheckingMark {
        mark: Mark,
        own: Box<OwnMark>,
    },
    Releasing {
        query: Query,
    },
    Pausing {
        query: Query,
        then: Box<RelayState>,
    },
    Ended,
}

/// One relay run under a [`RelayPolicy`], as a sans-I/O state machine.
///
/// Steps: `Run(outbox_claim)` with a fresh claim (`RelayPolicy::claim`), then
/// `Run(outbox_claimed)`; for each message, oldest first, the **send
/// decision**: while the claim is expected to outlast the send (see below)
/// the driver yields `Send(message)` (or, for a message whose attempts ran
/// out before this claim, runs `outbox_mark_dead` with
/// [`ATTEMPTS_EXHAUSTED`] unsent); the host sends it and pushes
/// [`sent`](Self::sent) or [`failed`](Self::failed) with the error text; the
/// driver marks it (`outbox_mark_sent`, `outbox_mark_retry` after the
/// policy's backoff, or `outbox_mark_dead` after the last attempt), the
/// error text cut to [`OUTBOX_ERROR_MAX_BYTES`]. A mark that finds another
/// claim is counted as `claim_lost` and the run goes on. When the claim would
/// not cover the next send, the rest of the batch is given back
/// (`outbox_release`, the attempt taken back) and claimed again. The run ends
/// with `Yield(Done(report))` once a claim takes nothing.
///
/// The send decision at `now`: the first send of a claim is started while
/// `now < claimed_until`; a later one only while `now + longest <
/// claimed_until`, where `longest` is the longest send this run has measured
/// (from its `Send` to its push). A claim that ends before its first
/// message is decided (shorter than a round trip) is given back and the run
/// ends rather than claim again. A serialization failure or a lost
/// connection is retried [`RETRIES`] times after pauses of
/// [`RETRY_PAUSE_MILLIS`] doubling; then, or on any other database error, the
/// run fails (`store.*`) and what it still holds comes back when its claim
/// ends.
#[derive(Debug, Clone)]
pub struct OutboxRelay {
    manifest: Manifest,
    policy: RelayPolicy,
    random: u64,
    state: RelayState,
    claim: Option<BatchClaim>,
    /// The batch's messages not yet decided, the next one last.
    batch: Vec<ClaimedMessage>,
    started_millis: u64,
    longest_millis: u64,
    sends_in_claim: u64,
    /// Messages of the current claim sent or given up.
    decided_in_claim: u64,
    retries: u32,
    /// Whether the current mark was retried (its first try's reply was lost).
    mark_retried: bool,
    report: RelayReport,
}

impl OutboxRelay {
    /// A relay run over `manifest`'s statements under `policy`; `seed` (a
    /// random `u64` from the host) gives every claim token and backoff jitter
    /// of the run.
    pub fn new(manifest: Manifest, policy: RelayPolicy, seed: u64) -> Self {
        Self {
            manifest,
            policy,
            random: seed,
            state: RelayState::Idle,
            claim: None,
            batch: Vec::new(),
            started_millis: 0,
            longest_millis: 0,
            sends_in_claim: 0,
            decided_in_claim: 0,
            retries: 0,
            mark_retried: false,
            report: RelayReport::default(),
        }
    }

    /// The report so far.
    pub const fn report(&self) -> RelayReport {
        self.report
    }

    /// The first step, at `now_millis`: the first claim.
    pub fn start(&mut self, now_millis: u64) -> RelayStep {
        match self.state {
            RelayState::Idle => self.claim(now_millis),
            _ => self.misuse("start"),
        }
    }

    /// Push the answer to the last `Run`, at `now_millis`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> RelayStep {
        let state = core::mem::replace(&mut self.state, RelayState::Ended);
        if let Answer::Failed(error) = &answer {
            return self.db_failed(state, error, now_millis);
        }
        self.retries = 0;
        match (state, answer) {
            (RelayState::Claiming, Answer::Affected(_)) => {
                let token = self.claim.map_or(0, |claim| claim.claim_token);
                self.state = RelayState::Reading;
                Step::Run(self.manifest.query("outbox_claimed", |param| match param {
                    "claim_token" => Some(int(token)),
                    _ => None,
                }))
            }
            (RelayState::Reading, Answer::Rows(rows)) => {
                let mut batch = Vec::with_capacity(rows.len());
                for row in rows.iter().rev() {
                    match read_claimed(row) {
                        Some(message) => batch.push(message),
                        None => return self.fail(unexpected("an outbox_claimed row")),
                    }
                }
                if batch.is_empty() {
                    return self.end(Step::Yield(RelayYield::Done(self.report)));
                }
                self.batch = batch;
                self.sends_in_claim = 0;
                self.decided_in_claim = 0;
                self.next(now_millis)
            }
            (RelayState::Marking { mark, own, .. }, Answer::Affected(rows)) => {
                let token = self.claim.map_or(0, |claim| claim.claim_token);
                match check_marked(rows, own.message_id, token) {
                    Ok(()) => self.count(mark),
                    // A retried mark that changed nothing: its first try may have
                    // landed. Load the message to tell.
                    Err(_) if rows == 0 && self.mark_retried => {
                        let query = outbox_load_query(self.manifest, &own.kind, &own.business_key);
                        self.state = RelayState::CheckingMark { mark, own };
                        return Step::Run(query);
                    }
                    // outbox.claim_lost: counted, and the run goes on.
                    Err(_) if rows == 0 => self.report.claim_lost += 1,
                    Err(error) => return self.fail(error.into()),
                }
                self.next(now_millis)
            }
            (RelayState::CheckingMark { mark, own }, Answer::Rows(rows)) => {
                if rows.first().is_some_and(|row| own.found_in(row)) {
                    self.count(mark);
                } else {
                    self.report.claim_lost += 1;
                }
                self.next(now_millis)
            }
            (RelayState::Releasing { .. }, Answer::Affected(rows)) => {
                self.report.released = self.report.released.saturating_add(rows);
                self.batch.clear();
                if self.decided_in_claim == 0 {
                    // The claim ended before its first message was decided (a claim
                    // shorter than a round trip): claiming again would only repeat it.
                    return self.end(Step::Yield(RelayYield::Done(self.report)));
                }
                self.claim(now_millis)
            }
            _ => self.fail(unexpected("a relay step")),
        }
    }

    /// Continue after a `Pause`.
    pub fn resume(&mut self) -> RelayStep {
        match core::mem::replace(&mut self.state, RelayState::Ended) {
            RelayState::Pausing { query, then } => {
                self.state = *then;
                Step::Run(query)
            }
            _ => self.misuse("resume"),
        }
    }

    /// The message of the last `Send` was sent, at `now_millis`.
    pub fn sent(&mut self, now_millis: u64) -> RelayStep {
        let Some(message) = self.sending(now_millis) else {
            return self.misuse("sent");
        };
        self.mark(&message, Mark::Sent, None, now_millis, |_| None)
    }

    /// The send of the last `Send` failed with `error` (its text is stored,
    /// cut to [`OUTBOX_ERROR_MAX_BYTES`] bytes), at `now_millis`.
    pub fn failed(&mut self, error: &str, now_millis: u64) -> RelayStep {
        let Some(message) = self.sending(now_millis) else {
            return self.misuse("failed");
        };
        let attempts = message.attempts;
        let draw = self.draw();
        let last_error = Value::Text(storable_text(error, OUTBOX_ERROR_MAX_BYTES));
        match self.policy.after_failure(attempts, now_millis, draw) {
            Ok(AfterFailure::Retry {
                next_attempt_millis,
            }) => self.mark(
                &message,
                Mark::Retried,
                Some(next_attempt_millis),
                now_millis,
                |param| match param {
                    "next_attempt_millis" => Some(int(next_attempt_millis)),
                    "last_error" => Some(last_error.clone()),
                    _ => None,
                },
            ),
            Ok(AfterFailure::Dead) => {
                self.mark(
                    &message,
                    Mark::Dead,
                    None,
                    now_millis,
                    |param| match param {
                        "last_error" => Some(last_error.clone()),
                        _ => None,
                    },
                )
            }
            Err(error) => self.fail(error.into()),
        }
    }

    /// The message being sent, with the send's duration measured.
    fn sending(&mut self, now_millis: u64) -> Option<Box<ClaimedMessage>> {
        let RelayState::Sending { message } =
            core::mem::replace(&mut self.state, RelayState::Ended)
        else {
            return None;
        };
        let took = now_millis.saturating_sub(self.started_millis);
        self.longest_millis = self.longest_millis.max(took);
        Some(message)
    }

    fn count(&mut self, mark: Mark) {
        let count = match mark {
            Mark::Sent => &mut self.report.sent,
            Mark::Retried => &mut self.report.retried,
            Mark::Dead => &mut self.report.dead,
            Mark::GivenUp => &mut self.report.given_up,
        };
        *count += 1;
    }

    /// splitmix64: the run's next random number.
    fn draw(&mut self) -> u64 {
        self.random = self.random.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.random;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn claim(&mut self, now_millis: u64) -> RelayStep {
        let draw = self.draw();
        let claim = match self.policy.claim(now_millis, draw) {
            Ok(claim) => claim,
            Err(error) => return self.fail(error.into()),
        };
        self.claim = Some(claim);
        self.state = RelayState::Claiming;
        Step::Run(self.manifest.query("outbox_claim", |param| match param {
            "claim_token" => Some(int(claim.claim_token)),
            "claimed_until_millis" => Some(int(claim.claimed_until_millis)),
            "now_millis" => Some(int(claim.now_millis)),
            "batch_size" => Some(int(claim.batch_size)),
            _ => None,
        }))
    }

    /// The send decision for the batch's next message.
    fn next(&mut self, now_millis: u64) -> RelayStep {
        let Some(claim) = self.claim else {
            return self.fail(unexpected("a relay without a claim"));
        };
        let Some(message) = self.batch.pop() else {
            return self.claim(now_millis);
        };
        let margin = if self.sends_in_claim == 0 {
            0
        } else {
            self.longest_millis
        };
        if !claim.is_live(now_millis.saturating_add(margin)) {
            let query = self.manifest.query("outbox_release", |param| match param {
                "claim_token" => Some(int(claim.claim_token)),
                "now_millis" => Some(int(now_millis)),
                _ => None,
            });
            self.state = RelayState::Releasing {
                query: query.clone(),
            };
            return Step::Run(query);
        }
        self.decided_in_claim += 1;
        match self.policy.delivery(message.attempts) {
            Delivery::GiveUp => {
                let last_error = Value::Text(ATTEMPTS_EXHAUSTED.into());
                self.mark(
                    &message,
                    Mark::GivenUp,
                    None,
                    now_millis,
                    |param| match param {
                        "last_error" => Some(last_error.clone()),
                        _ => None,
                    },
                )
            }
            Delivery::Send => {
                self.sends_in_claim += 1;
                self.started_millis = now_millis;
                // What its mark needs: the message without its payload.
                let marked = ClaimedMessage {
                    message_id: message.message_id,
                    kind: message.kind.clone(),
                    business_key: message.business_key.clone(),
                    payload: Vec::new(),
                    attempts: message.attempts,
                    created_millis: message.created_millis,
                };
                self.state = RelayState::Sending {
                    message: Box::new(marked),
                };
                Step::Yield(RelayYield::Send(message))
            }
        }
    }

    fn mark(
        &mut self,
        message: &ClaimedMessage,
        mark: Mark,
        next_attempt_millis: Option<u64>,
        now_millis: u64,
        value: impl Fn(&str) -> Option<Value>,
    ) -> RelayStep {
        let message_id = message.message_id;
        let name = match mark {
            Mark::Sent => "outbox_mark_sent",
            Mark::Retried => "outbox_mark_retry",
            Mark::Dead | Mark::GivenUp => "outbox_mark_dead",
        };
        let token = self.claim.map_or(0, |claim| claim.claim_token);
        let query = self.manifest.query(name, |param| match param {
            "message_id" => Some(int(message_id)),
            "claim_token" => Some(int(token)),
            "now_millis" => Some(int(now_millis)),
            other => value(other),
        });
        let own = OwnMark {
            message_id,
            kind: message.kind.clone(),
            business_key: message.business_key.clone(),
            status: match mark {
                Mark::Sent => OutboxStatus::Sent,
                Mark::Retried => OutboxStatus::Pending,
                Mark::Dead | Mark::GivenUp => OutboxStatus::Dead,
            },
            claim_token: if mark == Mark::Retried { 0 } else { token },
            next_attempt_millis,
        };
        self.mark_retried = false;
        self.state = RelayState::Marking {
            query: query.clone(),
            mark,
            own: Box::new(own),
        };
        Step::Run(query)
    }

    fn db_failed(&mut self, state: RelayState, error: &DbError, now_millis: u64) -> RelayStep {
        let retryable = matches!(
            error.class,
            DbErrorClass::Serialization | DbErrorClass::ConnectionLost
        );
        let again = match &state {
            RelayState::Claiming | RelayState::Reading => self.claim.map(|claim| {
                // A claim whose answer was lost may have been written: read what
                // the token holds (a claim is idempotent per token only through
                // its read, so read again rather than claim twice).
                let query = self.manifest.query("outbox_claimed", |param| match param {
                    "claim_token" => Some(int(claim.claim_token)),
                    _ => None,
                });
                (query, RelayState::Reading)
            }),
            RelayState::Marking { query, .. } | RelayState::Releasing { query } => {
                Some((query.clone(), state.clone()))
            }
            RelayState::CheckingMark { own, .. } => Some((
                outbox_load_query(self.manifest, &own.kind, &own.business_key),
                state.clone(),
            )),
            _ => None,
        };
        let marking = matches!(
            state,
            RelayState::Marking { .. } | RelayState::CheckingMark { .. }
        );
        if marking && !retryable {
            // One message's failed mark (a text or a row the database refuses)
            // never stops the run nor touches the other messages: it stays
            // claimed until its claim ends, then is sent again.
            self.report.mark_failed += 1;
            return self.next(now_millis);
        }
        if matches!(state, RelayState::Marking { .. }) {
            self.mark_retried = true;
        }
        match again {
            Some((query, then)) if retryable && self.retries < RETRIES => {
                let millis = RETRY_PAUSE_MILLIS << self.retries;
                self.retries += 1;
                self.state = RelayState::Pausing {
                    query,
                    then: Box::new(then),
                };
                Step::Pause { millis }
            }
            _ => self.fail(db_error(error, false).into()),
        }
    }

    fn fail(&mut self, error: DriverError) -> RelayStep {
        self.end(Step::Fail(error))
    }

    fn end(&mut self, step: RelayStep) -> RelayStep {
        self.state = RelayState::Ended;
        step
    }

    fn misuse(&mut self, call: &str) -> RelayStep {
        self.fail(
            StoreError::new(
                StoreErrorKind::QueryFailed,
                alloc::format!("{call} does not fit the relay's state (a host bug)"),
            )
            .into(),
        )
    }
}

/// Deletes sent messages last updated at or before a time, in batches until
/// one comes back short. Dead messages are kept.
#[derive(Debug, Clone)]
pub struct OutboxCleanup {
    query: Query,
    batch_size: u64,
    deleted: u64,
}

impl OutboxCleanup {
    /// A cleanup of the messages sent at or before `sent_before_millis`,
    /// `batch_size` (at least 1) per statement.
    pub fn new(manifest: Manifest, sent_before_millis: u64, batch_size: u64) -> Self {
        let batch_size = limits::batch_size(batch_size);
        Self {
            query: manifest.query("outbox_cleanup", |param| match param {
                "sent_before_millis" => Some(int(sent_before_millis)),
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
        batch_deleted(&mut self.deleted, self.batch_size, answer, "outbox_cleanup")
            .unwrap_or_else(|| Step::Run(self.query.clone()))
    }
}

fn uint(row: &[Value], at: usize) -> Option<u64> {
    row.get(at)
        .and_then(Value::as_int)
        .and_then(|v| u64::try_from(v).ok())
}

/// Reads an `outbox_claimed` row: `message_id, kind, business_key, payload,
/// attempts, created_millis`.
fn read_claimed(row: &[Value]) -> Option<ClaimedMessage> {
    Some(ClaimedMessage {
        message_id: uint(row, 0)?,
        kind: row.get(1)?.as_text()?.into(),
        business_key: row.get(2)?.as_text()?.into(),
        payload: row.get(3)?.as_bytes()?.to_vec(),
        attempts: uint(row, 4)?,
        created_millis: uint(row, 5)?,
    })
}

fn unexpected(what: &str) -> DriverError {
    StoreError::new(
        StoreErrorKind::UnexpectedRow,
        alloc::format!("the answer to {what} is not what the query returns"),
    )
    .into()
}
