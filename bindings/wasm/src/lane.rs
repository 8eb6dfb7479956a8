//! The lane for JS: the record driver and the outbox relay with their steps,
//! answers and outcomes as packed bytes (`mintid-lane`'s layout,
//! `docs/spec.md` "The lane").
//!
//! A step through wasm-bindgen's objects costs one import per field; through
//! the lane it is one `Uint8Array` the TypeScript layer reads with a
//! `DataView`, and an answer one it writes.

use alloc::string::String;
use alloc::vec::Vec;

use mintid::fingerprint::Fingerprint;
use mintid::key::IdempotencyKey;
use mintid::record::{Incoming, RecordPolicy};
use mintid::store::{DriverError, FastPath, Manifest, OutboxRelay, RecordDriver, Way};
use mintid_lane::{Fields, Lane, Refusal};
use wasm_bindgen::prelude::*;

use crate::error::{CoreError, to_js, type_error};
use crate::outbox::RelayPolicyHandle;
use crate::record::RecordPolicyHandle;
use crate::store::manifest_of;

/// A core error as the lane packs it (the TypeScript layer throws the
/// package's class for its code).
pub(crate) struct PackedError {
    code: &'static str,
    detail: String,
    part: Option<&'static str>,
    position: Option<u64>,
    problem: Option<&'static str>,
}

impl From<DriverError> for PackedError {
    fn from(error: DriverError) -> Self {
        Self {
            code: CoreError::code(&error),
            detail: alloc::string::ToString::to_string(&error),
            part: CoreError::part(&error),
            position: CoreError::position(&error).map(|position| position as u64),
            problem: CoreError::problem(&error),
        }
    }
}

impl Refusal for PackedError {
    fn fields(&self) -> Fields<'_> {
        Fields {
            code: self.code,
            detail: &self.detail,
            part: self.part,
            position: self.position,
            problem: self.problem,
            concern: self.code.split('.').next().unwrap_or(self.code),
        }
    }
}

/// The manifest and policy every record driver of one store shares.
#[wasm_bindgen]
pub struct RecordLane {
    manifest: Manifest,
    policy: RecordPolicy,
    fast: Option<FastPath>,
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
        let fast = FastPath::new(self.policy);
        Self {
            manifest: self.manifest,
            policy: self.policy,
            fast: Some(match ttl_millis {
                Some(ttl) => fast.with_ttl_millis(ttl),
                None => fast,
            }),
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
        let key = IdempotencyKey::new(kind, scope, id).map_err(to_js)?;
        let mut incoming =
            Incoming::new(Fingerprint::parse(fingerprint.as_bytes()).map_err(to_js)?);
        if let Some(created) = key_created_millis {
            incoming = incoming.with_key_created_millis(created);
        }
        let driver = match self.fast {
            Some(fast) => {
                RecordDriver::with_fast_path(self.manifest, self.policy, way, &key, incoming, fast)
            }
            None => RecordDriver::new(self.manifest, self.policy, way, &key, incoming),
        };
        Ok(RecordLaneDriver(Lane::new(driver)))
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
                self.0.push_affected(count, now_millis).to_vec()
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
                self.0.push_failed(class, message, now_millis).to_vec()
            }

            /// Continues after a pause.
            pub fn resume(&mut self) -> Vec<u8> {
                self.0.resume().to_vec()
            }
        }
    };
}

/// One request's record driver on the lane: every call answers with the
/// next step, packed.
#[wasm_bindgen]
pub struct RecordLaneDriver(Lane<RecordDriver, PackedError>);

lane_calls!(RecordLaneDriver);

#[wasm_bindgen]
impl RecordLaneDriver {
    /// The first step, at `now_millis`.
    pub fn start(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.drive(|driver| driver.start(now_millis)).to_vec()
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
pub struct RelayLaneDriver(Lane<OutboxRelay, PackedError>);

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
        Ok(Self(Lane::new(OutboxRelay::new(
            manifest_of(&manifest)?,
            policy.0,
            seed,
        ))))
    }

    /// The first step, at `now_millis`.
    pub fn start(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.drive(|relay| relay.start(now_millis)).to_vec()
    }

    /// The message of the last send was sent, at `now_millis`.
    pub fn sent(&mut self, now_millis: u64) -> Vec<u8> {
        self.0.sent(now_millis).to_vec()
    }

    /// The last send failed with `error`, at `now_millis`.
    pub fn failed(&mut self, error: &str, now_millis: u64) -> Vec<u8> {
        self.0.failed(error, now_millis).to_vec()
    }
}
