//! The record driver against a scripted in-memory database that applies each
//! named query as the schema's SQL does (and refuses what its CHECKs refuse):
//! every interleaving of concurrent drivers on one key executes exactly once.

use mintid::record::{Incoming, Outcome, RecordPolicy};
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, DriverError, Finished, Held, Manifest,
    OperationOutcome, Placeholder, RecordCleanup, RecordDriver, RecordRenewal, RecordStep,
    RecordYield, Step, StoredResponse, Way, limits,
};
use mintid::{Fingerprint, IdempotencyKey};
use proptest::prelude::*;

#[path = "support/fake_db.rs"]
mod fake_db;
use fake_db::FakeDb;

fn key() -> IdempotencyKey {
    IdempotencyKey::new("order.create", "tenant-1", "o-1").unwrap()
}

fn policy() -> RecordPolicy {
    RecordPolicy::new(1_000, 100_000).unwrap()
}

fn fp(byte: u8) -> Fingerprint {
    Fingerprint::from_digest([byte; 32])
}

fn response(text: &str) -> StoredResponse {
    StoredResponse {
        content_type: "application/json".into(),
        body: text.as_bytes().to_vec(),
    }
}

/// Runs a driver to its end on `db` at `now`, running the operation with
/// `outcome` when told to; returns how it ended and whether it executed.
fn drive(
    db: &mut FakeDb,
    mut driver: RecordDriver,
    now: u64,
    outcome: OperationOutcome,
) -> (Result<Finished, DriverError>, bool) {
    let mut step = driver.start(now);
    let mut executed = false;
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = db.run(&query);
                driver.push(answer, now)
            }
            Step::Pause { .. } => driver.resume(),
            Step::Yield(RecordYield::Execute(_)) => {
                executed = true;
                driver.finish(outcome.clone(), now)
            }
            Step::Yield(RecordYield::Done(finished)) => return (Ok(finished), executed),
            Step::Fail(error) => return (Err(error), executed),
            other => panic!("the record driver asked for {other:?}"),
        }
    }
}

fn request(
    db: &mut FakeDb,
    way: Way,
    fingerprint: Fingerprint,
    now: u64,
    outcome: OperationOutcome,
) -> (Result<Finished, DriverError>, bool) {
    let fresh = driver(db, way, fingerprint);
    drive(db, fresh, now, outcome)
}

/// A fresh key run once (or in a transaction) on a database of `dialect`
/// that first answers with `failures`.
fn failing(
    dialect: Dialect,
    way: Way,
    failures: Vec<DbErrorClass>,
) -> (Result<Finished, DriverError>, bool) {
    let mut db = FakeDb::new(dialect);
    db.failures = failures;
    request(
        &mut db,
        way,
        fp(1),
        1_000,
        OperationOutcome::Succeeded(response("{}")),
    )
}

fn driver(db: &FakeDb, way: Way, fingerprint: Fingerprint) -> RecordDriver {
    RecordDriver::new(
        db.manifest,
        policy(),
        way,
        &key(),
        Incoming::new(fingerprint),
    )
}

const DIALECTS: [Dialect; 3] = [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite];

#[test]
fn a_fresh_key_runs_in_two_queries_and_its_duplicate_replays_in_one() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let first = driver(&db, Way::RunOnce, fp(1));
        let (end, ran) = drive(
            &mut db,
            first,
            1_000,
            OperationOutcome::Succeeded(response("{}")),
        );
        assert_eq!(end, Ok(Finished::Executed));
        assert!(ran);
        assert_eq!(db.queries, ["claim", "complete"]);
        db.queries.clear();
        let second = driver(&db, Way::RunOnce, fp(1));
        let (end, ran) = drive(
            &mut db,
            second,
            1_100,
            OperationOutcome::Succeeded(response("no")),
        );
        assert!(!ran);
        assert_eq!(
            end,
            Ok(Finished::Replay {
                outcome: Outcome::Succeeded,
                response: Some(response("{}")),
                error: None
            })
        );
        assert_eq!(db.queries, ["claim", "load"]);
        let third = driver(&db, Way::RunOnce, fp(2));
        let (end, _) = drive(
            &mut db,
            third,
            1_100,
            OperationOutcome::Succeeded(response("no")),
        );
        assert_eq!(end, Ok(Finished::FingerprintMismatch));
    }
}

/// An actor of the interleaving search: a driver and the step it is at.
#[derive(Clone)]
struct Actor {
    driver: RecordDriver,
    step: Option<RecordStep>,
    executed: bool,
    end: Option<Result<Finished, DriverError>>,
}

