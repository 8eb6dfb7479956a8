//! The segment driver against a scripted `id_segment` table that applies each
//! named query as the schema's SQL does.

use std::collections::BTreeMap;

use mintid::segment::{SegmentPolicy, SegmentRow};
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, DriverError, Manifest, Placeholder, Query,
    SEGMENT_WAIT_MILLIS, SegmentDriver, Step, TakeAction, Taken, Value,
};
use proptest::prelude::*;

#[derive(Default)]
struct Table {
    rows: BTreeMap<String, (i64, i64)>,
    queries: Vec<&'static str>,
    /// Answers to give instead of running the next queries (a fault script).
    faults: Vec<DbErrorClass>,
}

fn manifest() -> Manifest {
    Manifest::new(Dialect::Postgres, Placeholder::Numbered)
}

impl Table {
    fn run(&mut self, query: &Query) -> Answer {
        self.queries.push(query.name);
        if let Some(class) = self.faults.pop() {
            return Answer::Failed(DbError {
                class,
                message: "scripted".into(),
            });
        }
        let statement = manifest().statement(query.name).unwrap();
        let p: BTreeMap<&str, &Value> = statement
            .params
            .iter()
            .copied()
            .zip(&query.params)
            .collect();
        let Value::Text(tag) = p["tag"] else {
            panic!("no tag")
        };
        let int = |name: &str| p[name].as_int().unwrap();
        match query.name {
            "segment_create" => {
                if self.rows.contains_key(tag) {
                    return Answer::Affected(0);
                }
                self.rows.insert(tag.clone(), (0, int("step")));
                Answer::Affected(1)
            }
            "segment_fetch" => match self.rows.get_mut(tag) {
                None => Answer::Affected(0),
                Some(row) => {
                    *row = (row.0 + int("step"), int("step"));
                    Answer::Affected(1)
                }
            },
            "segment_load" => Answer::Rows(
                self.rows
                    .get(tag)
                    .map(|(max, step)| vec![vec![Value::Int(*max), Value::Int(*step)]])
                    .unwrap_or_default(),
            ),
            other => panic!("unexpected query {other}"),
        }
    }

    /// Runs the driver's fetch to its end: the row installed, or the error.
    fn fetch(&mut self, driver: &mut SegmentDriver, now: u64) -> Result<SegmentRow, DriverError> {
        let mut step = driver.fetch();
        loop {
            step = match step {
                Step::Run(query) => {
                    let answer = self.run(&query);
                    driver.push(answer, now)
                }
                Step::Begin { .. } | Step::Commit | Step::Rollback => {
                    self.queries.push("txn");
                    driver.push(Answer::Affected(0), now)
                }
                Step::Pause { millis } => {
                    assert!(millis >= 1);
                    driver.resume()
                }
                Step::Yield(row) => return Ok(row),
                Step::Fail(error) => return Err(error),
            }
        }
    }

    /// `count` IDs as a host draws them: take a run, fetch when due.
    fn draw(&mut self, driver: &mut SegmentDriver, now: u64, count: usize) -> Vec<u64> {
        let mut ids = Vec::new();
        while ids.len() < count {
            let Taken {
                first,
                count: run,
                fetch_due,
            } = driver.take(now);
            if fetch_due {
                self.fetch(driver, now).unwrap();
            }
            ids.extend(first..first + run);
        }
        ids
    }
}

fn policy() -> SegmentPolicy {
    SegmentPolicy::new(10, 5, 40).unwrap()
}

#[test]
fn first_use_creates_the_tag_then_prefetches_at_the_threshold() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "orders", policy()).unwrap();
    assert_eq!(
        driver.take(0),
        Taken {
            first: 0,
            count: 0,
            fetch_due: true
        }
    );
    assert_eq!(
        table.fetch(&mut driver, 0).unwrap(),
        SegmentRow {
            max_id: 10,
            step: 10
        }
    );
    assert_eq!(
        table.queries,
        [
            "txn",
            "segment_fetch",
            "txn",
            "segment_create",
            "txn",
            "segment_fetch",
            "segment_load",
            "txn"
        ]
    );
    // 10 % of 10: one ID, then the next fetch is due (the step doubles on fast use).
    assert_eq!(
        driver.take(0),
        Taken {
            first: 1,
            count: 1,
            fetch_due: true
        }
    );
    assert_eq!(table.fetch(&mut driver, 0).unwrap().step, 20);
    assert_eq!(
        driver.take(0),
        Taken {
            first: 2,
            count: 9,
            fetch_due: false
        }
    );
    assert_eq!(table.draw(&mut driver, 0, 3)[..3], [11, 12, 13]);
    assert_eq!(table.rows["orders"], (70, 40));
}

#[test]
fn each_take_says_what_to_do_hand_out_fetch_beside_fetch_now_or_wait() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "orders", policy()).unwrap();
    assert_eq!(driver.take(0).action(), TakeAction::FetchNow);
    // Another caller, while that fetch is due or under way and nothing is in memory.
    let waiting = driver.take(0);
    assert_eq!((waiting.count, waiting.fetch_due), (0, false));
    assert_eq!(
        waiting.action(),
        TakeAction::Wait {
            millis: SEGMENT_WAIT_MILLIS
        }
    );
    assert_eq!(SEGMENT_WAIT_MILLIS, 100);
    table.fetch(&mut driver, 0).unwrap();
    assert_eq!(driver.take(0).action(), TakeAction::FetchBeside);
    table.fetch(&mut driver, 0).unwrap();
    assert_eq!(driver.take(0).action(), TakeAction::HandOut);
}

