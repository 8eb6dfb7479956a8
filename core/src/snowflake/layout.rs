//! How the 63 usable bits of an ID are split, and what they mean.

use super::error::{Detail, LayoutProblem, SnowflakeError};
use super::id::SnowflakeId;

/// The bit layout of a Snowflake ID: from the most significant end, a sign
/// bit that is always 0, then `time_bits` of ticks since the epoch,
/// `worker_bits` of worker id (optionally split into datacenter and worker),
/// and `sequence_bits` of sequence number within the tick. Bits left over
/// when the fields add up to less than 63 are zero high bits, which keeps the
/// IDs small (see [`JS_SAFE`](Self::JS_SAFE)).
///
/// A tick is `tick_millis` milliseconds long (1 by default, 10 for a
/// Sonyflake-like layout); the epoch is a Unix time in milliseconds.
///
/// Construct one with [`new`](Self::new), or take a preset
/// ([`CLASSIC`](Self::CLASSIC), [`TWITTER`](Self::TWITTER),
/// [`DATACENTER_WORKER`](Self::DATACENTER_WORKER),
/// [`SONYFLAKE_LIKE`](Self::SONYFLAKE_LIKE), [`JS_SAFE`](Self::JS_SAFE)) or
/// look one up by name with [`preset`](Self::preset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SnowflakeLayout {
    time_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    datacenter_bits: u8,
    epoch_millis: u64,
    tick_millis: u64,
}

/// The fields of a decoded ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The largest value of a field `bits` wide (`bits` ≤ 63).
const fn field_max(bits: u8) -> u64 {
    (1u64 << bits) - 1
}

impl SnowflakeLayout {
    /// A layout with the given field widths, epoch (Unix ms) and tick length (ms).
    ///
    /// Fails with `snowflake.invalid_layout` unless `time_bits` and
    /// `sequence_bits` are at least 1, the three widths add up to at most 63,
    /// `tick_millis` is at least 1, and the end of the time field
    /// (`epoch_millis + 2^time_bits × tick_millis`) fits in a `u64`. `worker_bits` may
    /// be 0 (a single generator).
    pub fn new(
        time_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        epoch_millis: u64,
        tick_millis: u64,
    ) -> Result<Self, SnowflakeError> {
        let invalid = |problem| Err(SnowflakeError::new(Detail::InvalidLayout(problem)));
        let total = u32::from(time_bits) + u32::from(worker_bits) + u32::from(sequence_bits);
        if time_bits == 0 {
            return invalid(LayoutProblem::NoTimeBits);
        }
        if sequence_bits == 0 {
            return invalid(LayoutProblem::NoSequenceBits);
        }
        if total > 63 {
            return invalid(LayoutProblem::TooWide { total });
        }
        if tick_millis == 0 {
            return invalid(LayoutProblem::ZeroTick);
        }
        let end = (1u64 << time_bits)
            .checked_mul(tick_millis)
            .and_then(|lifetime| lifetime.checked_add(epoch_millis));
        if end.is_none() {
            return invalid(LayoutProblem::EndPastU64 { epoch_millis });
        }
        Ok(Self::unchecked(
            time_bits,
            worker_bits,
            sequence_bits,
            0,
            epoch_millis,
            tick_millis,
        ))
    }

    /// Builds a layout without validation: for the presets, which tests check.
    pub(super) const fn unchecked(
        time_bits: u8,
        worker_bits: u8,
        sequence_bits: u8,
        datacenter_bits: u8,
        epoch_millis: u64,
        tick_millis: u64,
    ) -> Self {
        Self {
            time_bits,
            worker_bits,
            sequence_bits,
            datacenter_bits,
            epoch_millis,
            tick_millis,
        }
    }

