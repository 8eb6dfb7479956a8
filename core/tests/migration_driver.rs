//! The migration driver against a scripted database of migrations: the
//! order of its steps, its lock, its failures, and two migrators at once
//! (every interleaving, every dialect) applying each migration once.

use std::collections::BTreeSet;

use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, DriverError, MIGRATION_LOCK_PAUSE_MAX_MILLIS,
    MIGRATION_LOCK_WAIT_MILLIS, Manifest, MigrationStep, MigrationYield, Migrator, Placeholder,
    Step, StoreErrorKind, Value,
};

#[path = "support/explore.rs"]
mod explore;
use explore::{Model, debug_print, explore};

const DIALECTS: [Dialect; 3] = [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite];

fn manifest(dialect: Dialect) -> Manifest {
    Manifest::new(dialect, Placeholder::Question)
}

fn versions(dialect: Dialect) -> Vec<u32> {
    manifest(dialect)
        .migrations()
        .iter()
        .map(|m| m.version)
        .collect()
}

/// The database as migrations see it: the versions table, the session lock
/// (PostgreSQL's advisory lock, MySQL's named lock), SQLite's write lock and
/// each session's uncommitted versions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SchemaDb {
    dialect: Dialect,
    table: bool,
    applied: BTreeSet<u32>,
    lock: Option<usize>,
    writer: Option<usize>,
    uncommitted: [BTreeSet<u32>; 2],
    /// Which sessions ran the statements of each version.
    ran: Vec<(u32, usize)>,
    /// A statement of this version fails (once).
    broken: Option<u32>,
}

impl SchemaDb {
    fn new(dialect: Dialect) -> Self {
        Self {
            dialect,
            table: false,
            applied: BTreeSet::new(),
            lock: None,
            writer: None,
            uncommitted: [BTreeSet::new(), BTreeSet::new()],
            ran: Vec::new(),
            broken: None,
        }
    }

    fn one(value: i64) -> Answer {
        Answer::Rows(vec![vec![Value::Int(value)]])
    }

    /// Whether `session` can take `step` now (SQLite's `BEGIN IMMEDIATE`
    /// waits for another writer).
    fn ready(&self, session: usize, step: &MigrationStep) -> bool {
        !matches!(step, Step::Begin { .. })
            || self.dialect != Dialect::Sqlite
            || self.writer.is_none_or(|writer| writer == session)
    }

    /// Takes `step` for `session`: the answer to push.
    fn take(&mut self, session: usize, step: &MigrationStep) -> Answer {
        match step {
            Step::Run(query) => self.run(session, query.name),
            Step::Begin { .. } => {
                self.writer = Some(session);
                Answer::Affected(0)
            }
            Step::Commit | Step::Rollback => {
                let mine = std::mem::take(&mut self.uncommitted[session]);
                if matches!(step, Step::Commit) {
                    self.applied.extend(mine);
                }
                if self.writer == Some(session) {
                    self.writer = None;
                }
                Answer::Affected(0)
            }
            Step::Yield(MigrationYield::Execute { version, sql }) => {
                if self.broken == Some(*version) {
                    self.broken = None;
                    return Answer::Failed(DbError {
                        class: DbErrorClass::Other,
                        message: "permission denied for schema public".into(),
                    });
                }
                if !self.ran.contains(&(*version, session)) {
                    self.ran.push((*version, session));
                }
                // The statement that records the version (MySQL commits each
                // statement on its own).
                let records = sql.contains("INSERT INTO mintid_schema_migrations");
                if records && self.dialect == Dialect::Mysql {
                    self.applied.insert(*version);
                } else if records {
                    self.uncommitted[session].insert(*version);
                }
                Answer::Affected(0)
            }
            other => panic!("no answer to {other:?}"),
        }
    }

    fn run(&mut self, session: usize, name: &str) -> Answer {
        match name {
            "migration_lock" if self.dialect == Dialect::Sqlite => Self::one(1),
            "migration_lock" if self.lock.is_none_or(|holder| holder == session) => {
                self.lock = Some(session);
                Self::one(1)
            }
            "migration_lock" => Self::one(0),
            "migration_unlock" => {
                let held = self.lock == Some(session);
                if held {
                    self.lock = None;
                }
                Self::one(i64::from(held))
            }
            "migrations_table" => {
                self.table = true;
                Answer::Affected(0)
            }
            "applied_migrations" if !self.table => Answer::Failed(DbError {
                class: DbErrorClass::Other,
                message: "relation \"mintid_schema_migrations\" does not exist".into(),
            }),
            "applied_migrations" => Answer::Rows(
                self.applied
                    .union(&self.uncommitted[session])
                    .map(|version| vec![Value::Int(i64::from(*version))])
                    .collect(),
            ),
            other => panic!("the migrator ran {other}"),
        }
    }
}

