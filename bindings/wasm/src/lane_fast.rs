//! The Redis fast path on the lane for JS: the core's `FastPath` with its
//! calls, Redis's answers, verdicts and settled results packed in
//! `mintid-lane`'s layout (`docs/spec.md`, "The fast path" and "The lane"),
//! which `js/src/store/fast-path.ts` reads and writes.

use alloc::vec::Vec;

use mintid::fingerprint::Fingerprint;
use mintid::key::IdempotencyKey;
use mintid::store::{FastPath, Held, SCRIPTS};
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::record::RecordPolicyHandle;
use crate::store::object;

/// The fast path's scripts (`schema/redis/*.lua`, compiled into the core),
/// each `{ name, text }`, for a host to load.
#[wasm_bindgen(js_name = fastPathScripts, unchecked_return_type = "{ name: string; text: string }[]")]
pub fn fast_path_scripts() -> Vec<JsValue> {
    SCRIPTS
        .iter()
        .map(|(name, text)| {
            object(&[
                ("name", JsValue::from_str(name)),
                ("text", JsValue::from_str(text)),
            ])
        })
        .collect()
}

fn key_of(kind: &str, scope: &str, id: &str) -> Result<IdempotencyKey, JsValue> {
    IdempotencyKey::new(kind, scope, id).map_err(to_js)
}

fn print_of(fingerprint: &str) -> Result<Fingerprint, JsValue> {
    Fingerprint::parse(fingerprint.as_bytes()).map_err(to_js)
}

/// The fast path of one store: the core's `FastPath` under its policy; every
/// call is pure and answers packed.
#[wasm_bindgen]
pub struct FastLane(FastPath);

#[wasm_bindgen]
impl FastLane {
    /// The fast path under `policy`, entries living at most `ttl_millis`
    /// when given.
    #[wasm_bindgen(constructor)]
    pub fn new(policy: &RecordPolicyHandle, ttl_millis: Option<u64>) -> FastLane {
        let fast = FastPath::new(*policy.policy());
        Self(match ttl_millis {
            Some(ttl) => fast.with_ttl_millis(ttl),
            None => fast,
        })
    }

    /// The `check` to run before the database for the key's parts and the
    /// payload's fingerprint (text form), packed (`0` none, `1` a script).
    /// Throws the key's or fingerprint's error.
    pub fn check(
        &self,
        kind: &str,
        scope: &str,
        id: &str,
        fingerprint: &str,
        key_created_millis: Option<u64>,
        now_millis: u64,
    ) -> Result<Vec<u8>, JsValue> {
        let call = self.0.check(
            &key_of(kind, scope, id)?,
            &print_of(fingerprint)?,
            key_created_millis,
            now_millis,
        );
        let mut packed = Vec::new();
        mintid_lane::pack_call(&mut packed, call.as_ref());
        Ok(packed)
    }

    /// What Redis's packed answer to a `check` means, packed (`0` miss, `1`
    /// fallback, `2` replay, `3` in progress). Throws on an answer not in the
    /// lane's layout.
    pub fn read(&self, fingerprint: &str, answer: &[u8]) -> Result<Vec<u8>, JsValue> {
        let answer = mintid_lane::unpack_answer(answer).map_err(to_js)?;
        let verdict = self.0.read_check(&print_of(fingerprint)?, &answer);
        let mut packed = Vec::new();
        mintid_lane::pack_verdict(&mut packed, &verdict);
        Ok(packed)
    }

    /// The script that follows the database path (`settle` or `forget`) for
    /// what it came to (`settled`, packed), packed as a call.
    pub fn settle(
        &self,
        kind: &str,
        scope: &str,
        id: &str,
        fingerprint: &str,
        settled: &[u8],
        now_millis: u64,
    ) -> Result<Vec<u8>, JsValue> {
        let settled = mintid_lane::unpack_settled(settled).map_err(to_js)?;
        let call = self.0.settle(
            &key_of(kind, scope, id)?,
            &print_of(fingerprint)?,
            &settled,
            now_millis,
        );
        let mut packed = Vec::new();
        mintid_lane::pack_call(&mut packed, Some(&call));
        Ok(packed)
    }

    /// The script to run after a claim with this fence is written (a
    /// takeover invalidates the entry), packed as a call (`0` none).
    pub fn claimed(
        &self,
        kind: &str,
        scope: &str,
        id: &str,
        token: u64,
        created_millis: u64,
    ) -> Result<Vec<u8>, JsValue> {
        let held = Held {
            token,
            created_millis,
            lease_deadline_millis: 0,
            renew_every_millis: None,
        };
        let call = self.0.claimed(&key_of(kind, scope, id)?, &held);
        let mut packed = Vec::new();
        mintid_lane::pack_call(&mut packed, call.as_ref());
        Ok(packed)
    }
}
