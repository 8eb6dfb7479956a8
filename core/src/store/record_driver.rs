//! The idempotency record protocol as a driver: claim (insert, or load,
//! decide and reclaim), wait for a duplicate in flight, hand the operation
//! to the host, then complete, fail or release, with every limit checked
//! before the write.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::fast_path::{FastAnswer, FastPath, FastVerdict};
use super::limits::{self, RECORD_ERROR_MAX_BYTES, RESPONSE_BODY_MAX_BYTES};
use super::record_fast::{Fast, FastReport, Written};
use super::renewal::RecordRenewal;
use super::{
    Answer, DbError, DbErrorClass, DriverError, Manifest, Query, ResultKind, Step, StoreError,
    StoreErrorKind, Value,
};
use crate::fingerprint::Fingerprint;
use crate::key::IdempotencyKey;
use crate::record::{
    Claim, Decision, Failure, Fence, Incoming, Outcome, Record, RecordError, RecordPolicy, Status,
    decide,
};

/// How many claim rounds (insert or reclaim lost, load, decide) a driver
/// takes before it reports `store.stale_snapshot`: a round is lost only to
/// a concurrent claim, so endless losses mean the transaction cannot see
/// the row in its way.
pub const MAX_CLAIM_ROUNDS: u32 = 100;
/// How many times a query that hit a serialization failure, a deadlock or a
/// lost connection is run again (outside a caller's transaction, on a new
/// connection of the host's pool) before `store.conflict` or
/// `store.unavailable`.
pub const RETRIES: u32 = 3;
/// The pause before the first such retry, in milliseconds; doubled for each
/// further retry (5, 10, 20).
pub const RETRY_PAUSE_MILLIS: u64 = 5;
/// The longest pause between two tries of a completion (the write that
/// records an operation's outcome), in milliseconds: its pauses double from
/// [`RETRY_PAUSE_MILLIS`] up to this (`docs/spec.md`, "Completion keeps
/// trying").
pub const COMPLETION_PAUSE_MAX_MILLIS: u64 = 1_000;

/// Which of the three ways a request comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Way {
    /// The store runs the operation: claim, run, complete or fail, with the
    /// record's lease renewed while the operation runs.
    RunOnce,
    /// Inside the caller's transaction: the claim, the operation's writes and
    /// the completion commit or roll back together; a failed operation
    /// leaves its failure to the rollback (nothing is written), and no query
    /// is retried (the transaction is the caller's).
    SameTransaction,
    /// Lease and fence: the host holds the claim ([`Held`]) and completes or
    /// fails it later, renewing it as it goes.
    Lease,
}

impl Way {
    /// The stable name a metric's or span's `way` attribute carries
    /// (`docs/spec.md`, "Metrics and traces"): `run_once`,
    /// `same_transaction` or `lease`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Way::RunOnce => "run_once",
            Way::SameTransaction => "same_transaction",
            Way::Lease => "lease",
        }
    }
}

/// A response as stored and replayed, byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoredResponse {
    /// Its content type (at most 255 bytes of printable ASCII).
    pub content_type: String,
    /// Its bytes (at most 1 MiB).
    pub body: Vec<u8>,
}

/// What the operation came to, as the host pushes it with
/// [`RecordDriver::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationOutcome {
    /// It returned this response.
    Succeeded(StoredResponse),
    /// It failed: a final failure is stored and replayed (when the policy
    /// stores errors), a retryable one releases the key.
    Failed {
        /// The error text (cut to 1024 bytes with a marker when longer).
        message: String,
        /// Whether it is worth retrying.
        retryable: bool,
        /// An optional error response to replay with it.
        response: Option<StoredResponse>,
    },
    /// It raised an error that is not an operation failure the host knows
    /// (any other exception): retryable, so the claim is released and the
    /// next request runs (the same in every host).
    Raised {
        /// The error's text (cut to 1024 bytes with a marker when longer).
        message: String,
    },
    /// It returned something that is not a response (the host names its
    /// type); the claim is released and the host gets `store.not_a_response`.
    NotAResponse {
        /// What it returned, e.g. `dict`.
        type_name: String,
    },
}

impl OperationOutcome {
    /// A raised failure of the type `type_name` with `message` (bytes that
    /// may not be UTF-8), its text composed by the core
    /// ([`limits::raised_text`]).
    pub fn raised(type_name: &[u8], message: &[u8]) -> Self {
        OperationOutcome::Raised {
            message: limits::raised_text(type_name, message),
        }
    }
}

/// A claim this driver holds: what the host needs to run (and renew) it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Held {
    /// The claim's fencing token.
    pub token: u64,
    /// The record's creation time (with the token, the claim's fence).
    pub created_millis: u64,
    /// When the claim's lease ends, in Unix milliseconds.
    pub lease_deadline_millis: u64,
    /// How often to renew the lease while the operation runs
    /// ([`RecordRenewal`](super::RecordRenewal)); `None` inside a caller's
    /// transaction, where the uncommitted record cannot be renewed from
    /// another connection.
    pub renew_every_millis: Option<u64>,
}

impl Held {
    /// The claim's fence.
    pub const fn fence(&self) -> Fence {
        Fence {
            token: self.token,
            created_millis: self.created_millis,
        }
    }
}

