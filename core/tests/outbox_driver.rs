//! The outbox drivers against a scripted `outbox_message` table that applies
//! each named query as the schema's SQL does: two relays interleaved on one
//! clock, long send errors, poison messages, claims lost, enqueue duplicates.

use std::collections::BTreeMap;

use mintid::outbox::{Enqueued, RelayPolicy};
use mintid::store::limits::OUTBOX_ERROR_MAX_BYTES;
use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, Manifest, OutboxCleanup, OutboxEnqueue, OutboxRelay,
    Placeholder, Query, RelayReport, RelayStep, RelayYield, Step, Value, outbox_load_query,
    read_outbox_load,
};

#[derive(Debug, Clone)]
struct Row {
    kind: String,
    key: String,
    status: &'static str,
    attempts: i64,
    next: i64,
    token: i64,
    last_error: Option<String>,
    updated: i64,
}

struct Table {
    manifest: Manifest,
    rows: BTreeMap<i64, Row>,
    /// Plain INSERT (MySQL): a duplicate is a unique violation.
    plain_insert: bool,
    fail_next: Option<DbErrorClass>,
    /// The first query of this name runs, then its reply is lost (a broken
    /// connection).
    lose_reply: Option<&'static str>,
    /// Every mark of this message fails (a row the database refuses).
    refuse_marks_of: Option<i64>,
}

impl Table {
    fn new() -> Self {
        Self {
            manifest: Manifest::new(Dialect::Postgres, Placeholder::Numbered),
            rows: BTreeMap::new(),
            plain_insert: false,
            fail_next: None,
            lose_reply: None,
            refuse_marks_of: None,
        }
    }

    fn enqueue(&mut self, id: u64, key: &str, now: u64) -> Enqueued {
        let mut driver = OutboxEnqueue::new(self.manifest, id, "event", key, b"{}".to_vec());
        let first = driver.start(now);
        match settle(self, first, |answer| driver.push(answer)) {
            Step::Yield(done) => done,
            other => panic!("{other:?}"),
        }
    }

    fn run(&mut self, query: &Query) -> Answer {
        let answer = self.apply(query);
        if self.lose_reply == Some(query.name) {
            self.lose_reply = None;
            return Answer::Failed(DbError {
                class: DbErrorClass::ConnectionLost,
                message: "the connection broke after the commit".into(),
            });
        }
        answer
    }

