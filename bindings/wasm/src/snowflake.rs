//! Snowflake layouts, IDs and generators.
//!
//! IDs cross the boundary as `u64` (`bigint`), batches as `Vec<u64>`
//! (`BigUint64Array`); they never pass through a JS number.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use mintid::snowflake::{SequencePolicy, Snowflake, SnowflakeId, SnowflakeLayout};
use wasm_bindgen::prelude::*;

use crate::error::to_js;
use crate::sources::{HostClock, ManualClockHandle, rollback_policy};

/// A validated Snowflake layout.
#[wasm_bindgen]
pub struct LayoutHandle(SnowflakeLayout);

impl LayoutHandle {
    /// The core layout.
    #[cfg(feature = "server")]
    pub(crate) fn layout(&self) -> &SnowflakeLayout {
        &self.0
    }
}

#[wasm_bindgen]
impl LayoutHandle {
    /// A layout with these widths, epoch and tick length (`snowflake.invalid_layout`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        time_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        epoch_millis: u64,
        tick_millis: u64,
    ) -> Result<Self, JsValue> {
        SnowflakeLayout::new(
            time_bits,
            worker_bits,
            sequence_bits,
            epoch_millis,
            tick_millis,
        )
        .map(Self)
        .map_err(to_js)
    }

    /// The preset called `name` (`snowflake.unknown_preset`).
    pub fn preset(name: &str) -> Result<LayoutHandle, JsValue> {
        SnowflakeLayout::preset(name).map(Self).map_err(to_js)
    }

    /// The same layout with the top `datacenter_bits` of the worker field as a datacenter id.
    #[wasm_bindgen(js_name = withDatacenterBits)]
    pub fn with_datacenter_bits(&self, datacenter_bits: u8) -> Result<LayoutHandle, JsValue> {
        self.0
            .with_datacenter_bits(datacenter_bits)
            .map(Self)
            .map_err(to_js)
    }

    /// The same layout with another epoch.
    #[wasm_bindgen(js_name = withEpochMillis)]
    pub fn with_epoch_millis(&self, epoch_millis: u64) -> Result<LayoutHandle, JsValue> {
        self.0
            .with_epoch_millis(epoch_millis)
            .map(Self)
            .map_err(to_js)
    }

    /// Width of the time field.
    #[wasm_bindgen(getter = timeBits)]
    pub fn time_bits(&self) -> u8 {
        self.0.time_bits()
    }

    /// Width of the worker field.
    #[wasm_bindgen(getter = workerBits)]
    pub fn worker_bits(&self) -> u8 {
        self.0.worker_bits()
    }

    /// Width of the sequence field.
    #[wasm_bindgen(getter = sequenceBits)]
    pub fn sequence_bits(&self) -> u8 {
        self.0.sequence_bits()
    }

    /// How many of the worker bits are a datacenter id.
    #[wasm_bindgen(getter = datacenterBits)]
    pub fn datacenter_bits(&self) -> u8 {
        self.0.datacenter_bits()
    }

    /// The Unix millisecond of tick 0.
    #[wasm_bindgen(getter = epochMillis)]
    pub fn epoch_millis(&self) -> u64 {
        self.0.epoch_millis()
    }

    /// The length of one tick in milliseconds.
    #[wasm_bindgen(getter = tickMillis)]
    pub fn tick_millis(&self) -> u64 {
        self.0.tick_millis()
    }

    /// The largest tick.
    #[wasm_bindgen(getter = maxTick)]
    pub fn max_tick(&self) -> u64 {
        self.0.max_tick()
    }

    /// The largest worker id.
    #[wasm_bindgen(getter = maxWorker)]
    pub fn max_worker(&self) -> u64 {
        self.0.max_worker()
    }

    /// The largest sequence number.
    #[wasm_bindgen(getter = maxSequence)]
    pub fn max_sequence(&self) -> u64 {
        self.0.max_sequence()
    }

    /// IDs per tick per worker.
    #[wasm_bindgen(getter = idsPerTick)]
    pub fn ids_per_tick(&self) -> u64 {
        self.0.ids_per_tick()
    }

    /// The largest ID.
    #[wasm_bindgen(getter = maxId)]
    pub fn max_id(&self) -> u64 {
        self.0.max_id().get()
    }

    /// Whether every ID is below 2^53.
    #[wasm_bindgen(getter = isJsSafe)]
    pub fn is_js_safe(&self) -> bool {
        self.0.is_js_safe()
    }

    /// How long the time field lasts, in milliseconds.
    #[wasm_bindgen(getter = lifetimeMillis)]
    pub fn lifetime_millis(&self) -> u64 {
        self.0.lifetime_millis()
    }

    /// The first Unix millisecond the layout cannot represent.
    #[wasm_bindgen(getter = expiresAtUnixMillis)]
    pub fn expires_at_unix_millis(&self) -> u64 {
        self.0.expires_at_unix_millis()
    }

    /// Milliseconds left at `now_unix_millis`.
    #[wasm_bindgen(js_name = remainingMillis)]
    pub fn remaining_millis(&self, now_unix_millis: u64) -> u64 {
        self.0.remaining_millis(now_unix_millis)
    }

    /// The tick containing `unix_millis`.
    #[wasm_bindgen(js_name = tickAt)]
    pub fn tick_at(&self, unix_millis: u64) -> Result<u64, JsValue> {
        self.0.tick_at(unix_millis).map_err(to_js)
    }

    /// The whole worker field of `worker` in `datacenter`.
    #[wasm_bindgen(js_name = workerId)]
    pub fn worker_id(&self, datacenter: u64, worker: u64) -> Result<u64, JsValue> {
        self.0.worker_id(datacenter, worker).map_err(to_js)
    }

    /// `[datacenter, worker]` of a whole worker field.
    #[wasm_bindgen(js_name = splitWorkerId)]
    pub fn split_worker_id(&self, worker_id: u64) -> Vec<u64> {
        let (datacenter, worker) = self.0.split_worker_id(worker_id);
        vec![datacenter, worker]
    }

    /// The ID of `sequence` from `worker` in the tick containing `unix_millis`.
    pub fn compose(&self, unix_millis: u64, worker: u64, sequence: u64) -> Result<u64, JsValue> {
        self.0
            .compose(unix_millis, worker, sequence)
            .map(SnowflakeId::get)
            .map_err(to_js)
    }

    /// The ID of `sequence` from `worker` in tick `tick`.
    #[wasm_bindgen(js_name = composeTick)]
    pub fn compose_tick(&self, tick: u64, worker: u64, sequence: u64) -> Result<u64, JsValue> {
        self.0
            .compose_tick(tick, worker, sequence)
            .map(SnowflakeId::get)
            .map_err(to_js)
    }

    /// `[unix_millis, tick, worker, sequence]` of `id`.
    pub fn decode(&self, id: u64) -> Result<Vec<u64>, JsValue> {
        let parts = SnowflakeId::new(id)
            .and_then(|id| self.0.decode(id))
            .map_err(to_js)?;
        Ok(vec![
            parts.unix_millis,
            parts.tick,
            parts.worker,
            parts.sequence,
        ])
    }
}

