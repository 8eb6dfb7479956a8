//! Segment allocation: IDs handed out from ranges fetched from a database row.

use alloc::vec;
use alloc::vec::Vec;
use mintid::segment::{SegmentAllocator, SegmentPolicy, SegmentRow};
use wasm_bindgen::prelude::*;

use crate::error::to_js;

/// A validated segment policy.
#[wasm_bindgen]
pub struct SegmentPolicyHandle(SegmentPolicy);

#[wasm_bindgen]
impl SegmentPolicyHandle {
    /// A policy (`segment.invalid_policy`); `None` keeps the core's default.
    #[wasm_bindgen(constructor)]
    pub fn new(
        initial_step: Option<u64>,
        min_step: Option<u64>,
        max_step: Option<u64>,
        fetch_at_percent: Option<u8>,
        grow_below_millis: Option<u64>,
        shrink_above_millis: Option<u64>,
    ) -> Result<SegmentPolicyHandle, JsValue> {
        let default = SegmentPolicy::DEFAULT;
        let mut policy = SegmentPolicy::new(
            initial_step.unwrap_or(default.initial_step()),
            min_step.unwrap_or(default.min_step()),
            max_step.unwrap_or(default.max_step()),
        )
        .map_err(to_js)?;
        if let Some(percent) = fetch_at_percent {
            policy = policy.with_fetch_at_percent(percent).map_err(to_js)?;
        }
        if grow_below_millis.is_some() || shrink_above_millis.is_some() {
            policy = policy
                .with_adaptation(
                    grow_below_millis.unwrap_or(policy.grow_below_millis()),
                    shrink_above_millis.unwrap_or(policy.shrink_above_millis()),
                )
                .map_err(to_js)?;
        }
        Ok(Self(policy))
    }

    /// The step after a segment of `step` IDs lasted `lasted_millis`.
    pub fn adapt(&self, step: u64, lasted_millis: u64) -> u64 {
        self.0.adapt(step, lasted_millis)
    }

    /// `[initial, min, max, grow_below_millis, shrink_above_millis, fetch_at_percent]`.
    pub fn settings(&self) -> Vec<u64> {
        let p = &self.0;
        vec![
            p.initial_step(),
            p.min_step(),
            p.max_step(),
            p.grow_below_millis(),
            p.shrink_above_millis(),
            u64::from(p.fetch_at_percent()),
        ]
    }
}

/// Hands out IDs from the segments the host fetches.
#[wasm_bindgen]
pub struct SegmentAllocatorHandle(SegmentAllocator);

#[wasm_bindgen]
impl SegmentAllocatorHandle {
    /// An allocator with nothing fetched yet.
    #[wasm_bindgen(constructor)]
    pub fn new(policy: &SegmentPolicyHandle) -> SegmentAllocatorHandle {
        Self(SegmentAllocator::new(policy.0))
    }

    /// The next ID, if a segment holds one.
    #[wasm_bindgen(js_name = nextId)]
    pub fn next_id(&mut self) -> Option<u64> {
        self.0.next_id()
    }

    /// Up to `count` IDs (fewer when the segments run out).
    pub fn fill(&mut self, count: usize) -> Vec<u64> {
        let mut out = vec![0; count];
        let written = self.0.fill(&mut out);
        out.truncate(written);
        out
    }

    /// IDs left in memory.
    #[wasm_bindgen(getter)]
    pub fn remaining(&self) -> u64 {
        self.0.remaining()
    }

    /// The step the next fetch asks for.
    #[wasm_bindgen(getter)]
    pub fn step(&self) -> u64 {
        self.0.step()
    }

    /// Whether a fetch is in flight.
    #[wasm_bindgen(getter = fetchInFlight)]
    pub fn fetch_in_flight(&self) -> bool {
        self.0.fetch_in_flight()
    }

    /// The step of the fetch due at `now_millis`, if one is.
    #[wasm_bindgen(js_name = fetchDue)]
    pub fn fetch_due(&mut self, now_millis: u64) -> Option<u64> {
        self.0.fetch_due(now_millis).map(|fetch| fetch.step)
    }

    /// Takes the fetched row (`segment.*` errors for a row that does not fit).
    pub fn fetched(&mut self, max_id: u64, step: u64, now_millis: u64) -> Result<(), JsValue> {
        self.0
            .fetched(SegmentRow { max_id, step }, now_millis)
            .map_err(to_js)
    }

    /// Records that the fetch failed.
    #[wasm_bindgen(js_name = fetchFailed)]
    pub fn fetch_failed(&mut self) {
        self.0.fetch_failed();
    }
}
