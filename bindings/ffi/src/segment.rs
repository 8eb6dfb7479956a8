//! Segment allocators: IDs from a database counter, fetched a segment at a
//! time (Leaf's segment mode), with the step adapting to the rate.

use crate::batch::IdBytes;
use crate::error::MintidError;
use mintid::segment as core;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How a segment allocator sizes its fetches (the core's `SegmentPolicy`),
/// as plain values; every use checks them (`segment.invalid_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct SegmentPolicy {
    /// The step of the first fetch.
    pub initial_step: u64,
    /// The smallest step.
    pub min_step: u64,
    /// The largest step.
    pub max_step: u64,
    /// The next segment is fetched once this percentage of the current one is used.
    pub fetch_at_percent: u8,
    /// A segment that lasted less than this doubles the step.
    pub grow_below_millis: u64,
    /// A segment that lasted more than this halves the step.
    pub shrink_above_millis: u64,
}

impl From<core::SegmentPolicy> for SegmentPolicy {
    fn from(policy: core::SegmentPolicy) -> Self {
        Self {
            initial_step: policy.initial_step(),
            min_step: policy.min_step(),
            max_step: policy.max_step(),
            fetch_at_percent: policy.fetch_at_percent(),
            grow_below_millis: policy.grow_below_millis(),
            shrink_above_millis: policy.shrink_above_millis(),
        }
    }
}

impl TryFrom<SegmentPolicy> for core::SegmentPolicy {
    type Error = MintidError;

    fn try_from(policy: SegmentPolicy) -> Result<Self, MintidError> {
        Ok(
            core::SegmentPolicy::new(policy.initial_step, policy.min_step, policy.max_step)?
                .with_fetch_at_percent(policy.fetch_at_percent)?
                .with_adaptation(policy.grow_below_millis, policy.shrink_above_millis)?,
        )
    }
}

/// A policy; every value left out keeps the core's default.
///
/// Fails with `segment.invalid_policy`.
#[uniffi::export(default(
    initial_step = None,
    min_step = None,
    max_step = None,
    fetch_at_percent = None,
    grow_below_millis = None,
    shrink_above_millis = None
))]
pub fn segment_policy_new(
    initial_step: Option<u64>,
    min_step: Option<u64>,
    max_step: Option<u64>,
    fetch_at_percent: Option<u8>,
    grow_below_millis: Option<u64>,
    shrink_above_millis: Option<u64>,
) -> Result<SegmentPolicy, MintidError> {
    let default = core::SegmentPolicy::DEFAULT;
    let mut policy = core::SegmentPolicy::new(
        initial_step.unwrap_or(default.initial_step()),
        min_step.unwrap_or(default.min_step()),
        max_step.unwrap_or(default.max_step()),
    )?;
    if let Some(percent) = fetch_at_percent {
        policy = policy.with_fetch_at_percent(percent)?;
    }
    if grow_below_millis.is_some() || shrink_above_millis.is_some() {
        policy = policy.with_adaptation(
            grow_below_millis.unwrap_or(policy.grow_below_millis()),
            shrink_above_millis.unwrap_or(policy.shrink_above_millis()),
        )?;
    }
    Ok(policy.into())
}

/// The step after a segment of `step` IDs lasted `lasted_millis`.
///
/// Fails with `segment.invalid_policy`.
#[uniffi::export]
pub fn segment_adapt(
    policy: SegmentPolicy,
    step: u64,
    lasted_millis: u64,
) -> Result<u64, MintidError> {
    Ok(core::SegmentPolicy::try_from(policy)?.adapt(step, lasted_millis))
}

/// A segment allocator for one tag (the core's `SegmentAllocator`), shared
/// between threads.
#[derive(Debug, uniffi::Object)]
pub struct SegmentAllocator(Mutex<core::SegmentAllocator>);

impl SegmentAllocator {
    fn allocator(&self) -> MutexGuard<'_, core::SegmentAllocator> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[uniffi::export]
impl SegmentAllocator {
    /// An allocator with no segment yet.
    ///
    /// Fails with `segment.invalid_policy`.
    #[uniffi::constructor]
    pub fn new(policy: SegmentPolicy) -> Result<std::sync::Arc<Self>, MintidError> {
        let policy = core::SegmentPolicy::try_from(policy)?;
        Ok(std::sync::Arc::new(Self(Mutex::new(
            core::SegmentAllocator::new(policy),
        ))))
    }

    /// The next ID, or none when the segments ran out (fetch one).
    pub fn next_id(&self) -> Option<u64> {
        self.allocator().next_id()
    }

    /// Up to `count` IDs (at most [`MAX_BATCH`](crate::MAX_BATCH)), 8
    /// little-endian bytes each; fewer when the segments run out.
    ///
    /// Fails with `argument.batch_too_large`.
    pub fn fill(&self, count: u32) -> Result<IdBytes, MintidError> {
        let mut ids = vec![0u64; crate::batch::batch_len(count)?];
        let written = self.allocator().fill(&mut ids);
        IdBytes::from_u64s(&ids[..written])
    }

    /// How many IDs are left in the current and the next segment.
    pub fn remaining(&self) -> u64 {
        self.allocator().remaining()
    }

    /// The step of the next fetch.
    pub fn step(&self) -> u64 {
        self.allocator().step()
    }

    /// Whether a fetch is under way.
    pub fn fetch_in_flight(&self) -> bool {
        self.allocator().fetch_in_flight()
    }

    /// The step of the fetch due at `now_millis`, if one is (it is then in flight).
    pub fn fetch_due(&self, now_millis: u64) -> Option<u64> {
        self.allocator()
            .fetch_due(now_millis)
            .map(|fetch| fetch.step)
    }

    /// Reports the row `segment_load` returned after the fetch.
    ///
    /// Fails with `segment.no_fetch`, `segment.invalid_row` or `segment.went_back`.
    pub fn fetched(&self, max_id: u64, step: u64, now_millis: u64) -> Result<(), MintidError> {
        let row = core::SegmentRow { max_id, step };
        Ok(self.allocator().fetched(row, now_millis)?)
    }

    /// Reports a fetch that failed; the next `fetch_due` asks again.
    pub fn fetch_failed(&self) {
        self.allocator().fetch_failed()
    }

    /// In a process forked from the one that holds the segments: forgets
    /// every ID in memory and the fetch in flight (the parent holds the same
    /// copies); the next `fetch_due` asks for a fresh segment.
    pub fn forget_after_fork(&self) {
        self.allocator().forget_after_fork()
    }
}
