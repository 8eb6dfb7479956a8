//! The record driver (with its fast-path steps and its renewal) as a model:
//! two or three requests of one key in the `run once` way, each on a clock
//! off by at most the spec's bound, against the scripted database and the
//! in-memory Redis, with an outage or a lost reply at any query or Redis
//! call, a crash of any request, a Redis flush and time moving on.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use mintid::record::{Incoming, Outcome, RecordPolicy};
use mintid::store::{
    Dialect, FastAnswer, FastPath, Finished, Held, OperationOutcome, RecordDriver, RecordRenewal,
    RecordStep, RecordYield, Step, StoredResponse, Way,
};
use mintid::{Fingerprint, IdempotencyKey};

use super::explore::{Model, debug_print};
use super::fake_db::FakeDb;
use super::fake_redis::FakeRedis;
use super::sim::{Fault, faults, int_param, under};

/// The record lease; a renewal is due every third of it.
pub const LEASE_MILLIS: u64 = 1_000;
/// The clock-skew bound the model keeps within: below `lease − renew_every`
/// (`docs/spec.md`, "Renewal").
pub const SKEW_MILLIS: u64 = 200;
/// How far one `Advance` moves the true time: three of them outlast a lease.
pub const QUANTUM_MILLIS: u64 = 400;
const START_MILLIS: u64 = 1_000_000;

/// The bounds of one exploration.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Outages and lost replies, in all.
    pub faults: u8,
    /// Crashes of a request.
    pub crashes: u8,
    /// Redis flushes.
    pub flushes: u8,
    /// Moves of the true time by [`QUANTUM_MILLIS`].
    pub advances: u8,
    /// Renewal beats per request.
    pub renewals: u8,
    /// Whether an operation may also raise (a retryable failure that
    /// releases the key).
    pub raises: bool,
}

/// One step the explorer may take.
#[derive(Debug, Clone)]
pub enum Act {
    /// Request `i` arrives and its driver starts.
    Start(usize),
    /// The database runs request `i`'s pending query.
    Db(usize, Fault),
    /// Redis runs request `i`'s pending call.
    Redis(usize, Fault),
    /// Request `i`'s operation returns (`true`) or raises.
    Finish(usize, bool),
    /// A renewal beat of request `i`'s held claim (or its check).
    Renew(usize, Fault),
    /// Request `i`'s process dies.
    Crash(usize),
    /// The true time moves on.
    Advance,
    /// Redis loses every entry and script.
    Flush,
}

#[derive(Debug, Clone)]
enum Phase {
    Waiting,
    Stepping(RecordStep),
    Running {
        renewal: RecordRenewal,
        checking: Option<mintid::store::Query>,
        renewals: u8,
        lost: bool,
    },
    Ended,
    Crashed,
}

#[derive(Debug, Clone)]
struct Req {
    driver: RecordDriver,
    phase: Phase,
    /// This host's clock minus the true time.
    skew: i64,
    /// The lease deadline the database holds for this request's claim.
    db_lease: u64,
    /// The fingerprint of `driver` and `phase`, kept up to date by
    /// [`RecordModel::step`] (their Debug text is long: the scripts' source).
    print: u64,
}

/// The world: one key, its requests, the database, Redis and the clocks.
#[derive(Clone)]
pub struct RecordModel {
    bounds: Bounds,
    db: FakeDb,
    redis: FakeRedis,
    now: u64,
    reqs: Vec<Req>,
    faults: u8,
    crashes: u8,
    flushes: u8,
    advances: u8,
    /// The request whose claim was granted last.
    latest_claim: Option<usize>,
    /// Every outcome ever stored as final (by its body: the request's name).
    recorded: BTreeSet<String>,
    violation: Option<String>,
    /// What was seen that is not a violation (shared by every state).
    pub findings: Rc<RefCell<BTreeSet<String>>>,
}

fn key() -> IdempotencyKey {
    IdempotencyKey::new("order.create", "tenant-1", "o-1").unwrap()
}

fn policy() -> RecordPolicy {
    RecordPolicy::new(LEASE_MILLIS, 100_000).unwrap()
}

fn body(i: usize) -> String {
    format!("r{i}")
}

