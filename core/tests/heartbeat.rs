//! The record heartbeat against the scripted in-memory database: when it
//! beats, what a failed renewal means, and when it ends.

use mintid::Fingerprint;
use mintid::IdempotencyKey;
use mintid::record::{Incoming, RecordPolicy};
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, DriverError, Held, OperationOutcome, RecordDriver,
    RecordHeartbeat, RecordYield, Step, StoreErrorKind, StoredResponse, Way,
};

#[path = "support/fake_db.rs"]
mod fake_db;
use fake_db::FakeDb;

fn key() -> IdempotencyKey {
    IdempotencyKey::new("order.create", "tenant-1", "o-1").unwrap()
}

/// A lease of 900 ms: a beat every 300 ms.
fn policy() -> RecordPolicy {
    RecordPolicy::new(900, 100_000).unwrap()
}

/// A claim held from 1 000 (lease until 1 900).
fn held(db: &mut FakeDb, way: Way) -> (RecordDriver, Held) {
    let mut holder = RecordDriver::new(
        db.manifest,
        policy(),
        way,
        &key(),
        Incoming::new(Fingerprint::from_digest([1; 32])),
    );
    let Step::Run(claim) = holder.start(1_000) else {
        panic!("a claim first")
    };
    let answer = db.run(&claim);
    let Step::Yield(RecordYield::Execute(held)) = holder.push(answer, 1_000) else {
        panic!("the claim is held")
    };
    (holder, held)
}

fn lost() -> Answer {
    Answer::Failed(DbError {
        class: DbErrorClass::ConnectionLost,
        message: "server closed the connection".into(),
    })
}

fn store_kind(step: &Step<u64>) -> Option<StoreErrorKind> {
    match step {
        Step::Fail(DriverError::Store(error)) => Some(error.kind()),
        _ => None,
    }
}

/// Sleeps the pause `step` asks for and resumes: the time after it.
fn sleep(heartbeat: &mut RecordHeartbeat, step: &Step<u64>, now: &mut u64) -> Step<u64> {
    let Step::Pause { millis } = step else {
        panic!("a pause, not {step:?}")
    };
    *now += millis;
    heartbeat.resume(*now)
}

#[test]
fn it_beats_every_third_of_the_lease_and_moves_the_deadline() {
    for dialect in [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite] {
        let mut db = FakeDb::new(dialect);
        let (_holder, held) = held(&mut db, Way::RunOnce);
        assert_eq!(held.renew_every_millis, Some(300));
        let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
        let mut now = 1_000;
        let mut step = heartbeat.start(now);
        for beat in 1..=5 {
            assert_eq!(step, Step::Pause { millis: 300 }, "beat {beat}");
            let Step::Run(renew) = sleep(&mut heartbeat, &step, &mut now) else {
                panic!("a renewal")
            };
            assert_eq!(renew.name, "renew");
            step = heartbeat.push(db.run(&renew), now);
            assert_eq!(heartbeat.lease_deadline_millis(), now + 900);
        }
        assert_eq!(now, 2_500, "five beats, past the first lease's end");
        assert_eq!(heartbeat.stop(), Step::Yield(3_400));
    }
}

#[test]
fn an_unavailable_database_is_tried_again_while_the_lease_runs_then_the_lease_is_lost() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let mut now = 1_000;
    let first = heartbeat.start(now);
    let mut step = sleep(&mut heartbeat, &first, &mut now);
    let mut pauses = Vec::new();
    while let Step::Run(_) = step {
        step = heartbeat.push(lost(), now);
        if let Step::Pause { millis } = step {
            pauses.push(millis);
            step = sleep(&mut heartbeat, &step, &mut now);
        }
    }
    // 5, 10, … doubling, the last one cut at the deadline (1 900).
    assert_eq!(pauses, [5, 10, 20, 40, 80, 160, 285]);
    assert_eq!(now, 1_900);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::RecordLost),
        "{step:?}"
    );
    // Ended: whatever comes later changes nothing.
    assert_eq!(heartbeat.resume(2_000), Step::Yield(1_900));
}