/// How a record protocol ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finished {
    /// The operation ran and its response is stored: answer with it.
    Executed,
    /// The operation ran and failed: re-raise its own error. `stored` says
    /// whether its failure was written (a final failure replayed to
    /// duplicates) or the key was released (or, inside a caller's
    /// transaction, nothing was written: the rollback undoes the claim).
    OperationFailed {
        /// Whether a final failure was stored.
        stored: bool,
    },
    /// The operation ran and failed, and recording its failure failed too
    /// (run once only): re-raise the operation's own error, the one the
    /// caller's code can act on, with `store_error` attached where the
    /// host's language keeps a second error, and logged. The record stays
    /// as the failed write left it: pending until its lease passes (or
    /// taken over, when `store_error` is `record.stale_token` or
    /// `record.not_pending`).
    OperationFailedUnrecorded {
        /// Why the failure was not recorded (`store.unavailable`,
        /// `store.conflict`, `store.query_failed`, `record.stale_token`,
        /// `record.not_pending`).
        store_error: DriverError,
    },
    /// Not run: the stored result.
    Replay {
        /// Which result was stored.
        outcome: Outcome,
        /// The stored response (for a success, always; for a failure, its
        /// optional error response).
        response: Option<StoredResponse>,
        /// For a failure, the stored error text.
        error: Option<String>,
    },
    /// Not run: another request holds the key.
    InProgress {
        /// The suggested delay before a retry, in milliseconds.
        retry_after_millis: u64,
    },
    /// Not run: the key was first used with a different payload.
    FingerprintMismatch,
    /// Not run: the key is older than retention.
    KeyTooOld,
}

impl Finished {
    /// The stable decision name: `execute`, `replay`, `in_progress`,
    /// `fingerprint_mismatch` or `key_too_old`.
    pub const fn decision(&self) -> &'static str {
        match self {
            Finished::Executed
            | Finished::OperationFailed { .. }
            | Finished::OperationFailedUnrecorded { .. } => "execute",
            Finished::Replay { .. } => "replay",
            Finished::InProgress { .. } => "in_progress",
            Finished::FingerprintMismatch => "fingerprint_mismatch",
            Finished::KeyTooOld => "key_too_old",
        }
    }

    /// The problem to answer with, for a refusal.
    pub const fn problem(&self) -> Option<crate::record::Problem> {
        use crate::record::Problem;
        match self {
            Finished::InProgress { .. } => Some(Problem::InProgress),
            Finished::FingerprintMismatch => Some(Problem::FingerprintMismatch),
            Finished::KeyTooOld => Some(Problem::KeyTooOld),
            _ => None,
        }
    }
}

/// What a [`RecordDriver`] hands its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordYield {
    /// The claim is written: run the operation now (renewing the lease every
    /// [`Held::renew_every_millis`]), then push its outcome with
    /// [`RecordDriver::finish`]. In the lease-and-fence way, hold it and
    /// finish later.
    Execute(Held),
    /// The protocol ended.
    Done(Finished),
    /// The fast path: run this script on Redis (`EVALSHA`, or `EVAL` when
    /// the call says so) and push what Redis said with
    /// [`RecordDriver::push_redis`]. Only a driver made
    /// [`with_fast_path`](RecordDriver::with_fast_path) yields it.
    Redis(super::RedisCall),
}

/// A step of the record protocol.
pub type RecordStep = Step<RecordYield>;

/// A record as stored, with what it replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// The core's record.
    pub record: Record,
    /// The stored response, if any.
    pub response: Option<StoredResponse>,
    /// The stored error text, if any.
    pub error: Option<String>,
}

/// Reads a row of the `load` query (columns `status, fingerprint,
/// fencing_token, lease_deadline_millis, created_millis, updated_millis,
/// expires_millis, response_body, response_content_type, error`).
pub fn read_record(row: &[Value]) -> Result<StoredRecord, DriverError> {
    let bad = |column: &str| {
        DriverError::Store(StoreError::new(
            StoreErrorKind::UnexpectedRow,
            alloc::format!("the load row's column {column} is missing or of the wrong type"),
        ))
    };
    let int = |at: usize, column: &str| {
        row.get(at)
            .and_then(Value::as_int)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or_else(|| bad(column))
    };
    let status_text = row
        .first()
        .and_then(Value::as_text)
        .ok_or_else(|| bad("status"))?;
    let status = Status::parse(status_text)?;
    let digest: [u8; 32] = row
        .get(1)
        .and_then(Value::as_bytes)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| bad("fingerprint"))?;
    let record = Record {
        status,
        fingerprint: Fingerprint::from_digest(digest),
        token: int(2, "fencing_token")?,
        lease_deadline_millis: int(3, "lease_deadline_millis")?,
        created_millis: int(4, "created_millis")?,
        expires_millis: int(6, "expires_millis")?,
    };
    let response = match row.get(7) {
        None => return Err(bad("response_body")),
        Some(Value::Null) => None,
        Some(body) => Some(StoredResponse {
            body: body
                .as_bytes()
                .ok_or_else(|| bad("response_body"))?
                .to_vec(),
            content_type: match row.get(8) {
                Some(Value::Null) | None => String::new(),
                Some(value) => value
                    .as_text()
                    .ok_or_else(|| bad("response_content_type"))?
                    .into(),
            },
        }),
    };
    let error = match row.get(9) {
        None => return Err(bad("error")),
        Some(Value::Null) => None,
        Some(value) => Some(String::from(value.as_text().ok_or_else(|| bad("error"))?)),
    };
    Ok(StoredRecord {
        record,
        response,
        error,
    })
}

