//! The segment driver of the core (`mintid::store::SegmentDriver`) for JS:
//! runs of IDs in one crossing, the fetch as steps (plain objects, as the
//! record driver's: `{ kind: "run", query }`, `{ kind: "begin", write }`,
//! `{ kind: "commit" }`, `{ kind: "rollback" }`, `{ kind: "pause", millis }`,
//! `{ kind: "fetched", maxId, step }`).

use mintid::segment::SegmentRow;
use mintid::store::{SegmentStep, Step, TakeAction};
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::segment::SegmentPolicyHandle;
use crate::store::{answer_of, manifest_of, object, query_js};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A run of segment IDs: `first .. first + count`, whether a fetch is due, and what to do. */
export interface SegmentTaken { first: bigint; count: bigint; fetchDue: boolean; action: SegmentTakeAction; }
/** What to do with a run: hand it out, fetch beside it, fetch now, or wait for another caller's fetch (at most `millis`), then take again. */
export type SegmentTakeAction =
  | { kind: "handOut" }
  | { kind: "fetchBeside" }
  | { kind: "fetchNow" }
  | { kind: "wait"; millis: bigint };
/** A step of a segment fetch; a failure is the call's error. */
export type SegmentStep =
  | { kind: "run"; query: StoreQuery }
  | { kind: "begin"; write: boolean }
  | { kind: "commit" }
  | { kind: "rollback" }
  | { kind: "pause"; millis: bigint }
  | { kind: "fetched"; maxId: bigint; step: bigint };
"#;

fn take_action(action: TakeAction) -> JsValue {
    let kind = |name: &str| ("kind", JsValue::from_str(name));
    match action {
        TakeAction::HandOut => object(&[kind("handOut")]),
        TakeAction::FetchBeside => object(&[kind("fetchBeside")]),
        TakeAction::FetchNow => object(&[kind("fetchNow")]),
        TakeAction::Wait { millis } => object(&[kind("wait"), ("millis", millis.into())]),
    }
}

fn segment_step(step: SegmentStep) -> Result<JsValue, JsValue> {
    let kind = |name: &str| ("kind", JsValue::from_str(name));
    Ok(match step {
        Step::Run(query) => object(&[kind("run"), ("query", query_js(&query))]),
        Step::Begin { write } => object(&[kind("begin"), ("write", write.into())]),
        Step::Commit => object(&[kind("commit")]),
        Step::Rollback => object(&[kind("rollback")]),
        Step::Pause { millis } => object(&[kind("pause"), ("millis", millis.into())]),
        Step::Yield(SegmentRow { max_id, step }) => object(&[
            kind("fetched"),
            ("maxId", max_id.into()),
            ("step", step.into()),
        ]),
        Step::Fail(error) => return Err(to_js(error)),
    })
}

/// The segment IDs of one tag (`mintid::store::SegmentDriver`).
#[wasm_bindgen]
pub struct SegmentDriver(mintid::store::SegmentDriver);

#[wasm_bindgen]
impl SegmentDriver {
    /// The IDs of `tag` under `policy`, over `manifest`'s statements
    /// (`segment.invalid_tag`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        tag: &str,
        policy: &SegmentPolicyHandle,
    ) -> Result<SegmentDriver, JsValue> {
        mintid::store::SegmentDriver::new(manifest_of(&manifest)?, tag, policy.policy())
            .map(Self)
            .map_err(to_js)
    }

    /// The next run of IDs at `now_millis`, and whether a fetch is due.
    #[wasm_bindgen(unchecked_return_type = "SegmentTaken")]
    pub fn take(&mut self, now_millis: u64) -> JsValue {
        let taken = self.0.take(now_millis);
        object(&[
            ("first", taken.first.into()),
            ("count", taken.count.into()),
            ("fetchDue", taken.fetch_due.into()),
            ("action", take_action(taken.action())),
        ])
    }

    /// Whether a fetch is due or under way.
    #[wasm_bindgen(getter, js_name = fetchInFlight)]
    pub fn fetch_in_flight(&self) -> bool {
        self.0.fetch_in_flight()
    }

    /// The first step of the due fetch (`segment.no_fetch` when none is).
    #[wasm_bindgen(unchecked_return_type = "SegmentStep")]
    pub fn fetch(&mut self) -> Result<JsValue, JsValue> {
        segment_step(self.0.fetch())
    }

    /// Push the answer to the last step, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "SegmentStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
        now_millis: u64,
    ) -> Result<JsValue, JsValue> {
        let answer = answer_of(&answer)?;
        segment_step(self.0.push(answer, now_millis))
    }

    /// Ends the fetch due or under way without a segment (the host could not
    /// run its steps); the next take asks again.
    pub fn abandon(&mut self) {
        self.0.abandon()
    }

    /// Continue after a pause.
    #[wasm_bindgen(unchecked_return_type = "SegmentStep")]
    pub fn resume(&mut self) -> Result<JsValue, JsValue> {
        segment_step(self.0.resume())
    }
}
