//! Segment IDs as a driver: the [`SegmentAllocator`] (double buffer,
//! adaptive step) with its fetch as steps. The host counts through the runs
//! of IDs [`SegmentDriver::take`] hands it and, when a take says a fetch is
//! due, runs the fetch's steps (in the background or inline); every retry,
//! the tag's creation on first use and the installation of the row are the
//! driver's.

use alloc::string::String;

use super::record_driver::{RETRIES, RETRY_PAUSE_MILLIS, db_error, int};
use super::{Answer, DbErrorClass, DriverError, Manifest, Query, Step, StoreError, Value};
use crate::segment::{Fetch, SegmentAllocator, SegmentError, SegmentPolicy, SegmentRow};

/// The most bytes of a tag: `id_segment.tag` holds 1 to 64 bytes of ASCII.
pub const MAX_TAG_BYTES: usize = 64;

/// How often a fetch creates the tag before it gives up (a concurrent
/// creator or a first use: once is enough; twice means the row vanishes).
const MAX_CREATES: u32 = 2;

/// A step of a fetch: its `Yield` is the segment installed (the tag's new
/// `max_id` and the step added).
pub type SegmentStep = Step<SegmentRow>;

/// What one [`SegmentDriver::take`] hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Taken {
    /// The first ID of the run (meaningless when `count` is 0).
    pub first: u64,
    /// How many consecutive IDs from `first` the host hands out; 0 when no
    /// segment in memory has one left.
    pub count: u64,
    /// Whether a fetch is due now: run [`SegmentDriver::fetch`]'s steps (in
    /// the background when `count > 0`, before the next take otherwise).
    /// When `count` is 0 and no fetch is due, another caller's fetch is in
    /// flight: wait for it to end, then take again.
    pub fetch_due: bool,
}

/// How long a caller waits for another caller's fetch before it takes
/// again, at most, in milliseconds ([`TakeAction::Wait`]): the host wakes
/// earlier when that fetch ends; the bound only caps a wake-up it missed.
pub const SEGMENT_WAIT_MILLIS: u64 = 100;

/// What the host does with a [`Taken`]: the one mapping of a take to an
/// action, for every host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TakeAction {
    /// Hand out the run; nothing else to do.
    HandOut,
    /// Hand out the run, and run the due fetch beside it: in the background,
    /// or inline and quietly (its failure is recorded by the driver; the
    /// caller has its IDs) where the host has none.
    FetchBeside,
    /// No ID in memory: run the due fetch now (its failure is the caller's
    /// error), then take again.
    FetchNow,
    /// No ID in memory and another caller's fetch is in flight: wait until
    /// it ends, at most `millis`, then take again.
    Wait {
        /// The longest wait, [`SEGMENT_WAIT_MILLIS`].
        millis: u64,
    },
}