fn advance(actor: &mut Actor, db: &mut FakeDb, now: u64, outcome: &OperationOutcome) {
    let step = match actor.step.take() {
        None => actor.driver.start(now),
        Some(Step::Run(query)) => {
            let answer = db.run(&query);
            actor.driver.push(answer, now)
        }
        Some(Step::Pause { .. }) => actor.driver.resume(),
        Some(Step::Yield(RecordYield::Execute(_))) => {
            actor.executed = true;
            actor.driver.finish(outcome.clone(), now)
        }
        Some(done) => unreachable!("advanced past its end: {done:?}"),
    };
    match step {
        Step::Yield(RecordYield::Done(finished)) => actor.end = Some(Ok(finished)),
        Step::Fail(error) => actor.end = Some(Err(error)),
        other => actor.step = Some(other),
    }
}

/// Explores every interleaving of `actors` on `db`; calls `check` at each end.
fn explore(
    db: &FakeDb,
    actors: &[Actor],
    now: u64,
    outcome: &OperationOutcome,
    check: &mut dyn FnMut(&FakeDb, &[Actor]),
    ends: &mut u64,
) {
    let mut moved = false;
    for at in 0..actors.len() {
        if actors[at].end.is_some() {
            continue;
        }
        moved = true;
        let mut db = db.clone();
        let mut actors = actors.to_vec();
        advance(&mut actors[at], &mut db, now, outcome);
        explore(&db, &actors, now, outcome, check, ends);
    }
    if !moved {
        *ends += 1;
        check(db, actors);
    }
}

#[test]
fn every_interleaving_of_three_drivers_on_one_key_executes_exactly_once() {
    for dialect in DIALECTS {
        for outcome in [
            OperationOutcome::Succeeded(response("{\"order\":1}")),
            OperationOutcome::Failed {
                message: "card declined".into(),
                retryable: false,
                response: None,
            },
        ] {
            let db = FakeDb::new(dialect);
            let actors: Vec<Actor> = (0..3)
                .map(|_| Actor {
                    driver: driver(&db, Way::RunOnce, fp(1)),
                    step: None,
                    executed: false,
                    end: None,
                })
                .collect();
            let mut ends = 0;
            explore(
                &db,
                &actors,
                1_000,
                &outcome,
                &mut |db, actors| {
                    let executed = actors.iter().filter(|a| a.executed).count();
                    assert_eq!(executed, 1, "{dialect:?}");
                    for actor in actors {
                        let end = actor.end.as_ref().unwrap().as_ref().expect("no failure");
                        assert!(
                            matches!(
                                end,
                                Finished::Executed
                                    | Finished::OperationFailed { stored: true }
                                    | Finished::Replay { .. }
                                    | Finished::InProgress { .. }
                            ),
                            "{end:?}"
                        );
                    }
                    let row = db.rows.values().next().unwrap();
                    assert_ne!(row.status, "pending");
                },
                &mut ends,
            );
            assert!(ends > 1000, "{ends} interleavings");
        }
    }
}

#[test]
fn a_holder_that_dies_is_taken_over_after_its_lease_and_its_late_write_is_refused() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let (mut dead, held) = held_claim(&mut db, Way::Lease);
        assert_eq!(held.lease_deadline_millis, 2_000);
        assert_eq!(held.renew_every_millis, Some(333));
        // Inside the lease a duplicate is in progress…
        let (end, ran) = request(
            &mut db,
            Way::RunOnce,
            fp(1),
            1_500,
            OperationOutcome::Succeeded(response("b")),
        );
        assert!(!ran);
        assert!(matches!(end, Ok(Finished::InProgress { .. })));
        // …after it, it takes over with token 2.
        let (end, ran) = request(
            &mut db,
            Way::RunOnce,
            fp(1),
            2_000,
            OperationOutcome::Succeeded(response("b")),
        );
        assert!(ran);
        assert_eq!(end, Ok(Finished::Executed));
        // The first holder's late completion is refused by the core's rule.
        let step = dead.finish(OperationOutcome::Succeeded(response("a")), 2_100);
        let Step::Run(complete) = step else {
            panic!("{step:?}")
        };
        let answer = db.run(&complete);
        let Step::Run(load) = dead.push(answer, 2_100) else {
            panic!()
        };
        let answer = db.run(&load);
        let Step::Fail(error) = dead.push(answer, 2_100) else {
            panic!()
        };
        assert_eq!(error.code(), "record.stale_token");
        // The holder may finish again (after a failure that passes it would
        // succeed); a stale token stays stale.
        let Step::Run(fail) = dead.finish(
            OperationOutcome::Failed {
                message: "late".into(),
                retryable: false,
                response: None,
            },
            2_200,
        ) else {
            panic!()
        };
        let answer = db.run(&fail);
        let Step::Run(load) = dead.push(answer, 2_200) else {
            panic!()
        };
        let answer = db.run(&load);
        let Step::Fail(error) = dead.push(answer, 2_200) else {
            panic!()
        };
        assert_eq!(error.code(), "record.stale_token");
        let row = db.rows.values().next().unwrap();
        assert_eq!(row.body.as_deref(), Some(&b"b"[..]));
    }
}