/// The query that loads `key`'s record (for a host's `load`).
pub fn load_query(manifest: Manifest, key: &IdempotencyKey) -> Query {
    KeyParams::new(manifest, key).load()
}

/// Reads the answer to [`load_query`]: the record, or `None` when the key
/// has none. A failed answer is the store error it means.
pub fn read_load(answer: &Answer) -> Result<Option<StoredRecord>, DriverError> {
    match answer {
        Answer::Rows(rows) => rows.first().map(|row| read_record(row)).transpose(),
        Answer::Failed(error) => Err(DriverError::Store(db_error(error, false))),
        Answer::Affected(_) => Err(unexpected_answer("load")),
    }
}

/// The typed error a database error means outside any driver (a host's
/// migrations or transaction control): `store.unavailable`,
/// `store.conflict`, `store.schema_missing` or `store.query_failed`, the driver's message kept for
/// the log.
pub fn database_failure(error: &DbError) -> DriverError {
    DriverError::Store(db_error(error, false))
}

/// The store error a database error means (after the operation ran, or not).
pub(crate) fn db_error(error: &DbError, ran: bool) -> StoreError {
    let store = match error.class {
        DbErrorClass::ConnectionLost => StoreError::new(
            StoreErrorKind::Unavailable,
            if ran {
                "the database became unavailable after the operation ran: its record stays \
                 pending until its lease passes"
            } else {
                "the database is unavailable: nothing was run"
            },
        ),
        DbErrorClass::Serialization => StoreError::new(
            StoreErrorKind::Conflict,
            "the database kept reporting serialization failures or deadlocks",
        ),
        DbErrorClass::SchemaMissing => StoreError::new(
            StoreErrorKind::SchemaMissing,
            "a mintid table does not exist: the store's schema was not migrated",
        ),
        DbErrorClass::UniqueViolation | DbErrorClass::Constraint | DbErrorClass::Other => {
            StoreError::new(
                StoreErrorKind::QueryFailed,
                alloc::format!("a store query failed ({})", error.class.as_str()),
            )
        }
    };
    store.with_db(error.class, &error.message)
}

pub(crate) fn int(value: u64) -> Value {
    // Times and tokens are bounded far below 2^63 by the core's checks; a
    // value above saturates and is refused by the schema's BIGINT.
    Value::Int(i64::try_from(value).unwrap_or(i64::MAX))
}

fn text(value: &str) -> Value {
    Value::Text(String::from(value))
}

fn optional_bytes(response: Option<&StoredResponse>) -> (Value, Value) {
    match response {
        None => (Value::Null, Value::Null),
        Some(response) => (
            Value::Bytes(response.body.clone()),
            Value::Text(response.content_type.clone()),
        ),
    }
}

/// The key parts and the statement manifest every record query binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyParams {
    pub(crate) manifest: Manifest,
    scope: String,
    kind: String,
    key_id: String,
}

impl KeyParams {
    pub(crate) fn new(manifest: Manifest, key: &IdempotencyKey) -> Self {
        Self {
            manifest,
            scope: key.scope().into(),
            kind: key.kind().into(),
            key_id: key.id().into(),
        }
    }

    pub(crate) fn query(&self, name: &'static str, value: impl Fn(&str) -> Option<Value>) -> Query {
        self.manifest.query(name, |param| match param {
            "scope" => Some(text(&self.scope)),
            "kind" => Some(text(&self.kind)),
            "key_id" => Some(text(&self.key_id)),
            other => value(other),
        })
    }

    pub(crate) fn fenced(
        &self,
        name: &'static str,
        fence: Fence,
        now: u64,
        value: impl Fn(&str) -> Option<Value>,
    ) -> Query {
        self.query(name, |param| match param {
            "fencing_token" => Some(int(fence.token)),
            "created_millis" => Some(int(fence.created_millis)),
            "now_millis" => Some(int(now)),
            other => value(other),
        })
    }

    pub(crate) fn load(&self) -> Query {
        self.query("load", |_| None)
    }
}

/// Which write ends a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Write {
    Complete,
    Fail,
    Release,
}

impl Write {
    const fn query(self) -> &'static str {
        match self {
            Write::Complete => "complete",
            Write::Fail => "fail",
            Write::Release => "release",
        }
    }
}

/// What follows a write that changed its row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Then {
    Finish(Finished),
    Fail(StoreError),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Start,
    Claiming(Claim),
    Reclaiming(Claim),
    Loading,
    Pausing {
        millis: u64,
    },
    Holding(Claim),
    Writing {
        claim: Claim,
        query: Query,
        then: Then,
    },
    /// A completing write changed no row: its load tells a lost claim from
    /// the state this claim's own earlier try wrote (`wrote`).
    CheckingStale {
        claim: Claim,
        then: Then,
        wrote: Status,
    },
    /// Renewing the claim's lease between two tries of its completion; the
    /// pause and the write (`query`, read in `then`) follow whatever the
    /// renewal found.
    Renewing {
        renewal: Box<RecordRenewal>,
        pause: u64,
        query: Query,
        then: Box<State>,
    },
    Retrying {
        query: Query,
        then: Box<State>,
    },
    /// Waiting for the answer to the fast path's `check`.
    Checking,
    /// Waiting for the answer to a write to Redis; then `step` goes to the
    /// host and the driver goes on in `after`.
    Telling {
        step: Box<RecordStep>,
        after: Box<State>,
    },
    Ended,
}

