//! The outbox relay driver as a model: two relays over two pending
//! messages, against a simulated `outbox_message` table, with an outage or
//! a lost reply at any statement, sends that succeed or fail, a crash of
//! any relay and time moving on (one clock: the relay's claim guards real
//! time only within the skew bound, which this model does not spend).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use mintid::outbox::RelayPolicy;
use mintid::store::{
    Answer, Dialect, Manifest, OutboxRelay, Placeholder, Query, RelayStep, RelayYield, Step, Value,
};

use super::explore::{Model, debug_print};
use super::sim::{Fault, faults, int_param, under};

/// How far one `Advance` moves the clock: two of them outlast a claim.
pub const QUANTUM_MILLIS: u64 = 15;
const START_MILLIS: u64 = 1_000_000;
const MAX_ATTEMPTS: u64 = 2;

fn policy() -> RelayPolicy {
    RelayPolicy::new(2, 20)
        .unwrap()
        .with_backoff(5, 50, 0)
        .unwrap()
        .with_max_attempts(MAX_ATTEMPTS)
        .unwrap()
}

/// The bounds of one exploration.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Outages and lost replies, in all.
    pub faults: u8,
    /// Crashes of a relay.
    pub crashes: u8,
    /// Moves of the clock by [`QUANTUM_MILLIS`].
    pub advances: u8,
}

/// One step the explorer may take.
#[derive(Debug, Clone)]
pub enum Act {
    /// Relay `i` starts a run.
    Start(usize),
    /// The database runs relay `i`'s pending query.
    Db(usize, Fault),
    /// Relay `i`'s send succeeds (`true`) or fails.
    Send(usize, bool),
    /// Relay `i` dies.
    Crash(usize),
    /// Time moves on.
    Advance,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Message {
    id: u64,
    status: &'static str,
    attempts: i64,
    next_attempt: i64,
    token: i64,
}

#[derive(Debug, Clone)]
enum Phase {
    Waiting,
    Stepping(Box<OutboxRelay>, RelayStep),
    Ended,
}

/// The world: the messages, the relays and the clock.
#[derive(Clone)]
pub struct OutboxModel {
    bounds: Bounds,
    manifest: Manifest,
    messages: Vec<Message>,
    relays: Vec<Phase>,
    now: u64,
    faults: u8,
    crashes: u8,
    advances: u8,
    /// How many of each relay's marks found its message taken by another
    /// relay or given back (a `claim_lost` each).
    taken_over: Vec<u64>,
    /// Each relay's last claim: its token and end.
    claims: Vec<(u64, u64)>,
    /// Every send: (message, claim token, when, the claim's end).
    sends: Vec<(u64, u64, u64, u64)>,
    violation: Option<String>,
    /// What was seen that is not a violation (shared by every state).
    pub findings: Rc<RefCell<BTreeSet<String>>>,
}

impl OutboxModel {
    /// `relays` relays over two pending messages.
    pub fn new(relays: usize, bounds: Bounds) -> Self {
        Self {
            bounds,
            manifest: Manifest::new(Dialect::Postgres, Placeholder::Numbered),
            messages: (1..=2)
                .map(|id| Message {
                    id,
                    status: "pending",
                    attempts: 0,
                    next_attempt: START_MILLIS as i64,
                    token: 0,
                })
                .collect(),
            relays: vec![Phase::Waiting; relays],
            claims: vec![(0, 0); relays],
            taken_over: vec![0; relays],
            now: START_MILLIS,
            faults: 0,
            crashes: 0,
            advances: 0,
            sends: Vec::new(),
            violation: None,
            findings: Rc::default(),
        }
    }