    fn apply(&mut self, query: &Query) -> Answer {
        if let Some(class) = self.fail_next.take() {
            return Answer::Failed(DbError {
                class,
                message: "scripted".into(),
            });
        }
        let statement = self.manifest.statement(query.name).unwrap();
        let p: BTreeMap<&str, Value> = statement
            .params
            .iter()
            .copied()
            .zip(query.params.iter().cloned())
            .collect();
        let int = |name: &str| p[name].as_int().unwrap();
        let text = |name: &str| p[name].as_text().unwrap().to_string();
        match query.name {
            "outbox_enqueue" => {
                let id = int("message_id");
                let (kind, key) = (text("kind"), text("business_key"));
                let dup = self.rows.values().any(|r| r.kind == kind && r.key == key);
                if dup || self.rows.contains_key(&id) {
                    if self.plain_insert || !dup {
                        return Answer::Failed(DbError {
                            class: DbErrorClass::UniqueViolation,
                            message: "duplicate".into(),
                        });
                    }
                    return Answer::Affected(0);
                }
                let now = int("now_millis");
                self.rows.insert(
                    id,
                    Row {
                        kind,
                        key,
                        status: "pending",
                        attempts: 0,
                        next: now,
                        token: 0,
                        last_error: None,
                        updated: now,
                    },
                );
                Answer::Affected(1)
            }
            "outbox_load" => {
                let (kind, key) = (text("kind"), text("business_key"));
                Answer::Rows(
                    self.rows
                        .iter()
                        .filter(|(_, r)| r.kind == kind && r.key == key)
                        .map(|(id, r)| {
                            vec![
                                Value::Int(*id),
                                Value::Text(r.kind.clone()),
                                Value::Text(r.key.clone()),
                                Value::Bytes(b"{}".to_vec()),
                                Value::Text(r.status.into()),
                                Value::Int(r.attempts),
                                Value::Int(r.next),
                                Value::Int(r.token),
                                r.last_error.clone().map_or(Value::Null, Value::Text),
                                Value::Int(0),
                                Value::Int(r.updated),
                            ]
                        })
                        .collect(),
                )
            }
            "outbox_claim" => {
                let now = int("now_millis");
                let mut due: Vec<(i64, i64)> = self
                    .rows
                    .iter()
                    .filter(|(_, r)| r.status == "pending" && r.next <= now)
                    .map(|(id, r)| (r.next, *id))
                    .collect();
                due.sort();
                due.truncate(int("batch_size") as usize);
                for (_, id) in &due {
                    let row = self.rows.get_mut(id).unwrap();
                    row.token = int("claim_token");
                    row.next = int("claimed_until_millis");
                    row.attempts += 1;
                }
                Answer::Affected(due.len() as u64)
            }
            "outbox_claimed" => Answer::Rows(
                self.rows
                    .iter()
                    .filter(|(_, r)| r.token == int("claim_token") && r.status == "pending")
                    .map(|(id, r)| {
                        vec![
                            Value::Int(*id),
                            Value::Text(r.kind.clone()),
                            Value::Text(r.key.clone()),
                            Value::Bytes(b"{}".to_vec()),
                            Value::Int(r.attempts),
                            Value::Int(0),
                        ]
                    })
                    .collect(),
            ),
            "outbox_mark_sent" | "outbox_mark_retry" | "outbox_mark_dead" => {
                // PostgreSQL refuses U+0000 in a text.
                let nul = p
                    .get("last_error")
                    .is_some_and(|e| e.as_text().unwrap().contains('\0'));
                if nul || self.refuse_marks_of == Some(int("message_id")) {
                    return Answer::Failed(DbError {
                        class: DbErrorClass::Other,
                        message: "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
                    });
                }
                let Some(row) = self.rows.get_mut(&int("message_id")) else {
                    return Answer::Affected(0);
                };
                if row.token != int("claim_token") || row.status != "pending" {
                    return Answer::Affected(0);
                }
                match query.name {
                    "outbox_mark_sent" => row.status = "sent",
                    "outbox_mark_retry" => {
                        row.next = int("next_attempt_millis");
                        row.token = 0;
                        row.last_error = Some(text("last_error"));
                    }
                    _ => {
                        row.status = "dead";
                        row.last_error = Some(text("last_error"));
                    }
                }
                row.updated = int("now_millis");
                Answer::Affected(1)
            }
            "outbox_release" => {
                let mut count = 0;
                for row in self.rows.values_mut() {
                    if row.token == int("claim_token") && row.status == "pending" {
                        row.token = 0;
                        row.next = int("now_millis");
                        row.attempts -= 1;
                        count += 1;
                    }
                }
                Answer::Affected(count)
            }
            "outbox_cleanup" => {
                let before = int("sent_before_millis");
                let ids: Vec<i64> = self
                    .rows
                    .iter()
                    .filter(|(_, r)| r.status == "sent" && r.updated <= before)
                    .map(|(id, _)| *id)
                    .take(int("batch_size") as usize)
                    .collect();
                for id in &ids {
                    self.rows.remove(id);
                }
                Answer::Affected(ids.len() as u64)
            }
            other => panic!("unexpected query {other}"),
        }
    }
}

/// Runs the queries of `step` and the steps `push` answers with, up to the first other step.
fn settle<Y>(
    table: &mut Table,
    mut step: Step<Y>,
    mut push: impl FnMut(Answer) -> Step<Y>,
) -> Step<Y> {
    loop {
        match step {
            Step::Run(query) => step = push(table.run(&query)),
            other => return other,
        }
    }
}

fn policy(batch: u64, claim: u64, attempts: u64) -> RelayPolicy {
    RelayPolicy::new(batch, claim)
        .unwrap()
        .with_backoff(1_000, 600_000, 0)
        .unwrap()
        .with_max_attempts(attempts)
        .unwrap()
}

/// A relay in progress: its driver and its pending step.
struct Relay {
    driver: OutboxRelay,
    step: RelayStep,
    sent: Vec<u64>,
}

impl Relay {
    fn new(table: &Table, policy: RelayPolicy, seed: u64, now: u64) -> Self {
        let mut driver = OutboxRelay::new(table.manifest, policy, seed);
        let step = driver.start(now);
        Self {
            driver,
            step,
            sent: Vec::new(),
        }
    }

