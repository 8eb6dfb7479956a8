//! Applying the shared schema's numbered migrations, and telling which are
//! pending: one protocol for every host (`docs/spec.md`, "Migrations").

use alloc::vec::Vec;

use super::record_driver::db_error;
use super::{
    Answer, DbError, DriverError, Manifest, Migration, Query, Step, StoreError, StoreErrorKind,
    Value,
};

/// The first pause while another process holds the migration lock, in
/// milliseconds; doubled after each try up to [`MIGRATION_LOCK_PAUSE_MAX_MILLIS`].
pub const MIGRATION_LOCK_PAUSE_MILLIS: u64 = 50;
/// The longest pause between two tries of the migration lock, in milliseconds.
pub const MIGRATION_LOCK_PAUSE_MAX_MILLIS: u64 = 1_000;
/// How long a migrator waits for another one's lock before it gives up with
/// `store.conflict`, in milliseconds (5 minutes: the other one may be
/// creating an index on a large table).
pub const MIGRATION_LOCK_WAIT_MILLIS: u64 = 300_000;

/// What a [`Migrator`] hands its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigrationYield {
    /// Execute this statement of migration `version` as it is (no
    /// parameters, rows ignored) on the driver's connection, then push
    /// `Answer::Affected(_)` (any count) or the failure.
    Execute {
        /// The migration's version.
        version: u32,
        /// The SQL, without its final `;`.
        sql: &'static str,
    },
    /// The protocol ended: for [`Migrator::migrate`] the versions this run
    /// applied (empty when another process or an earlier run had applied
    /// them all), for [`Migrator::pending`] the versions not yet applied;
    /// ascending either way.
    Done(Vec<u32>),
}

/// A migrator's step.
pub type MigrationStep = Step<MigrationYield>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Idle,
    Locking,
    Waiting,
    Ensuring,
    Reading,
    Beginning,
    Rechecking,
    Executing { statement: usize },
    Committing { applied: bool },
    RollingBack(DriverError),
    Unlocking(Option<DriverError>),
    Checking,
    Ended,
}

/// Applies the numbered migrations of a [`Manifest`] (or reads which are
/// pending), all steps on one connection of the host.
///
/// `migrate`: take the migration lock (PostgreSQL's advisory lock and
/// MySQL's named lock are held by the session; again after a pause while
/// another process holds it, for up to [`MIGRATION_LOCK_WAIT_MILLIS`]),
/// create the versions table if it is missing, read the applied versions,
/// then for each pending migration in order: begin a write transaction, read
/// the applied versions again (another process may have applied it: SQLite
/// has no session lock, its write lock is this transaction's), run its
/// statements and commit. The lock is given back at the end, after a
/// failure too, and a failure inside a transaction rolls it back first.
///
/// `pending`: read the applied versions (the table must exist: a database
/// never migrated fails with `store.query_failed`) and answer which of the
/// manifest's versions are missing; nothing is written.
#[derive(Debug, Clone)]
pub struct Migrator {
    manifest: Manifest,
    migrations: Vec<Migration>,
    state: State,
    /// Indexes into `migrations` still to apply, in order.
    pending: Vec<usize>,
    applied: Vec<u32>,
    started_millis: u64,
    pause_millis: u64,
}

impl Migrator {
    /// A migrator applying every migration of `manifest` that is not yet applied.
    pub fn migrate(manifest: Manifest) -> Self {
        Self::new(manifest, State::Idle)
    }

    /// A check answering which migrations of `manifest` are not yet applied.
    pub fn pending(manifest: Manifest) -> Self {
        Self::new(manifest, State::Checking)
    }

    fn new(manifest: Manifest, state: State) -> Self {
        Self {
            manifest,
            migrations: manifest.migrations(),
            state,
            pending: Vec::new(),
            applied: Vec::new(),
            started_millis: 0,
            pause_millis: MIGRATION_LOCK_PAUSE_MILLIS,
        }
    }

    /// Start at `now_millis`: the first query.
    pub fn start(&mut self, now_millis: u64) -> MigrationStep {
        self.started_millis = now_millis;
        match self.state {
            State::Checking => Step::Run(self.query("applied_migrations")),
            _ => self.run(State::Locking, "migration_lock"),
        }
    }

    /// Resume after a [`Step::Pause`]: take the lock again.
    pub fn resume(&mut self) -> MigrationStep {
        match self.state {
            State::Waiting => self.run(State::Locking, "migration_lock"),
            _ => self.out_of_order(),
        }
    }