impl RecordModel {
    /// Requests with these clock skews (each within ±[`SKEW_MILLIS`]).
    pub fn new(skews: &[i64], bounds: Bounds, ignore_fence_token: bool) -> Self {
        let mut db = FakeDb::new(Dialect::Postgres);
        db.ignore_fence_token = ignore_fence_token;
        let reqs = skews
            .iter()
            .map(|&skew| {
                assert!(skew.unsigned_abs() <= SKEW_MILLIS);
                Req {
                    driver: RecordDriver::with_fast_path(
                        db.manifest,
                        policy(),
                        Way::RunOnce,
                        &key(),
                        Incoming::new(Fingerprint::from_digest([1; 32])),
                        FastPath::new(policy()),
                    ),
                    phase: Phase::Waiting,
                    skew,
                    db_lease: 0,
                    print: 0,
                }
            })
            .collect();
        Self {
            bounds,
            db,
            redis: FakeRedis::loaded(),
            now: START_MILLIS,
            reqs,
            faults: 0,
            crashes: 0,
            flushes: 0,
            advances: 0,
            latest_claim: None,
            recorded: BTreeSet::new(),
            violation: None,
            findings: Rc::default(),
        }
    }

    fn clock(&self, i: usize) -> u64 {
        self.now.saturating_add_signed(self.reqs[i].skew)
    }

    fn fault(&mut self, fault: Fault) {
        if fault != Fault::None {
            self.faults += 1;
        }
    }

    fn violate(&mut self, what: String) {
        self.violation.get_or_insert(what);
    }

    fn row(&self) -> Option<&super::fake_db::Row> {
        self.db.rows.values().next()
    }

    /// Runs request `i`'s query under `fault`, then notes what the database
    /// now holds for it.
    fn run_db(
        &mut self,
        i: usize,
        query: &mintid::store::Query,
        fault: Fault,
    ) -> mintid::store::Answer {
        let before = self.row().map(|row| row.status.clone());
        let db = &mut self.db;
        let answer = under(fault, || db.run(query));
        self.db.queries.clear();
        let manifest = self.db.manifest;
        if let Some(row) = self.row().cloned() {
            if matches!(query.name, "claim" | "reclaim" | "renew")
                && row.token == int_param(&manifest, query, "fencing_token")
                && row.status == "pending"
            {
                self.reqs[i].db_lease = row.lease as u64;
            }
            let terminal = matches!(row.status.as_str(), "succeeded" | "failed");
            if terminal && before.as_deref() == Some("pending") {
                let stored = String::from_utf8(row.body.clone().unwrap_or_default()).unwrap();
                self.recorded.insert(stored.clone());
                if self.recorded.len() > 1 {
                    self.violate(format!("two outcomes recorded: {:?}", self.recorded));
                }
                if self.latest_claim != Some(i) {
                    self.violate(format!(
                        "request {i}'s outcome was recorded although its claim was taken over \
                         (the latest claim is {:?})",
                        self.latest_claim
                    ));
                }
            }
        }
        answer
    }

    /// Hands `step` over as a host does: pauses resumed at once, an
    /// `Execute` starts the operation, an end is checked.
    fn settle(&mut self, i: usize, mut step: RecordStep) {
        loop {
            step = match step {
                Step::Pause { .. } => self.reqs[i].driver.resume(),
                Step::Yield(RecordYield::Execute(held)) => return self.granted(i, held),
                Step::Yield(RecordYield::Done(finished)) => return self.ended(i, Ok(finished)),
                Step::Fail(error) => return self.ended(i, Err(error.code())),
                other => {
                    self.reqs[i].phase = Phase::Stepping(other);
                    return;
                }
            }
        }
    }

    fn granted(&mut self, i: usize, held: Held) {
        let now = self.now;
        let live = self.reqs.iter().enumerate().find(|(j, other)| {
            *j != i
                && matches!(other.phase, Phase::Running { .. })
                && other.db_lease > now + SKEW_MILLIS
        });
        if let Some((j, other)) = live {
            let what = format!(
                "request {i} runs while request {j}'s claim is live until {} (now {now})",
                other.db_lease
            );
            self.violate(what);
        }
        self.latest_claim = Some(i);
        let renewal = RecordRenewal::new(self.db.manifest, policy(), &key(), &held);
        self.reqs[i].phase = Phase::Running {
            renewal,
            checking: None,
            renewals: 0,
            lost: false,
        };
    }