    /// Runs queries until the relay asks for a send or is done.
    fn settle(&mut self, table: &mut Table, now: u64) {
        loop {
            self.step = match std::mem::replace(&mut self.step, Step::Commit) {
                Step::Run(query) => self.driver.push(table.run(&query), now),
                Step::Pause { .. } => self.driver.resume(),
                other => {
                    self.step = other;
                    return;
                }
            }
        }
    }

    fn sending(&self) -> Option<u64> {
        match &self.step {
            Step::Yield(RelayYield::Send(message)) => Some(message.message_id),
            _ => None,
        }
    }

    fn report(&self) -> Option<RelayReport> {
        match &self.step {
            Step::Yield(RelayYield::Done(report)) => Some(*report),
            _ => None,
        }
    }
}

/// Runs `relay` to its end on a clock that moves `send_millis` per send;
/// every send fails with `error` when it is set.
fn run(
    table: &mut Table,
    relay: &mut Relay,
    now: &mut u64,
    send_millis: u64,
    error: Option<&str>,
) -> RelayReport {
    loop {
        relay.settle(table, *now);
        if let Some(report) = relay.report() {
            return report;
        }
        let id = relay.sending().expect("a send or the end");
        relay.sent.push(id);
        *now += send_millis;
        relay.step = match error {
            None => relay.driver.sent(*now),
            Some(text) => relay.driver.failed(text, *now),
        };
    }
}

#[test]
fn a_slow_sender_and_a_second_relay_never_send_one_message_twice() {
    // The measured case: 20 messages, a 1 s claim, 150 ms per send, a second
    // relay starting after 1.2 s. The two relays alternate sends on one clock.
    let mut table = Table::new();
    for n in 0..20 {
        table.enqueue(n + 1, &format!("e-{n}"), 0);
    }
    let policy = policy(100, 1_000, 10);
    let mut relays = vec![Relay::new(&table, policy, 1, 0)];
    let mut reports: Vec<Option<RelayReport>> = vec![None];
    let mut now = 0;
    while reports.len() < 2 || reports.iter().any(Option::is_none) {
        if relays.len() == 1 && now >= 1_200 {
            relays.push(Relay::new(&table, policy, 2, now));
            reports.push(None);
        }
        // Each relay sends one message per 150 ms tick, the two side by side.
        for (relay, report) in relays.iter_mut().zip(reports.iter_mut()) {
            if report.is_some() {
                continue;
            }
            relay.settle(&mut table, now);
            *report = relay.report();
            if let Some(id) = relay.sending() {
                relay.sent.push(id);
                relay.step = relay.driver.sent(now + 150);
            }
        }
        now += 150;
    }
    let (first, second) = (&relays[0], &relays[1]);
    let done = (reports[0], reports[1]);
    let mut all: Vec<u64> = first.sent.clone();
    all.extend(second.sent.iter());
    all.sort_unstable();
    assert_eq!(all, (1..=20).collect::<Vec<_>>(), "each message sent once");
    let (a, b) = (done.0.unwrap(), done.1.unwrap());
    assert_eq!(a.sent + b.sent, 20);
    assert_eq!(a.claim_lost + b.claim_lost, 0);
    assert!(a.released > 0, "the first relay gave its tail back: {a:?}");
    for row in table.rows.values() {
        assert_eq!(
            (row.status, row.attempts),
            ("sent", 1),
            "attempts count sends"
        );
    }
}

#[test]
fn a_long_send_error_is_stored_bounded_and_nothing_is_left_stuck() {
    let mut table = Table::new();
    for n in 0..17 {
        table.enqueue(n + 1, &format!("e-{n}"), 0);
    }
    let mut now = 0;
    let mut relay = Relay::new(&table, policy(100, 60_000, 3), 7, now);
    let long = "é".repeat(2_500);
    let report = run(&mut table, &mut relay, &mut now, 1, Some(&long));
    assert_eq!(report.retried, 17);
    for row in table.rows.values() {
        let error = row.last_error.as_deref().unwrap();
        assert!(error.len() <= OUTBOX_ERROR_MAX_BYTES && error.ends_with("… [truncated]"));
        assert_eq!((row.status, row.attempts, row.token), ("pending", 1, 0));
    }
}