/// The record protocol of one request, as a sans-I/O state machine.
///
/// ```
/// use mintid::store::{Answer, Dialect, Manifest, Placeholder, RecordDriver, RecordYield, Step, Way};
/// use mintid::record::{Incoming, RecordPolicy};
/// use mintid::{Fingerprint, IdempotencyKey};
///
/// let key = IdempotencyKey::new("order.create", "tenant-1", "o-1")?;
/// let manifest = Manifest::new(Dialect::Sqlite, Placeholder::Question);
/// let policy = RecordPolicy::new(30_000, 86_400_000)?;
/// let incoming = Incoming::new(Fingerprint::from_digest([7; 32]));
/// let mut driver = RecordDriver::new(manifest, policy, Way::RunOnce, &key, incoming);
/// let Step::Run(claim) = driver.start(1_000) else { panic!() };
/// assert_eq!(claim.name, "claim");
/// // SQLite's claim returns one row when it inserted the record.
/// let step = driver.push(Answer::Rows(vec![vec![mintid::store::Value::Int(1)]]), 1_001);
/// assert!(matches!(step, Step::Yield(RecordYield::Execute(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct RecordDriver {
    params: KeyParams,
    policy: RecordPolicy,
    way: Way,
    incoming: Incoming,
    state: State,
    stored: Option<StoredRecord>,
    rounds: u32,
    retries: u32,
    ran: bool,
    /// In the lease-and-fence way, the claim a finish leaves held: its holder
    /// may finish again (after a failure that passes; a second write is
    /// refused by the fence, `record.not_pending` or `record.stale_token`).
    retained: Option<Claim>,
    /// The Redis fast path in front of the database, if any.
    fast: Option<Box<Fast>>,
    /// The held claim's lease deadline, as claimed or last renewed.
    deadline: u64,
    /// How many tries of the current completion failed and were retried.
    completion_retries: u32,
    /// Whether the current completion's next try is its last (its lease
    /// passed and a renewal did not move it).
    last_try: bool,
    /// Which error the caller sees if the current completion fails (the
    /// error precedence rule, `docs/spec.md` "Which error the caller sees").
    owed: Option<Owed>,
}

/// The error a run-once caller is owed when the write recording its
/// operation's outcome fails: the one its code can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owed {
    /// The operation's own error (it failed or raised).
    Operation,
    /// The core's verdict on what the operation returned
    /// (`store.not_a_response`, `store.response_too_large`,
    /// `store.response_not_storable`).
    Verdict(StoreError),
}

impl RecordDriver {
    /// A driver for one request with `key` and `incoming`, under `policy`,
    /// over `manifest`'s statements.
    pub fn new(
        manifest: Manifest,
        policy: RecordPolicy,
        way: Way,
        key: &IdempotencyKey,
        incoming: Incoming,
    ) -> Self {
        Self {
            params: KeyParams::new(manifest, key),
            policy,
            way,
            incoming,
            state: State::Start,
            stored: None,
            rounds: 0,
            retries: 0,
            ran: false,
            retained: None,
            owed: None,
            fast: None,
            deadline: 0,
            completion_retries: 0,
            last_try: false,
        }
    }

    /// The same driver with the Redis fast path in front of the database
    /// (`docs/spec.md`, "The fast path"): it first yields the `check`
    /// ([`RecordYield::Redis`]), answers a replay or a duplicate in flight
    /// from Redis without the database, and after the database path yields
    /// the write that keeps Redis in line with it (`settle` of a committed
    /// result, the `forget` of a takeover or of this request's marker).
    /// Inside a caller's transaction ([`Way::SameTransaction`]) there is no
    /// fast path: what Redis would be told could still roll back.
    pub fn with_fast_path(
        manifest: Manifest,
        policy: RecordPolicy,
        way: Way,
        key: &IdempotencyKey,
        incoming: Incoming,
        fast: FastPath,
    ) -> Self {
        let mut driver = Self::new(manifest, policy, way, key, incoming);
        if way != Way::SameTransaction {
            driver.fast = Some(Box::new(Fast::new(fast, key)));
        }
        driver
    }

    /// The first step, at `now_millis`: with a fast path its `check`; else
    /// a fresh key is claimed in one round trip (the insert goes first).
    pub fn start(&mut self, now_millis: u64) -> RecordStep {
        if self.state != State::Start {
            return self.misuse("start");
        }
        let incoming = &self.incoming;
        if let Some(fast) = self.fast.as_deref_mut() {
            let check = fast.check(
                &incoming.fingerprint,
                incoming.key_created_millis,
                now_millis,
            );
            if let Some(step) = check {
                self.state = State::Checking;
                return step;
            }
        }
        self.decide(None, now_millis)
    }

    /// Push Redis's answer to the last [`RecordYield::Redis`], at
    /// `now_millis`: after the `check`, a hit ends the protocol and anything
    /// else goes on to the database; after a write, the step it went before.
    /// A failed write changes nothing but the report
    /// ([`take_fast_report`](Self::take_fast_report)).
    pub fn push_redis(&mut self, answer: FastAnswer, now_millis: u64) -> RecordStep {
        let Some(fast) = self.fast.as_deref_mut() else {
            return self.misuse("push_redis");
        };
        if let Some(again) = fast.again(&answer) {
            return again;
        }
        match core::mem::replace(&mut self.state, State::Ended) {
            State::Checking => match fast.checked(&self.incoming.fingerprint, &answer) {
                FastVerdict::Answer(finished) => self.done(finished),
                FastVerdict::Miss | FastVerdict::Fallback => {
                    let step = self.decide(None, now_millis);
                    self.tell(step, now_millis)
                }
            },
            State::Telling { step, after } => {
                fast.wrote(&answer);
                self.state = *after;
                *step
            }
            state => {
                self.state = state;
                self.misuse("push_redis")
            }
        }
    }

