//! The idempotency store: `run_once`, `in_transaction` and `claim_lease`,
//! each driving the core's record driver; `load` and `cleanup`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mintid::IdempotencyKey;
use mintid::record::{Outcome, Problem, RecordPolicy};
use mintid::store::{
    Finished, Held, OperationOutcome, RecordCleanup, RecordDriver, RecordHeartbeat, RecordRenewal,
    RecordStep, RecordYield, Step, StoreErrorKind, StoredRecord, StoredResponse, Way, load_query,
    read_load,
};
use tokio::sync::Mutex;

use crate::backend::Backend;
use crate::error::{Error, OperationError};
use crate::fast_path::BoundFastPath;
#[cfg(feature = "redis")]
use crate::fast_path::RedisFastPath;
use crate::steps::{Pushing, drive, unexpected_step};
use crate::store::{Session, Store};
use crate::telemetry;

/// What the store needs about a request besides its key (the payload's
/// fingerprint, the key's creation time when a request ID gives it): the
/// core's [`Incoming`](mintid::record::Incoming).
pub use mintid::record::Incoming as StoreRequest;

/// The outcome of a request: run, replayed, or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunResult {
    /// The operation ran; its response (stored).
    Executed(StoredResponse),
    /// Not run: the stored result, to answer with as a replay.
    Replayed {
        /// Which result was stored.
        outcome: Outcome,
        /// The stored response (a success always has one; a failure its
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
    /// Not run: the key was first used with another payload.
    FingerprintMismatch,
    /// Not run: the key is older than retention.
    KeyTooOld,
}

impl RunResult {
    /// `execute`, `replay`, `in_progress`, `fingerprint_mismatch` or `key_too_old`.
    pub const fn decision(&self) -> &'static str {
        match self {
            RunResult::Executed(_) => "execute",
            RunResult::Replayed { .. } => "replay",
            RunResult::InProgress { .. } => "in_progress",
            RunResult::FingerprintMismatch => "fingerprint_mismatch",
            RunResult::KeyTooOld => "key_too_old",
        }
    }

    /// The problem to answer a refusal with.
    pub const fn problem(&self) -> Option<Problem> {
        match self {
            RunResult::InProgress { .. } => Some(Problem::InProgress),
            RunResult::FingerprintMismatch => Some(Problem::FingerprintMismatch),
            RunResult::KeyTooOld => Some(Problem::KeyTooOld),
            RunResult::Executed(_) | RunResult::Replayed { .. } => None,
        }
    }

    pub(crate) fn not_run(finished: Finished) -> Option<Self> {
        Some(match finished {
            Finished::Replay {
                outcome,
                response,
                error,
            } => RunResult::Replayed {
                outcome,
                response,
                error,
            },
            Finished::InProgress { retry_after_millis } => {
                RunResult::InProgress { retry_after_millis }
            }
            Finished::FingerprintMismatch => RunResult::FingerprintMismatch,
            Finished::KeyTooOld => RunResult::KeyTooOld,
            Finished::Executed
            | Finished::OperationFailed { .. }
            | Finished::OperationFailedUnrecorded { .. } => return None,
        })
    }
}

/// The claim of [`IdempotencyStore::claim_lease`]: held, or not run.
#[derive(Debug)]
pub enum Claimed<DB: Backend> {
    /// The key is held: complete or fail the lease.
    Held(RecordLease<DB>),
    /// The request does not run.
    NotRun(RunResult),
}

/// Idempotency records in one database under one [`RecordPolicy`].
#[derive(Debug)]
pub struct IdempotencyStore<DB: Backend> {
    store: Store<DB>,
    policy: RecordPolicy,
    fast: Option<BoundFastPath>,
}

clone_fields!(IdempotencyStore, store, policy, fast);

impl<DB: Backend> IdempotencyStore<DB> {
    /// Records in `store` under `policy`.
    pub fn new(store: Store<DB>, policy: RecordPolicy) -> Self {
        Self {
            store,
            policy,
            fast: None,
        }
    }