/// Drives `migrator` alone to its end at `now`; the names of its steps.
fn drive(db: &mut SchemaDb, migrator: &mut Migrator, now: u64) -> (MigrationStep, Vec<String>) {
    let mut step = migrator.start(now);
    let mut trace = Vec::new();
    loop {
        trace.push(match &step {
            Step::Run(query) => query.name.to_owned(),
            Step::Begin { write } => format!("begin write={write}"),
            Step::Commit => "commit".to_owned(),
            Step::Rollback => "rollback".to_owned(),
            Step::Yield(MigrationYield::Execute { version, .. }) => format!("execute {version}"),
            Step::Pause { millis } => format!("pause {millis}"),
            Step::Yield(MigrationYield::Done(_)) | Step::Fail(_) => return (step, trace),
        });
        step = match step {
            Step::Pause { .. } => migrator.resume(),
            other => {
                let answer = db.take(0, &other);
                migrator.push(answer, now)
            }
        };
    }
}

fn store_kind(step: &MigrationStep) -> Option<StoreErrorKind> {
    match step {
        Step::Fail(DriverError::Store(error)) => Some(error.kind()),
        _ => None,
    }
}

#[test]
fn a_fresh_database_gets_every_migration_each_in_its_transaction_under_the_lock() {
    for dialect in DIALECTS {
        let mut db = SchemaDb::new(dialect);
        let (end, trace) = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        assert_eq!(end, Step::Yield(MigrationYield::Done(versions(dialect))));
        assert_eq!(
            trace[..3],
            ["migration_lock", "migrations_table", "applied_migrations"]
        );
        assert_eq!(trace.last().map(String::as_str), Some("migration_unlock"));
        let first = &trace[3..trace.iter().position(|s| s == "commit").unwrap() + 1];
        let statements = manifest(dialect).migrations()[0].statements.len();
        assert_eq!(first.len(), statements + 3, "{first:?}");
        assert_eq!(first[..2], ["begin write=true", "applied_migrations"]);
        assert!(first[2..statements + 2].iter().all(|s| s == "execute 1"));
        assert_eq!(
            trace.iter().filter(|s| *s == "commit").count(),
            versions(dialect).len()
        );
        assert_eq!(db.applied, versions(dialect).into_iter().collect());
        assert_eq!(db.lock, None);
    }
}

#[test]
fn a_migrated_database_gets_nothing_and_no_transaction() {
    for dialect in DIALECTS {
        let mut db = SchemaDb::new(dialect);
        let _ = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        let (end, trace) = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        assert_eq!(end, Step::Yield(MigrationYield::Done(vec![])));
        assert_eq!(
            trace,
            [
                "migration_lock",
                "migrations_table",
                "applied_migrations",
                "migration_unlock"
            ]
        );
    }
}

#[test]
fn pending_lists_the_missing_versions_and_writes_nothing() {
    for dialect in DIALECTS {
        let mut db = SchemaDb::new(dialect);
        let (end, trace) = drive(&mut db, &mut Migrator::pending(manifest(dialect)), 0);
        assert_eq!(
            store_kind(&end),
            Some(StoreErrorKind::QueryFailed),
            "{end:?}"
        );
        assert_eq!(trace, ["applied_migrations"]);
        db.table = true;
        db.applied = [1, 2].into();
        let (end, _) = drive(&mut db, &mut Migrator::pending(manifest(dialect)), 0);
        assert_eq!(
            end,
            Step::Yield(MigrationYield::Done(versions(dialect)[2..].to_vec()))
        );
        let _ = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        let (end, _) = drive(&mut db, &mut Migrator::pending(manifest(dialect)), 0);
        assert_eq!(end, Step::Yield(MigrationYield::Done(vec![])));
    }
}

#[test]
fn a_held_lock_is_waited_for_with_growing_pauses_then_given_up_as_a_conflict() {
    let mut db = SchemaDb::new(Dialect::Postgres);
    db.lock = Some(1);
    let mut migrator = Migrator::migrate(manifest(Dialect::Postgres));
    let mut now = 1_000;
    let mut step = migrator.start(now);
    let mut pauses = Vec::new();
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = db.run(0, query.name);
                migrator.push(answer, now)
            }
            Step::Pause { millis } => {
                pauses.push(millis);
                now += millis;
                migrator.resume()
            }
            end => break step = end,
        };
    }
    assert_eq!(pauses[..6], [50, 100, 200, 400, 800, 1_000]);
    assert!(
        pauses[6..]
            .iter()
            .all(|&p| p == MIGRATION_LOCK_PAUSE_MAX_MILLIS)
    );
    assert!(now - 1_000 >= MIGRATION_LOCK_WAIT_MILLIS);
    assert!(now - 1_000 < MIGRATION_LOCK_WAIT_MILLIS + MIGRATION_LOCK_PAUSE_MAX_MILLIS);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::Conflict),
        "{step:?}"
    );
    assert!(db.applied.is_empty() && !db.table);
}

