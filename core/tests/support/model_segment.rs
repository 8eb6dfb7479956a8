//! The segment driver as a model: two processes take IDs of one tag and
//! fetch segments, against a simulated `id_segment` table with transactions
//! and a row lock, with an outage or a lost reply at any statement and a
//! crash of any process.

use mintid::segment::SegmentPolicy;
use mintid::store::{
    Answer, Dialect, Manifest, Placeholder, Query, SegmentDriver, SegmentStep, Step, Value,
};

use super::explore::{Model, debug_print};
use super::sim::{Fault, connection_lost, faults, int_param};

const NOW_MILLIS: u64 = 1_000_000;

/// The bounds of one exploration.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Outages and lost replies, in all.
    pub faults: u8,
    /// Crashes of a process.
    pub crashes: u8,
    /// Takes per process.
    pub takes: u8,
}

/// One step the explorer may take.
#[derive(Debug, Clone)]
pub enum Act {
    /// Process `i` takes its next run of IDs (and starts a fetch when due).
    Take(usize),
    /// The database answers process `i`'s pending fetch step.
    Db(usize, Fault),
    /// Process `i` dies.
    Crash(usize),
}

/// The tag's row as committed, and the open transaction that locked it
/// with the row as that transaction wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Table {
    row: Option<(i64, i64)>,
    locked: Option<(usize, (i64, i64))>,
    open: Vec<bool>,
}

impl Table {
    fn run(&mut self, manifest: &Manifest, i: usize, query: &Query) -> Answer {
        let step = || int_param(manifest, query, "step");
        let view = match self.locked {
            Some((holder, written)) if holder == i => Some(written),
            _ => self.row,
        };
        match query.name {
            "segment_create" => {
                if self.row.is_some() {
                    return Answer::Affected(0);
                }
                self.row = Some((0, step()));
                Answer::Affected(1)
            }
            "segment_fetch" => match view {
                None => Answer::Affected(0),
                Some((max, _)) => {
                    self.locked = Some((i, (max + step(), step())));
                    Answer::Affected(1)
                }
            },
            "segment_load" => Answer::Rows(
                view.map(|(max, step)| vec![Value::Int(max), Value::Int(step)])
                    .into_iter()
                    .collect(),
            ),
            other => panic!("the segment table does not know {other}"),
        }
    }

    fn end(&mut self, i: usize, commit: bool) {
        if let Some((holder, written)) = self.locked {
            if holder == i {
                if commit {
                    self.row = Some(written);
                }
                self.locked = None;
            }
        }
        self.open[i] = false;
    }
}

#[derive(Debug, Clone)]
struct Proc {
    driver: SegmentDriver,
    /// The fetch step to answer, if a fetch is under way.
    step: Option<SegmentStep>,
    takes: u8,
    dead: bool,
}

/// The world: one tag, its processes and the table.
#[derive(Clone)]
pub struct SegmentModel {
    bounds: Bounds,
    manifest: Manifest,
    table: Table,
    procs: Vec<Proc>,
    faults: u8,
    crashes: u8,
    /// Every run handed out: (first, count).
    runs: Vec<(u64, u64)>,
    violation: Option<String>,
}

impl SegmentModel {
    /// `count` processes of one tag, segments of 2 IDs.
    pub fn new(count: usize, bounds: Bounds) -> Self {
        let manifest = Manifest::new(Dialect::Postgres, Placeholder::Numbered);
        let policy = SegmentPolicy::new(2, 2, 2).unwrap();
        let procs = (0..count)
            .map(|_| Proc {
                driver: SegmentDriver::new(manifest, "orders", policy).unwrap(),
                step: None,
                takes: 0,
                dead: false,
            })
            .collect();
        Self {
            bounds,
            manifest,
            table: Table {
                row: None,
                locked: None,
                open: vec![false; count],
            },
            procs,
            faults: 0,
            crashes: 0,
            runs: Vec::new(),
            violation: None,
        }
    }