    /// The same store with the Redis fast path in front of
    /// [`run_once`](Self::run_once) and [`claim_lease`](Self::claim_lease)
    /// (not [`in_transaction`](Self::in_transaction): its commit is the
    /// caller's). A duplicate may then be answered from Redis (a replay of
    /// what the database committed, or in progress) without the database;
    /// Redis failing sends every request to the database.
    #[cfg(feature = "redis")]
    pub fn with_fast_path(mut self, fast_path: RedisFastPath) -> Self {
        self.fast = Some(fast_path.bind(self.policy));
        self
    }

    /// The store.
    pub fn store(&self) -> &Store<DB> {
        &self.store
    }

    /// The record driver of one request; with a fast path, its Redis steps
    /// too.
    fn driver(&self, way: Way, key: &IdempotencyKey, request: &StoreRequest) -> RecordDriver {
        let manifest = Store::<DB>::manifest();
        match &self.fast {
            Some(fast) => {
                RecordDriver::with_fast_path(manifest, self.policy, way, key, *request, fast.core())
            }
            None => RecordDriver::new(manifest, self.policy, way, key, *request),
        }
    }

    /// Runs `operation` once for `key`: the first request claims the key,
    /// runs it (its lease renewed in the background meanwhile; the
    /// [`RecordLease`] it is given says whether the key was lost) and stores
    /// its response; a duplicate replays what was stored, waits for a request
    /// in flight, or is answered in progress. An operation that fails is
    /// recorded as the core says and its error comes back as
    /// [`Error::Operation`].
    ///
    /// With a fast path, a duplicate may be answered from Redis without the
    /// database.
    pub async fn run_once<F>(
        &self,
        key: &IdempotencyKey,
        request: StoreRequest,
        operation: F,
    ) -> Result<RunResult, Error>
    where
        F: AsyncFnOnce(RecordLease<DB>) -> Result<StoredResponse, OperationError>,
    {
        let mut driver = self.driver(Way::RunOnce, key, &request);
        let clock = &self.store.clock;
        let fast = self.fast.as_ref();
        let start = driver.start(clock.now_millis());
        let claim = drive_record(&self.store, &mut driver, fast, start);
        let held = match telemetry::claim(Way::RunOnce, claim).await? {
            RecordYield::Execute(held) => held,
            yielded => return done(yielded),
        };
        // No connection is held while the operation runs.
        let lease = RecordLease::new(self, key, held, None);
        let heartbeat = lease.heartbeat();
        let result = telemetry::operation(Way::RunOnce, operation(lease.clone())).await;
        if let Some(heartbeat) = heartbeat {
            heartbeat.abort();
        }
        let step = driver.finish(outcome_of(&result), clock.now_millis());
        // Once the operation has an outcome, recording it finishes even if the
        // caller goes away (docs/spec.md, "Completion keeps trying"): it runs as
        // a task of its own, which dropping this future only detaches.
        let (store, fast) = (self.store.clone(), self.fast.clone());
        let completion = tokio::spawn(telemetry::complete(
            Way::RunOnce,
            stored_bytes(&result),
            async move { drive_record(&store, &mut driver, fast.as_ref(), step).await },
        ));
        let end = match completion.await {
            Ok(end) => end,
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            Err(_) => Err(shut_down()),
        };
        ended(end?, result)
    }