/// The value of a decimal Snowflake ID text (`snowflake.invalid_text`, `snowflake.id_out_of_range`).
#[wasm_bindgen(js_name = snowflakeIdFromDecimal)]
pub fn snowflake_id_from_decimal(text: &str) -> Result<u64, JsValue> {
    SnowflakeId::from_decimal(text)
        .map(SnowflakeId::get)
        .map_err(to_js)
}

/// The value of a 13-character Crockford base32 Snowflake ID text.
#[wasm_bindgen(js_name = snowflakeIdFromBase32)]
pub fn snowflake_id_from_base32(text: &str) -> Result<u64, JsValue> {
    SnowflakeId::from_base32(text)
        .map(SnowflakeId::get)
        .map_err(to_js)
}

/// The 13-character Crockford base32 text of an ID (`snowflake.id_out_of_range`).
#[wasm_bindgen(js_name = snowflakeIdToBase32)]
pub fn snowflake_id_to_base32(id: u64) -> Result<String, JsValue> {
    SnowflakeId::new(id)
        .map(SnowflakeId::to_base32)
        .map_err(to_js)
}

/// A Snowflake generator for one worker that hands IDs to JS in batches.
#[wasm_bindgen]
pub struct SnowflakeSource {
    generator: Snowflake<HostClock>,
    fresh_until: f64,
}