#[test]
fn a_poison_message_goes_dead_after_max_attempts_of_real_send_failures() {
    let mut table = Table::new();
    table.enqueue(1, "poison", 0);
    let mut now = 0;
    for round in 1..=3 {
        let mut relay = Relay::new(&table, policy(10, 60_000, 3), round, now);
        let report = run(&mut table, &mut relay, &mut now, 10, Some("rejected"));
        let expected = if round < 3 { (1, 0) } else { (0, 1) };
        assert_eq!((report.retried, report.dead), expected, "round {round}");
        now += 600_000;
    }
    let row = &table.rows[&1];
    assert_eq!((row.status, row.attempts), ("dead", 3));
    assert_eq!(row.last_error.as_deref(), Some("rejected"));
}

#[test]
fn a_lost_claim_is_counted_and_the_run_goes_on() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    table.enqueue(2, "b", 0);
    let policy = policy(10, 1_000, 5);
    let mut slow = Relay::new(&table, policy, 3, 0);
    slow.settle(&mut table, 0);
    assert_eq!(slow.sending(), Some(1));
    // The send outlives the claim; another relay claims and sends both.
    let mut now = 5_000;
    let mut other = Relay::new(&table, policy, 4, now);
    let report = run(&mut table, &mut other, &mut now, 1, None);
    assert_eq!(report.sent, 2);
    slow.step = slow.driver.sent(now);
    let report = run(&mut table, &mut slow, &mut now, 1, None);
    assert_eq!(report.claim_lost, 1);
    assert_eq!(report.sent, 0);
    assert_eq!(report.released, 0, "message 2 is the other relay's");
}

#[test]
fn attempts_run_out_by_dying_relays_give_the_message_up_unsent() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    let policy = policy(10, 1_000, 2);
    for (seed, at) in [(1, 0), (2, 1_000)] {
        let mut relay = Relay::new(&table, policy, seed, at);
        relay.settle(&mut table, at);
        assert_eq!(relay.sending(), Some(1), "the relay dies sending it");
    }
    let mut now = 2_000;
    let mut relay = Relay::new(&table, policy, 3, now);
    let report = run(&mut table, &mut relay, &mut now, 1, None);
    assert_eq!(report.given_up, 1);
    assert!(relay.sent.is_empty());
    assert_eq!(
        table.rows[&1].last_error.as_deref(),
        Some("outbox.attempts_exhausted")
    );
}

#[test]
fn enqueue_duplicates_with_and_without_a_plain_insert() {
    for plain in [false, true] {
        let mut table = Table::new();
        table.plain_insert = plain;
        assert_eq!(table.enqueue(1, "a", 0), Enqueued::New);
        assert_eq!(table.enqueue(2, "a", 0), Enqueued::AlreadyEnqueued);
        // The id of another message: an error, whichever insert.
        let mut driver = OutboxEnqueue::new(table.manifest, 1, "event", "b", Vec::new());
        let first = driver.start(0);
        let Step::Fail(error) = settle(&mut table, first, |answer| driver.push(answer)) else {
            panic!("a message id of another message is an error")
        };
        assert_eq!(error.code(), "store.query_failed");
    }
    let mut driver = OutboxEnqueue::new(
        Manifest::new(Dialect::Mysql, Placeholder::Question),
        1,
        "with space",
        "a",
        Vec::new(),
    );
    let Step::Fail(error) = driver.start(0) else {
        panic!()
    };
    assert_eq!(error.code(), "outbox.invalid_message");
    let manifest = Manifest::new(Dialect::Sqlite, Placeholder::Question);
    let mut driver = OutboxEnqueue::new(manifest, 1 << 63, "kind", "a", Vec::new());
    let Step::Fail(error) = driver.start(0) else {
        panic!()
    };
    assert_eq!(error.code(), "outbox.invalid_message");
}

#[test]
fn a_lost_connection_on_a_mark_is_retried_then_reported() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    let mut relay = Relay::new(&table, policy(10, 60_000, 3), 1, 0);
    relay.settle(&mut table, 0);
    relay.step = relay.driver.sent(1);
    table.fail_next = Some(DbErrorClass::ConnectionLost);
    let mut now = 1;
    let report = run(&mut table, &mut relay, &mut now, 1, None);
    assert_eq!(report.sent, 1);
    let mut driver = OutboxRelay::new(table.manifest, policy(10, 60_000, 3), 1);
    assert!(matches!(driver.start(0), Step::Run(_)));
    let failed = Answer::Failed(DbError {
        class: DbErrorClass::Other,
        message: "no table".into(),
    });
    let Step::Fail(error) = driver.push(failed, 0) else {
        panic!("another database error ends the run")
    };
    assert_eq!(error.code(), "store.query_failed");
}