    fn ended(&mut self, i: usize, end: Result<Finished, &'static str>) {
        let row = self.row().cloned();
        let holds = |text: &str| {
            row.as_ref().is_some_and(|row| {
                row.status == "succeeded" && row.body.as_deref() == Some(text.as_bytes())
            })
        };
        match &end {
            Ok(Finished::Replay {
                outcome: Outcome::Succeeded,
                response: Some(response),
                ..
            }) => {
                let text = String::from_utf8_lossy(&response.body).into_owned();
                if !holds(&text) {
                    self.violate(format!(
                        "request {i} was replayed {text:?}, which the database does not hold ({row:?})"
                    ));
                }
            }
            Ok(Finished::Executed) if !holds(&body(i)) => {
                self.violate(format!(
                    "request {i} was told executed; the database holds {row:?}"
                ));
            }
            Err(code) if *code != "store.unavailable" => {
                let own = holds(&body(i));
                self.findings.borrow_mut().insert(format!(
                    "a request ended {code}{}",
                    if own {
                        " although its own outcome is stored (a lost reply to its completion)"
                    } else {
                        ""
                    }
                ));
            }
            _ => {}
        }
        self.reqs[i].phase = Phase::Ended;
    }

    fn live(&self) -> bool {
        self.reqs
            .iter()
            .any(|r| !matches!(r.phase, Phase::Ended | Phase::Crashed))
    }

    fn renew(&mut self, i: usize, fault: Fault) {
        let clock = self.clock(i);
        let Phase::Running {
            renewal, checking, ..
        } = &mut self.reqs[i].phase
        else {
            unreachable!()
        };
        let query = match checking.take() {
            Some(load) => load,
            None => renewal.start(clock),
        };
        let answer = self.run_db(i, &query, fault);
        let Phase::Running {
            renewal,
            checking,
            renewals,
            lost,
            ..
        } = &mut self.reqs[i].phase
        else {
            unreachable!()
        };
        match renewal.push(answer) {
            Step::Yield(_) => *renewals += 1,
            Step::Run(load) => *checking = Some(load),
            Step::Fail(error) if error.code() == "store.record_lost" => *lost = true,
            Step::Fail(_) => *renewals += 1,
            other => panic!("a renewal asked for {other:?}"),
        }
    }
}

impl Model for RecordModel {
    type Action = Act;

    fn actions(&self, out: &mut Vec<Act>) {
        let budget = self.faults < self.bounds.faults;
        for (i, req) in self.reqs.iter().enumerate() {
            match &req.phase {
                Phase::Waiting => out.push(Act::Start(i)),
                Phase::Stepping(Step::Run(query)) => {
                    let writes = query.name != "load";
                    out.extend(faults(writes, budget).iter().map(|&f| Act::Db(i, f)));
                }
                Phase::Stepping(Step::Yield(RecordYield::Redis(_))) => {
                    out.extend(faults(true, budget).iter().map(|&f| Act::Redis(i, f)));
                }
                Phase::Running {
                    checking,
                    renewals,
                    lost,
                    ..
                } => {
                    out.push(Act::Finish(i, true));
                    if self.bounds.raises {
                        out.push(Act::Finish(i, false));
                    }
                    if !lost && (checking.is_some() || *renewals < self.bounds.renewals) {
                        let writes = checking.is_none();
                        out.extend(faults(writes, budget).iter().map(|&f| Act::Renew(i, f)));
                    }
                }
                Phase::Stepping(other) => panic!("a step the model does not serve: {other:?}"),
                Phase::Ended | Phase::Crashed => {}
            }
            if matches!(req.phase, Phase::Stepping(_) | Phase::Running { .. })
                && self.crashes < self.bounds.crashes
            {
                out.push(Act::Crash(i));
            }
        }
        if self.live() {
            if self.advances < self.bounds.advances {
                out.push(Act::Advance);
            }
            if self.flushes < self.bounds.flushes {
                out.push(Act::Flush);
            }
        }
    }