    /// What the fast path came to since the last report (nothing without
    /// one), for the host's `mintid.fast_path.*` metrics.
    pub fn take_fast_report(&mut self) -> FastReport {
        self.fast
            .as_deref_mut()
            .map_or_else(FastReport::default, Fast::take_report)
    }

    /// Push the database's answer to the last [`Step::Run`], at `now_millis`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> RecordStep {
        let step = self.push_database(answer, now_millis);
        self.tell(step, now_millis)
    }

    /// With a fast path whose check was answered, the write to Redis that
    /// goes before `step` (it is handed over once Redis answered); else
    /// `step` itself.
    fn tell(&mut self, step: RecordStep, now_millis: u64) -> RecordStep {
        let Some(fast) = self.fast.as_deref_mut() else {
            return step;
        };
        let stored = self.stored.as_ref();
        let Some(call) = fast.before(&step, stored, &self.incoming.fingerprint, now_millis) else {
            return step;
        };
        let after = core::mem::replace(&mut self.state, State::Ended);
        self.state = State::Telling {
            step: Box::new(step),
            after: Box::new(after),
        };
        fast.send(call)
    }

    fn push_database(&mut self, answer: Answer, now_millis: u64) -> RecordStep {
        if let State::Renewing { .. } = self.state {
            return self.renewed(answer, now_millis);
        }
        if let Answer::Failed(error) = &answer {
            return self.db_failed(error, now_millis);
        }
        self.retries = 0;
        match core::mem::replace(&mut self.state, State::Ended) {
            State::Claiming(claim) => {
                if self.inserted(&answer) {
                    self.hold(claim)
                } else {
                    self.lost_round()
                }
            }
            State::Reclaiming(claim) => {
                if affected(&answer) == Some(1) {
                    self.hold(claim)
                } else {
                    self.lost_round()
                }
            }
            State::Loading => match self.loaded(&answer) {
                Ok(()) => {
                    let existing = self.stored.as_ref().map(|stored| stored.record);
                    self.decide(existing.as_ref(), now_millis)
                }
                Err(error) => self.fail(error),
            },
            State::Writing { claim, query, then } => match affected(&answer) {
                Some(1) => self.then(then),
                Some(_) => {
                    self.state = State::CheckingStale {
                        claim,
                        then,
                        wrote: written_status(&query),
                    };
                    Step::Run(self.params.load())
                }
                None => self.fail(unexpected_answer("a write")),
            },
            State::CheckingStale { claim, then, wrote } => match self.loaded(&answer) {
                Ok(()) => {
                    let fence = claim.fence();
                    let current = self.stored.as_ref().map(|stored| stored.record);
                    // A retried write whose earlier try landed (its reply was lost)
                    // finds the state its own fence wrote: a success.
                    let own = current.filter(|record| record.fence() == fence);
                    if self.completion_retries > 0 && own.is_some_and(|r| r.status == wrote) {
                        return self.then(then);
                    }
                    let error = match current {
                        None => RecordError::removed(fence),
                        Some(current) => match current.complete(fence) {
                            Err(error) => error,
                            Ok(_) => RecordError::removed(fence),
                        },
                    };
                    self.fail(DriverError::Record(error))
                }
                Err(error) => self.fail(error),
            },
            state => {
                self.state = state;
                self.misuse("push")
            }
        }
    }

    /// Continue after a [`Step::Pause`].
    pub fn resume(&mut self) -> RecordStep {
        match core::mem::replace(&mut self.state, State::Ended) {
            State::Pausing { millis } => {
                self.incoming = self
                    .incoming
                    .with_waited_millis(self.incoming.waited_millis.saturating_add(millis));
                self.rounds = 0;
                self.state = State::Loading;
                Step::Run(self.params.load())
            }
            State::Retrying { query, then } => {
                self.state = *then;
                Step::Run(query)
            }
            state => {
                self.state = state;
                self.misuse("resume")
            }
        }
    }

    /// Push what the operation came to (after [`RecordYield::Execute`]), at
    /// `now_millis`. Every limit is checked here, before the write: an error
    /// text is cut to 1024 bytes, and a response that cannot be stored
    /// becomes a stored final failure whose error is its code, reported to
    /// the host as that typed error (inside a caller's transaction nothing is
    /// written and the error is reported: the rollback undoes the claim).
    /// In the lease-and-fence way the claim stays held after a finish, so its
    /// holder may finish again: after a failure that passes, or late, when
    /// the fence refuses the second write (`record.not_pending`).
    pub fn finish(&mut self, outcome: OperationOutcome, now_millis: u64) -> RecordStep {
        let step = self.finish_operation(outcome, now_millis);
        self.tell(step, now_millis)
    }

    fn finish_operation(&mut self, outcome: OperationOutcome, now_millis: u64) -> RecordStep {
        self.owed = None;
        let claim = match core::mem::replace(&mut self.state, State::Ended) {
            State::Holding(claim) => claim,
            state => {
                self.state = state;
                return self.misuse("finish");
            }
        };
        self.ran = true;
        if self.way == Way::Lease {
            self.retained = Some(claim);
        }
        let in_transaction = self.way == Way::SameTransaction;
        match outcome {
            OperationOutcome::Succeeded(response) => match unstorable(&response) {
                None => {
                    let (body, content_type) = optional_bytes(Some(&response));
                    let query = self.params.fenced(
                        Write::Complete.query(),
                        claim.fence(),
                        now_millis,
                        |p| match p {
                            "response_body" => Some(body.clone()),
                            "response_content_type" => Some(content_type.clone()),
                            _ => None,
                        },
                    );
                    if let Some(fast) = self.fast.as_deref_mut() {
                        fast.remember(Written::Response(response));
                    }
                    self.write(claim, query, Then::Finish(Finished::Executed))
                }
                Some(error) if in_transaction => self.fail(DriverError::Store(error)),
                Some(error) => {
                    let message = String::from(error.code());
                    self.write_failure(
                        claim,
                        Failure::Final,
                        message,
                        None,
                        Then::Fail(error),
                        now_millis,
                    )
                }
            },
            OperationOutcome::Failed {
                message,
                retryable,
                response,
            } => self.operation_failed(claim, message, retryable, response, now_millis),
            // Any other error the operation raised: retryable, in every host.
            OperationOutcome::Raised { message } => {
                self.operation_failed(claim, message, true, None, now_millis)
            }
            OperationOutcome::NotAResponse { type_name } => {
                let error = StoreError::new(
                    StoreErrorKind::NotAResponse,
                    alloc::format!(
                        "the operation returned a {type_name}, not a response: the claim was released"
                    ),
                );
                if in_transaction {
                    return self.fail(DriverError::Store(error));
                }
                let message = String::from(error.code());
                self.write_failure(
                    claim,
                    Failure::Retryable,
                    message,
                    None,
                    Then::Fail(error),
                    now_millis,
                )
            }
        }
    }

    /// The record loaded last (after a replay: what was replayed).
    pub fn stored(&self) -> Option<&StoredRecord> {
        self.stored.as_ref()
    }

    /// The operation failed: nothing written in a caller's transaction,
    /// else a final failure stored (when the policy stores errors) or a
    /// retryable one released.
    fn operation_failed(
        &mut self,
        claim: Claim,
        message: String,
        retryable: bool,
        response: Option<StoredResponse>,
        now_millis: u64,
    ) -> RecordStep {
        if self.way == Way::SameTransaction {
            return self.done(Finished::OperationFailed { stored: false });
        }
        let failure = if retryable {
            Failure::Retryable
        } else {
            Failure::Final
        };
        let stores = failure == Failure::Final && self.policy.store_errors();
        let (response, message) = match response.as_ref().map(unstorable) {
            Some(Some(error)) => (None, String::from(error.code())),
            _ => (response, message),
        };
        let then = Then::Finish(Finished::OperationFailed { stored: stores });
        self.write_failure(claim, failure, message, response, then, now_millis)
    }

    fn write_failure(
        &mut self,
        claim: Claim,
        failure: Failure,
        message: String,
        response: Option<StoredResponse>,
        then: Then,
        now: u64,
    ) -> RecordStep {
        let message = limits::storable_text(&message, RECORD_ERROR_MAX_BYTES);
        let error = text(&message);
        let stores = failure == Failure::Final && self.policy.store_errors();
        let write = if stores { Write::Fail } else { Write::Release };
        let (body, content_type) = optional_bytes(response.as_ref());
        if let Some(fast) = self.fast.as_deref_mut().filter(|_| stores) {
            fast.remember(Written::Failure { message, response });
        }
        let query = self
            .params
            .fenced(write.query(), claim.fence(), now, |p| match p {
                "error" => Some(error.clone()),
                "response_body" => Some(body.clone()),
                "response_content_type" => Some(content_type.clone()),
                _ => None,
            });
        self.write(claim, query, then)
    }

    fn write(&mut self, claim: Claim, query: Query, then: Then) -> RecordStep {
        self.completion_retries = 0;
        self.last_try = false;
        if self.way == Way::RunOnce {
            self.owed = match &then {
                Then::Finish(Finished::OperationFailed { .. }) => Some(Owed::Operation),
                Then::Fail(verdict) => Some(Owed::Verdict(verdict.clone())),
                Then::Finish(_) => None,
            };
        }
        self.state = State::Writing {
            claim,
            query: query.clone(),
            then,
        };
        Step::Run(query)
    }

    fn then(&mut self, then: Then) -> RecordStep {
        self.owed = None;
        match then {
            Then::Finish(finished) => self.done(finished),
            Then::Fail(error) => self.fail(DriverError::Store(error)),
        }
    }

    fn decide(&mut self, existing: Option<&Record>, now: u64) -> RecordStep {
        let decision = match decide(existing, &self.incoming, now, &self.policy) {
            Ok(decision) => decision,
            Err(error) => return self.fail(DriverError::Record(error)),
        };
        match decision {
            Decision::Execute(claim) => {
                let record = claim.record;
                let query = match claim.expected {
                    None => {
                        self.state = State::Claiming(claim);
                        self.params.query("claim", |param| match param {
                            "fingerprint" => {
                                Some(Value::Bytes(record.fingerprint.as_bytes().to_vec()))
                            }
                            "fencing_token" => Some(int(record.token)),
                            "lease_deadline_millis" => Some(int(record.lease_deadline_millis)),
                            "created_millis" => Some(int(record.created_millis)),
                            "expires_millis" => Some(int(record.expires_millis)),
                            "now_millis" => Some(int(now)),
                            _ => None,
                        })
                    }
                    Some(expected) => {
                        self.state = State::Reclaiming(claim);
                        self.params.query("reclaim", |param| match param {
                            "fencing_token" => Some(int(record.token)),
                            "lease_deadline_millis" => Some(int(record.lease_deadline_millis)),
                            "expected_token" => Some(int(expected.fence.token)),
                            "expected_created_millis" => Some(int(expected.fence.created_millis)),
                            "expected_status" => Some(text(expected.status.as_str())),
                            "now_millis" => Some(int(now)),
                            _ => None,
                        })
                    }
                };
                Step::Run(query)
            }
            Decision::Replay(outcome) => {
                let stored = self.stored.as_ref();
                let response = stored.and_then(|s| s.response.clone());
                let finished = match outcome {
                    Outcome::Succeeded => Finished::Replay {
                        outcome,
                        response: Some(response.unwrap_or(StoredResponse {
                            content_type: String::new(),
                            body: Vec::new(),
                        })),
                        error: None,
                    },
                    Outcome::Failed => Finished::Replay {
                        outcome,
                        response,
                        error: Some(stored.and_then(|s| s.error.clone()).unwrap_or_default()),
                    },
                };
                self.done(finished)
            }
            Decision::Wait { poll_millis } => {
                self.state = State::Pausing {
                    millis: poll_millis,
                };
                Step::Pause {
                    millis: poll_millis,
                }
            }
            Decision::InProgress { retry_after_millis } => {
                self.done(Finished::InProgress { retry_after_millis })
            }
            Decision::FingerprintMismatch => self.done(Finished::FingerprintMismatch),
            Decision::KeyTooOld => self.done(Finished::KeyTooOld),
        }
    }

    fn lost_round(&mut self) -> RecordStep {
        self.rounds += 1;
        if self.rounds > MAX_CLAIM_ROUNDS {
            return self.fail(DriverError::Store(StoreError::new(
                StoreErrorKind::StaleSnapshot,
                alloc::format!(
                    "the claim neither inserted nor found its record {MAX_CLAIM_ROUNDS} times: \
                     the transaction reads an old snapshot (claim before reading, or use \
                     READ COMMITTED)"
                ),
            )));
        }
        self.state = State::Loading;
        Step::Run(self.params.load())
    }

    fn hold(&mut self, claim: Claim) -> RecordStep {
        let renew_every_millis = match self.way {
            Way::SameTransaction => None,
            Way::RunOnce | Way::Lease => Some((self.policy.lease_millis() / 3).max(1)),
        };
        self.state = State::Holding(claim);
        let record = claim.record;
        self.deadline = record.lease_deadline_millis;
        Step::Yield(RecordYield::Execute(Held {
            token: record.token,
            created_millis: record.created_millis,
            lease_deadline_millis: record.lease_deadline_millis,
            renew_every_millis,
        }))
    }

    fn inserted(&self, answer: &Answer) -> bool {
        match (self.params.manifest.kind("claim"), answer) {
            (Some(ResultKind::One), Answer::Rows(rows)) => !rows.is_empty(),
            (_, Answer::Affected(count)) => *count == 1,
            _ => false,
        }
    }

    fn loaded(&mut self, answer: &Answer) -> Result<(), DriverError> {
        self.stored = read_load(answer)?;
        Ok(())
    }

    fn db_failed(&mut self, error: &DbError, now_millis: u64) -> RecordStep {
        let state = core::mem::replace(&mut self.state, State::Ended);
        // A claim that meets the key's row (MySQL's plain INSERT) lost the race:
        // load and decide again, whatever the client's found-rows flag.
        if error.class == DbErrorClass::UniqueViolation {
            if let State::Claiming(_) = state {
                return self.lost_round();
            }
        }
        // A deadlock, or a connection that broke (the pool gives the retry a new
        // one): run again, never inside the caller's transaction (it is gone).
        // A claim whose connection broke may have been written: it is decided
        // again from a load, where an own claim looks like another's, so the
        // worst case is waiting out its lease, never a second run.
        let retryable = matches!(
            error.class,
            DbErrorClass::Serialization | DbErrorClass::ConnectionLost
        );
        let completing = matches!(state, State::Writing { .. } | State::CheckingStale { .. });
        if retryable && self.way != Way::SameTransaction && self.ran && completing {
            return self.completion_failed(state, error, now_millis);
        }
        if retryable && self.way != Way::SameTransaction && self.retries < RETRIES {
            if let Some((query, then)) = self.retry(state) {
                let millis = RETRY_PAUSE_MILLIS << self.retries;
                self.retries += 1;
                self.state = State::Retrying {
                    query,
                    then: Box::new(then),
                };
                return Step::Pause { millis };
            }
        }
        self.fail(DriverError::Store(db_error(error, self.ran)))
    }

    /// A try of the completion failed on a broken connection, a deadlock or
    /// a serialization failure: try again after a pause (doubling from
    /// [`RETRY_PAUSE_MILLIS`] up to [`COMPLETION_PAUSE_MAX_MILLIS`] or a third
    /// of the lease, whichever is shorter), first renewing the lease whenever
    /// a third of it or less is left, until the write lands; once the lease
    /// has passed and a renewal did not move it, one last try, then
    /// `store.unavailable` (or `store.conflict`).
    fn completion_failed(&mut self, state: State, error: &DbError, now: u64) -> RecordStep {
        let claim = match &state {
            State::Writing { claim, .. } | State::CheckingStale { claim, .. } => *claim,
            _ => return self.fail(DriverError::Store(db_error(error, true))),
        };
        if self.last_try {
            return self.fail(DriverError::Store(db_error(error, true)));
        }
        let Some((query, then)) = self.retry(state) else {
            return self.fail(DriverError::Store(db_error(error, true)));
        };
        let third = (self.policy.lease_millis() / 3).max(1);
        let millis = (RETRY_PAUSE_MILLIS << self.completion_retries.min(16))
            .min(COMPLETION_PAUSE_MAX_MILLIS)
            .min(third);
        self.completion_retries += 1;
        if self.deadline.saturating_sub(now) <= third {
            let mut renewal =
                RecordRenewal::of_claim(self.params.clone(), self.policy, claim, self.deadline);
            let renew = renewal.start(now);
            self.state = State::Renewing {
                renewal: Box::new(renewal),
                pause: millis,
                query,
                then: Box::new(then),
            };
            return Step::Run(renew);
        }
        self.pause_then(millis, query, then)
    }

    fn pause_then(&mut self, millis: u64, query: Query, then: State) -> RecordStep {
        self.state = State::Retrying {
            query,
            then: Box::new(then),
        };
        Step::Pause { millis }
    }

    /// The answer to a renewal between two tries of a completion: a renewed
    /// lease moves the deadline; whatever it found, the write is tried after
    /// the pause (its fence decides), the last time when the lease has passed.
    fn renewed(&mut self, answer: Answer, now: u64) -> RecordStep {
        let State::Renewing {
            mut renewal,
            pause,
            query,
            then,
        } = core::mem::replace(&mut self.state, State::Ended)
        else {
            return self.misuse("push");
        };
        match renewal.push(answer) {
            Step::Yield(deadline) => self.deadline = self.deadline.max(deadline),
            Step::Run(load) => {
                self.state = State::Renewing {
                    renewal,
                    pause,
                    query,
                    then,
                };
                return Step::Run(load);
            }
            _ => {}
        }
        self.last_try = now >= self.deadline;
        self.pause_then(pause, query, *then)
    }

    /// The query to run again after a retryable failure, and the state
    /// that reads its answer: a lost claim is decided again from a fresh load.
    fn retry(&self, state: State) -> Option<(Query, State)> {
        match state {
            State::Loading | State::Claiming(_) | State::Reclaiming(_) => {
                Some((self.params.load(), State::Loading))
            }
            State::CheckingStale { claim, then, wrote } => Some((
                self.params.load(),
                State::CheckingStale { claim, then, wrote },
            )),
            State::Writing { claim, query, then } => {
                Some((query.clone(), State::Writing { claim, query, then }))
            }
            _ => None,
        }
    }

    fn done(&mut self, finished: Finished) -> RecordStep {
        self.owed = None;
        self.end();
        Step::Yield(RecordYield::Done(finished))
    }

    /// Ends with `error`, unless the caller of a run-once request is owed
    /// another: its operation's own error (with `error` beside it), or the
    /// core's verdict on what the operation returned (with the failed
    /// write's database error as its cause).
    fn fail(&mut self, error: DriverError) -> RecordStep {
        match self.owed.take() {
            None => {
                self.end();
                Step::Fail(error)
            }
            Some(Owed::Operation) => {
                self.done(Finished::OperationFailedUnrecorded { store_error: error })
            }
            Some(Owed::Verdict(verdict)) => {
                self.end();
                Step::Fail(DriverError::Store(verdict.not_recorded(&error)))
            }
        }
    }

    fn end(&mut self) {
        self.state = match self.retained {
            Some(claim) => State::Holding(claim),
            None => State::Ended,
        };
    }

    fn misuse(&mut self, call: &str) -> RecordStep {
        self.fail(DriverError::Store(StoreError::new(
            StoreErrorKind::QueryFailed,
            alloc::format!("{call} does not fit the driver's state (a host bug)"),
        )))
    }
}