#[test]
fn renewal_keeps_the_claim_through_a_long_operation() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let (mut holder, held) = held_claim(&mut db, Way::RunOnce);
        let mut renewal = RecordRenewal::new(db.manifest, policy(), &key(), &held);
        for now in [1_300, 1_600, 1_900, 2_200, 2_500] {
            let query = renewal.start(now);
            assert_eq!(renewal.push(db.run(&query)), Step::Yield(now + 1_000));
        }
        // Past the first lease, a duplicate still finds it in progress.
        let (end, ran) = request(
            &mut db,
            Way::RunOnce,
            fp(1),
            3_000,
            OperationOutcome::Succeeded(response("b")),
        );
        assert!(!ran, "{end:?}");
        // Renewing twice in one millisecond still moves the deadline forward.
        let query = renewal.start(2_500);
        assert_eq!(renewal.push(db.run(&query)), Step::Yield(3_501));
        let step = holder.finish(OperationOutcome::Succeeded(response("a")), 3_200);
        let Step::Run(complete) = step else { panic!() };
        assert_eq!(
            holder.push(db.run(&complete), 3_200),
            Step::Yield(RecordYield::Done(Finished::Executed))
        );
        // Once completed, a renewal is lost.
        let query = renewal.start(3_300);
        let Step::Run(load) = renewal.push(db.run(&query)) else {
            panic!()
        };
        let Step::Fail(error) = renewal.push(db.run(&load)) else {
            panic!()
        };
        assert_eq!(error.code(), "store.record_lost");
    }
}

#[test]
fn a_renewal_whose_answer_was_lost_is_confirmed_by_a_load() {
    let mut db = FakeDb::new(Dialect::Mysql);
    let (_holder, held) = held_claim(&mut db, Way::RunOnce);
    let mut renewal = RecordRenewal::new(db.manifest, policy(), &key(), &held);
    let lost = renewal.start(1_500);
    let _ = db.run(&lost); // committed, but the answer never arrives
    let query = renewal.start(1_400);
    let Step::Run(load) = renewal.push(db.run(&query)) else {
        panic!()
    };
    assert_eq!(renewal.push(db.run(&load)), Step::Yield(2_500));
}

fn held_claim(db: &mut FakeDb, way: Way) -> (RecordDriver, Held) {
    let mut holder = driver(db, way, fp(1));
    let Step::Run(claim) = holder.start(1_000) else {
        panic!()
    };
    let answer = db.run(&claim);
    let Step::Yield(RecordYield::Execute(held)) = holder.push(answer, 1_000) else {
        panic!()
    };
    (holder, held)
}

fn finish(db: &mut FakeDb, holder: &mut RecordDriver, outcome: OperationOutcome) -> RecordStep {
    let mut step = holder.finish(outcome, 1_100);
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = db.run(&query);
                holder.push(answer, 1_100)
            }
            Step::Pause { .. } => holder.resume(),
            end => return end,
        }
    }
}

