//! Snowflake layouts, IDs and generators.
//!
//! IDs cross as `u64` (always below 2^63); a generator also hands them out in
//! bulk as bytes, 8 per ID, most significant first.

use crate::batch::{IdBytes, batch_len};
use crate::error::MintidError;
use crate::rollback::RollbackPolicy;
use crate::sources::{HostClock, ManualClock};
use mintid::snowflake::{SnowflakeId, SnowflakeParts as CoreParts};
use std::sync::Arc;

/// How the bits of an ID are split, its epoch and tick (the core's
/// `SnowflakeLayout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Object)]
pub struct SnowflakeLayout(mintid::SnowflakeLayout);

/// The fields of a decoded ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct SnowflakeParts {
    /// The start of the ID's tick, in Unix milliseconds.
    pub unix_millis: u64,
    /// Ticks since the layout's epoch.
    pub tick: u64,
    /// The whole worker field (datacenter and worker together, if split).
    pub worker: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
}

impl From<CoreParts> for SnowflakeParts {
    fn from(parts: CoreParts) -> Self {
        Self {
            unix_millis: parts.unix_millis,
            tick: parts.tick,
            worker: parts.worker,
            sequence: parts.sequence,
        }
    }
}

/// A whole worker field split into its datacenter and worker parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct SnowflakeWorkerSplit {
    /// The datacenter id (0 when the layout has no datacenter bits).
    pub datacenter: u64,
    /// The worker id within the datacenter.
    pub worker: u64,
}

impl SnowflakeLayout {
    /// Wraps a core layout.
    pub(crate) fn from_core(layout: mintid::SnowflakeLayout) -> Self {
        Self(layout)
    }

    /// The core layout.
    pub(crate) fn core(&self) -> mintid::SnowflakeLayout {
        self.0
    }
}

fn id(value: u64) -> Result<SnowflakeId, MintidError> {
    Ok(SnowflakeId::new(value)?)
}

#[uniffi::export]
impl SnowflakeLayout {
    /// A layout with the given field widths, epoch (Unix ms) and tick (ms).
    ///
    /// Fails with `snowflake.invalid_layout`.
    #[uniffi::constructor]
    pub fn new(
        time_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        epoch_millis: u64,
        tick_millis: u64,
    ) -> Result<Arc<Self>, MintidError> {
        let layout = mintid::SnowflakeLayout::new(
            time_bits,
            worker_bits,
            sequence_bits,
            epoch_millis,
            tick_millis,
        )?;
        Ok(Arc::new(Self(layout)))
    }

    /// The preset called `name` (`classic`, `twitter`, `datacenter-worker`,
    /// `sonyflake-like`, `js-safe`; ASCII case and `_` for `-` ignored).
    ///
    /// Fails with `snowflake.unknown_preset`.
    #[uniffi::constructor]
    pub fn preset(name: String) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(mintid::SnowflakeLayout::preset(&name)?)))
    }

    /// The same layout with the top `datacenter_bits` of the worker field
    /// read as a datacenter id.
    ///
    /// Fails with `snowflake.invalid_layout`.
    pub fn with_datacenter_bits(&self, datacenter_bits: u8) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(
            self.0.with_datacenter_bits(datacenter_bits)?,
        )))
    }

    /// The same layout with another epoch (Unix ms).
    ///
    /// Fails with `snowflake.invalid_layout`.
    pub fn with_epoch_millis(&self, epoch_millis: u64) -> Result<Arc<Self>, MintidError> {
        Ok(Arc::new(Self(self.0.with_epoch_millis(epoch_millis)?)))
    }

    /// Width of the time field.
    pub fn time_bits(&self) -> u8 {
        self.0.time_bits()
    }

    /// Width of the whole worker field (datacenter bits included).
    pub fn worker_bits(&self) -> u8 {
        self.0.worker_bits()
    }

    /// Width of the sequence field.
    pub fn sequence_bits(&self) -> u8 {
        self.0.sequence_bits()
    }

    /// How many of the worker bits name a datacenter.
    pub fn datacenter_bits(&self) -> u8 {
        self.0.datacenter_bits()
    }

    /// The epoch, in Unix milliseconds.
    pub fn epoch_millis(&self) -> u64 {
        self.0.epoch_millis()
    }

    /// The length of a tick, in milliseconds.
    pub fn tick_millis(&self) -> u64 {
        self.0.tick_millis()
    }

    /// The largest whole worker id.
    pub fn max_worker(&self) -> u64 {
        self.0.max_worker()
    }

    /// The largest sequence number.
    pub fn max_sequence(&self) -> u64 {
        self.0.max_sequence()
    }

    /// The largest ID the layout can hold.
    pub fn max_id(&self) -> u64 {
        self.0.max_id().get()
    }

    /// Whether every ID is below 2^53 (exact in a JavaScript number).
    pub fn is_js_safe(&self) -> bool {
        self.0.is_js_safe()
    }

    /// How long the time field lasts from the epoch, in milliseconds.
    pub fn lifetime_millis(&self) -> u64 {
        self.0.lifetime_millis()
    }

    /// The Unix millisecond at which the time field runs out.
    pub fn expires_at_unix_millis(&self) -> u64 {
        self.0.expires_at_unix_millis()
    }

    /// Milliseconds left at `now_unix_millis` before the time field runs out.
    pub fn remaining_millis(&self, now_unix_millis: u64) -> u64 {
        self.0.remaining_millis(now_unix_millis)
    }

    /// The whole worker field for `worker` within `datacenter`.
    ///
    /// Fails with `snowflake.worker_out_of_range`.
    pub fn worker_id(&self, datacenter: u64, worker: u64) -> Result<u64, MintidError> {
        Ok(self.0.worker_id(datacenter, worker)?)
    }

    /// Splits a whole worker field into datacenter and worker.
    pub fn split_worker_id(&self, worker_id: u64) -> SnowflakeWorkerSplit {
        let (datacenter, worker) = self.0.split_worker_id(worker_id);
        SnowflakeWorkerSplit { datacenter, worker }
    }

    /// The ID of `sequence` from `worker` in the tick containing `unix_millis`.
    ///
    /// Fails with `snowflake.time_out_of_range`, `snowflake.worker_out_of_range`
    /// or `snowflake.sequence_out_of_range`.
    pub fn compose(
        &self,
        unix_millis: u64,
        worker: u64,
        sequence: u64,
    ) -> Result<u64, MintidError> {
        Ok(self.0.compose(unix_millis, worker, sequence)?.get())
    }

    /// The ID of `sequence` from `worker` in tick `tick` since the epoch.
    ///
    /// Fails as [`compose`](Self::compose) does.
    pub fn compose_tick(&self, tick: u64, worker: u64, sequence: u64) -> Result<u64, MintidError> {
        Ok(self.0.compose_tick(tick, worker, sequence)?.get())
    }

    /// The fields of an ID.
    ///
    /// Fails with `snowflake.id_out_of_range`.
    pub fn decode(&self, id_value: u64) -> Result<SnowflakeParts, MintidError> {
        Ok(self.0.decode(id(id_value)?)?.into())
    }
}

