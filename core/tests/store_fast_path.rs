//! The record driver with the Redis fast path in front of it, against the
//! scripted database and an in-memory Redis that runs the three scripts:
//! the order of the calls, what each answer leads to, and exactly once under
//! any interleaving of requests with Redis failing, flushed or without its
//! scripts.

use mintid::record::{Incoming, Outcome, RecordPolicy};
use mintid::store::{
    Dialect, DriverError, FastAnswer, FastPath, FastReport, Finished, OperationOutcome,
    RecordDriver, RecordStep, RecordYield, Step, StoredResponse, Way,
};
use mintid::{Fingerprint, IdempotencyKey};
use proptest::prelude::*;

#[path = "support/fake_db.rs"]
mod fake_db;
#[path = "support/fake_redis.rs"]
mod fake_redis;
use fake_db::FakeDb;
use fake_redis::FakeRedis;

fn key() -> IdempotencyKey {
    IdempotencyKey::new("order.create", "tenant-1", "o-1").unwrap()
}

const ENTRY: &str = "mintid:{order.create:tenant-1:o-1}";

fn policy() -> RecordPolicy {
    RecordPolicy::new(1_000, 100_000).unwrap()
}

fn fp(byte: u8) -> Fingerprint {
    Fingerprint::from_digest([byte; 32])
}

fn ok(text: &str) -> OperationOutcome {
    OperationOutcome::Succeeded(StoredResponse {
        content_type: "application/json".into(),
        body: text.as_bytes().to_vec(),
    })
}

fn fast_driver(db: &FakeDb, way: Way, print: Fingerprint, policy: RecordPolicy) -> RecordDriver {
    RecordDriver::with_fast_path(
        db.manifest,
        policy,
        way,
        &key(),
        Incoming::new(print),
        FastPath::new(policy),
    )
}

/// One request to its end: how it ended, whether it ran, its report.
#[derive(Debug)]
struct Ran {
    end: Result<Finished, DriverError>,
    executed: bool,
    report: FastReport,
}

fn drive(
    db: &mut FakeDb,
    redis: &mut FakeRedis,
    mut driver: RecordDriver,
    now: u64,
    outcome: OperationOutcome,
) -> Ran {
    let mut step = driver.start(now);
    let mut executed = false;
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = db.run(&query);
                driver.push(answer, now)
            }
            Step::Pause { .. } => driver.resume(),
            Step::Yield(RecordYield::Redis(call)) => {
                let answer = redis.run(&call, now);
                driver.push_redis(answer, now)
            }
            Step::Yield(RecordYield::Execute(_)) => {
                executed = true;
                driver.finish(outcome.clone(), now)
            }
            Step::Yield(RecordYield::Done(finished)) => {
                let report = driver.take_fast_report();
                return Ran {
                    end: Ok(finished),
                    executed,
                    report,
                };
            }
            Step::Fail(error) => {
                let report = driver.take_fast_report();
                return Ran {
                    end: Err(error),
                    executed,
                    report,
                };
            }
            other => panic!("the record driver asked for {other:?}"),
        }
    }
}

fn request(db: &mut FakeDb, redis: &mut FakeRedis, now: u64, outcome: OperationOutcome) -> Ran {
    let driver = fast_driver(db, Way::RunOnce, fp(1), policy());
    drive(db, redis, driver, now, outcome)
}

fn lookup(report: &FastReport) -> &'static str {
    report.lookup.expect("a lookup")
}

const DIALECTS: [Dialect; 3] = [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite];

#[test]
fn a_fresh_key_checks_claims_completes_then_settles_and_its_duplicate_never_reaches_the_database() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let mut redis = FakeRedis::loaded();
        let first = request(&mut db, &mut redis, 1_000, ok("a"));
        assert!(first.executed);
        assert_eq!(first.end.unwrap(), Finished::Executed);
        assert_eq!(lookup(&first.report), "miss");
        assert_eq!(first.report.write_failures, 0);
        assert_eq!(redis.calls, ["check", "settle"]);
        let entry = &redis.entries[ENTRY];
        assert_eq!(entry.fields["s"], b"done");
        assert_eq!(entry.fields["b"], b"a");
        // The entry ends a margin before the record's retention.
        assert_eq!(
            entry.expires_at,
            1_000 + 100_000 - mintid::store::TTL_MARGIN_MILLIS
        );
        let queries = db.queries.len();
        let second = request(&mut db, &mut redis, 1_100, ok("b"));
        assert!(!second.executed);
        assert_eq!(lookup(&second.report), "hit");
        let Ok(Finished::Replay {
            outcome: Outcome::Succeeded,
            response: Some(response),
            error: None,
        }) = second.end
        else {
            panic!("{:?}", second.end)
        };
        assert_eq!(response.body, b"a");
        assert_eq!(db.queries.len(), queries, "no query for a hit");
        assert_eq!(redis.calls, ["check", "settle", "check"]);
    }
}

