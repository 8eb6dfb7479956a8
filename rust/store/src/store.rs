//! A pool of one database with the core's statements for it, the clock the
//! drivers read, and migrations.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mintid::store::{
    Answer, DbError, DbErrorClass, Manifest, MigrationYield, Migrator, Query, ResultKind,
    Statement, Step,
};
use mintid::{Clock, ManualClock, SystemClock};
use sqlx::pool::PoolConnection;

use crate::backend::{Backend, classify};
use crate::error::Error;
use crate::steps::{Driver, drive};

/// The clock the drivers read: the system clock (pauses sleep on tokio), or
/// a manual one for tests (pauses move it on at once).
#[derive(Debug, Clone, Default)]
pub enum StoreClock {
    /// The system clock.
    #[default]
    System,
    /// A manual clock; a pause advances it.
    Manual(Arc<ManualClock>),
}

impl StoreClock {
    /// Now, in Unix milliseconds.
    pub fn now_millis(&self) -> u64 {
        match self {
            StoreClock::System => SystemClock.now_millis(),
            StoreClock::Manual(clock) => clock.now_millis(),
        }
    }

    /// Waits `millis` milliseconds (a manual clock moves on instead).
    pub async fn pause(&self, millis: u64) {
        match self {
            StoreClock::System => tokio::time::sleep(Duration::from_millis(millis)).await,
            StoreClock::Manual(clock) => clock.advance_millis(millis),
        }
    }
}

/// A fault a [`Store`] made [`with_faults`](Store::with_faults) injects into
/// one of the core's named statements: what the shared conformance
/// scenarios (`tests/conformance`, `lose_reply`, `mark_fails`) need of an
/// executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementFault {
    /// The statement is not run; the database answers with an error of this
    /// class.
    Fail(DbErrorClass),
    /// The statement runs to its end (committed), then its connection is
    /// closed and the reply is lost (`connection_lost`).
    LoseReply,
}

/// Which fault, if any, a statement of a name meets.
type Faults = Arc<dyn Fn(&'static str) -> Option<StatementFault> + Send + Sync>;

/// One database: a sqlx pool, the core's statements for its dialect, and
/// the clock. Cheap to clone (the pool and statements are shared).
pub struct Store<DB: Backend> {
    pub(crate) pool: sqlx::Pool<DB>,
    pub(crate) statements: Arc<HashMap<&'static str, Statement>>,
    pub(crate) clock: StoreClock,
    faults: Option<Faults>,
}

impl<DB: Backend> core::fmt::Debug for Store<DB> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Store")
            .field("pool", &self.pool)
            .field("clock", &self.clock)
            .field("faults", &self.faults.is_some())
            .finish_non_exhaustive()
    }
}

clone_fields!(Store, pool, statements, clock, faults);

impl<DB: Backend> Store<DB> {
    /// A store over `pool`, on the system clock; describes the core's metrics
    /// to the `metrics` recorder installed now (feature `metrics`).
    pub fn new(pool: sqlx::Pool<DB>) -> Self {
        let statements = Self::manifest()
            .statements()
            .into_iter()
            .map(|statement| (statement.name, statement))
            .collect();
        crate::telemetry::describe();
        Self {
            pool,
            statements: Arc::new(statements),
            clock: StoreClock::System,
            faults: None,
        }
    }