    /// [`run_once`](Self::run_once) inside the caller's transaction on
    /// `conn` (e.g. `&mut *tx` of a `sqlx::Transaction`): the claim, the
    /// operation's writes on `conn` and the completion commit or roll back
    /// together. An operation that fails writes nothing: its error comes back
    /// and the caller's rollback undoes the claim.
    pub async fn in_transaction<F>(
        &self,
        conn: &mut DB::Connection,
        key: &IdempotencyKey,
        request: StoreRequest,
        operation: F,
    ) -> Result<RunResult, Error>
    where
        F: AsyncFnOnce(&mut DB::Connection) -> Result<StoredResponse, OperationError>,
    {
        let mut driver = self.driver(Way::SameTransaction, key, &request);
        let clock = &self.store.clock;
        let way = Way::SameTransaction;
        let start = driver.start(clock.now_millis());
        // The session moves into a temporary that ends with the claim, and
        // with it its borrow of `conn`.
        let session = Session::caller(&self.store, &mut *conn);
        match telemetry::claim(way, drive(&mut { session }, &mut driver, start)).await? {
            RecordYield::Execute(_) => {}
            yielded => return done(yielded),
        }
        let result = telemetry::operation(way, operation(&mut *conn)).await;
        let step = driver.finish(outcome_of(&result), clock.now_millis());
        let session = &mut Session::caller(&self.store, conn);
        let completion = drive(session, &mut driver, step);
        let end = telemetry::complete(way, stored_bytes(&result), completion).await?;
        ended(end, result)
    }

    /// Claims `key` with a lease ("lease and fence"): a [`RecordLease`] to
    /// complete or fail, or the result of a request that does not run.
    /// With a fast path, a duplicate may be answered from Redis.
    pub async fn claim_lease(
        &self,
        key: &IdempotencyKey,
        request: StoreRequest,
    ) -> Result<Claimed<DB>, Error> {
        let mut driver = self.driver(Way::Lease, key, &request);
        let start = driver.start(self.store.clock.now_millis());
        let claim = drive_record(&self.store, &mut driver, self.fast.as_ref(), start);
        match telemetry::claim(Way::Lease, claim).await? {
            RecordYield::Execute(held) => Ok(Claimed::Held(RecordLease::new(
                self,
                key,
                held,
                Some(driver),
            ))),
            yielded => done(yielded).map(Claimed::NotRun),
        }
    }

    /// The stored record of `key`, or `None`.
    pub async fn load(&self, key: &IdempotencyKey) -> Result<Option<StoredRecord>, Error> {
        let mut session = Session::new(&self.store);
        let answer = session.run(load_query(Store::<DB>::manifest(), key)).await;
        Ok(read_load(&answer)?)
    }

    /// Deletes expired records (a pending one only once its lease passed
    /// too), `batch_size` per statement; the total.
    pub async fn cleanup(&self, batch_size: u64) -> Result<u64, Error> {
        let mut cleanup = RecordCleanup::new(Store::<DB>::manifest(), batch_size);
        let clock = &self.store.clock;
        let first = Step::Run(cleanup.next(clock.now_millis()));
        let mut driver = Pushing(|answer, now| cleanup.push(answer, now));
        self.store.drive(&mut driver, first).await
    }
}

/// The result of a request once the steps after its operation ended.
fn ended(
    end: RecordYield,
    result: Result<StoredResponse, OperationError>,
) -> Result<RunResult, Error> {
    match (end, result) {
        (RecordYield::Done(Finished::Executed), Ok(response)) => Ok(RunResult::Executed(response)),
        (RecordYield::Done(Finished::OperationFailed { .. }), Err(error)) => {
            Err(Error::Operation(error))
        }
        // The operation's error wins; the store's is kept beside it and logged
        // (docs/spec.md, "Which error the caller sees").
        (
            RecordYield::Done(Finished::OperationFailedUnrecorded { store_error }),
            Err(operation),
        ) => {
            telemetry::not_recorded(&store_error);
            Err(Error::OperationNotRecorded {
                operation,
                store: Box::new(store_error),
            })
        }
        (yielded, _) => done(yielded),
    }
}

/// Drives a record driver from `step` to its next yield for the host (the
/// operation to run, or its end), running its Redis steps on `fast` and
/// counting what they came to.
async fn drive_record<DB: Backend>(
    store: &Store<DB>,
    driver: &mut RecordDriver,
    fast: Option<&BoundFastPath>,
    mut step: RecordStep,
) -> Result<RecordYield, Error> {
    let clock = &store.clock;
    let yielded = loop {
        match store.drive(driver, step).await {
            Ok(RecordYield::Redis(call)) => {
                let answer = match fast {
                    Some(fast) => fast.run(&call).await,
                    None => mintid::store::FastAnswer::Failed("no fast path".into()),
                };
                step = driver.push_redis(answer, clock.now_millis());
            }
            other => break other,
        }
    };
    if let Some(fast) = fast {
        fast.count(driver.take_fast_report());
    }
    yielded
}