#[test]
fn a_tag_out_of_range_is_refused() {
    for tag in ["", "é", &"x".repeat(65)] {
        let error = SegmentDriver::new(manifest(), tag, policy()).unwrap_err();
        assert_eq!(error.code(), "segment.invalid_tag");
    }
    assert!(SegmentDriver::new(manifest(), &"x".repeat(64), policy()).is_ok());
}

#[test]
fn two_drivers_on_one_tag_never_overlap() {
    let mut table = Table::default();
    let mut p = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    let mut q = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    let mut all = Vec::new();
    for round in 0..50 {
        let (a, b) = (table.draw(&mut p, round, 7), table.draw(&mut q, round, 5));
        all.extend(a);
        all.extend(b);
    }
    let mut sorted = all.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), all.len(), "an ID twice");
}

#[test]
fn serialization_failures_are_retried_then_reported() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    assert!(driver.take(0).fetch_due);
    table.faults = vec![DbErrorClass::Serialization, DbErrorClass::Serialization];
    assert_eq!(table.fetch(&mut driver, 0).unwrap().max_id, 10);
    assert!(driver.take(0).fetch_due);
    table.faults = vec![DbErrorClass::Serialization; 4];
    assert_eq!(
        table.fetch(&mut driver, 0).unwrap_err().code(),
        "store.conflict"
    );
}

#[test]
fn a_failed_fetch_loses_nothing_and_is_asked_for_again() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    assert_eq!(table.draw(&mut driver, 0, 1), [1]);
    // The prefetch the first ID made due went through; use up the first segment.
    assert_eq!(table.draw(&mut driver, 0, 9), (2..=10).collect::<Vec<_>>());
    let taken = driver.take(0);
    assert_eq!((taken.first, taken.count, taken.fetch_due), (11, 2, true));
    table.faults = vec![DbErrorClass::ConnectionLost];
    let error = table.fetch(&mut driver, 0).unwrap_err();
    assert_eq!(error.code(), "store.unavailable");
    assert!(!driver.fetch_in_flight());
    // The rest of the segment is still handed out; the next take asks again.
    let taken = driver.take(0);
    assert_eq!((taken.first, taken.count, taken.fetch_due), (13, 18, true));
    table.fetch(&mut driver, 0).unwrap();
    assert_eq!(table.draw(&mut driver, 0, 1)[0], 31);
    assert_eq!(driver.fetch().clone(), fail_no_fetch());
}

fn fail_no_fetch() -> Step<SegmentRow> {
    let mut driver = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    driver.fetch()
}

#[test]
fn other_failures_roll_back_and_fail_typed() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    assert!(driver.take(0).fetch_due);
    table.faults = vec![DbErrorClass::Other];
    let error = table.fetch(&mut driver, 0).unwrap_err();
    assert_eq!(error.code(), "store.query_failed");
    assert_eq!(table.queries, ["txn", "segment_fetch", "txn"]);
    assert!(driver.take(0).fetch_due);
}

#[test]
fn an_abandoned_fetch_is_asked_for_again() {
    let mut table = Table::default();
    let mut driver = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    driver.abandon();
    assert!(driver.take(0).fetch_due);
    assert_eq!(driver.fetch(), Step::Begin { write: true });
    driver.abandon();
    assert!(!driver.fetch_in_flight());
    assert!(driver.take(0).fetch_due);
    assert_eq!(table.fetch(&mut driver, 0).unwrap().max_id, 10);
}

proptest! {
    /// One process drawing runs of any length at any fetch threshold gets
    /// 1, 2, 3, … with no gap and no repeat, whatever the step does.
    #[test]
    fn runs_are_consecutive(percent in 0u8..=100, counts in proptest::collection::vec(1usize..30, 1..40)) {
        let policy = policy().with_fetch_at_percent(percent).unwrap();
        let mut table = Table::default();
        let mut driver = SegmentDriver::new(manifest(), "t", policy).unwrap();
        let mut drawn = Vec::new();
        for (round, count) in counts.into_iter().enumerate() {
            drawn.extend(table.draw(&mut driver, round as u64 * 600_000, count));
        }
        let expected: Vec<u64> = (1..=drawn.len() as u64).collect();
        prop_assert_eq!(drawn, expected);
    }
}

#[test]
fn forked_copies_never_hand_out_the_same_id() {
    let mut table = Table::default();
    let mut parent = SegmentDriver::new(manifest(), "t", policy()).unwrap();
    assert!(parent.take(0).fetch_due);
    table.fetch(&mut parent, 0).unwrap();
    let taken = parent.take(0);
    assert_eq!((taken.first, taken.count, taken.fetch_due), (1, 1, true));
    let mut all = vec![1];
    // A fetch under way in the parent when it forks: the children never hear its answer.
    assert_eq!(parent.fetch(), Step::Begin { write: true });
    let mut children = [parent.clone(), parent.clone()];
    parent.abandon();
    for child in &mut children {
        child.forget_after_fork();
        assert_eq!(child.remaining(), 0);
        assert!(!child.fetch_in_flight());
        let taken = child.take(0);
        assert_eq!((taken.count, taken.fetch_due), (0, true));
        table.fetch(child, 0).unwrap();
    }
    for round in 0..20 {
        all.extend(table.draw(&mut parent, round, 7));
        for child in &mut children {
            all.extend(table.draw(child, round, 5));
        }
    }
    let mut sorted = all.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), all.len(), "an ID twice");
}