#[test]
fn responses_that_cannot_be_stored_become_stored_final_failures() {
    let too_large = StoredResponse {
        content_type: "application/octet-stream".into(),
        body: vec![b'x'; limits::RESPONSE_BODY_MAX_BYTES + 1],
    };
    let bad_type = StoredResponse {
        content_type: "x".repeat(256),
        body: b"{}".to_vec(),
    };
    for dialect in DIALECTS {
        for (response, code) in [
            (too_large.clone(), "store.response_too_large"),
            (bad_type.clone(), "store.response_not_storable"),
        ] {
            let mut db = FakeDb::new(dialect);
            let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
            let Step::Fail(error) = finish(
                &mut db,
                &mut holder,
                OperationOutcome::Succeeded(response.clone()),
            ) else {
                panic!()
            };
            assert_eq!(error.code(), code);
            let row = db.rows.values().next().unwrap();
            assert_eq!(row.status, "failed");
            assert_eq!(row.error.as_deref(), Some(code));
            let (end, ran) = request(
                &mut db,
                Way::RunOnce,
                fp(1),
                1_200,
                OperationOutcome::Succeeded(response.clone()),
            );
            assert!(!ran);
            assert!(matches!(
                end,
                Ok(Finished::Replay {
                    outcome: Outcome::Failed,
                    ..
                })
            ));
            // Inside a caller's transaction nothing is written: its rollback undoes the claim.
            let mut db = FakeDb::new(dialect);
            let (mut holder, held) = held_claim(&mut db, Way::SameTransaction);
            assert_eq!(held.renew_every_millis, None);
            let Step::Fail(error) =
                finish(&mut db, &mut holder, OperationOutcome::Succeeded(response))
            else {
                panic!()
            };
            assert_eq!(error.code(), code);
            assert_eq!(db.queries, ["claim"]);
        }
        // At the limit, it is stored.
        let mut db = FakeDb::new(dialect);
        let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
        let at_limit = StoredResponse {
            content_type: "a".repeat(255),
            body: vec![b'x'; limits::RESPONSE_BODY_MAX_BYTES],
        };
        let end = finish(&mut db, &mut holder, OperationOutcome::Succeeded(at_limit));
        assert_eq!(end, Step::Yield(RecordYield::Done(Finished::Executed)));
    }
}

#[test]
fn long_failure_texts_are_cut_and_stored() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
        let message = "é".repeat(3_000);
        let end = finish(
            &mut db,
            &mut holder,
            OperationOutcome::Failed {
                message,
                retryable: false,
                response: None,
            },
        );
        assert_eq!(
            end,
            Step::Yield(RecordYield::Done(Finished::OperationFailed {
                stored: true
            }))
        );
        let row = db.rows.values().next().unwrap();
        let error = row.error.as_deref().unwrap();
        assert!(error.len() <= 1024 && error.ends_with(limits::TRUNCATION_MARKER));
    }
}

#[test]
fn an_operation_that_raised_another_error_is_retryable_and_the_next_request_runs() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    let end = finish(
        &mut db,
        &mut holder,
        OperationOutcome::Raised {
            message: "connection reset by the payment provider".into(),
        },
    );
    assert_eq!(
        end,
        Step::Yield(RecordYield::Done(Finished::OperationFailed {
            stored: false
        }))
    );
    let row = db.rows.values().next().unwrap();
    assert_eq!(row.status, "failed_retryable");
    assert_eq!(
        row.error.as_deref(),
        Some("connection reset by the payment provider")
    );
    let (end, ran) = request(
        &mut db,
        Way::RunOnce,
        fp(1),
        1_200,
        OperationOutcome::Succeeded(response("{}")),
    );
    assert!(ran);
    assert_eq!(end, Ok(Finished::Executed));
}

#[test]
fn an_operation_that_returns_no_response_releases_its_claim() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    let Step::Fail(error) = finish(
        &mut db,
        &mut holder,
        OperationOutcome::NotAResponse {
            type_name: "dict".into(),
        },
    ) else {
        panic!()
    };
    assert_eq!(error.code(), "store.not_a_response");
    assert_eq!(db.rows.values().next().unwrap().status, "failed_retryable");
    let (end, ran) = request(
        &mut db,
        Way::RunOnce,
        fp(1),
        1_200,
        OperationOutcome::Succeeded(response("{}")),
    );
    assert!(ran);
    assert_eq!(end, Ok(Finished::Executed));
}

#[test]
fn database_errors_are_classified_and_never_leak_driver_text() {
    // Unavailable before the claim (and on every retry): nothing ran.
    let (end, ran) = failing(
        Dialect::Postgres,
        Way::RunOnce,
        vec![DbErrorClass::ConnectionLost; 4],
    );
    assert!(!ran);
    let Err(DriverError::Store(error)) = end else {
        panic!()
    };
    assert_eq!(error.code(), "store.unavailable");
    assert!(!error.to_string().contains("10.0.0.7"));
    assert!(error.db_message().unwrap().contains("10.0.0.7"));
    // Serialization failures are retried with a growing pause, then reported.
    let (end, ran) = failing(
        Dialect::Postgres,
        Way::RunOnce,
        vec![DbErrorClass::Serialization; 2],
    );
    assert!(ran);
    assert_eq!(end, Ok(Finished::Executed));
    let (end, _) = failing(
        Dialect::Postgres,
        Way::RunOnce,
        vec![DbErrorClass::Serialization; 4],
    );
    assert_eq!(end.unwrap_err().code(), "store.conflict");
    // …but never inside the caller's transaction.
    let (end, _) = failing(
        Dialect::Postgres,
        Way::SameTransaction,
        vec![DbErrorClass::Serialization],
    );
    assert_eq!(end.unwrap_err().code(), "store.conflict");
    // Other errors are query failures, with the class kept.
    let (end, _) = failing(Dialect::Sqlite, Way::RunOnce, vec![DbErrorClass::Other]);
    let Err(DriverError::Store(error)) = end else {
        panic!()
    };
    assert_eq!(
        (error.code(), error.db_class()),
        ("store.query_failed", Some(DbErrorClass::Other))
    );
}