#[wasm_bindgen]
impl SnowflakeSource {
    /// A generator for `worker` on `layout`. `rollback_kind` `None` takes the
    /// core's default; `borrow_ahead_ticks` `None` waits for the next tick
    /// when a tick's sequence is used up; `clock` `None` reads `Date.now()`.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(constructor)]
    pub fn new(
        layout: &LayoutHandle,
        worker: u64,
        rollback_kind: Option<String>,
        rollback_max_millis: u64,
        borrow_ahead_ticks: Option<u64>,
        starting_after_id: Option<u64>,
        starting_after_unix_millis: Option<u64>,
        clock: Option<ManualClockHandle>,
    ) -> Result<Self, JsValue> {
        let rollback = rollback_policy(rollback_kind, rollback_max_millis, Default::default())?;
        let sequence = borrow_ahead_ticks.map_or(SequencePolicy::Wait, |max_ticks| {
            SequencePolicy::BorrowAhead { max_ticks }
        });
        let mut builder = Snowflake::builder(layout.0, worker, HostClock::new(clock.as_ref()))
            .rollback(rollback)
            .sequence_policy(sequence);
        if let Some(id) = starting_after_id {
            builder = builder.starting_after_id(SnowflakeId::new(id).map_err(to_js)?);
        }
        if let Some(unix_millis) = starting_after_unix_millis {
            builder = builder.starting_after_unix_millis(unix_millis);
        }
        Ok(Self {
            generator: builder.build().map_err(to_js)?,
            fresh_until: 0.0,
        })
    }

    /// `count` new IDs, unique and increasing.
    #[wasm_bindgen(js_name = nextBatch)]
    pub fn next_batch(&mut self, count: usize) -> Result<Vec<u64>, JsValue> {
        let ids = self.generator.next_batch(count).map_err(to_js)?;
        if let Some(&first) = ids.first() {
            let layout = *self.generator.layout();
            let parts = SnowflakeId::new(first)
                .and_then(|id| layout.decode(id))
                .map_err(to_js)?;
            self.fresh_until =
                mintid::id_buffer::fresh_until_millis(parts.unix_millis, layout.tick_millis())
                    as f64;
        }
        Ok(ids)
    }

    /// The next batch of a host buffer after one that handed out
    /// `handed_out` IDs, sized by the core's ID buffer rule; hand its IDs
    /// out while `Date.now() <= freshUntil`.
    pub fn refill(&mut self, handed_out: usize) -> Result<Vec<u64>, JsValue> {
        let cap = mintid::id_buffer::batch_cap(self.generator.layout().ids_per_tick());
        let size = mintid::id_buffer::next_batch_size(handed_out as u64, cap);
        self.next_batch(size as usize)
    }

    /// The last Unix millisecond at which the last batch's IDs may be handed
    /// out (the core's ID buffer rule).
    #[wasm_bindgen(getter = freshUntil)]
    pub fn fresh_until(&self) -> f64 {
        self.fresh_until
    }

    /// The highest ID issued (or started after), if any.
    #[wasm_bindgen(getter = highWater)]
    pub fn high_water(&self) -> Option<u64> {
        self.generator.high_water().map(SnowflakeId::get)
    }

    /// The Unix millisecond at which the high water's tick starts, if any.
    #[wasm_bindgen(getter = highWaterUnixMillis)]
    pub fn high_water_unix_millis(&self) -> Option<u64> {
        self.generator.high_water_unix_millis()
    }
}
