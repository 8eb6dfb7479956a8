//! The lease drivers as a model: two or three processes contend for the one
//! worker id of a layout (acquire, issue IDs, renew, release), each on a
//! clock off by at most half the policy's skew bound, against a simulated
//! `worker_lease` table with transactions and row locks, with an outage or a
//! lost reply at any statement, a crash of any process and time moving on.

use mintid::SnowflakeLayout;
use mintid::lease::{Acquisition, LeaseGuard, LeasePolicy, Renewal};
use mintid::store::{
    Answer, Dialect, LeaseAcquisition, LeaseRelease, LeaseRenewal, LeaseStep, Manifest,
    Placeholder, Query, Step, Value,
};

use super::explore::{Model, debug_print};
use super::sim::{Fault, connection_lost, faults, int_param};

/// Each clock is off the true time by at most this (so two clocks differ by
/// at most the policy's `max_skew`).
pub const SKEW_MILLIS: u64 = 2;
/// How far one `Advance` moves the true time.
pub const QUANTUM_MILLIS: u64 = 10;
const START_MILLIS: u64 = 1_800_000_000_000;

/// One worker id; a 30 ms lease renewed every 10 ms, stopped 5 ms before
/// its deadline; a skew bound of 4 ms.
pub fn policy() -> LeasePolicy {
    let layout = SnowflakeLayout::new(41, 0, 22, 1_735_689_600_000, 1).unwrap();
    LeasePolicy::new(layout)
        .unwrap()
        .with_lease(30, 10, 5)
        .unwrap()
        .with_max_skew_millis(2 * SKEW_MILLIS)
        .with_max_start_wait_millis(40)
}

/// The bounds of one exploration.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Outages and lost replies, in all.
    pub faults: u8,
    /// Crashes of a process.
    pub crashes: u8,
    /// Moves of the true time by [`QUANTUM_MILLIS`].
    pub advances: u8,
    /// Renewals per holder.
    pub renewals: u8,
}

/// One step the explorer may take.
#[derive(Debug, Clone)]
pub enum Act {
    /// Process `i` starts acquiring.
    Start(usize),
    /// The database answers process `i`'s pending step.
    Db(usize, Fault),
    /// Holder `i` issues an ID at its clock (when its guard admits it).
    Issue(usize),
    /// Holder `i` renews.
    Renew(usize, Fault),
    /// Holder `i` stops issuing and releases.
    Release(usize, Fault),
    /// Process `i` dies.
    Crash(usize),
    /// The true time moves on.
    Advance,
}

/// The one `worker_lease` row (worker id 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Row {
    owner: Option<usize>,
    token: i64,
    deadline: i64,
    high_water: i64,
}

/// The table: its row as committed, and the transaction holding its lock
/// with the row as that transaction wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Table {
    row: Row,
    /// The process whose open transaction locked the row, and its write.
    locked: Option<(usize, Option<Row>)>,
    /// The open transactions (by process).
    open: Vec<bool>,
    skip_high_water: bool,
}