    /// Push the answer to the last step (a query, a statement, a begin, a
    /// commit or a rollback) at `now_millis`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> MigrationStep {
        let state = core::mem::replace(&mut self.state, State::Ended);
        match (state, answer) {
            (State::Checking, Answer::Rows(rows)) => match self.unapplied(&rows) {
                Ok(pending) => Step::Yield(MigrationYield::Done(
                    pending
                        .into_iter()
                        .map(|at| self.migrations[at].version)
                        .collect(),
                )),
                Err(error) => Step::Fail(error),
            },
            (State::Checking, Answer::Failed(error)) => Step::Fail(store(&error)),
            (State::Locking, Answer::Rows(rows)) => self.locked(&rows, now_millis),
            (State::Locking, Answer::Failed(error)) => Step::Fail(store(&error)),
            (State::Ensuring, Answer::Affected(_)) => {
                self.run(State::Reading, "applied_migrations")
            }
            (State::Reading, Answer::Rows(rows)) => match self.unapplied(&rows) {
                Ok(pending) => {
                    self.pending = pending;
                    self.begin_next()
                }
                Err(error) => self.unlock(Some(error)),
            },
            (State::Beginning, Answer::Affected(_)) => {
                self.run(State::Rechecking, "applied_migrations")
            }
            (State::Rechecking, Answer::Rows(rows)) => match self.unapplied(&rows) {
                Ok(pending) if pending.contains(&self.pending[0]) => self.execute(0),
                Ok(_) => {
                    self.state = State::Committing { applied: false };
                    Step::Commit
                }
                Err(error) => self.roll_back(error),
            },
            (State::Executing { statement }, Answer::Affected(_)) => self.execute(statement + 1),
            (State::Committing { applied }, Answer::Affected(_)) => {
                let at = self.pending.remove(0);
                if applied {
                    self.applied.push(self.migrations[at].version);
                }
                self.begin_next()
            }
            (State::RollingBack(error), _) => self.unlock(Some(error)),
            (State::Unlocking(None), Answer::Rows(_)) => {
                Step::Yield(MigrationYield::Done(core::mem::take(&mut self.applied)))
            }
            (State::Unlocking(None), Answer::Failed(error)) => Step::Fail(store(&error)),
            (State::Unlocking(Some(error)), _) => Step::Fail(error),
            (State::Ensuring | State::Reading, Answer::Failed(error)) => {
                self.unlock(Some(store(&error)))
            }
            (
                State::Beginning
                | State::Rechecking
                | State::Executing { .. }
                | State::Committing { .. },
                Answer::Failed(error),
            ) => self.roll_back(store(&error)),
            (State::Idle | State::Waiting | State::Ended, _) => self.out_of_order(),
            (State::Ensuring | State::Reading, _) => self.unlock(Some(unreadable())),
            (
                State::Beginning
                | State::Rechecking
                | State::Executing { .. }
                | State::Committing { .. },
                _,
            ) => self.roll_back(unreadable()),
            (State::Checking | State::Locking | State::Unlocking(None), _) => {
                Step::Fail(unreadable())
            }
        }
    }

    fn query(&self, name: &'static str) -> Query {
        self.manifest.query(name, |_| None)
    }

    fn run(&mut self, state: State, name: &'static str) -> MigrationStep {
        self.state = state;
        Step::Run(self.query(name))
    }

    fn locked(&mut self, rows: &[Vec<Value>], now_millis: u64) -> MigrationStep {
        let Some(locked) = rows.first().and_then(|row| row.first()) else {
            return Step::Fail(unreadable());
        };
        if locked.as_int() == Some(1) {
            return self.run(State::Ensuring, "migrations_table");
        }
        if now_millis.saturating_sub(self.started_millis) >= MIGRATION_LOCK_WAIT_MILLIS {
            return Step::Fail(DriverError::Store(StoreError::new(
                StoreErrorKind::Conflict,
                "another process held the migration lock for longer than the core waits",
            )));
        }
        let millis = self.pause_millis;
        self.pause_millis = (millis * 2).min(MIGRATION_LOCK_PAUSE_MAX_MILLIS);
        self.state = State::Waiting;
        Step::Pause { millis }
    }

    /// The indexes of the manifest's migrations that `rows` (applied
    /// versions) do not list.
    fn unapplied(&self, rows: &[Vec<Value>]) -> Result<Vec<usize>, DriverError> {
        let mut applied = Vec::with_capacity(rows.len());
        for row in rows {
            let version = row.first().and_then(Value::as_int).ok_or_else(unreadable)?;
            applied.push(version);
        }
        Ok((0..self.migrations.len())
            .filter(|&at| !applied.contains(&i64::from(self.migrations[at].version)))
            .collect())
    }

    fn begin_next(&mut self) -> MigrationStep {
        if self.pending.is_empty() {
            return self.unlock(None);
        }
        self.state = State::Beginning;
        Step::Begin { write: true }
    }

    fn execute(&mut self, statement: usize) -> MigrationStep {
        let migration = &self.migrations[self.pending[0]];
        match migration.statements.get(statement) {
            Some(sql) => {
                let version = migration.version;
                let sql = *sql;
                self.state = State::Executing { statement };
                Step::Yield(MigrationYield::Execute { version, sql })
            }
            None => {
                self.state = State::Committing { applied: true };
                Step::Commit
            }
        }
    }

    fn roll_back(&mut self, error: DriverError) -> MigrationStep {
        self.state = State::RollingBack(error);
        Step::Rollback
    }

    fn unlock(&mut self, error: Option<DriverError>) -> MigrationStep {
        self.run(State::Unlocking(error), "migration_unlock")
    }

    fn out_of_order(&mut self) -> MigrationStep {
        self.state = State::Ended;
        Step::Fail(DriverError::Store(StoreError::new(
            StoreErrorKind::QueryFailed,
            "the call does not fit the migrator's state (a host bug)",
        )))
    }
}

fn store(error: &DbError) -> DriverError {
    DriverError::Store(db_error(error, false))
}

fn unreadable() -> DriverError {
    DriverError::Store(StoreError::new(
        StoreErrorKind::UnexpectedRow,
        "the answer to a migration query is not of its result kind",
    ))
}