    /// The same layout with the top `datacenter_bits` of the worker field
    /// read as a datacenter id (Twitter's and Hutool's 5 + 5 split). Only
    /// [`worker_id`](Self::worker_id) and
    /// [`split_worker_id`](Self::split_worker_id) look at the split; the IDs
    /// are the same.
    ///
    /// Fails with `snowflake.invalid_layout` when `datacenter_bits` exceeds
    /// the worker bits.
    pub fn with_datacenter_bits(self, datacenter_bits: u8) -> Result<Self, SnowflakeError> {
        if datacenter_bits > self.worker_bits {
            return Err(SnowflakeError::new(Detail::InvalidLayout(
                LayoutProblem::DatacenterWiderThanWorker {
                    datacenter_bits,
                    worker_bits: self.worker_bits,
                },
            )));
        }
        Ok(Self {
            datacenter_bits,
            ..self
        })
    }

    /// The same layout with another epoch (Unix ms), validated as in [`new`](Self::new).
    pub fn with_epoch_millis(self, epoch_millis: u64) -> Result<Self, SnowflakeError> {
        Self::new(
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            epoch_millis,
            self.tick_millis,
        )?
        .with_datacenter_bits(self.datacenter_bits)
    }

    /// Width of the time field.
    pub const fn time_bits(&self) -> u8 {
        self.time_bits
    }

    /// Width of the worker field (datacenter bits included).
    pub const fn worker_bits(&self) -> u8 {
        self.worker_bits
    }

    /// Width of the sequence field.
    pub const fn sequence_bits(&self) -> u8 {
        self.sequence_bits
    }

    /// How many of the worker bits (the top ones) are a datacenter id; 0 when
    /// the worker field is not split.
    pub const fn datacenter_bits(&self) -> u8 {
        self.datacenter_bits
    }

    /// The epoch: the Unix millisecond of tick 0.
    pub const fn epoch_millis(&self) -> u64 {
        self.epoch_millis
    }

    /// The length of one tick in milliseconds.
    pub const fn tick_millis(&self) -> u64 {
        self.tick_millis
    }

    /// The largest tick the time field holds: 2^time_bits − 1.
    pub const fn max_tick(&self) -> u64 {
        field_max(self.time_bits)
    }

    /// The largest worker id: 2^worker_bits − 1.
    pub const fn max_worker(&self) -> u64 {
        field_max(self.worker_bits)
    }

    /// The largest sequence number: 2^sequence_bits − 1.
    pub const fn max_sequence(&self) -> u64 {
        field_max(self.sequence_bits)
    }

    /// How many IDs one worker can issue per tick: 2^sequence_bits.
    pub const fn ids_per_tick(&self) -> u64 {
        1 << self.sequence_bits
    }

    /// The largest ID of this layout: 2^(time + worker + sequence bits) − 1.
    pub const fn max_id(&self) -> SnowflakeId {
        SnowflakeId::from_checked(field_max(
            self.time_bits + self.worker_bits + self.sequence_bits,
        ))
    }

    /// Whether every ID is below 2^53, so a JavaScript `Number` (or a JSON
    /// number read by JavaScript) holds it exactly.
    pub const fn is_js_safe(&self) -> bool {
        self.time_bits + self.worker_bits + self.sequence_bits <= 53
    }

    /// How long the time field lasts from the epoch: 2^time_bits × tick_millis
    /// milliseconds.
    pub const fn lifetime_millis(&self) -> u64 {
        (1u64 << self.time_bits) * self.tick_millis
    }

    /// The first Unix millisecond the layout cannot represent:
    /// `epoch_millis + lifetime_millis()`. From then on a generator fails with
    /// `snowflake.time_exhausted`.
    pub const fn expires_at_unix_millis(&self) -> u64 {
        self.epoch_millis + self.lifetime_millis()
    }

    /// Milliseconds left at `now_unix_millis` before the time field runs out
    /// (0 once it has).
    pub const fn remaining_millis(&self, now_unix_millis: u64) -> u64 {
        self.expires_at_unix_millis()
            .saturating_sub(now_unix_millis)
    }