    fn run(&mut self, query: &Query) -> Answer {
        let manifest = self.manifest;
        let p = |name| int_param(&manifest, query, name);
        let mark = |messages: &mut Vec<Message>, status: &'static str, next: Option<i64>| {
            let (id, token) = (p("message_id") as u64, p("claim_token"));
            match messages
                .iter_mut()
                .find(|m| m.id == id && m.token == token && m.status == "pending")
            {
                Some(message) => {
                    message.status = status;
                    if let Some(next) = next {
                        message.next_attempt = next;
                        message.token = 0;
                    }
                    Answer::Affected(1)
                }
                None => Answer::Affected(0),
            }
        };
        match query.name {
            "outbox_claim" => {
                let now = p("now_millis");
                let mut due: Vec<&mut Message> = self
                    .messages
                    .iter_mut()
                    .filter(|m| m.status == "pending" && m.next_attempt <= now)
                    .collect();
                due.sort_by_key(|m| (m.next_attempt, m.id));
                due.truncate(p("batch_size") as usize);
                for message in &mut due {
                    message.token = p("claim_token");
                    message.next_attempt = p("claimed_until_millis");
                    message.attempts += 1;
                }
                Answer::Affected(due.len() as u64)
            }
            "outbox_claimed" => Answer::Rows(
                self.messages
                    .iter()
                    .filter(|m| m.token == p("claim_token") && m.status == "pending")
                    .map(|m| {
                        vec![
                            Value::Int(m.id as i64),
                            Value::Text("event".into()),
                            Value::Text(format!("k{}", m.id)),
                            Value::Bytes(b"{}".to_vec()),
                            Value::Int(m.attempts),
                            Value::Int(START_MILLIS as i64),
                        ]
                    })
                    .collect(),
            ),
            "outbox_load" => {
                let key = super::sim::param(&manifest, query, "business_key")
                    .and_then(Value::as_text)
                    .unwrap();
                Answer::Rows(
                    self.messages
                        .iter()
                        .filter(|m| format!("k{}", m.id) == key)
                        .map(|m| {
                            vec![
                                Value::Int(m.id as i64),
                                Value::Text("event".into()),
                                Value::Text(key.into()),
                                Value::Bytes(b"{}".to_vec()),
                                Value::Text(m.status.into()),
                                Value::Int(m.attempts),
                                Value::Int(m.next_attempt),
                                Value::Int(m.token),
                                Value::Null,
                                Value::Int(START_MILLIS as i64),
                                Value::Int(START_MILLIS as i64),
                            ]
                        })
                        .collect(),
                )
            }
            "outbox_mark_sent" => mark(&mut self.messages, "sent", None),
            "outbox_mark_retry" => mark(
                &mut self.messages,
                "pending",
                Some(p("next_attempt_millis")),
            ),
            "outbox_mark_dead" => mark(&mut self.messages, "dead", None),
            "outbox_release" => {
                let mut released = 0;
                for message in &mut self.messages {
                    if message.token == p("claim_token") && message.status == "pending" {
                        message.token = 0;
                        message.next_attempt = p("now_millis");
                        message.attempts -= 1;
                        released += 1;
                    }
                }
                Answer::Affected(released)
            }
            other => panic!("the outbox table does not know {other}"),
        }
    }

    /// Notes why a mark changed no row: its own earlier try landed (a lost
    /// reply), or another relay holds the message (this claim had ended).
    fn explain_lost_mark(&mut self, i: usize, query: &Query) {
        let p = |name| int_param(&self.manifest, query, name);
        let (id, token) = (p("message_id") as u64, p("claim_token"));
        let row = self.messages.iter().find(|m| m.id == id).unwrap();
        let why = if row.token == token && row.status != "pending" {
            "a mark found the state its own earlier try wrote (a lost reply)"
        } else if row.token != token && row.token != 0 {
            self.taken_over[i] += 1;
            "a mark found the message claimed by another relay (its claim had ended)"
        } else {
            self.taken_over[i] += 1;
            "a mark found the message released or retried"
        };
        self.findings.borrow_mut().insert(why.into());
    }

    fn settle(&mut self, i: usize, mut relay: OutboxRelay, mut step: RelayStep) {
        loop {
            step = match step {
                Step::Pause { .. } => relay.resume(),
                Step::Yield(RelayYield::Done(report)) => {
                    if report.claim_lost > self.taken_over[i] {
                        self.findings.borrow_mut().insert(
                            "a relay counted outbox.claim_lost for a mark whose own earlier \
                             try had landed"
                                .into(),
                        );
                    }
                    self.relays[i] = Phase::Ended;
                    return;
                }
                Step::Fail(error) => {
                    if error.code() != "store.unavailable" {
                        self.findings
                            .borrow_mut()
                            .insert(format!("a relay failed {}", error.code()));
                    }
                    self.relays[i] = Phase::Ended;
                    return;
                }
                other => {
                    self.relays[i] = Phase::Stepping(Box::new(relay), other);
                    return;
                }
            }
        }
    }

    fn send(&mut self, i: usize, ok: bool) {
        let Phase::Stepping(relay, Step::Yield(RelayYield::Send(message))) = self.relays[i].clone()
        else {
            unreachable!()
        };
        let mut relay = *relay;
        let id = message.message_id;
        let row = self.messages.iter().find(|m| m.id == id).unwrap().clone();
        let (token, until) = self.claims[i];
        if row.status == "sent" {
            if self.now < until {
                self.violation.get_or_insert(format!(
                    "message {id} sent again under a live claim after it was marked sent"
                ));
            } else {
                self.findings.borrow_mut().insert(
                    "a relay whose send starts after its claim ended (a pause between the \
                     decision and the send) sends a message another relay already sent"
                        .into(),
                );
            }
        }
        if ok {
            for &(other_id, other_token, when, other_until) in &self.sends {
                let overlap = when < until && self.now < other_until;
                if other_id == id && other_token != token && overlap {
                    self.violation.get_or_insert(format!(
                        "message {id} sent under two live claims ({other_token} at {when}, \
                         {token} at {})",
                        self.now
                    ));
                }
            }
            self.sends.push((id, token, self.now, until));
        }
        let step = if ok {
            relay.sent(self.now)
        } else {
            relay.failed("broker down", self.now)
        };
        self.settle(i, relay, step);
    }
}