#[test]
fn a_node_without_the_script_gets_it_by_eval_once() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let mut redis = FakeRedis::default();
    let ran = request(&mut db, &mut redis, 1_000, ok("a"));
    assert_eq!(ran.end.unwrap(), Finished::Executed);
    assert_eq!(redis.calls, ["check", "check!", "settle", "settle!"]);
    assert_eq!(lookup(&ran.report), "miss");
    assert_eq!(ran.report.write_failures, 0);
    let again = request(&mut db, &mut redis, 1_100, ok("b"));
    assert_eq!(lookup(&again.report), "hit");
    assert_eq!(redis.calls.last().unwrap(), "check");
}

#[test]
fn a_failing_redis_falls_back_to_the_database_and_counts_its_failed_writes() {
    let mut db = FakeDb::new(Dialect::Mysql);
    let mut redis = FakeRedis::loaded();
    redis.failing = u32::MAX;
    let first = request(&mut db, &mut redis, 1_000, ok("a"));
    assert!(first.executed);
    assert_eq!(lookup(&first.report), "fallback");
    assert_eq!(first.report.write_failures, 1);
    let second = request(&mut db, &mut redis, 1_100, ok("b"));
    assert!(!second.executed);
    assert!(matches!(second.end, Ok(Finished::Replay { .. })));
    assert_eq!(lookup(&second.report), "fallback");
    // The report is taken once.
    let mut driver = fast_driver(&db, Way::RunOnce, fp(1), policy());
    assert_eq!(driver.take_fast_report(), FastReport::default());
}

#[test]
fn a_replay_the_database_served_is_written_back_to_redis() {
    let mut db = FakeDb::new(Dialect::Sqlite);
    let mut redis = FakeRedis::loaded();
    request(&mut db, &mut redis, 1_000, ok("a"));
    redis.flush();
    let replayed = request(&mut db, &mut redis, 1_100, ok("b"));
    assert!(!replayed.executed);
    assert_eq!(lookup(&replayed.report), "miss");
    assert_eq!(
        redis.calls[redis.calls.len() - 4..],
        ["check", "check!", "settle", "settle!"]
    );
    let entry = &redis.entries[ENTRY];
    assert_eq!(entry.fields["s"], b"done");
    assert_eq!(entry.fields["c"], b"1000", "the record's own fence");
    let hit = request(&mut db, &mut redis, 1_200, ok("c"));
    assert_eq!(lookup(&hit.report), "hit");
}

#[test]
fn a_stored_final_failure_replays_from_redis() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let mut redis = FakeRedis::loaded();
    let failed = OperationOutcome::Failed {
        message: "card declined".into(),
        retryable: false,
        response: None,
    };
    let first = request(&mut db, &mut redis, 1_000, failed);
    assert_eq!(
        first.end.unwrap(),
        Finished::OperationFailed { stored: true }
    );
    let second = request(&mut db, &mut redis, 1_100, ok("b"));
    assert_eq!(lookup(&second.report), "hit");
    assert_eq!(
        second.end.unwrap(),
        Finished::Replay {
            outcome: Outcome::Failed,
            response: None,
            error: Some("card declined".into()),
        }
    );
}

#[test]
fn a_released_key_forgets_its_marker_and_runs_again() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let mut redis = FakeRedis::loaded();
    let retryable = OperationOutcome::Failed {
        message: "try later".into(),
        retryable: true,
        response: None,
    };
    let first = request(&mut db, &mut redis, 1_000, retryable);
    assert_eq!(
        first.end.unwrap(),
        Finished::OperationFailed { stored: false }
    );
    assert_eq!(redis.calls, ["check", "forget"]);
    assert!(redis.entries.is_empty());
    let second = request(&mut db, &mut redis, 1_100, ok("b"));
    assert!(second.executed, "{second:?}");
    // A reclaim (token 2) invalidates older entries before the operation runs.
    assert_eq!(redis.calls[2..], ["check", "forget", "settle"]);
    assert_eq!(redis.entries[ENTRY].fields["t"], b"2");
}