impl Taken {
    /// What the host does with this run (see [`TakeAction`]).
    pub const fn action(&self) -> TakeAction {
        match (self.count, self.fetch_due) {
            (0, true) => TakeAction::FetchNow,
            (0, false) => TakeAction::Wait {
                millis: SEGMENT_WAIT_MILLIS,
            },
            (_, true) => TakeAction::FetchBeside,
            (_, false) => TakeAction::HandOut,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Idle,
    Due(Fetch),
    Begun(Fetch),
    Fetching(Fetch),
    Missing(Fetch),
    Creating(Fetch),
    Loading(Fetch),
    Committing(Fetch, SegmentRow),
    RollingBack(Fetch, Option<DriverError>),
    Pausing(Fetch),
}

/// The segment IDs of one tag in one process.
///
/// [`take`](Self::take) hands out runs of IDs from memory and says when a
/// fetch is due (the allocator's `fetch_at_percent`, one fetch at a time).
/// A fetch is: `Begin { write: true }`, `Run(segment_fetch)`; 1 row:
/// `Run(segment_load)`, `Commit`, and the row installed (`Yield`); 0 rows
/// (no row for the tag yet): `Rollback`, `Run(segment_create)` outside any
/// transaction, and the fetch again. A serialization failure or deadlock is
/// rolled back and retried after a pause, [`RETRIES`] times
/// (`store.conflict` after); a lost connection fails with
/// `store.unavailable`, any other failure with `store.query_failed`. A
/// failed fetch loses nothing: the IDs in memory are still handed out and
/// the next take asks for the fetch again.
#[derive(Debug, Clone)]
pub struct SegmentDriver {
    manifest: Manifest,
    tag: String,
    allocator: SegmentAllocator,
    state: State,
    retries: u32,
    creates: u32,
}

impl SegmentDriver {
    /// The IDs of `tag` under `policy`, over `manifest`'s statements, with no
    /// segment yet.
    ///
    /// Fails with `segment.invalid_tag` unless the tag is 1 to
    /// [`MAX_TAG_BYTES`] bytes of ASCII without U+0000.
    pub fn new(manifest: Manifest, tag: &str, policy: SegmentPolicy) -> Result<Self, SegmentError> {
        if tag.is_empty() || tag.len() > MAX_TAG_BYTES || !tag.is_ascii() || tag.contains('\0') {
            return Err(SegmentError::invalid_tag(tag.len()));
        }
        Ok(Self {
            manifest,
            tag: String::from(tag),
            allocator: SegmentAllocator::new(policy),
            state: State::Idle,
            retries: 0,
            creates: 0,
        })
    }

    /// The next run of IDs at `now_millis`, and whether a fetch is due (see
    /// [`Taken`]).
    pub fn take(&mut self, now_millis: u64) -> Taken {
        let (first, count) = self.allocator.take().unwrap_or((0, 0));
        let mut fetch_due = false;
        if self.state == State::Idle {
            if let Some(fetch) = self.allocator.fetch_due(now_millis) {
                self.state = State::Due(fetch);
                fetch_due = true;
            }
        }
        Taken {
            first,
            count,
            fetch_due,
        }
    }

    /// Whether a fetch is due or under way.
    pub fn fetch_in_flight(&self) -> bool {
        self.allocator.fetch_in_flight()
    }

    /// How many IDs are left in memory, beyond the runs already taken.
    pub fn remaining(&self) -> u64 {
        self.allocator.remaining()
    }

    /// The first step of the fetch a [`take`](Self::take) said is due.
    ///
    /// Fails with `segment.no_fetch` when none is.
    pub fn fetch(&mut self) -> SegmentStep {
        match core::mem::replace(&mut self.state, State::Idle) {
            State::Due(fetch) => {
                self.retries = 0;
                self.creates = 0;
                self.begin(fetch)
            }
            state => {
                self.state = state;
                Step::Fail(DriverError::Segment(SegmentError::no_fetch()))
            }
        }
    }

    /// Push the answer to the last `Run`, `Begin`, `Commit` or `Rollback`, at
    /// `now_millis`.
    pub fn push(&mut self, answer: Answer, now_millis: u64) -> SegmentStep {
        let state = core::mem::replace(&mut self.state, State::Idle);
        if let State::RollingBack(fetch, error) = state {
            // Whatever the rollback said: the driver already knows why.
            return match error {
                Some(error) => self.fail(error),
                None => self.pause(fetch),
            };
        }
        let Some(fetch) = fetch_of(&state) else {
            self.state = state;
            return Step::Fail(unexpected());
        };
        if let Answer::Failed(error) = &answer {
            let in_transaction = !matches!(state, State::Creating(_));
            if error.class == DbErrorClass::Serialization && self.retries < RETRIES {
                self.retries += 1;
                if in_transaction {
                    self.state = State::RollingBack(fetch, None);
                    return Step::Rollback;
                }
                return self.pause(fetch);
            }
            let failure = DriverError::Store(db_error(error, false));
            if in_transaction && error.class != DbErrorClass::ConnectionLost {
                self.state = State::RollingBack(fetch, Some(failure));
                return Step::Rollback;
            }
            return self.fail(failure);
        }
        match (state, answer) {
            (State::Begun(_), _) => {
                let query = self.query("segment_fetch", fetch, now_millis);
                self.state = State::Fetching(fetch);
                Step::Run(query)
            }
            (State::Fetching(_), Answer::Affected(1)) => {
                let query = self.query("segment_load", fetch, now_millis);
                self.state = State::Loading(fetch);
                Step::Run(query)
            }
            (State::Fetching(_), Answer::Affected(0)) if self.creates < MAX_CREATES => {
                self.state = State::Missing(fetch);
                Step::Rollback
            }
            (State::Missing(_), _) => {
                self.creates += 1;
                let query = self.query("segment_create", fetch, now_millis);
                self.state = State::Creating(fetch);
                Step::Run(query)
            }
            (State::Creating(_), Answer::Affected(_)) => self.begin(fetch),
            (State::Loading(_), Answer::Rows(rows)) => {
                match rows.first().and_then(|row| read_row(row)) {
                    Some(row) => {
                        self.state = State::Committing(fetch, row);
                        Step::Commit
                    }
                    None => {
                        self.state = State::RollingBack(fetch, Some(unexpected()));
                        Step::Rollback
                    }
                }
            }
            (State::Committing(_, row), _) => match self.allocator.fetched(row, now_millis) {
                Ok(()) => Step::Yield(row),
                Err(error) => Step::Fail(DriverError::Segment(error)),
            },
            _ => {
                self.state = State::RollingBack(fetch, Some(unexpected()));
                Step::Rollback
            }
        }
    }

    /// Continue after a `Pause`.
    pub fn resume(&mut self) -> SegmentStep {
        match core::mem::replace(&mut self.state, State::Idle) {
            State::Pausing(fetch) => self.begin(fetch),
            state => {
                self.state = state;
                Step::Fail(unexpected())
            }
        }
    }

    /// Ends the fetch that is due or under way without a segment, because the
    /// host could not run its steps (it was interrupted, or failed outside
    /// the database): like a failed fetch, nothing is lost and the next take
    /// asks again. The host closes a connection left inside the fetch's
    /// transaction. Nothing happens when no fetch is due or under way.
    pub fn abandon(&mut self) {
        if self.state != State::Idle {
            self.fail(unexpected());
        }
    }

    /// In a process forked from the one that made this driver: forgets every
    /// ID in memory (the runs the host holds too: it drops them) and any fetch
    /// due or under way (the parent's thread ran it; the child never hears
    /// its answer). After `fork()` a process never hands out an ID another
    /// process may hand out: the next take makes a fetch of a fresh segment
    /// due (gaps, never duplicates).
    pub fn forget_after_fork(&mut self) {
        self.allocator.forget_after_fork();
        self.state = State::Idle;
        self.retries = 0;
        self.creates = 0;
    }

    /// The pause before a retry: doubling from [`RETRY_PAUSE_MILLIS`].
    fn pause(&mut self, fetch: Fetch) -> SegmentStep {
        self.state = State::Pausing(fetch);
        Step::Pause {
            millis: RETRY_PAUSE_MILLIS << self.retries.saturating_sub(1).min(8),
        }
    }

    fn begin(&mut self, fetch: Fetch) -> SegmentStep {
        self.state = State::Begun(fetch);
        Step::Begin { write: true }
    }

    fn query(&self, name: &'static str, fetch: Fetch, now_millis: u64) -> Query {
        let tag = Value::Text(self.tag.clone());
        self.manifest.query(name, |param| match param {
            "tag" => Some(tag.clone()),
            "step" => Some(int(fetch.step)),
            "now_millis" => Some(int(now_millis)),
            _ => None,
        })
    }

    /// Ends the fetch without a segment: the next take asks again.
    fn fail(&mut self, error: DriverError) -> SegmentStep {
        self.allocator.fetch_failed();
        self.state = State::Idle;
        Step::Fail(error)
    }
}

fn fetch_of(state: &State) -> Option<Fetch> {
    match state {
        State::Begun(fetch)
        | State::Fetching(fetch)
        | State::Missing(fetch)
        | State::Creating(fetch)
        | State::Loading(fetch)
        | State::Committing(fetch, _) => Some(*fetch),
        State::Idle | State::Due(_) | State::RollingBack(..) | State::Pausing(_) => None,
    }
}

/// Reads a `segment_load` row: `max_id, step`.
fn read_row(row: &[Value]) -> Option<SegmentRow> {
    let int = |at: usize| row.get(at)?.as_int().and_then(|v| u64::try_from(v).ok());
    Some(SegmentRow {
        max_id: int(0)?,
        step: int(1)?,
    })
}

fn unexpected() -> DriverError {
    DriverError::Store(StoreError::new(
        super::StoreErrorKind::UnexpectedRow,
        "a segment query's answer is not of its result kind",
    ))
}