#[test]
fn a_failed_statement_rolls_its_migration_back_gives_the_lock_back_and_fails_with_its_error() {
    for dialect in DIALECTS {
        let mut db = SchemaDb::new(dialect);
        db.broken = Some(2);
        let (end, trace) = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        assert_eq!(
            store_kind(&end),
            Some(StoreErrorKind::QueryFailed),
            "{end:?}"
        );
        let Step::Fail(DriverError::Store(error)) = &end else {
            unreachable!()
        };
        assert_eq!(
            error.db_message(),
            Some("permission denied for schema public")
        );
        assert_eq!(trace[trace.len() - 2..], ["rollback", "migration_unlock"]);
        assert!(db.applied.contains(&1) && !db.applied.contains(&3));
        assert_eq!(db.lock, None);
        // Run again, it completes what is missing.
        let (end, _) = drive(&mut db, &mut Migrator::migrate(manifest(dialect)), 0);
        assert_eq!(end, Step::Yield(MigrationYield::Done(vec![2, 3, 4, 5])));
    }
}

#[test]
fn a_lost_connection_at_a_commit_is_unavailable_after_a_rollback() {
    let mut migrator = Migrator::migrate(manifest(Dialect::Sqlite));
    let mut db = SchemaDb::new(Dialect::Sqlite);
    let mut step = migrator.start(0);
    while step != Step::Commit {
        let answer = db.take(0, &step);
        step = migrator.push(answer, 0);
    }
    let lost = Answer::Failed(DbError {
        class: DbErrorClass::ConnectionLost,
        message: "disk I/O error".into(),
    });
    assert_eq!(migrator.push(lost.clone(), 0), Step::Rollback);
    let Step::Run(unlock) = migrator.push(lost.clone(), 0) else {
        panic!("the lock given back")
    };
    assert_eq!(unlock.name, "migration_unlock");
    let end = migrator.push(lost, 0);
    assert_eq!(
        store_kind(&end),
        Some(StoreErrorKind::Unavailable),
        "{end:?}"
    );
    assert_eq!(migrator.push(Answer::Affected(0), 0), migrator.resume());
}

/// Two migrators on one database, each step of either in any order.
#[derive(Debug, Clone)]
struct TwoMigrators {
    db: SchemaDb,
    migrators: [Migrator; 2],
    next: [Option<MigrationStep>; 2],
    ended: [Option<MigrationStep>; 2],
}

impl Model for TwoMigrators {
    type Action = usize;

    fn actions(&self, out: &mut Vec<usize>) {
        for session in 0..2 {
            if let Some(step) = &self.next[session] {
                if self.db.ready(session, step) {
                    out.push(session);
                }
            }
        }
    }

    fn step(&mut self, &session: &usize) {
        let step = self.next[session].take().expect("an enabled session");
        let migrator = &mut self.migrators[session];
        let next = match step {
            Step::Pause { .. } => migrator.resume(),
            step => {
                let answer = self.db.take(session, &step);
                migrator.push(answer, 0)
            }
        };
        match next {
            Step::Fail(_) | Step::Yield(MigrationYield::Done(_)) => {
                self.ended[session] = Some(next)
            }
            step => self.next[session] = Some(step),
        }
    }

    fn check(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for (version, _) in &self.db.ran {
            if !seen.insert(*version) {
                return Err(format!(
                    "migration {version} applied by both: {:?}",
                    self.db.ran
                ));
            }
        }
        Ok(())
    }

    fn check_end(&self) -> Result<(), String> {
        let mut applied: Vec<u32> = Vec::new();
        for end in &self.ended {
            match end {
                Some(Step::Yield(MigrationYield::Done(versions))) => applied.extend(versions),
                other => return Err(format!("a migrator ended with {other:?}")),
            }
        }
        applied.sort_unstable();
        let all = versions(self.db.dialect);
        if applied != all || self.db.applied != all.iter().copied().collect() {
            return Err(format!(
                "applied {applied:?}, recorded {:?}",
                self.db.applied
            ));
        }
        if self.db.lock.is_some() || self.db.writer.is_some() {
            return Err(format!("a lock left held: {:?}", self.db));
        }
        Ok(())
    }

    fn fingerprint(&self) -> u64 {
        debug_print(&(&self.db, &self.next, &self.ended, &self.migrators))
    }
}

#[test]
fn two_migrators_at_once_apply_each_migration_once_in_every_interleaving() {
    for dialect in DIALECTS {
        let mut migrators = [
            Migrator::migrate(manifest(dialect)),
            Migrator::migrate(manifest(dialect)),
        ];
        let next = [Some(migrators[0].start(0)), Some(migrators[1].start(0))];
        let model = TwoMigrators {
            db: SchemaDb::new(dialect),
            migrators,
            next,
            ended: [None, None],
        };
        match explore(&[model], 400) {
            Ok(stats) => assert!(stats.ends > 0 && stats.cut == 0, "{dialect:?}: {stats}"),
            Err(counterexample) => panic!("{dialect:?}: {counterexample:?}"),
        }
    }
}