    fn settle(&mut self, i: usize, step: SegmentStep) {
        self.procs[i].step = match step {
            Step::Pause { .. } => Some(self.procs[i].driver.resume()),
            Step::Yield(_) | Step::Fail(_) => {
                self.table.end(i, false);
                None
            }
            other => Some(other),
        };
    }

    fn take(&mut self, i: usize) {
        let proc = &mut self.procs[i];
        proc.takes += 1;
        let taken = proc.driver.take(NOW_MILLIS);
        if taken.count > 0 {
            let (first, count) = (taken.first, taken.count);
            let clash = self
                .runs
                .iter()
                .find(|(f, c)| first < f + c && *f < first + count);
            if let Some((f, c)) = clash {
                self.violation.get_or_insert(format!(
                    "IDs {first}..{} handed out again (already {f}..{})",
                    first + count,
                    f + c
                ));
            }
            self.runs.push((first, count));
        }
        if taken.fetch_due {
            let step = self.procs[i].driver.fetch();
            self.settle(i, step);
        }
    }

    fn serve(&mut self, i: usize, fault: Fault) {
        let step = self.procs[i].step.take().expect("a pending step");
        let ok = Answer::Affected(0);
        let answer = match (&step, fault) {
            (_, Fault::Outage) => {
                self.table.end(i, false);
                connection_lost()
            }
            (Step::Begin { .. }, _) => {
                self.table.open[i] = true;
                ok
            }
            (Step::Commit, Fault::None) => {
                self.table.end(i, true);
                ok
            }
            (Step::Commit, Fault::LostReply) => {
                self.table.end(i, true);
                connection_lost()
            }
            (Step::Rollback, _) => {
                self.table.end(i, false);
                ok
            }
            (Step::Run(query), Fault::None) => self.table.run(&self.manifest, i, query),
            (Step::Run(query), Fault::LostReply) => {
                let open = self.table.open[i];
                self.table.run(&self.manifest, i, query);
                if open {
                    self.table.end(i, false);
                }
                connection_lost()
            }
            (other, _) => panic!("a fetch asked for {other:?}"),
        };
        if matches!(answer, Answer::Failed(_)) && self.table.open[i] {
            self.table.end(i, false);
        }
        let step = self.procs[i].driver.push(answer, NOW_MILLIS);
        self.settle(i, step);
    }
}

impl Model for SegmentModel {
    type Action = Act;

    fn actions(&self, out: &mut Vec<Act>) {
        let budget = self.faults < self.bounds.faults;
        for (i, proc) in self.procs.iter().enumerate() {
            if proc.dead {
                continue;
            }
            match &proc.step {
                // A fetch waits while another transaction holds the row lock.
                Some(Step::Run(query))
                    if query.name == "segment_fetch"
                        && matches!(self.table.locked, Some((holder, _)) if holder != i) => {}
                Some(step) => {
                    let writes = !matches!(step, Step::Begin { .. } | Step::Rollback);
                    out.extend(faults(writes, budget).iter().map(|&f| Act::Db(i, f)));
                }
                None if proc.takes < self.bounds.takes => out.push(Act::Take(i)),
                None => {}
            }
            if self.crashes < self.bounds.crashes {
                out.push(Act::Crash(i));
            }
        }
    }

    fn step(&mut self, action: &Act) {
        match *action {
            Act::Take(i) => self.take(i),
            Act::Db(i, fault) => {
                if fault != Fault::None {
                    self.faults += 1;
                }
                self.serve(i, fault);
            }
            Act::Crash(i) => {
                self.crashes += 1;
                self.table.end(i, false);
                self.procs[i].dead = true;
                self.procs[i].step = None;
            }
        }
    }

    fn check(&self) -> Result<(), String> {
        self.violation.clone().map_or(Ok(()), Err)
    }

    fn fingerprint(&self) -> u64 {
        debug_print(&(
            &self.table,
            &self.procs,
            (self.faults, self.crashes),
            (&self.runs, &self.violation),
        ))
    }
}
