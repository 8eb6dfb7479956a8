//! The lane for JS: the classes the TypeScript layer used before the wire
//! (`RecordLane`, `RecordLaneDriver`, `RelayLaneDriver`), kept until it has
//! moved to the wire (`wire.rs`) and then deleted. Each driver is a
//! `mintid_wire::lane::LaneDriver`: a wire whose inputs and steps are
//! rewritten from and into the lane's layout; nothing is decided here.

use alloc::string::String;
use alloc::vec::Vec;

use mintid::fingerprint::Fingerprint;
use mintid::key::IdempotencyKey;
use mintid::record::RecordPolicy;
use mintid::store::{Manifest, Way};
use mintid_wire::lane::LaneDriver;
use mintid_wire::{Input, KeyParts, Spec};
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};
use crate::outbox::RelayPolicyHandle;
use crate::record::RecordPolicyHandle;
use crate::store::manifest_of;
use crate::wire::PackedError;

/// The manifest and policy every record driver of one store shares.
#[wasm_bindgen]
pub struct RecordLane {
    manifest: Manifest,
    policy: RecordPolicy,
    /// The fast path (with its TTL cap), if any.
    fast: Option<Option<u64>>,
}

#[wasm_bindgen]
impl RecordLane {
    /// The lane of `manifest`'s statements under `policy`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        policy: &RecordPolicyHandle,
    ) -> Result<RecordLane, JsValue> {
        Ok(Self {
            manifest: manifest_of(&manifest)?,
            policy: *policy.policy(),
            fast: None,
        })
    }

    /// The same lane with the Redis fast path in front of the database:
    /// every driver made on it yields its Redis steps (`docs/spec.md`, "The
    /// fast path"), entries living at most `ttl_millis` when given (always
    /// less than the record's retention).
    #[wasm_bindgen(js_name = withFastPath)]
    pub fn with_fast_path(&self, ttl_millis: Option<u64>) -> RecordLane {
        Self {
            manifest: self.manifest,
            policy: self.policy,
            fast: Some(ttl_millis),
        }
    }

    /// The driver of one request: `way` 0 run once, 1 same transaction, 2
    /// lease; the key's parts; the payload's fingerprint (text form); the
    /// key's creation time, if known. Throws the key's or fingerprint's
    /// error.
    pub fn driver(
        &self,
        way: u8,
        kind: &str,
        scope: &str,
        id: &str,
        fingerprint: &str,
        key_created_millis: Option<u64>,
    ) -> Result<RecordLaneDriver, JsValue> {
        let way = match way {
            0 => Way::RunOnce,
            1 => Way::SameTransaction,
            2 => Way::Lease,
            _ => return Err(type_error("way must be 0, 1 or 2")),
        };
        IdempotencyKey::new(kind, scope, id).map_err(to_js)?;
        let fingerprint = Fingerprint::parse(fingerprint.as_bytes()).map_err(to_js)?;
        Ok(RecordLaneDriver(LaneDriver::new(Ok(Spec::Record {
            manifest: self.manifest,
            policy: self.policy,
            way,
            fast: self.fast,
            key: KeyParts {
                kind: kind.into(),
                scope: scope.into(),
                id: id.into(),
            },
            digest: *fingerprint.as_bytes(),
            key_created_millis,
        }))))
    }
}

/// The calls every driver on the lane answers with its next step, packed:
/// push an affected count, packed rows or a failed query, resume.
macro_rules! lane_calls {
    ($class:ident) => {
        #[wasm_bindgen]
        impl $class {
            /// Pushes an affected-row count.
            #[wasm_bindgen(js_name = pushAffected)]
            pub fn push_affected(&mut self, count: u64, now_millis: u64) -> Vec<u8> {
                self.0.push(now_millis, Input::Affected(count)).to_vec()
            }

            /// Pushes packed rows.
            #[wasm_bindgen(js_name = pushRows)]
            pub fn push_rows(&mut self, rows: &[u8], now_millis: u64) -> Vec<u8> {
                self.0.push_rows(rows, now_millis).to_vec()
            }

            /// Pushes a failed query: the executor's class (0 unique violation,
            /// 1 serialization, 2 connection lost, 3 constraint, 4 other) and
            /// the driver's message.
            #[wasm_bindgen(js_name = pushFailed)]
            pub fn push_failed(&mut self, class: u8, message: String, now_millis: u64) -> Vec<u8> {
                self.0
                    .push_failed(class, message.as_bytes(), now_millis)
                    .to_vec()
            }

            /// Continues after a pause.
            pub fn resume(&mut self) -> Vec<u8> {
                self.0.push(0, Input::Resume).to_vec()
            }
        }
    };
}

/// One request's record driver on the lane: every call answers with the
/// next step, packed.
#[wasm_bindgen]
pub struct RecordLaneDriver(LaneDriver<PackedError>);

lane_calls!(RecordLaneDriver);

#[wasm_bindgen]
impl RecordLaneDriver {
    /// The first step, at `now_millis`.
    pub fn start(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.push(now_millis, Input::Start).to_vec()
    }

    /// Finishes with the packed outcome of the operation.
    pub fn finish(&mut self, outcome: &[u8], now_millis: u64) -> Vec<u8> {
        self.0.finish(outcome, now_millis).to_vec()
    }

    /// Pushes Redis's packed answer to the last Redis step (nil, fields,
    /// failed, `NOSCRIPT`).
    #[wasm_bindgen(js_name = pushRedis)]
    pub fn push_redis(&mut self, answer: &[u8], now_millis: u64) -> Vec<u8> {
        self.0.push_redis(answer, now_millis).to_vec()
    }

    /// Takes what the fast path came to since the last report, packed: the
    /// lookup's verdict (`u8` length and name) and the failed writes
    /// (`u32`).
    #[wasm_bindgen(js_name = takeFastReport)]
    pub fn take_fast_report(&mut self) -> Vec<u8> {
        let mut packed = Vec::new();
        self.0.take_fast_report(&mut packed);
        packed
    }
}

/// One outbox relay run on the lane: every call answers with the next step,
/// packed.
#[wasm_bindgen]
pub struct RelayLaneDriver(LaneDriver<PackedError>);

lane_calls!(RelayLaneDriver);

#[wasm_bindgen]
impl RelayLaneDriver {
    /// A run over `manifest`'s statements under `policy`; `seed` (a random
    /// u64) gives its claim tokens and jitter.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "StoreManifest")] manifest: JsValue,
        policy: &RelayPolicyHandle,
        seed: u64,
    ) -> Result<RelayLaneDriver, JsValue> {
        Ok(Self(LaneDriver::new(Ok(Spec::Relay {
            manifest: manifest_of(&manifest)?,
            policy: policy.0,
            seed,
        }))))
    }

    /// The first step, at `now_millis`.
    pub fn start(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.push(now_millis, Input::Start).to_vec()
    }

    /// The message of the last send was sent, at `now_millis`.
    pub fn sent(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.push(now_millis, Input::Sent).to_vec()
    }

    /// The last send failed with `error`, at `now_millis`.
    pub fn failed(&mut self, error: &str, now_millis: u64) -> Vec<u8> {
        let error = Input::SendFailed(error.as_bytes().to_vec());
        self.0.push(now_millis, error).to_vec()
    }
}