impl Table {
    fn run(&mut self, manifest: &Manifest, i: usize, query: &Query) -> Answer {
        let p = |name| int_param(manifest, query, name);
        let now = p("now_millis");
        let mine = matches!(self.locked, Some((holder, _)) if holder == i);
        let row = match self.locked {
            Some((holder, Some(written))) if holder == i => written,
            _ => self.row,
        };
        let free = |row: &Row| row.owner.is_none() || row.deadline <= now;
        match query.name {
            "lease_find" | "lease_find_after" => {
                let after = if query.name == "lease_find_after" {
                    p("after_worker")
                } else {
                    -1
                };
                // FOR UPDATE SKIP LOCKED.
                if after >= 0 || !free(&row) || (self.locked.is_some() && !mine) {
                    return Answer::Rows(vec![]);
                }
                self.locked = Some((i, None));
                Answer::Rows(vec![vec![
                    Value::Int(0),
                    row.owner
                        .map_or(Value::Null, |_| Value::Text("someone".into())),
                    Value::Int(row.token),
                    Value::Int(row.deadline),
                    Value::Int(row.high_water),
                ]])
            }
            "lease_take" => {
                assert!(mine, "lease_take without lease_find's lock");
                if row.token == p("expected_token") && free(&row) {
                    let taken = Row {
                        owner: Some(i),
                        token: p("fencing_token"),
                        deadline: p("lease_deadline_millis"),
                        high_water: p("high_water_millis"),
                    };
                    self.locked = Some((i, Some(taken)));
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            "lease_count" => Answer::Rows(vec![vec![
                Value::Int(1),
                Value::Int(i64::from(free(&self.row))),
            ]]),
            "lease_renew" => {
                let row = &mut self.row;
                let ours = row.owner.is_some() && row.token == p("fencing_token");
                let next = p("lease_deadline_millis");
                if ours && row.deadline > now && next > row.deadline {
                    row.deadline = next;
                    row.high_water = p("high_water_millis");
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            "lease_release" => {
                let row = &mut self.row;
                if row.owner.is_some() && row.token == p("fencing_token") {
                    row.owner = None;
                    row.deadline = now;
                    if !self.skip_high_water {
                        row.high_water = p("high_water_millis");
                    }
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            other => panic!("the lease table does not know {other}"),
        }
    }

    fn begin(&mut self, i: usize) {
        self.open[i] = true;
    }

    fn commit(&mut self, i: usize) {
        if let Some((holder, written)) = self.locked {
            if holder == i {
                if let Some(row) = written {
                    self.row = row;
                }
                self.locked = None;
            }
        }
        self.open[i] = false;
    }

    /// A rollback, or the server ending a broken connection's transaction.
    fn rollback(&mut self, i: usize) {
        if matches!(self.locked, Some((holder, _)) if holder == i) {
            self.locked = None;
        }
        self.open[i] = false;
    }
}

/// A guard's state as the model keeps it (a [`LeaseGuard`] is shared
/// through atomics, not `Clone`): rebuilt from it for every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct GuardState {
    acquisition: Acquisition,
    deadline: u64,
    high_water: u64,
    live: bool,
}

impl GuardState {
    fn build(&self) -> LeaseGuard {
        let policy = policy();
        let guard = LeaseGuard::new(&self.acquisition, &policy);
        let lease = self.acquisition.lease;
        let renewal = Renewal {
            worker_id: lease.worker_id,
            fencing_token: lease.fencing_token,
            lease_deadline_millis: self.deadline,
            high_water_millis: self.high_water,
            now_millis: self.acquisition.acquired_millis,
        };
        guard.renewed(&renewal, 1).unwrap();
        if !self.live {
            guard.stop_issuing();
        }
        guard
    }

    fn read(&mut self, guard: &LeaseGuard) {
        self.deadline = guard.lease_deadline_millis();
        self.live = guard.is_live();
    }
}

#[derive(Debug, Clone)]
enum Phase {
    Waiting,
    Acquiring(Box<LeaseAcquisition>, LeaseStep),
    Holding {
        guard: GuardState,
        renewals: u8,
        /// The last ID time issued.
        issued: Option<u64>,
    },
    Ended,
}

#[derive(Debug, Clone)]
struct Proc {
    phase: Phase,
    skew: i64,
}

/// The world: one worker id, its contenders, the table and the clocks.
#[derive(Clone)]
pub struct LeaseModel {
    bounds: Bounds,
    manifest: Manifest,
    table: Table,
    now: u64,
    procs: Vec<Proc>,
    faults: u8,
    crashes: u8,
    advances: u8,
    /// Every ID issued: (its time, the holder's token).
    ids: Vec<(u64, u64)>,
    /// Every high-water mark a release stored, with the token released.
    released: Vec<(u64, u64)>,
    violation: Option<String>,
}

impl LeaseModel {
    /// Processes with these clock skews (each within ±[`SKEW_MILLIS`]);
    /// `skip_high_water`: a broken `lease_release` that does not store the
    /// high-water mark.
    pub fn new(skews: &[i64], bounds: Bounds, skip_high_water: bool) -> Self {
        let procs = skews
            .iter()
            .map(|&skew| {
                assert!(skew.unsigned_abs() <= SKEW_MILLIS);
                Proc {
                    phase: Phase::Waiting,
                    skew,
                }
            })
            .collect();
        Self {
            bounds,
            manifest: Manifest::new(Dialect::Postgres, Placeholder::Numbered),
            table: Table {
                row: Row {
                    owner: None,
                    token: 0,
                    deadline: 0,
                    high_water: 0,
                },
                locked: None,
                open: vec![false; skews.len()],
                skip_high_water,
            },
            now: START_MILLIS,
            procs,
            faults: 0,
            crashes: 0,
            advances: 0,
            ids: Vec::new(),
            released: Vec::new(),
            violation: None,
        }
    }

    fn clock(&self, i: usize) -> u64 {
        self.now.saturating_add_signed(self.procs[i].skew)
    }

    fn violate(&mut self, what: String) {
        self.violation.get_or_insert(what);
    }

    /// Hands an acquisition's step over: pauses resumed at once (the host
    /// sleeps; the guard refuses IDs before the ready time anyway).
    fn settle(&mut self, i: usize, mut driver: LeaseAcquisition, mut step: LeaseStep) {
        loop {
            step = match step {
                Step::Pause { .. } => driver.resume(self.clock(i)),
                Step::Yield(acquisition) => {
                    self.procs[i].phase = Phase::Holding {
                        guard: GuardState {
                            acquisition,
                            deadline: acquisition.lease.lease_deadline_millis,
                            high_water: acquisition.start_after_millis,
                            live: true,
                        },
                        renewals: 0,
                        issued: None,
                    };
                    return;
                }
                Step::Fail(_) => {
                    self.table.rollback(i);
                    self.procs[i].phase = Phase::Ended;
                    return;
                }
                other => {
                    self.procs[i].phase = Phase::Acquiring(Box::new(driver), other);
                    return;
                }
            }
        }
    }

    fn serve(&mut self, i: usize, fault: Fault) {
        let Phase::Acquiring(driver, step) = self.procs[i].phase.clone() else {
            unreachable!()
        };
        let mut driver = *driver;
        let clock = self.clock(i);
        let ok = Answer::Affected(0);
        let answer = match (&step, fault) {
            (_, Fault::Outage) => {
                self.table.rollback(i);
                connection_lost()
            }
            (Step::Begin { .. }, _) => {
                self.table.begin(i);
                ok
            }
            (Step::Commit, Fault::None) => {
                self.table.commit(i);
                ok
            }
            (Step::Commit, Fault::LostReply) => {
                self.table.commit(i);
                connection_lost()
            }
            (Step::Rollback, _) => {
                self.table.rollback(i);
                ok
            }
            (Step::Run(query), Fault::None) => self.table.run(&self.manifest, i, query),
            (Step::Run(query), Fault::LostReply) => {
                let open = self.table.open[i];
                self.table.run(&self.manifest, i, query);
                if open {
                    // A broken connection's transaction is rolled back.
                    self.table.rollback(i);
                }
                connection_lost()
            }
            (other, _) => panic!("an acquisition asked for {other:?}"),
        };
        if matches!(answer, Answer::Failed(_)) && self.table.open[i] {
            self.table.rollback(i);
        }
        let step = driver.push(answer, clock);
        self.settle(i, driver, step);
    }

    fn issue(&mut self, i: usize) {
        let clock = self.clock(i);
        let Phase::Holding { guard, issued, .. } = &mut self.procs[i].phase else {
            unreachable!()
        };
        let token = guard.acquisition.lease.fencing_token;
        let admitted = guard.build().check(clock).is_ok()
            && clock > guard.acquisition.start_after_millis
            && issued.is_none_or(|last| clock > last);
        if !admitted {
            return;
        }
        *issued = Some(clock);
        let mut problem = None;
        for &(time, other) in &self.ids {
            if other != token
                && ((other < token && time >= clock) || (other > token && time <= clock))
            {
                problem = Some(format!(
                    "token {token} issued an ID at {clock}, token {other} one at {time}: \
                     the later holder's IDs are not all after the earlier one's"
                ));
            }
        }
        for &(mark, other) in &self.released {
            if other < token && clock <= mark {
                problem = Some(format!(
                    "token {token} issued an ID at {clock}, at or below the high-water mark \
                     {mark} token {other} released"
                ));
            }
        }
        self.ids.push((clock, token));
        if let Some(problem) = problem {
            self.violate(problem);
        }
    }

    fn renew(&mut self, i: usize, fault: Fault) {
        let clock = self.clock(i);
        let Phase::Holding {
            guard,
            renewals,
            issued,
        } = &mut self.procs[i].phase
        else {
            unreachable!()
        };
        *renewals += 1;
        let live = guard.build();
        let mark = issued.unwrap_or(guard.acquisition.start_after_millis);
        let mut renewal = LeaseRenewal::new(self.manifest);
        let step = match renewal.start(&live, clock, mark) {
            Step::Run(query) => {
                let answer = match fault {
                    Fault::Outage => connection_lost(),
                    _ => {
                        let answer = self.table.run(&self.manifest, i, &query);
                        if fault == Fault::LostReply {
                            connection_lost()
                        } else {
                            answer
                        }
                    }
                };
                renewal.push(&live, answer, clock)
            }
            other => other,
        };
        let Phase::Holding { guard, .. } = &mut self.procs[i].phase else {
            unreachable!()
        };
        if matches!(step, Step::Yield(_)) {
            guard.high_water = guard.high_water.max(mark);
        }
        guard.read(&live);
    }

    fn release(&mut self, i: usize, fault: Fault) {
        let clock = self.clock(i);
        let Phase::Holding { guard, issued, .. } = &self.procs[i].phase else {
            unreachable!()
        };
        let live = guard.build();
        let token = guard.acquisition.lease.fencing_token;
        let mut release = LeaseRelease::new(self.manifest, &live);
        // The generator's high-water time, read after the guard stopped.
        let mark = issued.unwrap_or(guard.acquisition.start_after_millis);
        if let Step::Run(query) = release.start(&live, clock, mark) {
            if fault != Fault::Outage {
                let answer = self.table.run(&self.manifest, i, &query);
                if answer == Answer::Affected(1) {
                    self.released.push((
                        int_param(&self.manifest, &query, "high_water_millis") as u64,
                        token,
                    ));
                }
            }
        }
        self.procs[i].phase = Phase::Ended;
    }
}

impl Model for LeaseModel {
    type Action = Act;

    fn actions(&self, out: &mut Vec<Act>) {
        let budget = self.faults < self.bounds.faults;
        let mut live = false;
        for (i, proc) in self.procs.iter().enumerate() {
            match &proc.phase {
                Phase::Waiting => out.push(Act::Start(i)),
                Phase::Acquiring(_, step) => {
                    let writes = !matches!(step, Step::Begin { .. } | Step::Rollback);
                    out.extend(faults(writes, budget).iter().map(|&f| Act::Db(i, f)));
                }
                Phase::Holding {
                    guard, renewals, ..
                } => {
                    // A write of the row waits while a transaction holds its lock.
                    let unlocked = self.table.locked.is_none();
                    if guard.live {
                        out.push(Act::Issue(i));
                    }
                    if guard.live && unlocked {
                        if *renewals < self.bounds.renewals {
                            out.extend(faults(true, budget).iter().map(|&f| Act::Renew(i, f)));
                        }
                        out.extend(faults(true, budget).iter().map(|&f| Act::Release(i, f)));
                    }
                }
                Phase::Ended => {}
            }
            if !matches!(proc.phase, Phase::Ended) {
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
        let fault = match action {
            Act::Db(_, f) | Act::Renew(_, f) | Act::Release(_, f) => *f,
            _ => Fault::None,
        };
        if fault != Fault::None {
            self.faults += 1;
        }
        match *action {
            Act::Start(i) => {
                let mut driver =
                    LeaseAcquisition::new(self.manifest, policy(), &format!("p{i}"), None);
                let step = driver.start(self.clock(i));
                self.settle(i, driver, step);
            }
            Act::Db(i, fault) => self.serve(i, fault),
            Act::Issue(i) => self.issue(i),
            Act::Renew(i, fault) => self.renew(i, fault),
            Act::Release(i, fault) => self.release(i, fault),
            Act::Crash(i) => {
                self.crashes += 1;
                self.table.rollback(i);
                self.procs[i].phase = Phase::Ended;
            }
            Act::Advance => {
                self.advances += 1;
                self.now += QUANTUM_MILLIS;
            }
        }
    }

    fn check(&self) -> Result<(), String> {
        self.violation.clone().map_or(Ok(()), Err)
    }

    fn fingerprint(&self) -> u64 {
        debug_print(&(
            &self.table,
            self.now,
            &self.procs,
            (self.faults, self.crashes, self.advances),
            (&self.ids, &self.released, &self.violation),
        ))
    }
}