    /// The tick containing `unix_millis`.
    ///
    /// Fails with `snowflake.time_out_of_range` before the epoch or from
    /// [`expires_at_unix_millis`](Self::expires_at_unix_millis) on.
    pub fn tick_at(&self, unix_millis: u64) -> Result<u64, SnowflakeError> {
        let Some(since_epoch) = unix_millis.checked_sub(self.epoch_millis) else {
            return Err(SnowflakeError::new(Detail::TimeBeforeEpoch {
                unix_millis,
                epoch_millis: self.epoch_millis,
            }));
        };
        let tick = self.ticks_in(since_epoch);
        if tick > self.max_tick() {
            return Err(SnowflakeError::new(Detail::TimeAfterEnd {
                unix_millis,
                end_millis: self.expires_at_unix_millis(),
            }));
        }
        Ok(tick)
    }

    /// Whole ticks in `millis` (the division is skipped for 1 ms ticks, the
    /// generator's hot path).
    pub(super) const fn ticks_in(&self, millis: u64) -> u64 {
        if self.tick_millis == 1 {
            millis
        } else {
            millis / self.tick_millis
        }
    }

    /// The Unix millisecond a tick starts at. `tick` must be at most
    /// [`max_tick`](Self::max_tick) (or one past it), which keeps the sum
    /// within the range [`new`](Self::new) checked.
    pub(super) const fn unix_ms_of_tick(&self, tick: u64) -> u64 {
        self.epoch_millis + tick * self.tick_millis
    }

    /// Joins a datacenter id and a worker id within it into the whole worker
    /// field: `datacenter << (worker_bits − datacenter_bits) | worker`.
    ///
    /// Fails with `snowflake.worker_out_of_range` when either does not fit.
    pub fn worker_id(&self, datacenter: u64, worker: u64) -> Result<u64, SnowflakeError> {
        let low_bits = self.worker_bits - self.datacenter_bits;
        let out_of_range = |field, value, max| {
            Err(SnowflakeError::new(Detail::WorkerOutOfRange {
                field,
                value,
                max,
            }))
        };
        if datacenter > field_max(self.datacenter_bits) {
            return out_of_range("datacenter", datacenter, field_max(self.datacenter_bits));
        }
        if worker > field_max(low_bits) {
            return out_of_range("worker", worker, field_max(low_bits));
        }
        Ok((datacenter << low_bits) | worker)
    }

    /// Splits a whole worker field into `(datacenter, worker)`; the inverse of
    /// [`worker_id`](Self::worker_id). Bits above the worker field are ignored.
    pub const fn split_worker_id(&self, worker_id: u64) -> (u64, u64) {
        let low_bits = self.worker_bits - self.datacenter_bits;
        let worker_id = worker_id & self.max_worker();
        (worker_id >> low_bits, worker_id & field_max(low_bits))
    }

    /// Checks a whole worker id against the worker field.
    pub(super) fn check_worker(&self, worker: u64) -> Result<(), SnowflakeError> {
        if worker > self.max_worker() {
            return Err(SnowflakeError::new(Detail::WorkerOutOfRange {
                field: "worker",
                value: worker,
                max: self.max_worker(),
            }));
        }
        Ok(())
    }

    /// The ID of `sequence` from `worker` in the tick containing `unix_millis`
    /// (a time inside a tick is rounded down to the tick's start).
    ///
    /// Fails with `snowflake.time_out_of_range`,
    /// `snowflake.worker_out_of_range` or `snowflake.sequence_out_of_range`.
    pub fn compose(
        &self,
        unix_millis: u64,
        worker: u64,
        sequence: u64,
    ) -> Result<SnowflakeId, SnowflakeError> {
        self.compose_tick(self.tick_at(unix_millis)?, worker, sequence)
    }