/// Finishes `holder` with `outcome` at 1 100 on a clock that each pause
/// moves on; the database answers `fault(now, query)` instead when it names
/// a class. Returns the end and the clock then.
fn finish_through(
    db: &mut FakeDb,
    holder: &mut RecordDriver,
    outcome: OperationOutcome,
    fault: impl Fn(u64, &str) -> Option<DbErrorClass>,
) -> (RecordStep, u64) {
    let mut now = 1_100;
    let mut step = holder.finish(outcome, now);
    loop {
        step = match step {
            Step::Run(query) => {
                let answer = match fault(now, query.name) {
                    Some(class) => {
                        db.queries.push(query.name);
                        Answer::Failed(DbError {
                            class,
                            message: "server closed the connection".into(),
                        })
                    }
                    None => db.run(&query),
                };
                holder.push(answer, now)
            }
            Step::Pause { millis } => {
                assert!(millis <= mintid::store::COMPLETION_PAUSE_MAX_MILLIS);
                now += millis;
                holder.resume()
            }
            end => return (end, now),
        }
    }
}

#[test]
fn the_completion_keeps_trying_through_an_outage_until_it_lands() {
    // The claim's lease runs from 1 000 to 2 000; the database is away from
    // the operation's end (1 100) to 1 900: far longer than three retries.
    for dialect in DIALECTS {
        for way in [Way::RunOnce, Way::Lease] {
            let mut db = FakeDb::new(dialect);
            let (mut holder, _) = held_claim(&mut db, way);
            let outcome = OperationOutcome::Succeeded(response("{}"));
            let (end, now) = finish_through(&mut db, &mut holder, outcome, |now, _| {
                (now < 1_900).then_some(DbErrorClass::ConnectionLost)
            });
            assert_eq!(end, Step::Yield(RecordYield::Done(Finished::Executed)));
            assert!(now >= 1_900);
            let row = db.rows.values().next().unwrap();
            assert_eq!(row.status, "succeeded", "{dialect:?} {way:?}");
        }
    }
}

#[test]
fn the_completion_renews_its_lease_while_it_keeps_trying() {
    // Deadlocks on the completion for 4 s, far past the claim's 1 s lease:
    // the driver renews the lease between its tries, so it stays this claim's.
    let mut db = FakeDb::new(Dialect::Postgres);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    let outcome = OperationOutcome::Failed {
        message: "card declined".into(),
        retryable: false,
        response: None,
    };
    let (end, now) = finish_through(&mut db, &mut holder, outcome, |now, query| {
        (now < 5_000 && query == "fail").then_some(DbErrorClass::Serialization)
    });
    assert_eq!(
        end,
        Step::Yield(RecordYield::Done(Finished::OperationFailed {
            stored: true
        }))
    );
    let row = db.rows.values().next().unwrap();
    assert_eq!(row.status, "failed");
    assert!(
        row.lease > now as i64,
        "the lease was renewed up to the write"
    );
    assert!(db.queries.contains(&"renew"));
}

#[test]
fn the_completion_gives_up_only_once_its_lease_has_passed() {
    for way in [Way::RunOnce, Way::Lease] {
        let mut db = FakeDb::new(Dialect::Mysql);
        let (mut holder, held) = held_claim(&mut db, way);
        let outcome = OperationOutcome::Succeeded(response("{}"));
        let (end, now) = finish_through(&mut db, &mut holder, outcome, |_, _| {
            Some(DbErrorClass::ConnectionLost)
        });
        let Step::Fail(error) = end else { panic!() };
        assert_eq!(error.code(), "store.unavailable");
        assert!(error.to_string().contains("after the operation ran"));
        assert!(
            now >= held.lease_deadline_millis,
            "{way:?}: gave up at {now}"
        );
        let row = db.rows.values().next().unwrap();
        assert_eq!(row.status, "pending");
    }
}