/// The names of the preset layouts.
#[uniffi::export]
pub fn snowflake_preset_names() -> Vec<String> {
    mintid::SnowflakeLayout::PRESETS
        .iter()
        .map(|(name, _)| (*name).to_owned())
        .collect()
}

/// Reads an ID written in decimal digits.
///
/// Fails with `snowflake.invalid_text` or `snowflake.id_out_of_range`.
#[uniffi::export]
pub fn snowflake_id_from_decimal(text: String) -> Result<u64, MintidError> {
    Ok(SnowflakeId::from_decimal(&text)?.get())
}

/// Reads an ID written as 13 Crockford base32 digits.
///
/// Fails with `snowflake.invalid_text` or `snowflake.id_out_of_range`.
#[uniffi::export]
pub fn snowflake_id_from_base32(text: String) -> Result<u64, MintidError> {
    Ok(SnowflakeId::from_base32(&text)?.get())
}

/// Writes an ID as 13 Crockford base32 digits.
///
/// Fails with `snowflake.id_out_of_range`.
#[uniffi::export]
pub fn snowflake_id_to_base32(id_value: u64) -> Result<String, MintidError> {
    Ok(id(id_value)?.to_base32())
}

/// What a generator does when a tick's sequence numbers are used up (the
/// core's `SequencePolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SequencePolicy {
    /// Wait for the clock to reach the next tick.
    Wait,
    /// Issue from following ticks, at most `max_ticks` ahead of the clock.
    BorrowAhead {
        /// How many ticks IDs may run ahead of the clock.
        max_ticks: u64,
    },
}

impl From<SequencePolicy> for mintid::SequencePolicy {
    fn from(policy: SequencePolicy) -> Self {
        match policy {
            SequencePolicy::Wait => Self::Wait,
            SequencePolicy::BorrowAhead { max_ticks } => Self::BorrowAhead { max_ticks },
        }
    }
}

impl From<mintid::SequencePolicy> for SequencePolicy {
    fn from(policy: mintid::SequencePolicy) -> Self {
        match policy {
            mintid::SequencePolicy::Wait => Self::Wait,
            mintid::SequencePolicy::BorrowAhead { max_ticks } => Self::BorrowAhead { max_ticks },
        }
    }
}

/// A Snowflake generator for one worker, shared between threads (the core's
/// `Snowflake`): every ID is unique and greater than every ID it issued before.
#[derive(Debug, uniffi::Object)]
pub struct Snowflake(mintid::Snowflake<HostClock>);

