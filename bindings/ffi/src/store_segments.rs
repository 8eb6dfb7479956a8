//! The segment driver of the core (`mintid::store::SegmentDriver`) for Python
//! and Kotlin: runs of IDs handed to the host in one crossing, the fetch as
//! steps.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::MintidError;
use crate::segment::SegmentPolicy;
use crate::store::{Manifest, StoreAnswer, StoreQuery};
use mintid::store as core;

/// A run of IDs handed out: `first .. first + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct SegmentTaken {
    /// The first ID of the run (meaningless when `count` is 0).
    pub first: u64,
    /// How many consecutive IDs; 0 when none is in memory.
    pub count: u64,
    /// Whether a fetch is due: run `fetch()`'s steps (in the background when
    /// `count > 0`). With `count` 0 and no fetch due, another caller's fetch
    /// is in flight: wait for it, then take again.
    pub fetch_due: bool,
    /// What to do with the run: the core's answer (hand out, fetch beside,
    /// fetch now, or wait for another caller's fetch at most some ms).
    pub action: SegmentTakeAction,
}

/// What the host does with a [`SegmentTaken`] (`mintid::store::TakeAction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SegmentTakeAction {
    /// Hand out the run; nothing else to do.
    HandOut,
    /// Hand out the run and run the due fetch beside it (in the background,
    /// or inline and quietly).
    FetchBeside,
    /// No ID in memory: run the due fetch now, then take again.
    FetchNow,
    /// Another caller's fetch is in flight: wait until it ends, at most
    /// `millis`, then take again.
    Wait {
        /// The longest wait.
        millis: u64,
    },
}

impl From<core::TakeAction> for SegmentTakeAction {
    fn from(action: core::TakeAction) -> Self {
        match action {
            core::TakeAction::HandOut => Self::HandOut,
            core::TakeAction::FetchBeside => Self::FetchBeside,
            core::TakeAction::FetchNow => Self::FetchNow,
            core::TakeAction::Wait { millis } => Self::Wait { millis },
        }
    }
}

/// A step of a segment fetch. A failure is the call's error.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum SegmentStep {
    /// Run this query and push the answer.
    Run {
        /// The query.
        query: StoreQuery,
    },
    /// Begin a transaction (`write`: take the write lock at once), then push
    /// `Affected(0)`.
    Begin {
        /// Whether it writes.
        write: bool,
    },
    /// Commit, then push `Affected(0)`.
    Commit,
    /// Roll back, then push `Affected(0)`.
    Rollback,
    /// Sleep, then call `resume`.
    Pause {
        /// How long, in milliseconds.
        millis: u64,
    },
    /// The segment is installed: the tag's new `max_id` and the step added.
    Fetched {
        /// The tag's largest ID, this segment's last.
        max_id: u64,
        /// The size of the segment.
        step: u64,
    },
}

fn segment_step(step: core::SegmentStep) -> Result<SegmentStep, MintidError> {
    Ok(match step {
        core::Step::Run(query) => SegmentStep::Run {
            query: query.into(),
        },
        core::Step::Begin { write } => SegmentStep::Begin { write },
        core::Step::Commit => SegmentStep::Commit,
        core::Step::Rollback => SegmentStep::Rollback,
        core::Step::Pause { millis } => SegmentStep::Pause { millis },
        core::Step::Yield(row) => SegmentStep::Fetched {
            max_id: row.max_id,
            step: row.step,
        },
        core::Step::Fail(error) => return Err(error.into()),
    })
}

/// The segment IDs of one tag in one process, shared between threads.
#[derive(Debug, uniffi::Object)]
pub struct SegmentDriver(Mutex<core::SegmentDriver>);

impl SegmentDriver {
    fn driver(&self) -> MutexGuard<'_, core::SegmentDriver> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[uniffi::export]
impl SegmentDriver {
    /// The IDs of `tag` under `policy`, over `manifest`'s statements.
    ///
    /// Fails with `segment.invalid_tag` or `segment.invalid_policy`.
    #[uniffi::constructor]
    pub fn new(
        manifest: Manifest,
        tag: String,
        policy: SegmentPolicy,
    ) -> Result<Arc<Self>, MintidError> {
        let policy = mintid::segment::SegmentPolicy::try_from(policy)?;
        Ok(Arc::new(Self(Mutex::new(core::SegmentDriver::new(
            manifest.into(),
            &tag,
            policy,
        )?))))
    }

    /// The next run of IDs at `now_millis`, and whether a fetch is due.
    pub fn take(&self, now_millis: u64) -> SegmentTaken {
        let taken = self.driver().take(now_millis);
        SegmentTaken {
            first: taken.first,
            count: taken.count,
            fetch_due: taken.fetch_due,
            action: taken.action().into(),
        }
    }

    /// Whether a fetch is due or under way.
    pub fn fetch_in_flight(&self) -> bool {
        self.driver().fetch_in_flight()
    }

    /// How many IDs are left in memory beyond the runs taken.
    pub fn remaining(&self) -> u64 {
        self.driver().remaining()
    }

    /// The first step of the fetch a take said is due. Fails with
    /// `segment.no_fetch` when none is.
    pub fn fetch(&self) -> Result<SegmentStep, MintidError> {
        segment_step(self.driver().fetch())
    }

    /// Push the answer to the last step.
    pub fn push(&self, answer: StoreAnswer, now_millis: u64) -> Result<SegmentStep, MintidError> {
        segment_step(self.driver().push(answer.into(), now_millis))
    }

    /// Ends the fetch due or under way without a segment (the host could not
    /// run its steps); the next take asks again.
    pub fn abandon(&self) {
        self.driver().abandon()
    }

    /// In a process forked from the one that made the driver: forgets every
    /// ID in memory and any fetch due or under way (the host drops the runs it
    /// holds); the next take makes a fetch of a fresh segment due.
    pub fn forget_after_fork(&self) {
        self.driver().forget_after_fork()
    }

    /// Continue after a `Pause`.
    pub fn resume(&self) -> Result<SegmentStep, MintidError> {
        segment_step(self.driver().resume())
    }
}