    /// The ID of `sequence` from `worker` in tick `tick` since the epoch.
    ///
    /// Fails with `snowflake.time_out_of_range`,
    /// `snowflake.worker_out_of_range` or `snowflake.sequence_out_of_range`.
    pub fn compose_tick(
        &self,
        tick: u64,
        worker: u64,
        sequence: u64,
    ) -> Result<SnowflakeId, SnowflakeError> {
        if tick > self.max_tick() {
            return Err(SnowflakeError::new(Detail::TickOutOfRange {
                tick,
                max: self.max_tick(),
            }));
        }
        self.check_worker(worker)?;
        if sequence > self.max_sequence() {
            return Err(SnowflakeError::new(Detail::SequenceOutOfRange {
                value: sequence,
                max: self.max_sequence(),
            }));
        }
        let slot = (tick << self.sequence_bits) | sequence;
        Ok(self.id_of_slot(slot, worker << self.sequence_bits))
    }

    /// The ID of a generator slot (`tick << sequence_bits | sequence`) with
    /// the worker field already shifted into place. Both must be in range.
    pub(super) const fn id_of_slot(&self, slot: u64, shifted_worker: u64) -> SnowflakeId {
        let sequence_mask = self.max_sequence();
        SnowflakeId::from_checked(
            ((slot & !sequence_mask) << self.worker_bits) | shifted_worker | (slot & sequence_mask),
        )
    }

