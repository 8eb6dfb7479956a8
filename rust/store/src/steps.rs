//! The one step loop of the crate: every driver of the core (records,
//! leases, segments, the outbox, cleanups and renewals) runs through
//! [`drive`], which runs the queries and transaction steps a driver names,
//! pauses when it says so and pushes each answer back. Every loop, retry,
//! limit and error code is the driver's.

use mintid::lease::Acquisition;
use mintid::store::{
    Answer, DriverError, LeaseAcquisition, MigrationYield, Migrator, OutboxRelay, RecordDriver,
    RecordYield, RelayYield, Step, StoreError,
};

use crate::backend::Backend;
use crate::error::Error;
use crate::store::Session;

/// A core driver as the step loop sees it: push an answer, resume after a
/// pause. Each impl forwards to the driver's own methods.
pub(crate) trait Driver {
    /// What the driver yields to the host.
    type Yield;
    /// Pushes the answer to the last `Run`, `Begin`, `Commit` or `Rollback`.
    fn push(&mut self, answer: Answer, now_millis: u64) -> Step<Self::Yield>;
    /// Continues after a `Pause` (a driver that never pauses says so).
    fn resume(&mut self, now_millis: u64) -> Step<Self::Yield> {
        let _ = now_millis;
        Step::Fail(unexpected_step("Pause"))
    }
}

/// [`Driver`] for a core driver: its own `push`, and its `resume` (given
/// the driver and the time).
macro_rules! forward {
    ($driver:ty => $yield:ty, |$this:ident, $now:pat_param| $resume:expr) => {
        impl Driver for $driver {
            type Yield = $yield;
            fn push(&mut self, answer: Answer, now_millis: u64) -> Step<$yield> {
                <$driver>::push(self, answer, now_millis)
            }
            fn resume(&mut self, $now: u64) -> Step<$yield> {
                let $this = self;
                $resume
            }
        }
    };
}

forward!(RecordDriver => RecordYield, |driver, _| driver.resume());
forward!(LeaseAcquisition => Acquisition, |driver, now| driver.resume(now));
forward!(OutboxRelay => RelayYield, |driver, _| driver.resume());
forward!(Migrator => MigrationYield, |driver, _| driver.resume());

/// A driver whose `push` is a closure (the ones that never pause, and the
/// ones that need something beside the answer, e.g. a lease's guard).
pub(crate) struct Pushing<F>(pub(crate) F);

impl<Y, F: FnMut(Answer, u64) -> Step<Y>> Driver for Pushing<F> {
    type Yield = Y;
    fn push(&mut self, answer: Answer, now_millis: u64) -> Step<Y> {
        (self.0)(answer, now_millis)
    }
}

/// Runs `driver`'s steps from `step` on `session` until it yields or fails:
/// queries and transaction steps are answered, a pause sleeps on the store's
/// clock (outside a transaction the pool's connection goes back first).
pub(crate) async fn drive<DB: Backend, D: Driver>(
    session: &mut Session<'_, DB>,
    driver: &mut D,
    mut step: Step<D::Yield>,
) -> Result<D::Yield, Error> {
    let clock = &session.store().clock;
    loop {
        let answer = match step {
            Step::Run(query) => session.run(query).await,
            Step::Begin { .. } | Step::Commit | Step::Rollback if session.is_callers() => {
                return Err(
                    unexpected_step("a transaction step on the caller's connection").into(),
                );
            }
            Step::Begin { write } => session.begin(write).await,
            Step::Commit => session.end(true).await,
            Step::Rollback => session.end(false).await,
            Step::Pause { millis } => {
                session.pause(millis).await;
                step = driver.resume(clock.now_millis());
                continue;
            }
            Step::Yield(yielded) => return Ok(yielded),
            Step::Fail(error) => return Err(error.into()),
        };
        step = driver.push(answer, clock.now_millis());
    }
}

/// The core's error for a step the host cannot take here.
pub(crate) fn unexpected_step(step: &str) -> DriverError {
    DriverError::Store(StoreError::unexpected_step(step))
}

/// The core's error for an answer the host cannot read (a load of a row no
/// driver names).
pub(crate) fn unreadable(query: &str) -> Error {
    DriverError::Store(StoreError::unreadable_answer(query)).into()
}
