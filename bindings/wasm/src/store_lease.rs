//! The worker-id lease drivers of the core (`mintid::store::LeaseAcquisition`,
//! `LeaseRenewal`, `LeaseRelease`) for JS. Steps cross as plain objects:
//! `{ kind: "run", query }`, `{ kind: "pause", millis }`, `{ kind: "begin",
//! write }`, `{ kind: "commit" }`, `{ kind: "rollback" }`, and the end:
//! `{ kind: "acquired", guard }`, `{ kind: "renewed", leaseDeadlineMillis }`,
//! `{ kind: "released", released }`. A failure is thrown as the core's error.

use mintid::store::Step;
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::lease::{LeaseGuardHandle, LeasePolicyHandle};
use crate::store::{answer_of, manifest_of, object, query_js};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** A step of a lease driver. */
export type LeaseStep =
  | { kind: "run"; query: StoreQuery }
  | { kind: "pause"; millis: bigint }
  | { kind: "begin"; write: boolean }
  | { kind: "commit" }
  | { kind: "rollback" }
  | { kind: "acquired"; guard: LeaseGuardHandle }
  | { kind: "renewed"; leaseDeadlineMillis: bigint }
  | { kind: "released"; released: boolean };
"#;

fn kind(name: &str) -> (&'static str, JsValue) {
    ("kind", JsValue::from_str(name))
}

fn step<Y>(step: Step<Y>, done: impl FnOnce(Y) -> JsValue) -> Result<JsValue, JsValue> {
    Ok(match step {
        Step::Run(query) => object(&[kind("run"), ("query", query_js(&query))]),
        Step::Pause { millis } => object(&[kind("pause"), ("millis", millis.into())]),
        Step::Begin { write } => object(&[kind("begin"), ("write", write.into())]),
        Step::Commit => object(&[kind("commit")]),
        Step::Rollback => object(&[kind("rollback")]),
        Step::Yield(value) => done(value),
        Step::Fail(error) => return Err(to_js(error)),
    })
}

/// Taking a worker id for an owner (`mintid::store::LeaseAcquisition`).
#[wasm_bindgen]
pub struct LeaseAcquisition {
    driver: mintid::store::LeaseAcquisition,
    policy: mintid::lease::LeasePolicy,
}

#[wasm_bindgen]
impl LeaseAcquisition {
    /// An acquisition for `owner` under `policy`, giving up `timeout_millis`
    /// after its start when set (`lease.acquire_timeout`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        policy: &LeasePolicyHandle,
        owner: &str,
        timeout_millis: Option<u64>,
    ) -> Result<LeaseAcquisition, JsValue> {
        Ok(Self {
            driver: mintid::store::LeaseAcquisition::new(
                manifest_of(&manifest)?,
                policy.0,
                owner,
                timeout_millis,
            ),
            policy: policy.0,
        })
    }

    /// The first step, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn start(&mut self, now_millis: u64) -> Result<JsValue, JsValue> {
        let next = self.driver.start(now_millis);
        self.acquired(next)
    }

    /// Push the answer to the last `run`, `begin`, `commit` or `rollback`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
        now_millis: u64,
    ) -> Result<JsValue, JsValue> {
        let next = self.driver.push(answer_of(&answer)?, now_millis);
        self.acquired(next)
    }

    /// Continue after a `pause`, at `now_millis`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn resume(&mut self, now_millis: u64) -> Result<JsValue, JsValue> {
        let next = self.driver.resume(now_millis);
        self.acquired(next)
    }
}

impl LeaseAcquisition {
    fn acquired(&self, next: mintid::store::LeaseStep) -> Result<JsValue, JsValue> {
        let policy = self.policy;
        step(next, |made| {
            let guard = LeaseGuardHandle::made(&made, &policy);
            object(&[kind("acquired"), ("guard", guard.into())])
        })
    }
}

/// One renewal of a held lease (`mintid::store::LeaseRenewal`).
#[wasm_bindgen]
pub struct LeaseRenewal(mintid::store::LeaseRenewal);

#[wasm_bindgen]
impl LeaseRenewal {
    /// A renewal over `manifest`'s statements.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
    ) -> Result<LeaseRenewal, JsValue> {
        Ok(Self(mintid::store::LeaseRenewal::new(manifest_of(
            &manifest,
        )?)))
    }

    /// Start renewing `guard` at `now_millis`, storing `high_water_millis`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn start(
        &mut self,
        guard: &LeaseGuardHandle,
        now_millis: u64,
        high_water_millis: u64,
    ) -> Result<JsValue, JsValue> {
        step(
            self.0.start(&guard.0, now_millis, high_water_millis),
            renewed,
        )
    }

    /// Push the answer to `lease_renew`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn push(
        &mut self,
        guard: &LeaseGuardHandle,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
        now_millis: u64,
    ) -> Result<JsValue, JsValue> {
        let answer = answer_of(&answer)?;
        step(self.0.push(&guard.0, answer, now_millis), renewed)
    }
}

fn renewed(deadline: u64) -> JsValue {
    object(&[kind("renewed"), ("leaseDeadlineMillis", deadline.into())])
}

/// The release of a held lease (`mintid::store::LeaseRelease`).
#[wasm_bindgen]
pub struct LeaseRelease(mintid::store::LeaseRelease);

#[wasm_bindgen]
impl LeaseRelease {
    /// The release of `guard`'s lease: the guard stops issuing at once; read
    /// the generator's high-water time after this, for `start`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        guard: &LeaseGuardHandle,
    ) -> Result<LeaseRelease, JsValue> {
        Ok(Self(mintid::store::LeaseRelease::new(
            manifest_of(&manifest)?,
            &guard.0,
        )))
    }

    /// Start at `now_millis`, storing `high_water_millis`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn start(
        &mut self,
        guard: &LeaseGuardHandle,
        now_millis: u64,
        high_water_millis: u64,
    ) -> Result<JsValue, JsValue> {
        step(
            self.0.start(&guard.0, now_millis, high_water_millis),
            released,
        )
    }

    /// Push the answer to `lease_release`.
    #[wasm_bindgen(unchecked_return_type = "LeaseStep")]
    pub fn push(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "StoreAnswer")] answer: JsValue,
    ) -> Result<JsValue, JsValue> {
        step(self.0.push(answer_of(&answer)?), released)
    }
}

fn released(released: bool) -> JsValue {
    object(&[kind("released"), ("released", released.into())])
}