    /// The same store, its drivers' statements meeting the faults `faults`
    /// names by statement name (`complete`, `outbox_mark_sent`, …): for
    /// fault tests and conformance runners, never for production.
    pub fn with_faults(
        mut self,
        faults: impl Fn(&'static str) -> Option<StatementFault> + Send + Sync + 'static,
    ) -> Self {
        self.faults = Some(Arc::new(faults));
        self
    }

    /// The same store on another clock.
    pub fn with_clock(mut self, clock: StoreClock) -> Self {
        self.clock = clock;
        self
    }

    /// The manifest of this database's dialect and placeholder style.
    pub fn manifest() -> Manifest {
        Manifest::new(DB::DIALECT, DB::PLACEHOLDER)
    }

    /// The pool.
    pub fn pool(&self) -> &sqlx::Pool<DB> {
        &self.pool
    }

    /// The clock the drivers read.
    pub fn clock(&self) -> &StoreClock {
        &self.clock
    }

    /// Applies the schema's migrations not yet applied, by the core's
    /// [`Migrator`] (`docs/spec.md`, "Migrations": under a lock, so that
    /// processes starting together apply each file once, each file in one
    /// transaction where the dialect allows); the versions this call applied.
    pub async fn migrate(&self) -> Result<Vec<u32>, Error> {
        let mut migrator = Migrator::migrate(Self::manifest());
        let mut session = Session::new(self);
        let mut step = migrator.start(self.clock.now_millis());
        loop {
            step = match drive(&mut session, &mut migrator, step).await? {
                MigrationYield::Execute { sql, .. } => {
                    let answer = session.control(sql).await;
                    migrator.push(answer, self.clock.now_millis())
                }
                MigrationYield::Done(applied) => return Ok(applied),
            };
        }
    }

    /// Runs `driver` from `first` on a connection of the pool (the step
    /// loop, [`drive`]).
    pub(crate) async fn drive<D: Driver>(
        &self,
        driver: &mut D,
        first: Step<D::Yield>,
    ) -> Result<D::Yield, Error> {
        drive(&mut Session::new(self), driver, first).await
    }
}

/// The connection a driver's steps run on: one of the pool, taken at the
/// first query and given back (or closed, if it broke or was left inside a
/// transaction) at the end or at a pause outside a transaction; or the
/// caller's, inside the transaction the caller begins and ends.
pub(crate) struct Session<'s, DB: Backend> {
    store: &'s Store<DB>,
    conn: Conn<'s, DB>,
    in_transaction: bool,
    /// A background task's session: the time its next pause counts from (a
    /// manual clock is waited for, never moved on).
    waits: Option<u64>,
}

enum Conn<'s, DB: Backend> {
    Pool(Option<PoolConnection<DB>>),
    Caller(&'s mut DB::Connection),
}

impl<'s, DB: Backend> Session<'s, DB> {
    /// Steps on a connection of `store`'s pool.
    pub(crate) fn new(store: &'s Store<DB>) -> Self {
        Self {
            store,
            conn: Conn::Pool(None),
            in_transaction: false,
            waits: None,
        }
    }

    /// The same session for a background task (the heartbeat) whose driver
    /// started at `from_millis`: a pause on a manual clock lasts until the
    /// test moves the clock that far.
    pub(crate) fn waiting(mut self, from_millis: u64) -> Self {
        self.waits = Some(from_millis);
        self
    }

    /// Steps on the caller's `conn`, inside its transaction.
    pub(crate) fn caller(store: &'s Store<DB>, conn: &'s mut DB::Connection) -> Self {
        Self {
            store,
            conn: Conn::Caller(conn),
            in_transaction: false,
            waits: None,
        }
    }