/// The status a completing write leaves when it lands.
fn written_status(query: &Query) -> Status {
    match query.name {
        "complete" => Status::Succeeded,
        "fail" => Status::Failed,
        _ => Status::FailedRetryable,
    }
}

fn affected(answer: &Answer) -> Option<u64> {
    match answer {
        Answer::Affected(count) => Some(*count),
        _ => None,
    }
}

fn unexpected_answer(what: &str) -> DriverError {
    DriverError::Store(StoreError::new(
        StoreErrorKind::UnexpectedRow,
        alloc::format!("the answer to {what} is not of the query's result kind"),
    ))
}

/// Why a response cannot be stored, if it cannot.
fn unstorable(response: &StoredResponse) -> Option<StoreError> {
    if response.body.len() > RESPONSE_BODY_MAX_BYTES {
        return Some(StoreError::new(
            StoreErrorKind::ResponseTooLarge,
            alloc::format!(
                "the response has {} bytes, more than the {RESPONSE_BODY_MAX_BYTES} stored",
                response.body.len()
            ),
        ));
    }
    if !limits::content_type_storable(&response.content_type) {
        return Some(StoreError::new(
            StoreErrorKind::ResponseNotStorable,
            alloc::format!(
                "the response's content type ({} bytes) is over {} bytes or not printable ASCII",
                response.content_type.len(),
                limits::CONTENT_TYPE_MAX_BYTES
            ),
        ));
    }
    None
}
