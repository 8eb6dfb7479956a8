//! The idempotency store: `run_once`, `in_transaction` and `claim_lease`,
//! each driving the core's record driver; `load` and `cleanup`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use mintid::IdempotencyKey;
use mintid::record::{Outcome, Problem, RecordPolicy};
use mintid::store::{
    Answer, Finished, Held, OperationOutcome, RecordCleanup, RecordDriver, RecordHeartbeat,
    RecordRenewal, RecordStep, RecordYield, Step, StoreErrorKind, StoredRecord, StoredResponse,
    Way, load_query, read_load,
};
use tokio::sync::Mutex;

use crate::backend::Backend;
use crate::error::{Error, OperationError};
use crate::fast_path::BoundFastPath;
#[cfg(feature = "redis")]
use crate::fast_path::RedisFastPath;
use crate::steps::{Driver, Pushing, drive, unexpected_step};
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
    /// The core's decision name: `execute`, `replay`, `in_progress`,
    /// `fingerprint_mismatch` or `key_too_old`.
    pub fn decision(&self) -> &'static str {
        self.finished().decision()
    }

    /// The core's problem to answer a refusal with.
    pub fn problem(&self) -> Option<Problem> {
        self.finished().problem()
    }

    /// The core's end this result stands for (without its payload).
    fn finished(&self) -> Finished {
        match *self {
            RunResult::Executed(_) => Finished::Executed,
            RunResult::Replayed { outcome, .. } => Finished::Replay {
                outcome,
                response: None,
                error: None,
            },
            RunResult::InProgress { retry_after_millis } => {
                Finished::InProgress { retry_after_millis }
            }
            RunResult::FingerprintMismatch => Finished::FingerprintMismatch,
            RunResult::KeyTooOld => Finished::KeyTooOld,
        }
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
        let (way, fast) = (Way::RunOnce, self.fast.as_ref());
        let mut driver = self.driver(way, key, &request);
        let held = match claim(&mut Session::new(&self.store), &mut driver, fast, way).await? {
            Ok(held) => held,
            Err(not_run) => return Ok(not_run),
        };
        // No connection is held while the operation runs.
        let lease = RecordLease::new(self, key, held, None);
        let heartbeat = lease.heartbeat(RecordHeartbeat::new(
            Store::<DB>::manifest(),
            self.policy,
            key,
            &held,
        ));
        let result = telemetry::operation(way, operation(lease)).await;
        heartbeat.abort();
        let step = driver.finish(outcome_of(&result), self.store.clock.now_millis());
        // Once the operation has an outcome, recording it finishes even if the
        // caller goes away (docs/spec.md, "Completion keeps trying"): it runs as
        // a task of its own, which dropping this future only detaches.
        let (store, fast) = (self.store.clone(), self.fast.clone());
        let completion = tokio::spawn(telemetry::complete(
            way,
            stored_bytes(&result),
            async move {
                let session = &mut Session::new(&store);
                drive_record(session, &mut driver, fast.as_ref(), step).await
            },
        ));
        match completion.await {
            Ok(end) => result_of(end?, Some(result)),
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            // The runtime shut down: the record stays pending until its lease passes.
            Err(_) => Err(unexpected_step("the completion, at the runtime's shutdown").into()),
        }
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
        let way = Way::SameTransaction;
        let mut driver = self.driver(way, key, &request);
        // The session moves into a temporary that ends with the claim, and
        // with it its borrow of `conn`.
        let session = Session::caller(&self.store, &mut *conn);
        let claimed = claim(&mut { session }, &mut driver, None, way).await?;
        if let Err(not_run) = claimed {
            return Ok(not_run);
        }
        let result = telemetry::operation(way, operation(&mut *conn)).await;
        let session = &mut Session::caller(&self.store, conn);
        complete(session, &mut driver, None, way, result).await
    }

    /// Claims `key` with a lease ("lease and fence"): a [`RecordLease`] to
    /// complete or fail, or the result of a request that does not run.
    /// With a fast path, a duplicate may be answered from Redis.
    pub async fn claim_lease(
        &self,
        key: &IdempotencyKey,
        request: StoreRequest,
    ) -> Result<Claimed<DB>, Error> {
        let (way, fast) = (Way::Lease, self.fast.as_ref());
        let mut driver = self.driver(way, key, &request);
        Ok(
            match claim(&mut Session::new(&self.store), &mut driver, fast, way).await? {
                Ok(held) => Claimed::Held(RecordLease::new(self, key, held, Some(driver))),
                Err(not_run) => Claimed::NotRun(not_run),
            },
        )
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

/// Claims on `session` (the span `mintid.claim`): the claim held, or the
/// result of a request that does not run.
async fn claim<DB: Backend>(
    session: &mut Session<'_, DB>,
    driver: &mut RecordDriver,
    fast: Option<&BoundFastPath>,
    way: Way,
) -> Result<Result<Held, RunResult>, Error> {
    let step = driver.start(session.store().clock.now_millis());
    match telemetry::claim(way, drive_record(session, driver, fast, step)).await? {
        RecordYield::Execute(held) => Ok(Ok(held)),
        end => result_of(end, None).map(Err),
    }
}

/// Records the operation's `result` on `session` (the span
/// `mintid.complete`): the request's result.
async fn complete<DB: Backend>(
    session: &mut Session<'_, DB>,
    driver: &mut RecordDriver,
    fast: Option<&BoundFastPath>,
    way: Way,
    result: Result<StoredResponse, OperationError>,
) -> Result<RunResult, Error> {
    let step = driver.finish(outcome_of(&result), session.store().clock.now_millis());
    let steps = drive_record(session, driver, fast, step);
    let end = telemetry::complete(way, stored_bytes(&result), steps).await?;
    result_of(end, Some(result))
}

/// The result of a request from the driver's `end`, and the operation's
/// `result` if it ran.
fn result_of(
    end: RecordYield,
    result: Option<Result<StoredResponse, OperationError>>,
) -> Result<RunResult, Error> {
    let RecordYield::Done(finished) = end else {
        return Err(unexpected_step(&format!("{end:?}")).into());
    };
    Ok(match (finished, result) {
        (Finished::Executed, Some(Ok(response))) => RunResult::Executed(response),
        (Finished::OperationFailed { .. }, Some(Err(error))) => {
            return Err(Error::Operation(error));
        }
        // The operation's error wins; the store's is kept beside it and logged
        // (docs/spec.md, "Which error the caller sees").
        (Finished::OperationFailedUnrecorded { store_error }, Some(Err(operation))) => {
            telemetry::not_recorded(&store_error);
            let store = Box::new(store_error);
            return Err(Error::OperationNotRecorded { operation, store });
        }
        (
            Finished::Replay {
                outcome,
                response,
                error,
            },
            _,
        ) => RunResult::Replayed {
            outcome,
            response,
            error,
        },
        (Finished::InProgress { retry_after_millis }, _) => {
            RunResult::InProgress { retry_after_millis }
        }
        (Finished::FingerprintMismatch, _) => RunResult::FingerprintMismatch,
        (Finished::KeyTooOld, _) => RunResult::KeyTooOld,
        (finished, _) => return Err(unexpected_step(&format!("{finished:?}")).into()),
    })
}

/// Drives a record driver from `step` to its next yield for the host (the
/// operation to run, or its end), running its Redis steps on `fast` and
/// counting what they came to.
async fn drive_record<DB: Backend>(
    session: &mut Session<'_, DB>,
    driver: &mut RecordDriver,
    fast: Option<&BoundFastPath>,
    mut step: RecordStep,
) -> Result<RecordYield, Error> {
    let yielded = loop {
        match drive(session, driver, step).await {
            Ok(RecordYield::Redis(call)) => {
                session.release();
                let answer = match fast {
                    Some(fast) => fast.run(&call).await,
                    None => mintid::store::FastAnswer::Failed("no fast path".into()),
                };
                step = driver.push_redis(answer, session.store().clock.now_millis());
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
    /// The claim's record driver ([`IdempotencyStore::claim_lease`] only).
    driver: Mutex<Option<RecordDriver>>,
    /// The fast path the driver's Redis steps run on, if any.
    fast: Option<BoundFastPath>,
}

impl<DB: Backend> LeaseInner<DB> {
    /// Notes a renewal's end: its new deadline, or the key lost.
    fn renewed(&self, renewed: Result<u64, &Error>) {
        match renewed {
            Ok(deadline) => {
                self.deadline.fetch_max(deadline, Ordering::AcqRel);
            }
            Err(error) if error.code() == Some(StoreErrorKind::RecordLost.code()) => {
                self.lost.store(true, Ordering::Release);
                telemetry::record_lost();
            }
            Err(_) => {}
        }
    }
}

impl<DB: Backend> RecordLease<DB> {
    fn new(
        records: &IdempotencyStore<DB>,
        key: &IdempotencyKey,
        held: Held,
        driver: Option<RecordDriver>,
    ) -> Self {
        let renewal = RecordRenewal::new(Store::<DB>::manifest(), records.policy, key, &held);
        Self {
            inner: Arc::new(LeaseInner {
                store: records.store.clone(),
                held,
                deadline: AtomicU64::new(held.lease_deadline_millis),
                lost: AtomicBool::new(false),
                renewal: Mutex::new(renewal),
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
        let first = Step::Run(renewal.start(inner.store.clock.now_millis()));
        let mut driver = Pushing(|answer, _now| renewal.push(answer));
        let renewed = inner.store.drive(&mut driver, first).await;
        inner.renewed(renewed.as_ref().copied());
        renewed
    }

    /// Stores `response` as the result (lease and fence).
    pub async fn complete(&self, response: StoredResponse) -> Result<(), Error> {
        self.finish(Ok(response)).await
    }

    /// Stores a failure (lease and fence): final (replayed, or released when
    /// the policy does not store errors) or retryable (released).
    pub async fn fail(&self, error: OperationError) -> Result<(), Error> {
        match self.finish(Err(error)).await {
            Err(Error::Operation(_)) => Ok(()),
            other => other,
        }
    }

    async fn finish(&self, result: Result<StoredResponse, OperationError>) -> Result<(), Error> {
        let inner = &self.inner;
        let mut guard = inner.driver.lock().await;
        let Some(driver) = guard.as_mut() else {
            return Err(unexpected_step("a completion of a run-once lease").into());
        };
        let session = &mut Session::new(&inner.store);
        complete(session, driver, inner.fast.as_ref(), Way::Lease, result).await?;
        Ok(())
    }

    /// Starts `beat`, the core's heartbeat of a `run once` operation's lease
    /// (`docs/spec.md`, "The heartbeat"), in the background: its renewals on
    /// a connection of their own, its pauses waited out on the store's clock
    /// (a manual clock is waited for, never moved on). Aborted when the
    /// operation returns: a renewal in flight changes nothing.
    fn heartbeat(&self, mut heartbeat: RecordHeartbeat) -> tokio::task::AbortHandle {
        // Started when the operation starts: its pauses count from now.
        let now = self.inner.store.clock.now_millis();
        let first = heartbeat.start(now);
        let mut beat = Beat(heartbeat, Arc::clone(&self.inner));
        tokio::spawn(async move {
            let inner = Arc::clone(&beat.1);
            let mut session = Session::new(&inner.store).waiting(now);
            if let Err(error) = drive(&mut session, &mut beat, first).await {
                inner.renewed(Err(&error));
            }
        })
        .abort_handle()
    }
}

/// The heartbeat in the step loop, each renewal's deadline noted in the lease.
struct Beat<DB: Backend>(RecordHeartbeat, Arc<LeaseInner<DB>>);

impl<DB: Backend> Driver for Beat<DB> {
    type Yield = u64;
    fn push(&mut self, answer: Answer, now_millis: u64) -> Step<u64> {
        let step = self.0.push(answer, now_millis);
        self.1.renewed(Ok(self.0.lease_deadline_millis()));
        step
    }
    fn resume(&mut self, now_millis: u64) -> Step<u64> {
        self.0.resume(now_millis)
    }
}