    /// The store.
    pub(crate) fn store(&self) -> &'s Store<DB> {
        self.store
    }

    /// Whether the steps run on the caller's connection (which begins and
    /// ends no transaction of the driver's).
    pub(crate) fn is_callers(&self) -> bool {
        matches!(self.conn, Conn::Caller(_))
    }

    /// The session's connection, taken from the pool if it holds none (a
    /// pool that gives none is a lost connection).
    async fn conn(&mut self) -> Result<&mut DB::Connection, DbError> {
        if let Conn::Pool(pooled @ None) = &mut self.conn {
            match self.store.pool.acquire().await {
                Ok(conn) => *pooled = Some(conn),
                Err(error) => {
                    let mut failed = classify(&error);
                    failed.class = DbErrorClass::ConnectionLost;
                    return Err(failed);
                }
            }
        }
        match &mut self.conn {
            Conn::Pool(pooled) => Ok(pooled.as_mut().expect("acquired above")),
            Conn::Caller(conn) => Ok(conn),
        }
    }

    /// Runs a driver's query with the statement the manifest gives for it
    /// (meeting the store's injected fault, if any); a broken connection of
    /// the pool is closed, so a retry gets a new one.
    pub(crate) async fn run(&mut self, query: Query) -> Answer {
        let store = self.store;
        let fault = store.faults.as_ref().and_then(|faults| faults(query.name));
        if let Some(StatementFault::Fail(class)) = fault {
            let message = format!("a fault injected into {}", query.name);
            return self.after(Answer::Failed(DbError { class, message }));
        }
        let mut answer = match (store.statements.get(query.name), self.conn().await) {
            (Some(statement), Ok(conn)) => DB::run(conn, statement, query.params).await,
            (_, Err(failed)) => Answer::Failed(failed),
            (None, _) => Answer::Failed(DbError {
                class: DbErrorClass::Other,
                message: format!("the manifest has no statement {}", query.name),
            }),
        };
        if fault == Some(StatementFault::LoseReply) && !matches!(answer, Answer::Failed(_)) {
            answer = Answer::Failed(DbError {
                class: DbErrorClass::ConnectionLost,
                message: "the reply was lost (a fault injected after the statement ran)".into(),
            });
        }
        self.after(answer)
    }

    /// Begins a transaction (`write`: the dialect's write-locking form).
    pub(crate) async fn begin(&mut self, write: bool) -> Answer {
        let answer = self.control(DB::begin(write)).await;
        self.in_transaction = !matches!(answer, Answer::Failed(_));
        answer
    }

    /// Commits (`commit`) or rolls back the transaction.
    pub(crate) async fn end(&mut self, commit: bool) -> Answer {
        let answer = self
            .control(if commit { "COMMIT" } else { "ROLLBACK" })
            .await;
        if !matches!(answer, Answer::Failed(_)) || !commit {
            self.in_transaction = false;
        }
        answer
    }

    /// Gives the pool's connection back, outside a transaction (at a
    /// pause, before a Redis step).
    pub(crate) fn release(&mut self) {
        if !self.in_transaction
            && let Conn::Pool(pooled) = &mut self.conn
        {
            *pooled = None;
        }
    }

    /// A driver's pause on the store's clock, the pool's connection given
    /// back first.
    pub(crate) async fn pause(&mut self, millis: u64) {
        self.release();
        match (self.waits, &self.store.clock) {
            (Some(from), StoreClock::Manual(clock)) => {
                while clock.now_millis() < from.saturating_add(millis) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            (_, clock) => clock.pause(millis).await,
        }
        self.mark();
    }

    /// A background session's next pause counts from now.
    fn mark(&mut self) {
        if let Some(from) = &mut self.waits {
            *from = self.store.clock.now_millis();
        }
    }

    /// Runs SQL without parameters (a transaction's control, a migration's
    /// statement).
    pub(crate) async fn control(&mut self, sql: &'static str) -> Answer {
        let statement = Statement {
            name: "plain",
            kind: ResultKind::Exec,
            sql: sql.into(),
            params: Vec::new(),
            param_types: Vec::new(),
        };
        let answer = match self.conn().await {
            Ok(conn) => DB::run(conn, &statement, Vec::new()).await,
            Err(failed) => Answer::Failed(failed),
        };
        self.after(answer)
    }

    /// Reports a failed answer and closes the pool's connection that broke.
    fn after(&mut self, answer: Answer) -> Answer {
        self.mark();
        let Answer::Failed(error) = &answer else {
            return answer;
        };
        crate::telemetry::store_error(error.class);
        if error.class == DbErrorClass::ConnectionLost
            && let Conn::Pool(pooled) = &mut self.conn
            && let Some(mut conn) = pooled.take()
        {
            conn.close_on_drop();
            self.in_transaction = false;
        }
        answer
    }
}

impl<DB: Backend> Drop for Session<'_, DB> {
    fn drop(&mut self) {
        // A connection left inside a transaction (a cancelled future, a
        // failed rollback) never goes back to the pool.
        if self.in_transaction
            && let Conn::Pool(Some(conn)) = &mut self.conn
        {
            conn.close_on_drop();
        }
    }
}

impl mintid::Clock for StoreClock {
    fn now_millis(&self) -> u64 {
        StoreClock::now_millis(self)
    }
    fn pause(&self, micros: u64) {
        match self {
            StoreClock::System => SystemClock.pause(micros),
            StoreClock::Manual(clock) => clock.pause(micros),
        }
    }
}

/// Waits for a background task stopped at a shutdown for at most the core's
/// bound (`mintid::store::limits::SHUTDOWN_WAIT_MILLIS`, `docs/spec.md`
/// "Limits"), then drops it (aborted); a task that panicked is gone.
pub(crate) async fn wait_at_most_shutdown(task: tokio::task::JoinHandle<()>) {
    let bound = Duration::from_millis(mintid::store::limits::SHUTDOWN_WAIT_MILLIS);
    let abort = task.abort_handle();
    if tokio::time::timeout(bound, task).await.is_err() {
        abort.abort();
    }
}