#[test]
fn the_caller_of_a_failed_operation_sees_its_error_when_recording_it_fails_too() {
    // Run once: the operation's own error wins, with the store error beside
    // it; the core's verdict on a result wins likewise, with the database
    // error as its cause. Lease and fence: the holder's `fail` call failed,
    // so it gets the store error.
    let unavailable = |_: u64, _: &str| Some(DbErrorClass::ConnectionLost);
    let failed = OperationOutcome::Failed {
        message: "card declined".into(),
        retryable: false,
        response: None,
    };
    let outcomes = [
        failed.clone(),
        OperationOutcome::Raised {
            message: "boom".into(),
        },
    ];
    for outcome in outcomes {
        let mut db = FakeDb::new(Dialect::Postgres);
        let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
        let (end, _) = finish_through(&mut db, &mut holder, outcome, unavailable);
        let Step::Yield(RecordYield::Done(Finished::OperationFailedUnrecorded { store_error })) =
            end
        else {
            panic!("{end:?}")
        };
        assert_eq!(store_error.code(), "store.unavailable");
        assert_eq!(db.rows.values().next().unwrap().status, "pending");
    }
    let mut db = FakeDb::new(Dialect::Sqlite);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    let not_a_response = OperationOutcome::NotAResponse {
        type_name: "dict".into(),
    };
    let (end, _) = finish_through(&mut db, &mut holder, not_a_response, unavailable);
    let Step::Fail(DriverError::Store(error)) = end else {
        panic!("{end:?}")
    };
    assert_eq!(error.code(), "store.not_a_response");
    assert_eq!(error.db_class(), Some(DbErrorClass::ConnectionLost));
    assert!(
        error
            .to_string()
            .contains("not recorded (store.unavailable")
    );
    let mut db = FakeDb::new(Dialect::Mysql);
    let (mut holder, _) = held_claim(&mut db, Way::Lease);
    let (end, _) = finish_through(&mut db, &mut holder, failed, unavailable);
    let Step::Fail(error) = end else {
        panic!("{end:?}")
    };
    assert_eq!(error.code(), "store.unavailable");
}

#[test]
fn a_lost_reply_to_the_completion_is_a_success() {
    let declined = |retryable| OperationOutcome::Failed {
        message: "card declined".into(),
        retryable,
        response: None,
    };
    for dialect in DIALECTS {
        for way in [Way::RunOnce, Way::Lease] {
            for (write, outcome, finished, status) in [
                (
                    "complete",
                    OperationOutcome::Succeeded(response("{}")),
                    Finished::Executed,
                    "succeeded",
                ),
                (
                    "fail",
                    declined(false),
                    Finished::OperationFailed { stored: true },
                    "failed",
                ),
                (
                    "release",
                    declined(true),
                    Finished::OperationFailed { stored: false },
                    "failed_retryable",
                ),
            ] {
                let mut db = FakeDb::new(dialect);
                let (mut holder, _) = held_claim(&mut db, way);
                db.lose_reply = Some(write);
                let end = finish(&mut db, &mut holder, outcome);
                assert_eq!(end, Step::Yield(RecordYield::Done(finished)), "{write}");
                assert_eq!(db.queries, ["claim", write, write, "load"]);
                assert_eq!(db.rows.values().next().unwrap().status, status);
            }
        }
    }
    // Without a lost reply, a second completion of a held lease is still
    // refused: only a retry of its own write may find its own state.
    let mut db = FakeDb::new(Dialect::Postgres);
    let (mut holder, _) = held_claim(&mut db, Way::Lease);
    let done = OperationOutcome::Succeeded(response("{}"));
    finish(&mut db, &mut holder, done.clone());
    let Step::Fail(error) = finish(&mut db, &mut holder, done) else {
        panic!()
    };
    assert_eq!(error.code(), "record.not_pending");
}

