//! UUIDv7 values and generators.

use alloc::string::String;
use alloc::vec::Vec;
use mintid::uuid::{TextForm, Uuid};
use mintid::uuid7::{DEFAULT_ROLLBACK_POLICY, Uuid7, Uuid7Generator};
use wasm_bindgen::prelude::*;

use crate::error::{range_error, to_js};
use crate::sources::{HostClock, HostEntropy, ManualClockHandle, rollback_policy};
use crate::uuid::uuid_bytes;

const HYPHENATED_LEN: usize = 36;

fn uuid7_of(bytes: &[u8]) -> Result<Uuid7, JsValue> {
    Uuid7::from_bytes(uuid_bytes(bytes)?).map_err(to_js)
}

/// Accepts 16 bytes only if they hold a UUIDv7 (version 7, RFC 9562 variant).
#[wasm_bindgen(js_name = uuid7Check)]
pub fn uuid7_check(bytes: &[u8]) -> Result<(), JsValue> {
    uuid7_of(bytes).map(|_| ())
}

/// The bytes of a UUIDv7 in any of the four text forms.
#[wasm_bindgen(js_name = uuid7Parse)]
pub fn uuid7_parse(text: &str) -> Result<Vec<u8>, JsValue> {
    Uuid7::parse(text)
        .map(|id| id.as_bytes().to_vec())
        .map_err(to_js)
}

/// The UUIDv7 with these fields.
#[wasm_bindgen(js_name = uuid7FromFields)]
pub fn uuid7_from_fields(unix_millis: u64, rand_a: u16, rand_b: u64) -> Result<Vec<u8>, JsValue> {
    Uuid7::from_fields(unix_millis, rand_a, rand_b)
        .map(|id| id.as_bytes().to_vec())
        .map_err(to_js)
}

/// The 48-bit Unix millisecond timestamp (exact in a JS number).
#[wasm_bindgen(js_name = uuid7UnixMillis)]
pub fn uuid7_unix_millis(bytes: &[u8]) -> Result<f64, JsValue> {
    uuid7_of(bytes).map(|id| id.timestamp_millis() as f64)
}

/// The 12 bits after the version field.
#[wasm_bindgen(js_name = uuid7RandA)]
pub fn uuid7_rand_a(bytes: &[u8]) -> Result<u16, JsValue> {
    uuid7_of(bytes).map(|id| id.rand_a())
}

/// The 62 bits after the variant field.
#[wasm_bindgen(js_name = uuid7RandB)]
pub fn uuid7_rand_b(bytes: &[u8]) -> Result<u64, JsValue> {
    uuid7_of(bytes).map(|id| id.rand_b())
}

/// The 16-bit counter of mintid's generators.
#[wasm_bindgen(js_name = uuid7Counter)]
pub fn uuid7_counter(bytes: &[u8]) -> Result<u16, JsValue> {
    uuid7_of(bytes).map(|id| id.counter())
}

/// A single-owner UUIDv7 generator that hands IDs to JS in batches.
#[wasm_bindgen]
pub struct Uuid7Source {
    generator: Uuid7Generator<HostClock, HostEntropy>,
    bytes: Vec<u8>,
    fresh_until: f64,
}

#[wasm_bindgen]
impl Uuid7Source {
    /// A generator on `clock` (`Date.now()` without one) and `entropy`
    /// (`crypto.getRandomValues` without fixed bytes); `rollback_kind` `None`
    /// takes the core's default policy.
    #[wasm_bindgen(constructor)]
    pub fn new(
        rollback_kind: Option<String>,
        rollback_max_millis: u64,
        clock: Option<ManualClockHandle>,
        entropy: Option<Vec<u8>>,
    ) -> Result<Self, JsValue> {
        let policy = rollback_policy(rollback_kind, rollback_max_millis, DEFAULT_ROLLBACK_POLICY)?;
        let generator =
            Uuid7Generator::with_sources(HostClock::new(clock.as_ref()), HostEntropy::new(entropy))
                .with_policy(policy);
        Ok(Self {
            generator,
            bytes: Vec::new(),
            fresh_until: 0.0,
        })
    }

    /// The next batch of a host buffer after one that handed out
    /// `handed_out` IDs, sized by the core's ID buffer rule, as
    /// [`next_text`](Self::next_text) writes it; hand its IDs out while
    /// `Date.now() <= freshUntil`.
    #[wasm_bindgen(js_name = refillText)]
    pub fn refill_text(&mut self, handed_out: usize) -> Result<String, JsValue> {
        let size =
            mintid::id_buffer::next_batch_size(handed_out as u64, mintid::id_buffer::MAX_BATCH);
        self.next_text(size as usize)
    }

    /// `count` new IDs, consecutive, as one string of `count` hyphenated
    /// texts of 36 characters each.
    #[wasm_bindgen(js_name = nextText)]
    pub fn next_text(&mut self, count: usize) -> Result<String, JsValue> {
        self.fill(count)?;
        let mut text = String::with_capacity(count.saturating_mul(HYPHENATED_LEN));
        for chunk in self.bytes.chunks_exact(16) {
            if let Ok(bytes) = <[u8; 16]>::try_from(chunk) {
                text.push_str(
                    Uuid::from_bytes(bytes)
                        .format(TextForm::Hyphenated)
                        .as_str(),
                );
            }
        }
        Ok(text)
    }

    /// `count` new IDs, consecutive, as `16 × count` bytes.
    #[wasm_bindgen(js_name = nextBytes)]
    pub fn next_bytes(&mut self, count: usize) -> Result<Vec<u8>, JsValue> {
        self.fill(count)?;
        Ok(self.bytes.clone())
    }

    /// The last Unix millisecond at which the last batch's IDs may be handed
    /// out (the core's ID buffer rule).
    #[wasm_bindgen(getter = freshUntil)]
    pub fn fresh_until(&self) -> f64 {
        self.fresh_until
    }

    fn fill(&mut self, count: usize) -> Result<(), JsValue> {
        let len = count
            .checked_mul(16)
            .ok_or_else(|| range_error("too many UUIDs asked for at once"))?;
        self.bytes.resize(len, 0);
        self.generator.fill_bytes(&mut self.bytes).map_err(to_js)?;
        if let Some(first) = self.bytes.first_chunk::<16>() {
            self.fresh_until =
                mintid::id_buffer::fresh_until_millis(uuid7_of(first)?.timestamp_millis(), 1)
                    as f64;
        }
        Ok(())
    }
}