/// The size of the response body an operation's `result` gives the store to
/// keep, if any.
fn stored_bytes(result: &Result<StoredResponse, OperationError>) -> Option<usize> {
    match result {
        Ok(response) => Some(response.body.len()),
        Err(error) => error.response.as_ref().map(|response| response.body.len()),
    }
}

fn outcome_of(result: &Result<StoredResponse, OperationError>) -> OperationOutcome {
    match result {
        Ok(response) => OperationOutcome::Succeeded(response.clone()),
        Err(error) => OperationOutcome::Failed {
            message: error.message.clone(),
            retryable: error.retryable,
            response: error.response.clone(),
        },
    }
}

/// The result of a request that ends without running (a replay or a
/// refusal).
fn done(yielded: RecordYield) -> Result<RunResult, Error> {
    match yielded {
        RecordYield::Done(finished) => {
            RunResult::not_run(finished).ok_or_else(|| unexpected(&Step::<()>::Yield(())))
        }
        other => Err(unexpected(&Step::Yield(other))),
    }
}

/// The runtime shut down while a completion was being written: the record
/// stays pending until its lease passes.
fn shut_down() -> Error {
    unexpected_step("the runtime shut down before the completion was written").into()
}

fn unexpected<Y: core::fmt::Debug>(step: &Step<Y>) -> Error {
    unexpected_step(&format!("{step:?}")).into()
}

/// A claim this store holds on a key, with its lease: from
/// [`IdempotencyStore::claim_lease`] (complete or fail it; renew it while
/// it runs long), or the one a [`run_once`](IdempotencyStore::run_once)
/// operation is given (renewed in the background; check
/// [`is_lost`](Self::is_lost) before a write that must happen once).
#[derive(Debug)]
pub struct RecordLease<DB: Backend> {
    inner: Arc<LeaseInner<DB>>,
}

clone_fields!(RecordLease, inner);

#[derive(Debug)]
struct LeaseInner<DB: Backend> {
    store: Store<DB>,
    held: Held,
    deadline: AtomicU64,
    lost: AtomicBool,
    renewal: Mutex<RecordRenewal>,
    /// The core's heartbeat of a `run once` claim, until it is started.
    heartbeat: std::sync::Mutex<Option<RecordHeartbeat>>,
    driver: Mutex<Option<RecordDriver>>,
    /// The fast path the driver's Redis steps run on, if any.
    fast: Option<BoundFastPath>,
}

impl<DB: Backend> LeaseInner<DB> {
    /// A renewal found the key taken over or completed.
    fn lost_now(&self) {
        self.lost.store(true, Ordering::Release);
        telemetry::record_lost();
    }
}

impl<DB: Backend> RecordLease<DB> {
    fn new(
        records: &IdempotencyStore<DB>,
        key: &IdempotencyKey,
        held: Held,
        driver: Option<RecordDriver>,
    ) -> Self {
        let manifest = Store::<DB>::manifest();
        let renewal = RecordRenewal::new(manifest, records.policy, key, &held);
        let heartbeat = RecordHeartbeat::new(manifest, records.policy, key, &held);
        Self {
            inner: Arc::new(LeaseInner {
                store: records.store.clone(),
                held,
                deadline: AtomicU64::new(held.lease_deadline_millis),
                lost: AtomicBool::new(false),
                renewal: Mutex::new(renewal),
                heartbeat: std::sync::Mutex::new(Some(heartbeat)),
                driver: Mutex::new(driver),
                fast: records.fast.clone(),
            }),
        }
    }

    /// The claim's fencing token.
    pub fn token(&self) -> u64 {
        self.inner.held.token
    }