#[test]
fn a_holder_that_dies_leaves_a_marker_that_ends_with_its_lease_then_is_taken_over() {
    let mut db = FakeDb::new(Dialect::Mysql);
    let mut redis = FakeRedis::loaded();
    let mut dead = fast_driver(&db, Way::Lease, fp(1), policy());
    let Step::Yield(RecordYield::Redis(check)) = dead.start(1_000) else {
        panic!()
    };
    let Step::Run(claim) = dead.push_redis(redis.run(&check, 1_000), 1_000) else {
        panic!()
    };
    assert!(matches!(
        dead.push(db.run(&claim), 1_000),
        Step::Yield(RecordYield::Execute(_))
    ));
    // In flight: a duplicate is answered from Redis.
    let duplicate = request(&mut db, &mut redis, 1_500, ok("b"));
    assert_eq!(lookup(&duplicate.report), "hit");
    assert!(matches!(
        duplicate.end,
        Ok(Finished::InProgress {
            retry_after_millis: 500
        })
    ));
    // Past the lease, the marker is gone and the database lets it be taken over.
    let taken = request(&mut db, &mut redis, 2_100, ok("c"));
    assert!(taken.executed, "{taken:?}");
    assert_eq!(lookup(&taken.report), "miss");
    // The late holder's completion is refused by the fence; Redis keeps the new result.
    let Step::Run(complete) = dead.finish(ok("a"), 2_200) else {
        panic!()
    };
    let mut step = dead.push(db.run(&complete), 2_200);
    loop {
        step = match step {
            Step::Run(query) => dead.push(db.run(&query), 2_200),
            Step::Yield(RecordYield::Redis(call)) => {
                assert_eq!(call.script, "forget");
                dead.push_redis(redis.run(&call, 2_200), 2_200)
            }
            end => break assert!(matches!(end, Step::Fail(_)), "{end:?}"),
        }
    }
    assert_eq!(redis.entries[ENTRY].fields["b"], b"c");
}

#[test]
fn a_waiting_duplicate_waits_on_the_database_and_leaves_the_holders_marker() {
    let waiting = policy().with_wait(2_000, 50).unwrap();
    let mut db = FakeDb::new(Dialect::Postgres);
    let mut redis = FakeRedis::loaded();
    let mut holder = fast_driver(&db, Way::Lease, fp(1), waiting);
    let Step::Yield(RecordYield::Redis(check)) = holder.start(1_000) else {
        panic!()
    };
    let Step::Run(claim) = holder.push_redis(redis.run(&check, 1_000), 1_000) else {
        panic!()
    };
    holder.push(db.run(&claim), 1_000);
    // A different payload under the key: the database says so, Redis is untouched.
    let other = fast_driver(&db, Way::RunOnce, fp(2), waiting);
    let mismatch = drive(&mut db, &mut redis, other, 1_100, ok("x"));
    assert_eq!(mismatch.end.unwrap(), Finished::FingerprintMismatch);
    assert_eq!(lookup(&mismatch.report), "miss");
    assert_eq!(redis.calls, ["check", "check"]);
    assert_eq!(redis.entries[ENTRY].fields["s"], b"claiming");
}

#[test]
fn inside_a_callers_transaction_there_is_no_fast_path() {
    let mut db = FakeDb::new(Dialect::Sqlite);
    let mut redis = FakeRedis::loaded();
    let driver = fast_driver(&db, Way::SameTransaction, fp(1), policy());
    let ran = drive(&mut db, &mut redis, driver, 1_000, ok("a"));
    assert_eq!(ran.end.unwrap(), Finished::Executed);
    assert!(redis.calls.is_empty());
    assert_eq!(ran.report, FastReport::default());
}

#[test]
fn a_key_too_old_by_its_own_time_skips_redis() {
    let mut db = FakeDb::new(Dialect::Sqlite);
    let mut redis = FakeRedis::loaded();
    let incoming = Incoming::new(fp(1)).with_key_created_millis(1_000);
    let driver = RecordDriver::with_fast_path(
        db.manifest,
        policy(),
        Way::RunOnce,
        &key(),
        incoming,
        FastPath::new(policy()),
    );
    let ran = drive(&mut db, &mut redis, driver, 1_000 + 100_000, ok("a"));
    assert_eq!(ran.end.unwrap(), Finished::KeyTooOld);
    assert!(redis.calls.is_empty() && db.queries.is_empty());
}

#[test]
fn a_store_error_forgets_the_marker_before_it_is_reported() {
    let mut db = FakeDb::new(Dialect::Postgres);
    db.failures = vec![mintid::store::DbErrorClass::Other];
    let mut redis = FakeRedis::loaded();
    let ran = request(&mut db, &mut redis, 1_000, ok("a"));
    assert_eq!(ran.end.unwrap_err().code(), "store.query_failed");
    assert_eq!(redis.calls, ["check", "forget"]);
    assert!(redis.entries.is_empty());
}

