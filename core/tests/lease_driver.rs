//! The lease acquisition driver against a scripted `worker_lease` table that
//! applies each named query as the schema's SQL does.

use std::collections::BTreeMap;

use mintid::SnowflakeLayout;
use mintid::lease::{Acquisition, LeasePolicy};
use mintid::store::{
    Answer, Dialect, DriverError, LeaseAcquisition, LeaseStep, Manifest, Placeholder, Query, Step,
    Value,
};

#[derive(Debug, Clone, Copy)]
struct Row {
    owner: bool,
    token: i64,
    deadline: i64,
    high_water: i64,
}

struct Table {
    manifest: Manifest,
    rows: BTreeMap<i64, Row>,
    queries: Vec<&'static str>,
}

impl Table {
    fn new() -> Self {
        Self {
            manifest: Manifest::new(Dialect::Postgres, Placeholder::Numbered),
            rows: BTreeMap::new(),
            queries: Vec::new(),
        }
    }

    fn run(&mut self, query: &Query) -> Answer {
        self.queries.push(query.name);
        let statement = self.manifest.statement(query.name).unwrap();
        let p: BTreeMap<&str, i64> = statement
            .params
            .iter()
            .copied()
            .zip(&query.params)
            .filter_map(|(name, value)| value.as_int().map(|v| (name, v)))
            .collect();
        let now = p.get("now_millis").copied().unwrap_or(0);
        let free = |row: &Row| !row.owner || row.deadline <= now;
        match query.name {
            "lease_find" | "lease_find_after" => {
                let after = p.get("after_worker").copied().unwrap_or(-1);
                let found = self
                    .rows
                    .iter()
                    .find(|(id, row)| **id <= p["max_worker"] && **id > after && free(row));
                Answer::Rows(
                    found
                        .map(|(id, row)| {
                            vec![
                                Value::Int(*id),
                                if row.owner {
                                    Value::Text("someone".into())
                                } else {
                                    Value::Null
                                },
                                Value::Int(row.token),
                                Value::Int(row.deadline),
                                Value::Int(row.high_water),
                            ]
                        })
                        .into_iter()
                        .collect(),
                )
            }
            "lease_take" => {
                let row = self.rows.get_mut(&p["worker_id"]).unwrap();
                if row.token == p["expected_token"] && (!row.owner || row.deadline <= now) {
                    *row = Row {
                        owner: true,
                        token: p["fencing_token"],
                        deadline: p["lease_deadline_millis"],
                        high_water: p["high_water_millis"],
                    };
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            "lease_count" => {
                let present = self.rows.range(..=p["max_worker"]).count() as i64;
                let free = self
                    .rows
                    .range(..=p["max_worker"])
                    .filter(|(_, r)| free(r))
                    .count() as i64;
                Answer::Rows(vec![vec![Value::Int(present), Value::Int(free)]])
            }
            "lease_seed" => {
                let mut created = 0;
                for id in 0..=p["max_worker"] {
                    self.rows.entry(id).or_insert_with(|| {
                        created += 1;
                        Row {
                            owner: false,
                            token: 0,
                            deadline: 0,
                            high_water: 0,
                        }
                    });
                }
                Answer::Affected(created)
            }
            "lease_renew" => {
                let row = self.rows.get_mut(&p["worker_id"]).unwrap();
                let ours = row.owner && row.token == p["fencing_token"];
                if ours && row.deadline > now && p["lease_deadline_millis"] > row.deadline {
                    row.deadline = p["lease_deadline_millis"];
                    row.high_water = row.high_water.max(p["high_water_millis"]);
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            "lease_release" => {
                let row = self.rows.get_mut(&p["worker_id"]).unwrap();
                if row.owner && row.token == p["fencing_token"] {
                    *row = Row {
                        owner: false,
                        deadline: now,
                        high_water: row.high_water.max(p["high_water_millis"]),
                        ..*row
                    };
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            other => panic!("unknown query {other}"),
        }
    }
}

/// A layout with 4 worker ids (2 worker bits).
fn policy() -> LeasePolicy {
    let layout = SnowflakeLayout::new(41, 2, 20, 1_735_689_600_000, 1).unwrap();
    LeasePolicy::new(layout).unwrap()
}

/// Drives an acquisition to its end; pauses move the clock on.
fn drive(
    table: &mut Table,
    mut driver: LeaseAcquisition,
    mut now: u64,
) -> (Result<Acquisition, DriverError>, u64) {
    let mut step: LeaseStep = driver.start(now);
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = table.run(&query);
                driver.push(answer, now)
            }
            Step::Begin { write } => {
                assert!(write);
                driver.push(Answer::Affected(0), now)
            }
            Step::Commit | Step::Rollback => driver.push(Answer::Affected(0), now),
            Step::Pause { millis } => {
                now += millis;
                driver.resume(now)
            }
            Step::Yield(made) => return (Ok(made), now),
            Step::Fail(error) => return (Err(error), now),
        }
    }
}

fn acquisition(table: &Table, timeout: Option<u64>) -> LeaseAcquisition {
    LeaseAcquisition::new(table.manifest, policy(), "pod-a", timeout)
}

fn acquire(
    table: &mut Table,
    timeout: Option<u64>,
    now: u64,
) -> (Result<Acquisition, DriverError>, u64) {
    let driver = acquisition(table, timeout);
    drive(table, driver, now)
}

const NOW: u64 = 1_800_000_000_000;

#[test]
fn an_empty_table_is_seeded_and_worker_0_taken() {
    let mut table = Table::new();
    let (made, _) = acquire(&mut table, None, NOW);
    let made = made.unwrap();
    assert_eq!((made.lease.worker_id, made.lease.fencing_token), (0, 1));
    assert_eq!(table.rows.len(), 4);
    assert_eq!(
        table.queries,
        [
            "lease_find",
            "lease_count",
            "lease_seed",
            "lease_find",
            "lease_take"
        ]
    );
}

#[test]
fn a_row_whose_high_water_mark_is_far_ahead_does_not_block_the_next_one() {
    let mut table = Table::new();
    acquire(&mut table, None, NOW).0.unwrap();
    // Worker 0 released by a host whose clock ran an hour fast.
    table.rows.insert(
        0,
        Row {
            owner: false,
            token: 1,
            deadline: 0,
            high_water: (NOW + 3_600_000) as i64,
        },
    );
    let (made, _) = acquire(&mut table, None, NOW);
    assert_eq!(made.unwrap().lease.worker_id, 1);
    assert!(
        table
            .queries
            .ends_with(&["lease_find", "lease_find_after", "lease_take"])
    );
}

#[test]
fn with_only_skipped_rows_free_it_fails_with_the_soonest_or_waits_within_the_deadline() {
    let mut table = Table::new();
    for id in 0..4 {
        table.rows.insert(
            id,
            Row {
                owner: true,
                token: 1,
                deadline: (NOW + 60_000) as i64,
                high_water: 0,
            },
        );
    }
    table.rows.insert(
        2,
        Row {
            owner: false,
            token: 1,
            deadline: 0,
            high_water: (NOW + 20_000) as i64,
        },
    );
    let (made, _) = acquire(&mut table, None, NOW);
    assert_eq!(made.unwrap_err().code(), "lease.high_water_ahead");
    // Usable once the clock is within max_start_wait (10 s) of its ready time.
    let (made, at) = acquire(&mut table, Some(30_000), NOW);
    let made = made.unwrap();
    assert_eq!(made.lease.worker_id, 2);
    assert!(
        at >= NOW + 20_001,
        "it waited for the high-water mark: {at}"
    );
    // A deadline before it is usable: a timeout, naming when it would be.
    table.rows.insert(
        2,
        Row {
            owner: false,
            token: 2,
            deadline: 0,
            high_water: (NOW + 20_000) as i64,
        },
    );
    let (made, _) = acquire(&mut table, Some(5_000), NOW);
    let error = made.unwrap_err();
    assert_eq!(error.code(), "lease.acquire_timeout");
    assert!(
        error.to_string().contains(&(NOW + 10_001).to_string()),
        "{error}"
    );
}

#[test]
fn all_held_fails_at_once_without_a_deadline_and_waits_for_an_end_with_one() {
    let mut table = Table::new();
    for id in 0..4 {
        table.rows.insert(
            id,
            Row {
                owner: true,
                token: 1,
                deadline: (NOW + 3_000) as i64,
                high_water: 0,
            },
        );
    }
    let (made, _) = acquire(&mut table, None, NOW);
    assert_eq!(made.unwrap_err().code(), "lease.no_worker_free");
    let (made, _) = acquire(&mut table, Some(2_000), NOW);
    assert_eq!(made.unwrap_err().code(), "lease.acquire_timeout");
    // A lease that ends within the deadline is taken, after the skew bound.
    let (made, at) = acquire(&mut table, Some(10_000), NOW);
    let made = made.unwrap();
    assert_eq!((made.lease.worker_id, made.lease.fencing_token), (0, 2));
    assert!(
        at >= NOW + 3_000 + 1_000,
        "waited for the previous holder's skew bound: {at}"
    );
}

#[test]
fn a_lost_race_searches_again() {
    let mut table = Table::new();
    acquire(&mut table, None, NOW).0.unwrap();
    let mut driver = acquisition(&table, None);
    assert_eq!(driver.start(NOW), Step::Begin { write: true });
    let Step::Run(find) = driver.push(Answer::Affected(0), NOW) else {
        panic!()
    };
    let found = table.run(&find);
    let Step::Run(take) = driver.push(found, NOW) else {
        panic!()
    };
    // Another process takes worker 1 first.
    table.rows.get_mut(&1).unwrap().token = 7;
    assert_eq!(driver.push(table.run(&take), NOW), Step::Commit);
    assert_eq!(
        driver.push(Answer::Affected(0), NOW),
        Step::Begin { write: true }
    );
}

#[test]
fn deadlocks_round_after_round_are_retried_after_a_short_pause_until_the_budget_is_spent() {
    use mintid::store::{DbError, DbErrorClass};
    let deadlock = || {
        Answer::Failed(DbError {
            class: DbErrorClass::Serialization,
            message: "Deadlock found when trying to get lock".into(),
        })
    };
    let mut table = Table::new();
    acquire(&mut table, None, NOW).0.unwrap();
    // A crowd of hosts: this one is a deadlock victim once for every worker id
    // (4) and the 3 retries of any query.
    let mut driver = acquisition(&table, None);
    let mut step = driver.start(NOW);
    let mut now = NOW;
    let mut victims = 0;
    let made = loop {
        step = match step {
            Step::Run(query) if query.name == "lease_find" && victims < 7 => {
                victims += 1;
                driver.push(deadlock(), now)
            }
            Step::Run(query) => driver.push(table.run(&query), now),
            Step::Begin { .. } | Step::Commit | Step::Rollback => {
                driver.push(Answer::Affected(0), now)
            }
            Step::Pause { millis } => {
                assert!((1..=5).contains(&millis), "a short pause: {millis}");
                now += millis;
                driver.resume(now)
            }
            Step::Yield(made) => break made,
            Step::Fail(error) => panic!("gave up: {error}"),
        };
    };
    assert_eq!(made.lease.worker_id, 1);
    // One more and it gives up.
    let mut driver = acquisition(&table, None);
    let mut step = driver.start(NOW);
    let error = loop {
        step = match step {
            Step::Run(_) => driver.push(deadlock(), NOW),
            Step::Begin { .. } | Step::Commit | Step::Rollback => {
                driver.push(Answer::Affected(0), NOW)
            }
            Step::Pause { .. } => driver.resume(NOW),
            Step::Yield(_) => panic!("acquired on a deadlocked table"),
            Step::Fail(error) => break error,
        };
    };
    assert_eq!(error.code(), "store.conflict");
}

mod renewal_and_release {
    use super::*;
    use mintid::lease::LeaseGuard;
    use mintid::store::{DbError, DbErrorClass, LeaseRelease, LeaseRenewal};

    fn held() -> (Table, LeaseGuard) {
        let mut table = Table::new();
        let made = acquire(&mut table, None, NOW).0.unwrap();
        (table, LeaseGuard::new(&made, &policy()))
    }

    fn renew(table: &mut Table, guard: &LeaseGuard, now: u64, mark: u64) -> Result<u64, String> {
        let mut renewal = LeaseRenewal::new(table.manifest);
        match renewal.start(guard, now, mark) {
            Step::Run(query) => match renewal.push(guard, table.run(&query), now) {
                Step::Yield(deadline) => Ok(deadline),
                Step::Fail(error) => Err(error.code().into()),
                other => panic!("{other:?}"),
            },
            Step::Fail(error) => Err(error.code().into()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_renewal_the_clock_refuses_writes_nothing_and_counts_as_a_failed_attempt() {
        let (mut table, guard) = held();
        assert_eq!(
            renew(&mut table, &guard, NOW + 10_000, NOW),
            Ok(NOW + 40_000)
        );
        assert_eq!(guard.next_renewal_at_millis(), NOW + 20_000);
        let writes = table.queries.len();
        // The clock went back 2 s: now + lease would not extend the deadline.
        assert_eq!(
            renew(&mut table, &guard, NOW + 8_000, NOW).unwrap_err(),
            "lease.clock_behind"
        );
        assert_eq!(table.queries.len(), writes, "nothing was run");
        assert_eq!(guard.next_renewal_at_millis(), NOW + 9_000);
        assert_eq!(guard.lease_deadline_millis(), NOW + 40_000);
        assert!(guard.is_live());
        // Too late: the deadline passed; counted the same way.
        assert_eq!(
            renew(&mut table, &guard, NOW + 40_000, NOW).unwrap_err(),
            "lease.expired"
        );
        assert_eq!(guard.next_renewal_at_millis(), NOW + 41_000);
    }

    #[test]
    fn a_database_failure_counts_as_a_failed_attempt_and_no_row_is_a_lost_lease() {
        let (mut table, guard) = held();
        let mut renewal = LeaseRenewal::new(table.manifest);
        assert!(matches!(
            renewal.start(&guard, NOW + 10_000, NOW),
            Step::Run(_)
        ));
        let down = Answer::Failed(DbError {
            class: DbErrorClass::ConnectionLost,
            message: "gone".into(),
        });
        let Step::Fail(error) = renewal.push(&guard, down, NOW + 10_000) else {
            panic!()
        };
        assert_eq!(error.code(), "store.unavailable");
        assert_eq!(guard.next_renewal_at_millis(), NOW + 11_000);
        // Another holder took worker 0.
        table.rows.get_mut(&0).unwrap().token = 9;
        assert!(matches!(
            renewal.start(&guard, NOW + 11_000, NOW),
            Step::Run(_)
        ));
        let Step::Fail(error) = renewal.push(&guard, Answer::Affected(0), NOW + 11_000) else {
            panic!()
        };
        assert_eq!(error.code(), "lease.lost");
        assert!(!guard.is_live());
    }

    #[test]
    fn a_release_stops_issuing_before_the_mark_is_read_and_a_lost_lease_writes_nothing() {
        let (table, guard) = held();
        let layout = *policy().layout();
        let id = layout.compose(NOW + 5, 0, 0).unwrap();
        assert_eq!(guard.admit(id), Ok(()));
        let mut release = LeaseRelease::new(table.manifest, &guard);
        // From here no ID is admitted: the mark read now covers every ID issued.
        assert_eq!(guard.admit(id).unwrap_err().code(), "lease.released");
        let Step::Run(query) = release.start(&guard, NOW + 10, NOW + 5) else {
            panic!()
        };
        assert_eq!(query.name, "lease_release");
        assert_eq!(release.push(Answer::Affected(1)), Step::Yield(true));
        // Released again, or lost: nothing to write.
        let mut again = LeaseRelease::new(table.manifest, &guard);
        assert_eq!(again.start(&guard, NOW + 20, NOW + 5), Step::Yield(false));
    }
}