    /// When the lease ends, as last renewed (Unix ms).
    pub fn lease_deadline_millis(&self) -> u64 {
        self.inner.deadline.load(Ordering::Acquire)
    }

    /// Whether a renewal found the key taken over or completed
    /// (`store.record_lost`).
    pub fn is_lost(&self) -> bool {
        self.inner.lost.load(Ordering::Acquire)
    }

    /// Moves the lease deadline on (to now plus the policy's lease); the new
    /// deadline. Fails with `store.record_lost` once the key was taken over
    /// (and [`is_lost`](Self::is_lost) turns true), or `store.unavailable`.
    pub async fn renew(&self) -> Result<u64, Error> {
        let inner = &self.inner;
        let mut renewal = inner.renewal.lock().await;
        let clock = &inner.store.clock;
        let first = Step::Run(renewal.start(clock.now_millis()));
        let mut driver = Pushing(|answer, _now| renewal.push(answer));
        let renewed = inner.store.drive(&mut driver, first).await;
        match &renewed {
            Ok(deadline) => inner.deadline.store(*deadline, Ordering::Release),
            Err(error) if error.code() == Some(StoreErrorKind::RecordLost.code()) => {
                inner.lost_now();
            }
            Err(_) => {}
        }
        renewed
    }

    /// Stores `response` as the result (lease and fence).
    pub async fn complete(&self, response: StoredResponse) -> Result<(), Error> {
        self.finish(Ok(response)).await.map(|_| ())
    }

    /// Stores a failure (lease and fence): final (replayed, or released when
    /// the policy does not store errors) or retryable (released).
    pub async fn fail(&self, error: OperationError) -> Result<(), Error> {
        match self.finish(Err(error)).await {
            Err(Error::Operation(_)) => Ok(()),
            other => other.map(|_| ()),
        }
    }

    async fn finish(
        &self,
        result: Result<StoredResponse, OperationError>,
    ) -> Result<RunResult, Error> {
        let mut guard = self.inner.driver.lock().await;
        let Some(driver) = guard.as_mut() else {
            return Err(unexpected(&Step::<()>::Commit));
        };
        let inner = &self.inner;
        let step = driver.finish(outcome_of(&result), inner.store.clock.now_millis());
        let completion = drive_record(&inner.store, driver, inner.fast.as_ref(), step);
        let end = telemetry::complete(Way::Lease, stored_bytes(&result), completion).await?;
        ended(end, result)
    }

    /// Starts the background renewal of a `run once` operation's lease: the
    /// core's [`RecordHeartbeat`] (`docs/spec.md`, "The heartbeat"), its
    /// pauses waited out on the store's clock (a manual clock is waited for,
    /// never moved on), its renewals on a connection of their own. Aborted
    /// when the operation returns: a renewal in flight changes nothing.
    fn heartbeat(&self) -> Option<tokio::task::JoinHandle<()>> {
        let mut beat = self.inner.heartbeat.lock().ok()?.take()?;
        let clock = self.inner.store.clock.clone();
        // Started here, when the operation starts: its pauses count from now.
        let mut at = clock.now_millis();
        let mut step = beat.start(at);
        let lease = self.clone();
        Some(tokio::spawn(async move {
            let inner = &lease.inner;
            loop {
                step = match step {
                    Step::Pause { millis } => {
                        clock.wait_until(at.saturating_add(millis)).await;
                        at = clock.now_millis();
                        beat.resume(at)
                    }
                    Step::Run(query) => {
                        let answer = Session::new(&inner.store).run(query).await;
                        at = clock.now_millis();
                        let step = beat.push(answer, at);
                        let deadline = beat.lease_deadline_millis();
                        inner.deadline.fetch_max(deadline, Ordering::AcqRel);
                        step
                    }
                    Step::Fail(error) => {
                        if error.code() == StoreErrorKind::RecordLost.code() {
                            inner.lost_now();
                        }
                        return;
                    }
                    _ => return,
                };
            }
        }))
    }
}