#[test]
fn redis_steps_out_of_order_are_refused() {
    let db = FakeDb::new(Dialect::Postgres);
    let mut plain = RecordDriver::new(
        db.manifest,
        policy(),
        Way::RunOnce,
        &key(),
        Incoming::new(fp(1)),
    );
    let Step::Fail(error) = plain.push_redis(FastAnswer::Nil, 1_000) else {
        panic!()
    };
    assert_eq!(error.code(), "store.query_failed");
    let mut fast = fast_driver(&db, Way::RunOnce, fp(1), policy());
    let Step::Yield(RecordYield::Redis(_)) = fast.start(1_000) else {
        panic!()
    };
    let step: RecordStep = fast.finish(ok("a"), 1_000);
    assert!(matches!(step, Step::Fail(_)));
}

/// What can happen to Redis between two steps of the requests.
#[derive(Debug, Clone)]
enum Fault {
    None,
    /// The next call fails (a timeout, a failover).
    Fail,
    /// Every entry and script is gone.
    Flush,
}

fn faults() -> impl Strategy<Value = Fault> {
    prop_oneof![
        6 => Just(Fault::None),
        1 => Just(Fault::Fail),
        1 => Just(Fault::Flush),
    ]
}

/// One request of the interleaving and where it is.
struct Actor {
    driver: RecordDriver,
    step: Option<RecordStep>,
    executed: bool,
    ended: Option<Finished>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Four requests with one key, stepped in any order while Redis fails
    /// or is flushed between any two steps: the operation runs once, and
    /// every other request replays its response, is told it is in progress,
    /// or failed typed with nothing run.
    #[test]
    fn every_interleaving_with_redis_faults_executes_exactly_once(
        schedule in proptest::collection::vec((0usize..4, faults()), 1..120),
        dialect in prop_oneof![Just(Dialect::Postgres), Just(Dialect::Mysql), Just(Dialect::Sqlite)],
    ) {
        let mut db = FakeDb::new(dialect);
        let mut redis = FakeRedis::default();
        let mut actors: Vec<Actor> = (0..4)
            .map(|_| Actor {
                driver: fast_driver(&db, Way::RunOnce, fp(1), policy()),
                step: None,
                executed: false,
                ended: None,
            })
            .collect();
        let now = 1_000;
        let mut turns = schedule.into_iter().chain((0..4).cycle().take(400).map(|at| (at, Fault::None)));
        while actors.iter().any(|a| a.ended.is_none()) {
            let Some((at, fault)) = turns.next() else { break };
            match fault {
                Fault::None => {}
                Fault::Fail => redis.failing += 1,
                Fault::Flush => redis.flush(),
            }
            let actor = &mut actors[at];
            if actor.ended.is_some() {
                continue;
            }
            let step = match actor.step.take() {
                None => actor.driver.start(now),
                Some(Step::Run(query)) => {
                    let answer = db.run(&query);
                    actor.driver.push(answer, now)
                }
                Some(Step::Pause { .. }) => actor.driver.resume(),
                Some(Step::Yield(RecordYield::Redis(call))) => {
                    let answer = redis.run(&call, now);
                    actor.driver.push_redis(answer, now)
                }
                Some(Step::Yield(RecordYield::Execute(_))) => {
                    prop_assert!(!actor.executed);
                    actor.executed = true;
                    actor.driver.finish(ok("once"), now)
                }
                Some(other) => panic!("{other:?}"),
            };
            match step {
                Step::Yield(RecordYield::Done(finished)) => actor.ended = Some(finished),
                Step::Fail(error) => panic!("no store error is injected: {error:?}"),
                step => actor.step = Some(step),
            }
        }
        let executed = actors.iter().filter(|a| a.executed).count();
        prop_assert_eq!(executed, 1);
        for actor in &actors {
            match actor.ended.as_ref().expect("every request ended") {
                Finished::Executed => prop_assert!(actor.executed),
                Finished::Replay { outcome: Outcome::Succeeded, response: Some(response), .. } => {
                    prop_assert_eq!(&response.body, b"once");
                }
                Finished::InProgress { .. } => prop_assert!(!actor.executed),
                other => prop_assert!(false, "{:?}", other),
            }
        }
        // Redis never replays what the database does not hold.
        if let Some(entry) = redis.entries.get(ENTRY) {
            if entry.fields["s"] == b"done" {
                prop_assert_eq!(&entry.fields["b"], b"once");
            }
        }
    }
}
