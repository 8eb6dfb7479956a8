//! Segment IDs (Leaf-style) over `id_segment`: ranges fetched from the
//! database, handed out from memory, the next one fetched in the background.
//! Every rule is the core's [`SegmentDriver`]: the runs of IDs, when a fetch
//! is due, the fetch's queries, retries and errors; this module runs its
//! steps.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mintid::SegmentPolicy;
use mintid::segment::SegmentRow;
use mintid::store::{Answer, SegmentDriver, Step, TakeAction};
use tokio::sync::watch;

use crate::backend::Backend;
use crate::error::Error;
use crate::steps::Driver;
use crate::store::Store;

/// IDs of one tag, unique across every process sharing the tag and
/// increasing within this one. Once the policy's share of a segment is used,
/// the next is fetched in a tokio task (double buffer), so
/// [`next_id`](Self::next_id) waits on the database only when both segments
/// ran out. A restart loses at most the unused rest of what was fetched.
/// Cheap to clone (the clones share the segments).
#[derive(Debug)]
pub struct SegmentIds<DB: Backend> {
    shared: Arc<Shared<DB>>,
}

clone_fields!(SegmentIds, shared);

#[derive(Debug)]
struct Shared<DB: Backend> {
    store: Store<DB>,
    tag: String,
    runs: Mutex<Runs>,
    /// Counts the fetches that ended, for callers waiting on one.
    fetched: watch::Sender<u64>,
    /// The background fetch under way.
    fetching: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The driver and the run of IDs handed out from.
#[derive(Debug)]
struct Runs {
    driver: SegmentDriver,
    next: u64,
    end: u64,
}

impl<DB: Backend> Shared<DB> {
    fn runs(&self) -> MutexGuard<'_, Runs> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the due fetch's steps; its failure is the core's typed error (the
    /// driver then ended the fetch, losing nothing).
    async fn fetch(&self) -> Result<(), Error> {
        let mut ending = Ending(self, false);
        let first = self.runs().driver.fetch();
        let fetched = self.store.drive(&mut ending, first).await;
        ending.1 = true;
        fetched.map(|_| ())
    }
}

/// The fetch's driver, locked for each push only (a take goes on meanwhile),
/// and whether the driver ended the fetch. Dropped, it ends a fetch left
/// under way (a cancelled future; never the next caller's fetch) and wakes
/// the callers waiting for it.
struct Ending<'s, DB: Backend>(&'s Shared<DB>, bool);

impl<DB: Backend> Driver for Ending<'_, DB> {
    type Yield = SegmentRow;
    fn push(&mut self, answer: Answer, now_millis: u64) -> Step<SegmentRow> {
        self.0.runs().driver.push(answer, now_millis)
    }
    fn resume(&mut self, _now_millis: u64) -> Step<SegmentRow> {
        self.0.runs().driver.resume()
    }
}

impl<DB: Backend> Drop for Ending<'_, DB> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.runs().driver.abandon();
        }
        self.0.fetched.send_modify(|ended| *ended += 1);
    }
}

impl<DB: Backend> SegmentIds<DB> {
    /// IDs of `tag` (1 to 64 ASCII characters, created on first use) under
    /// `policy`.
    ///
    /// Fails with `segment.invalid_tag`.
    pub fn new(store: Store<DB>, tag: &str, policy: SegmentPolicy) -> Result<Self, Error> {
        let driver = SegmentDriver::new(Store::<DB>::manifest(), tag, policy)
            .map_err(|error| Error::Driver(error.into()))?;
        Ok(Self {
            shared: Arc::new(Shared {
                store,
                tag: tag.into(),
                runs: Mutex::new(Runs {
                    driver,
                    next: 0,
                    end: 0,
                }),
                fetched: watch::Sender::new(0),
                fetching: Mutex::new(None),
            }),
        })
    }

    /// The tag.
    pub fn tag(&self) -> &str {
        &self.shared.tag
    }

    /// The next ID: from memory in the steady state; waits for a fetch only
    /// when both segments ran out (what to do after each take is the core's
    /// [`TakeAction`]).
    ///
    /// Fails with `store.unavailable` (or another `store.*` error) when a
    /// needed segment cannot be fetched.
    pub async fn next_id(&self) -> Result<u64, Error> {
        let shared = &self.shared;
        loop {
            let mut ended = shared.fetched.subscribe();
            let taken = {
                let mut runs = shared.runs();
                if runs.next < runs.end {
                    runs.next += 1;
                    return Ok(runs.next - 1);
                }
                let now = shared.store.clock.now_millis();
                let taken = runs.driver.take(now);
                if taken.count > 0 {
                    runs.next = taken.first + 1;
                    runs.end = taken.first + taken.count;
                }
                taken
            };
            match taken.action() {
                TakeAction::HandOut => return Ok(taken.first),
                TakeAction::FetchBeside => {
                    let background = Arc::clone(shared);
                    let handle = tokio::spawn(async move {
                        // The driver recorded the failure: the next take asks again.
                        let _ = background.fetch().await;
                    });
                    *shared
                        .fetching
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(handle);
                    return Ok(taken.first);
                }
                TakeAction::FetchNow => shared.fetch().await?,
                // Another caller's fetch is in flight: until it ends, at most the core's bound.
                TakeAction::Wait { millis } => {
                    let _ =
                        tokio::time::timeout(Duration::from_millis(millis), ended.changed()).await;
                }
            }
        }
    }

    /// Waits for the background fetch in flight, if any (before a shutdown,
    /// or a test that reads the row), for at most the core's shutdown wait
    /// (`SHUTDOWN_WAIT_MILLIS`, 10 s): a fetch still running then is dropped,
    /// and the segment it claimed is never handed out.
    pub async fn settled(&self) {
        let handle = self
            .shared
            .fetching
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(handle) = handle {
            crate::store::wait_at_most_shutdown(handle).await;
        }
    }
}