#[test]
fn error_texts_with_nul_are_stored_with_a_replacement_character() {
    let cases = [
        (Way::RunOnce, false, "failed"),
        (Way::RunOnce, true, "failed_retryable"),
        (Way::Lease, false, "failed"),
    ];
    for dialect in DIALECTS {
        for (way, retryable, status) in cases {
            let mut db = FakeDb::new(dialect);
            let (mut holder, _) = held_claim(&mut db, way);
            let outcome = OperationOutcome::Failed {
                message: "card declined\0ref=7".into(),
                retryable,
                response: None,
            };
            let end = finish(&mut db, &mut holder, outcome);
            assert!(matches!(end, Step::Yield(RecordYield::Done(_))), "{end:?}");
            let row = db.rows.values().next().unwrap();
            assert_eq!(row.status, status);
            assert_eq!(row.error.as_deref(), Some("card declined\u{FFFD}ref=7"));
        }
        let mut db = FakeDb::new(dialect);
        let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
        let raised = OperationOutcome::Raised {
            message: "\0".repeat(2_000),
        };
        finish(&mut db, &mut holder, raised);
        let error = db.rows.values().next().unwrap().error.clone().unwrap();
        assert!(error.len() <= limits::RECORD_ERROR_MAX_BYTES);
        assert!(error.starts_with('\u{FFFD}') && error.ends_with(limits::TRUNCATION_MARKER));
    }
}

#[test]
fn the_database_going_away_after_the_operation_says_so() {
    // A connection that broke once: the completion is written on the next one.
    let mut db = FakeDb::new(Dialect::Mysql);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    db.failures = vec![DbErrorClass::ConnectionLost];
    let end = finish(
        &mut db,
        &mut holder,
        OperationOutcome::Succeeded(response("{}")),
    );
    assert_eq!(end, Step::Yield(RecordYield::Done(Finished::Executed)));
    assert_eq!(db.queries, ["claim", "complete", "complete"]);
}

#[test]
fn a_snapshot_that_cannot_see_the_row_is_reported() {
    // The claim meets a row the load cannot see (MySQL REPEATABLE READ).
    let db = FakeDb::new(Dialect::Mysql);
    let mut stuck = driver(&db, Way::SameTransaction, fp(1));
    let mut step = stuck.start(1_000);
    let mut rounds = 0;
    loop {
        step = match step {
            Step::Run(query) if query.name == "claim" => {
                rounds += 1;
                stuck.push(
                    Answer::Failed(DbError {
                        class: DbErrorClass::UniqueViolation,
                        message: String::new(),
                    }),
                    1_000,
                )
            }
            Step::Run(_) => stuck.push(Answer::Rows(vec![]), 1_000),
            Step::Fail(error) => {
                assert_eq!(error.code(), "store.stale_snapshot");
                break;
            }
            other => panic!("{other:?}"),
        };
    }
    assert_eq!(rounds, mintid::store::MAX_CLAIM_ROUNDS + 1);
}

#[test]
fn a_waiting_duplicate_pauses_and_replays() {
    let policy = RecordPolicy::new(1_000, 100_000)
        .unwrap()
        .with_wait(200, 50)
        .unwrap();
    let mut db = FakeDb::new(Dialect::Postgres);
    let (mut holder, _) = held_claim(&mut db, Way::RunOnce);
    let mut waiter = RecordDriver::new(
        db.manifest,
        policy,
        Way::RunOnce,
        &key(),
        Incoming::new(fp(1)),
    );
    let Step::Run(claim) = waiter.start(1_010) else {
        panic!()
    };
    let Step::Run(load) = waiter.push(db.run(&claim), 1_010) else {
        panic!()
    };
    assert_eq!(
        waiter.push(db.run(&load), 1_010),
        Step::Pause { millis: 50 }
    );
    let _ = finish(
        &mut db,
        &mut holder,
        OperationOutcome::Succeeded(response("{}")),
    );
    let Step::Run(load) = waiter.resume() else {
        panic!()
    };
    let Step::Yield(RecordYield::Done(Finished::Replay { outcome, .. })) =
        waiter.push(db.run(&load), 1_060)
    else {
        panic!()
    };
    assert_eq!(outcome, Outcome::Succeeded);
}

#[test]
fn cleanup_runs_batches_until_one_comes_back_short() {
    let manifest = Manifest::new(Dialect::Postgres, Placeholder::Numbered);
    let mut cleanup = RecordCleanup::new(manifest, 10);
    let first = cleanup.next(5_000);
    assert_eq!(first.name, "cleanup");
    assert_eq!(
        cleanup.push(Answer::Affected(10), 5_000),
        Step::Run(first.clone())
    );
    assert_eq!(cleanup.push(Answer::Affected(3), 5_000), Step::Yield(13));
}