#[uniffi::export]
impl Snowflake {
    /// A generator for `worker` on the system clock (or a test `clock`),
    /// with the core's defaults unless given: rollback wait 5 ms, sequence
    /// wait, no starting point.
    ///
    /// Fails with `snowflake.worker_out_of_range`, `snowflake.id_out_of_range`
    /// or `snowflake.time_exhausted`.
    #[uniffi::constructor(default(
        rollback = None,
        sequence = None,
        starting_after_id = None,
        starting_after_unix_millis = None,
        clock = None
    ))]
    pub fn new(
        layout: Arc<SnowflakeLayout>,
        worker: u64,
        rollback: Option<RollbackPolicy>,
        sequence: Option<SequencePolicy>,
        starting_after_id: Option<u64>,
        starting_after_unix_millis: Option<u64>,
        clock: Option<Arc<ManualClock>>,
    ) -> Result<Arc<Self>, MintidError> {
        let mut builder =
            mintid::Snowflake::builder(layout.0, worker, HostClock::from_option(clock));
        if let Some(policy) = rollback {
            builder = builder.rollback(policy.into());
        }
        if let Some(policy) = sequence {
            builder = builder.sequence_policy(policy.into());
        }
        if let Some(after) = starting_after_id {
            builder = builder.starting_after_id(id(after)?);
        }
        if let Some(unix_millis) = starting_after_unix_millis {
            builder = builder.starting_after_unix_millis(unix_millis);
        }
        Ok(Arc::new(Self(builder.build()?)))
    }

    /// The next ID.
    ///
    /// Fails with `snowflake.epoch_in_future`, `snowflake.clock_rolled_back`,
    /// `snowflake.time_exhausted` or `snowflake.wait_exceeded`.
    pub fn next_id(&self) -> Result<u64, MintidError> {
        Ok(self.0.next_id()?.get())
    }

    /// `count` (at most [`MAX_BATCH`](crate::MAX_BATCH)) new consecutive IDs,
    /// 8 bytes each, most significant first.
    ///
    /// Fails with `argument.batch_too_large` or as [`next_id`](Self::next_id)
    /// does; the IDs of a failed call are lost, never issued twice.
    pub fn next_bytes(&self, count: u32) -> Result<IdBytes, MintidError> {
        IdBytes::from_u64s(&self.fill(count)?)
    }

    /// A batch for a host's ID buffer (the core's rule, `mintid::id_buffer`):
    /// after a batch that handed out `handed_out` IDs, the next one, sized by
    /// the rule, as an 8-byte header (the last Unix millisecond at which its
    /// IDs may be handed out) and then the IDs, 8 little-endian bytes each.
    ///
    /// Fails as [`next_id`](Self::next_id) does.
    pub fn next_batch(&self, handed_out: u32) -> Result<IdBytes, MintidError> {
        let (fresh, ids) = self.batch(handed_out)?;
        IdBytes::from_u64s_after(fresh, &ids)
    }

    /// The highest ID issued (or started after), if any.
    pub fn high_water(&self) -> Option<u64> {
        self.0.high_water().map(SnowflakeId::get)
    }

    /// The Unix millisecond at which the tick of [`high_water`](Self::high_water) starts.
    pub fn high_water_unix_millis(&self) -> Option<u64> {
        self.0.high_water_unix_millis()
    }

    /// The layout of the IDs.
    pub fn layout(&self) -> Arc<SnowflakeLayout> {
        Arc::new(SnowflakeLayout::from_core(*self.0.layout()))
    }

    /// The worker id in every ID.
    pub fn worker(&self) -> u64 {
        self.0.worker()
    }

    /// The clock rollback policy.
    pub fn rollback_policy(&self) -> RollbackPolicy {
        self.0.rollback_policy().into()
    }

    /// The policy for a used-up sequence.
    pub fn sequence_policy(&self) -> SequencePolicy {
        self.0.sequence_policy().into()
    }
}

impl Snowflake {
    /// A batch sized by the ID buffer rule after one that handed out
    /// `handed_out` IDs, and the last Unix millisecond at which it is fresh.
    pub(crate) fn batch(&self, handed_out: u32) -> Result<(u64, Vec<u64>), MintidError> {
        let layout = *self.0.layout();
        let cap = mintid::id_buffer::batch_cap(layout.ids_per_tick());
        let size = mintid::id_buffer::next_batch_size(handed_out.into(), cap);
        let ids = self.fill(size)?;
        let first = layout.decode(id(ids[0])?)?;
        let fresh = mintid::id_buffer::fresh_until_millis(first.unix_millis, layout.tick_millis());
        Ok((fresh, ids))
    }

    /// `count` new consecutive IDs, as [`next_bytes`](Self::next_bytes) makes them.
    pub(crate) fn fill(&self, count: u32) -> Result<Vec<u64>, MintidError> {
        let mut ids = vec![0u64; batch_len(count)?];
        self.0.fill(&mut ids)?;
        Ok(ids)
    }
}