#[test]
fn a_claim_shorter_than_a_round_trip_is_given_back_and_the_run_ends() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    let mut relay = Relay::new(&table, policy(10, 1, 3), 1, 0);
    // The clock moves past the 1 ms claim before its rows are read.
    relay.settle(&mut table, 5);
    let report = relay
        .report()
        .expect("the run ends, it does not claim forever");
    assert_eq!((report.sent, report.released), (0, 1));
    let row = &table.rows[&1];
    assert_eq!((row.attempts, row.token, row.next), (0, 0, 5));
}

#[test]
fn load_and_cleanup() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    table.enqueue(2, "b", 0);
    let mut now = 10;
    let mut relay = Relay::new(&table, policy(10, 60_000, 3), 1, now);
    run(&mut table, &mut relay, &mut now, 1, None);
    let answer = table.run(&outbox_load_query(table.manifest, "event", "a"));
    let stored = read_outbox_load(&answer).unwrap().unwrap();
    assert_eq!((stored.message_id, stored.attempts), (1, 1));
    assert_eq!(stored.status.as_str(), "sent");
    let mut cleanup = OutboxCleanup::new(table.manifest, 1_000, 1);
    let first = cleanup.start();
    let deleted = settle(&mut table, first, |answer| cleanup.push(answer));
    assert_eq!(deleted, Step::Yield(2));
}

#[test]
fn a_send_error_with_nul_is_stored_with_a_replacement_character() {
    let mut table = Table::new();
    table.enqueue(1, "a", 0);
    table.enqueue(2, "b", 0);
    let mut now = 0;
    let mut relay = Relay::new(&table, policy(10, 60_000, 3), 1, now);
    let report = run(&mut table, &mut relay, &mut now, 1, Some("broker said\0no"));
    assert_eq!((report.retried, report.mark_failed), (2, 0));
    for row in table.rows.values() {
        assert_eq!(row.last_error.as_deref(), Some("broker said\u{FFFD}no"));
    }
}

#[test]
fn a_lost_reply_to_a_mark_is_counted_as_its_mark_never_as_claim_lost() {
    for (lost, error) in [
        ("outbox_mark_sent", None),
        ("outbox_mark_retry", Some("timeout")),
        ("outbox_mark_dead", Some("rejected")),
    ] {
        let mut table = Table::new();
        table.enqueue(1, "a", 0);
        table.enqueue(2, "b", 0);
        table.lose_reply = Some(lost);
        let attempts = if lost == "outbox_mark_dead" { 1 } else { 3 };
        let mut now = 0;
        let mut relay = Relay::new(&table, policy(10, 60_000, attempts), 1, now);
        let report = run(&mut table, &mut relay, &mut now, 1, error);
        let counted = report.sent + report.retried + report.dead;
        assert_eq!((counted, report.claim_lost), (2, 0), "{lost}: {report:?}");
        assert!(table.lose_reply.is_none(), "{lost}: the reply was lost");
    }
}

#[test]
fn one_messages_failed_mark_never_stops_the_run_nor_touches_the_others() {
    let mut table = Table::new();
    for n in 1..=6 {
        table.enqueue(n, &format!("m-{n}"), 0);
    }
    table.refuse_marks_of = Some(3);
    let mut now = 0;
    let mut relay = Relay::new(&table, policy(10, 60_000, 3), 1, now);
    let report = run(&mut table, &mut relay, &mut now, 1, None);
    assert_eq!((report.sent, report.mark_failed, report.dead), (5, 1, 0));
    assert_eq!(relay.sent, [1, 2, 3, 4, 5, 6]);
    for (id, row) in &table.rows {
        let expected = if *id == 3 { "pending" } else { "sent" };
        assert_eq!(row.status, expected, "message {id}");
    }
    // Once its claim ends, the unmarked message is sent again.
    table.refuse_marks_of = None;
    let mut now = 60_000;
    let mut relay = Relay::new(&table, policy(10, 60_000, 3), 2, now);
    let report = run(&mut table, &mut relay, &mut now, 1, None);
    assert_eq!((report.sent, relay.sent.as_slice()), (1, [3].as_slice()));
}