    fn step(&mut self, action: &Act) {
        self.act(action);
        if let Act::Start(i)
        | Act::Db(i, _)
        | Act::Redis(i, _)
        | Act::Finish(i, _)
        | Act::Renew(i, _)
        | Act::Crash(i) = *action
        {
            let req = &mut self.reqs[i];
            req.print = debug_print(&(&req.driver, &req.phase));
        }
    }

    fn check(&self) -> Result<(), String> {
        self.invariants()
    }

    fn fingerprint(&self) -> u64 {
        let redis: BTreeMap<_, _> = self
            .redis
            .entries
            .iter()
            .map(|(name, entry)| {
                let fields: BTreeMap<_, _> = entry.fields.iter().collect();
                (name, (fields, entry.expires_at))
            })
            .collect();
        let scripts: BTreeSet<_> = self.redis.loaded.iter().collect();
        let reqs: Vec<_> = self
            .reqs
            .iter()
            .map(|req| (req.print, req.skew, req.db_lease))
            .collect();
        debug_print(&(
            (&self.db.rows, redis, scripts, self.now),
            reqs,
            (self.faults, self.crashes, self.flushes, self.advances),
            (self.latest_claim, &self.recorded, &self.violation),
        ))
    }
}

impl RecordModel {
    fn act(&mut self, action: &Act) {
        match *action {
            Act::Start(i) => {
                let clock = self.clock(i);
                let step = self.reqs[i].driver.start(clock);
                self.settle(i, step);
            }
            Act::Db(i, fault) => {
                self.fault(fault);
                let Phase::Stepping(Step::Run(query)) = &self.reqs[i].phase else {
                    unreachable!()
                };
                let query = query.clone();
                let answer = self.run_db(i, &query, fault);
                let clock = self.clock(i);
                let step = self.reqs[i].driver.push(answer, clock);
                self.settle(i, step);
            }
            Act::Redis(i, fault) => {
                self.fault(fault);
                let Phase::Stepping(Step::Yield(RecordYield::Redis(call))) = &self.reqs[i].phase
                else {
                    unreachable!()
                };
                let call = call.clone();
                let clock = self.clock(i);
                let answer = match fault {
                    Fault::None => self.redis.run(&call, clock),
                    Fault::Outage => FastAnswer::Failed("timed out".into()),
                    Fault::LostReply => {
                        self.redis.run(&call, clock);
                        FastAnswer::Failed("timed out".into())
                    }
                };
                self.redis.calls.clear();
                let step = self.reqs[i].driver.push_redis(answer, clock);
                self.settle(i, step);
            }
            Act::Finish(i, succeeded) => {
                let outcome = if succeeded {
                    OperationOutcome::Succeeded(StoredResponse {
                        content_type: "text/plain".into(),
                        body: body(i).into_bytes(),
                    })
                } else {
                    OperationOutcome::Raised {
                        message: "try later".into(),
                    }
                };
                let clock = self.clock(i);
                let step = self.reqs[i].driver.finish(outcome, clock);
                self.settle(i, step);
            }
            Act::Renew(i, fault) => {
                self.fault(fault);
                self.renew(i, fault);
            }
            Act::Crash(i) => {
                self.crashes += 1;
                self.reqs[i].phase = Phase::Crashed;
            }
            Act::Advance => {
                self.advances += 1;
                self.now += QUANTUM_MILLIS;
            }
            Act::Flush => {
                self.flushes += 1;
                self.redis.flush();
            }
        }
    }

    fn invariants(&self) -> Result<(), String> {
        if let Some(violation) = &self.violation {
            return Err(violation.clone());
        }
        // Redis never holds a result the database does not hold.
        for entry in self.redis.entries.values() {
            if entry.fields.get("s").map(Vec::as_slice) == Some(b"done") {
                let row = self.row();
                let same = row.is_some_and(|row| {
                    matches!(row.status.as_str(), "succeeded" | "failed")
                        && row.body == entry.fields.get("b").cloned()
                });
                if !same {
                    return Err(format!(
                        "Redis holds a result the database does not: {:?} against {row:?}",
                        entry
                            .fields
                            .get("b")
                            .map(|b| String::from_utf8_lossy(b).into_owned())
                    ));
                }
            }
        }
        Ok(())
    }
}