#[test]
fn a_renewal_after_an_outage_resets_the_retry_pause() {
    let mut db = FakeDb::new(Dialect::Mysql);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let mut now = 1_000;
    let first = heartbeat.start(now);
    let step = sleep(&mut heartbeat, &first, &mut now);
    assert!(matches!(step, Step::Run(_)));
    let retry = heartbeat.push(lost(), now);
    assert_eq!(retry, Step::Pause { millis: 5 });
    let Step::Run(renew) = sleep(&mut heartbeat, &retry, &mut now) else {
        panic!("the renewal again")
    };
    assert_eq!(
        heartbeat.push(db.run(&renew), now),
        Step::Pause { millis: 300 }
    );
    let Step::Run(_) = heartbeat.resume(now + 300) else {
        panic!("the next beat")
    };
    assert_eq!(heartbeat.push(lost(), now + 300), Step::Pause { millis: 5 });
}

#[test]
fn a_record_taken_over_or_completed_ends_the_heartbeat_as_lost() {
    let mut db = FakeDb::new(Dialect::Sqlite);
    let (mut holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let mut now = 1_000;
    let first = heartbeat.start(now);
    let Step::Run(complete) = holder.finish(
        OperationOutcome::Succeeded(StoredResponse {
            content_type: "text/plain".into(),
            body: b"ok".to_vec(),
        }),
        1_100,
    ) else {
        panic!("the completion")
    };
    let _ = db.run(&complete);
    let Step::Run(renew) = sleep(&mut heartbeat, &first, &mut now) else {
        panic!("a renewal")
    };
    let Step::Run(load) = heartbeat.push(db.run(&renew), now) else {
        panic!("a renewal that changed no row is checked")
    };
    let step = heartbeat.push(db.run(&load), now);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::RecordLost),
        "{step:?}"
    );
}

#[test]
fn a_lease_that_ran_out_during_a_pause_is_never_renewed() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let _ = heartbeat.start(1_000);
    // The host's thread slept far too long (a stop-the-world pause).
    let step = heartbeat.resume(1_900);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::RecordLost),
        "{step:?}"
    );
    assert!(!db.queries.contains(&"renew"), "{:?}", db.queries);
}

#[test]
fn a_pause_never_reaches_past_the_deadline() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    // Started late: 100 ms of the lease left.
    assert_eq!(heartbeat.start(1_800), Step::Pause { millis: 100 });
    let mut late = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let step = late.start(1_900);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::RecordLost),
        "{step:?}"
    );
}

#[test]
fn stopped_it_ends_at_once_and_a_late_answer_changes_nothing() {
    let mut db = FakeDb::new(Dialect::Mysql);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let first = heartbeat.start(1_000);
    let mut now = 1_000;
    let Step::Run(renew) = sleep(&mut heartbeat, &first, &mut now) else {
        panic!("a renewal")
    };
    assert_eq!(heartbeat.stop(), Step::Yield(1_900));
    assert_eq!(heartbeat.push(db.run(&renew), now), Step::Yield(1_900));
    assert_eq!(heartbeat.resume(now), Step::Yield(1_900));
}

#[test]
fn a_claim_inside_the_callers_transaction_has_no_heartbeat() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (_holder, held) = held(&mut db, Way::SameTransaction);
    assert_eq!(held.renew_every_millis, None);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    assert_eq!(heartbeat.start(1_000), Step::Yield(1_900));
}

#[test]
fn a_call_out_of_order_is_a_typed_error() {
    let mut db = FakeDb::new(Dialect::Postgres);
    let (_holder, held) = held(&mut db, Way::RunOnce);
    let mut heartbeat = RecordHeartbeat::new(db.manifest, policy(), &key(), &held);
    let step = heartbeat.push(Answer::Affected(1), 1_000);
    assert_eq!(
        store_kind(&step),
        Some(StoreErrorKind::QueryFailed),
        "{step:?}"
    );
}