/// What a random schedule does next: which actor moves, how far the clock
/// moves first, and whether a holder dies instead of finishing.
#[derive(Debug, Clone)]
struct Move {
    actor: usize,
    advance_millis: u64,
    crash: bool,
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    prop::collection::vec(
        (
            0usize..4,
            prop_oneof![Just(0u64), 1u64..400, 900u64..1_300],
            prop::bool::weighted(0.15),
        )
            .prop_map(|(actor, advance_millis, crash)| Move {
                actor,
                advance_millis,
                crash,
            }),
        1..60,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Under any schedule, with the clock moving, holders dying and leases
    /// running out: two holders never hold the key with live leases at once,
    /// a holder's write after a takeover is refused, and every duplicate that
    /// replays gets the one stored response.
    #[test]
    fn live_holders_exclude_each_other_under_any_schedule(
        dialect in prop_oneof![Just(Dialect::Postgres), Just(Dialect::Mysql), Just(Dialect::Sqlite)],
        schedule in moves(),
    ) {
        let mut db = FakeDb::new(dialect);
        let mut now = 1_000u64;
        let mut actors: Vec<Actor> = (0..4)
            .map(|_| Actor { driver: driver(&db, Way::RunOnce, fp(1)), step: None, executed: false, end: None })
            .collect();
        // The lease each actor holds while between Execute and its finish.
        let mut holding: Vec<Option<Held>> = vec![None; 4];
        let mut crashed = [false; 4];
        let outcome = |at: usize| OperationOutcome::Succeeded(response(&format!("{{\"by\":{at}}}")));
        for step in schedule {
            now += step.advance_millis;
            let at = step.actor;
            if actors[at].end.is_some() || crashed[at] {
                continue;
            }
            if step.crash && holding[at].is_some() {
                crashed[at] = true;
                holding[at] = None;
                continue;
            }
            advance(&mut actors[at], &mut db, now, &outcome(at));
            if let Some(Step::Yield(RecordYield::Execute(held))) = &actors[at].step {
                for (other, lease) in holding.iter().enumerate() {
                    if let Some(lease) = lease {
                        prop_assert!(
                            other == at || lease.lease_deadline_millis <= now,
                            "{at} took over at {now} while {other} holds until {}",
                            lease.lease_deadline_millis
                        );
                    }
                }
                holding[at] = Some(*held);
            } else {
                holding[at] = None;
            }
        }
        let stored = db.rows.values().next().cloned();
        for actor in &actors {
            match &actor.end {
                Some(Ok(Finished::Replay { outcome: Outcome::Succeeded, response, .. })) => {
                    let row = stored.as_ref().expect("a replay has a record");
                    prop_assert_eq!(response.as_ref().map(|r| &r.body), row.body.as_ref());
                }
                Some(Ok(Finished::Executed)) => {
                    prop_assert!(stored.is_some(), "an execution has a record");
                }
                Some(Err(error)) => {
                    prop_assert!(
                        matches!(error.code(), "record.stale_token" | "record.not_pending"),
                        "{}", error
                    );
                }
                _ => {}
            }
        }
        // A stored success is the response of an actor whose completion was accepted.
        if let Some(row) = stored.filter(|row| row.status == "succeeded") {
            let completed: Vec<Vec<u8>> = actors
                .iter()
                .enumerate()
                .filter(|(_, actor)| matches!(actor.end, Some(Ok(Finished::Executed))))
                .map(|(at, _)| format!("{{\"by\":{at}}}").into_bytes())
                .collect();
            prop_assert_eq!(completed.len(), 1, "one accepted completion");
            prop_assert_eq!(row.body.as_ref(), Some(&completed[0]));
        }
    }
}

#[test]
fn a_lease_holder_that_writes_twice_is_refused_by_the_fence() {
    for dialect in DIALECTS {
        let mut db = FakeDb::new(dialect);
        let mut holder = driver(&db, Way::Lease, fp(1));
        let Step::Run(claim) = holder.start(1_000) else {
            panic!()
        };
        let answer = db.run(&claim);
        let Step::Yield(RecordYield::Execute(_)) = holder.push(answer, 1_000) else {
            panic!()
        };
        let mut finish = |holder: &mut RecordDriver, now| {
            let mut step = holder.finish(OperationOutcome::Succeeded(response("a")), now);
            while let Step::Run(query) = step {
                let answer = db.run(&query);
                step = holder.push(answer, now);
            }
            step
        };
        let first = finish(&mut holder, 1_100);
        assert!(matches!(
            first,
            Step::Yield(RecordYield::Done(Finished::Executed))
        ));
        let Step::Fail(error) = finish(&mut holder, 1_200) else {
            panic!()
        };
        assert_eq!(error.code(), "record.not_pending");
    }
}