impl Model for OutboxModel {
    type Action = Act;

    fn actions(&self, out: &mut Vec<Act>) {
        let budget = self.faults < self.bounds.faults;
        let mut live = false;
        for (i, phase) in self.relays.iter().enumerate() {
            match phase {
                Phase::Waiting => out.push(Act::Start(i)),
                Phase::Stepping(_, Step::Run(query)) => {
                    let writes = !matches!(query.name, "outbox_claimed" | "outbox_load");
                    out.extend(faults(writes, budget).iter().map(|&f| Act::Db(i, f)));
                }
                Phase::Stepping(_, Step::Yield(RelayYield::Send(_))) => {
                    out.push(Act::Send(i, true));
                    out.push(Act::Send(i, false));
                }
                Phase::Stepping(_, other) => panic!("a relay asked for {other:?}"),
                Phase::Ended => {}
            }
            if !matches!(phase, Phase::Ended) {
                live = true;
                if self.crashes < self.bounds.crashes {
                    out.push(Act::Crash(i));
                }
            }
        }
        if live && self.advances < self.bounds.advances {
            out.push(Act::Advance);
        }
    }

    fn step(&mut self, action: &Act) {
        match *action {
            Act::Start(i) => {
                let mut relay = OutboxRelay::new(self.manifest, policy(), i as u64 + 1);
                let step = relay.start(self.now);
                self.settle(i, relay, step);
            }
            Act::Db(i, fault) => {
                if fault != Fault::None {
                    self.faults += 1;
                }
                let Phase::Stepping(relay, Step::Run(query)) = self.relays[i].clone() else {
                    unreachable!()
                };
                if query.name == "outbox_claim" {
                    let p = |name| int_param(&self.manifest, &query, name) as u64;
                    self.claims[i] = (p("claim_token"), p("claimed_until_millis"));
                }
                let answer = under(fault, || self.run(&query));
                if query.name.starts_with("outbox_mark") && answer == Answer::Affected(0) {
                    self.explain_lost_mark(i, &query);
                }
                let mut relay = *relay;
                let step = relay.push(answer, self.now);
                self.settle(i, relay, step);
            }
            Act::Send(i, ok) => self.send(i, ok),
            Act::Crash(i) => {
                self.crashes += 1;
                self.relays[i] = Phase::Ended;
            }
            Act::Advance => {
                self.advances += 1;
                self.now += QUANTUM_MILLIS;
            }
        }
    }

    fn check(&self) -> Result<(), String> {
        if let Some(violation) = &self.violation {
            return Err(violation.clone());
        }
        for message in &self.messages {
            let sent = self.sends.iter().any(|s| s.0 == message.id);
            if message.status == "sent" && !sent {
                return Err(format!(
                    "message {} is marked sent but was never sent",
                    message.id
                ));
            }
            if message.status == "dead" && message.attempts < MAX_ATTEMPTS as i64 {
                return Err(format!(
                    "message {} is dead before its attempts ran out",
                    message.id
                ));
            }
        }
        Ok(())
    }

    /// Once every relay ended: no message is lost. A relay started later,
    /// without faults, whose sends fail until the attempts run out or
    /// succeed, leaves every message sent or dead by policy.
    fn check_end(&self) -> Result<(), String> {
        for ok in [true, false] {
            let mut later = self.clone();
            later.relays.push(Phase::Waiting);
            later.claims.push((0, 0));
            later.taken_over.push(0);
            let i = later.relays.len() - 1;
            for _ in 0..10 {
                later.now += 1_000;
                later.relays[i] = Phase::Waiting;
                later.step(&Act::Start(i));
                while let Phase::Stepping(_, step) = &later.relays[i] {
                    let act = match step {
                        Step::Run(_) => Act::Db(i, Fault::None),
                        _ => Act::Send(i, ok),
                    };
                    later.step(&act);
                }
                later.check()?;
            }
            for message in &later.messages {
                if message.status == "pending" {
                    return Err(format!(
                        "message {} is lost: a later relay never sends it ({message:?})",
                        message.id
                    ));
                }
            }
        }
        Ok(())
    }

    fn fingerprint(&self) -> u64 {
        debug_print(&(
            &self.messages,
            &self.relays,
            self.now,
            (self.faults, self.crashes, self.advances),
            (&self.sends, &self.violation),
        ))
    }
}