    /// The fields of `id`.
    ///
    /// Fails with `snowflake.id_out_of_range` when the ID has bits above the
    /// layout's fields (for a 63-bit layout every [`SnowflakeId`] fits).
    pub fn decode(&self, id: SnowflakeId) -> Result<SnowflakeParts, SnowflakeError> {
        let value = id.get();
        if value > self.max_id().get() {
            return Err(SnowflakeError::new(Detail::IdOutOfRange {
                id: Some(value),
                max: self.max_id().get(),
            }));
        }
        let tick = value >> (self.worker_bits + self.sequence_bits);
        Ok(SnowflakeParts {
            unix_millis: self.unix_ms_of_tick(tick),
            tick,
            worker: (value >> self.sequence_bits) & self.max_worker(),
            sequence: value & self.max_sequence(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn invalid(result: Result<SnowflakeLayout, SnowflakeError>) -> bool {
        result.is_err_and(|e| e.code() == "snowflake.invalid_layout")
    }

    #[test]
    fn validation() {
        assert!(SnowflakeLayout::new(41, 10, 12, 0, 1).is_ok());
        assert!(SnowflakeLayout::new(62, 0, 1, 0, 1).is_ok());
        assert!(invalid(SnowflakeLayout::new(0, 10, 12, 0, 1)));
        assert!(invalid(SnowflakeLayout::new(41, 10, 0, 0, 1)));
        assert!(invalid(SnowflakeLayout::new(41, 11, 12, 0, 1)));
        assert!(invalid(SnowflakeLayout::new(255, 255, 255, 0, 1)));
        assert!(invalid(SnowflakeLayout::new(41, 10, 12, 0, 0)));
        assert!(invalid(SnowflakeLayout::new(62, 0, 1, 0, 4)));
        assert!(invalid(SnowflakeLayout::new(41, 10, 12, u64::MAX - 10, 1)));
        let layout = SnowflakeLayout::new(41, 10, 12, 0, 1).unwrap();
        assert!(invalid(layout.with_datacenter_bits(11)));
        assert_eq!(
            layout.with_datacenter_bits(10).unwrap().datacenter_bits(),
            10
        );
        assert!(invalid(layout.with_epoch_millis(u64::MAX)));
    }

    #[test]
    fn classic_fields() {
        let layout = SnowflakeLayout::new(41, 10, 12, 1_000, 1).unwrap();
        let id = layout.compose(1_000 + 5, 3, 7).unwrap();
        assert_eq!(id.get(), (5 << 22) | (3 << 12) | 7);
        assert_eq!(
            layout.decode(id),
            Ok(SnowflakeParts {
                unix_millis: 1_005,
                tick: 5,
                worker: 3,
                sequence: 7
            })
        );
        assert_eq!(layout.max_id(), SnowflakeId::MAX);
        assert_eq!(layout.lifetime_millis(), 1 << 41);
        assert_eq!(layout.remaining_millis(1_000), 1 << 41);
        assert_eq!(layout.remaining_millis(u64::MAX), 0);
    }

    #[test]
    fn coarse_ticks_round_down() {
        let layout = SnowflakeLayout::new(39, 16, 8, 100, 10).unwrap();
        let id = layout.compose(100 + 129, 1, 2).unwrap();
        let parts = layout.decode(id).unwrap();
        assert_eq!((parts.tick, parts.unix_millis), (12, 220));
    }

    #[test]
    fn out_of_range_inputs() {
        let layout = SnowflakeLayout::new(3, 2, 2, 1_000, 1).unwrap();
        let code = |r: Result<SnowflakeId, SnowflakeError>| r.unwrap_err().code();
        assert_eq!(
            code(layout.compose(999, 0, 0)),
            "snowflake.time_out_of_range"
        );
        assert_eq!(
            code(layout.compose(1_008, 0, 0)),
            "snowflake.time_out_of_range"
        );
        assert_eq!(
            code(layout.compose_tick(8, 0, 0)),
            "snowflake.time_out_of_range"
        );
        assert_eq!(
            code(layout.compose(1_007, 4, 0)),
            "snowflake.worker_out_of_range"
        );
        assert_eq!(
            code(layout.compose(1_007, 0, 4)),
            "snowflake.sequence_out_of_range"
        );
        assert_eq!(layout.compose(1_007, 3, 3).unwrap().get(), 127);
        let too_big = SnowflakeId::new(128).unwrap();
        assert_eq!(
            layout.decode(too_big).unwrap_err().code(),
            "snowflake.id_out_of_range"
        );
    }

    #[test]
    fn datacenter_split() {
        let layout = SnowflakeLayout::new(41, 10, 12, 0, 1)
            .unwrap()
            .with_datacenter_bits(5)
            .unwrap();
        assert_eq!(layout.worker_id(31, 31), Ok(1023));
        assert_eq!(layout.worker_id(2, 3), Ok(67));
        assert_eq!(layout.split_worker_id(67), (2, 3));
        let error = layout.worker_id(32, 0).unwrap_err();
        assert_eq!(error.code(), "snowflake.worker_out_of_range");
        assert!(alloc::string::ToString::to_string(&error).starts_with("datacenter 32"));
        assert_eq!(
            layout.worker_id(0, 32).unwrap_err().code(),
            "snowflake.worker_out_of_range"
        );
    }

    fn layouts() -> impl Strategy<Value = SnowflakeLayout> {
        (1u8..=61, 0u8..=20, 1u8..=20, 0u64..=1 << 42, 1u64..=1000)
            .prop_filter_map("valid layouts only", |(t, w, s, epoch, tick)| {
                SnowflakeLayout::new(t, w, s, epoch, tick).ok()
            })
    }

    proptest! {
        #[test]
        fn compose_decode_round_trip(layout in layouts(), tick: u64, worker: u64, sequence: u64) {
            let tick = tick & layout.max_tick();
            let worker = worker & layout.max_worker();
            let sequence = sequence & layout.max_sequence();
            let id = layout.compose_tick(tick, worker, sequence).unwrap();
            let parts = layout.decode(id).unwrap();
            prop_assert_eq!((parts.tick, parts.worker, parts.sequence), (tick, worker, sequence));
            prop_assert_eq!(layout.compose(parts.unix_millis, worker, sequence), Ok(id));
            prop_assert!(id <= layout.max_id());
        }

        #[test]
        fn ids_order_by_time_first(layout in layouts(), a: (u64, u64, u64), b: (u64, u64, u64)) {
            let mask = |(t, w, s): (u64, u64, u64)| {
                (t & layout.max_tick(), w & layout.max_worker(), s & layout.max_sequence())
            };
            let (a, b) = (mask(a), mask(b));
            let id = |(t, w, s)| layout.compose_tick(t, w, s).unwrap();
            prop_assert_eq!(id(a).cmp(&id(b)), a.cmp(&b));
        }
    }
}
