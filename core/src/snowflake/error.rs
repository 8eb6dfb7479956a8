//! The one error type of the Snowflake module.

use alloc::string::String;
use core::fmt;

use super::layout::SnowflakeLayout;
use crate::base32::Base32Error;
use crate::quote::{QuotedChar, QuotedStr};

/// What went wrong, as a stable category. Hosts map each kind to an
/// exception or error class; [`code`](Self::code) names it in the shared
/// vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SnowflakeErrorKind {
    /// The bit counts, tick or epoch do not make a usable layout.
    InvalidLayout,
    /// No preset has the given name.
    UnknownPreset,
    /// A worker (or datacenter) id does not fit its field.
    WorkerOutOfRange,
    /// A sequence number does not fit its field.
    SequenceOutOfRange,
    /// A time (or tick) given to compose lies before the epoch or past the
    /// end of the layout.
    TimeOutOfRange,
    /// An ID has the sign bit set or bits the layout does not have.
    IdOutOfRange,
    /// The text of an ID is not decimal or 13-character Crockford base32.
    InvalidText,
    /// The clock reads a time before the layout's epoch.
    EpochInFuture,
    /// The clock went back further than the rollback policy tolerates.
    ClockRolledBack,
    /// The layout's time field has run out: no more IDs can be issued.
    TimeExhausted,
    /// The generator paused for as long as it may and the clock still had not
    /// reached the time it waited for.
    WaitExceeded,
}

impl SnowflakeErrorKind {
    /// The stable dotted code of this kind, e.g. `"snowflake.worker_out_of_range"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidLayout => "snowflake.invalid_layout",
            Self::UnknownPreset => "snowflake.unknown_preset",
            Self::WorkerOutOfRange => "snowflake.worker_out_of_range",
            Self::SequenceOutOfRange => "snowflake.sequence_out_of_range",
            Self::TimeOutOfRange => "snowflake.time_out_of_range",
            Self::IdOutOfRange => "snowflake.id_out_of_range",
            Self::InvalidText => "snowflake.invalid_text",
            Self::EpochInFuture => "snowflake.epoch_in_future",
            Self::ClockRolledBack => "snowflake.clock_rolled_back",
            Self::TimeExhausted => "snowflake.time_exhausted",
            Self::WaitExceeded => "snowflake.wait_exceeded",
        }
    }
}

/// An error from a Snowflake layout, ID or generator.
///
/// Opaque by design: ask [`kind`](Self::kind) or [`code`](Self::code) what
/// happened; [`Display`](fmt::Display) says it in one line with the values
/// involved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnowflakeError(Detail);

/// Why a layout was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayoutProblem {
    NoTimeBits,
    NoSequenceBits,
    TooWide {
        total: u32,
    },
    DatacenterWiderThanWorker {
        datacenter_bits: u8,
        worker_bits: u8,
    },
    ZeroTick,
    EndPastU64 {
        epoch_millis: u64,
    },
}

/// Which text form failed to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextProblem {
    EmptyDecimal,
    DecimalCharacter { byte: u8, position: usize },
    Base32(Base32Error),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Detail {
    InvalidLayout(LayoutProblem),
    UnknownPreset(String),
    WorkerOutOfRange {
        field: &'static str,
        value: u64,
        max: u64,
    },
    SequenceOutOfRange {
        value: u64,
        max: u64,
    },
    TimeBeforeEpoch {
        unix_millis: u64,
        epoch_millis: u64,
    },
    TimeAfterEnd {
        unix_millis: u64,
        end_millis: u64,
    },
    TickOutOfRange {
        tick: u64,
        max: u64,
    },
    /// `id` is `None` when the value does not even fit 64 bits.
    IdOutOfRange {
        id: Option<u64>,
        max: u64,
    },
    InvalidText(TextProblem),
    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the generator reports it
    EpochInFuture {
        now_millis: u64,
        epoch_millis: u64,
    },
    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the generator reports it
    ClockRolledBack {
        behind_millis: u64,
        tolerance_millis: u64,
    },
    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the generator reports it
    TimeExhausted {
        end_millis: u64,
    },
    #[cfg_attr(not(target_has_atomic = "64"), allow(dead_code))] // only the generator reports it
    WaitExceeded {
        paused_micros: u64,
        target_millis: u64,
        now_millis: u64,
    },
}

impl SnowflakeError {
    pub(crate) const fn new(detail: Detail) -> Self {
        Self(detail)
    }

    /// The category of this error.
    pub fn kind(&self) -> SnowflakeErrorKind {
        use SnowflakeErrorKind as K;
        match &self.0 {
            Detail::InvalidLayout(_) => K::InvalidLayout,
            Detail::UnknownPreset(_) => K::UnknownPreset,
            Detail::WorkerOutOfRange { .. } => K::WorkerOutOfRange,
            Detail::SequenceOutOfRange { .. } => K::SequenceOutOfRange,
            Detail::TimeBeforeEpoch { .. }
            | Detail::TimeAfterEnd { .. }
            | Detail::TickOutOfRange { .. } => K::TimeOutOfRange,
            Detail::IdOutOfRange { .. } => K::IdOutOfRange,
            Detail::InvalidText(_) => K::InvalidText,
            Detail::EpochInFuture { .. } => K::EpochInFuture,
            Detail::ClockRolledBack { .. } => K::ClockRolledBack,
            Detail::TimeExhausted { .. } => K::TimeExhausted,
            Detail::WaitExceeded { .. } => K::WaitExceeded,
        }
    }

    /// The stable dotted code of this error, e.g. `"snowflake.clock_rolled_back"`.
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for LayoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NoTimeBits => f.write_str("the time field needs at least 1 bit"),
            Self::NoSequenceBits => f.write_str("the sequence field needs at least 1 bit"),
            Self::TooWide { total } => write!(
                f,
                "time, worker and sequence bits add up to {total}; at most 63 fit beside the sign bit"
            ),
            Self::DatacenterWiderThanWorker {
                datacenter_bits,
                worker_bits,
            } => write!(
                f,
                "{datacenter_bits} datacenter bits do not fit in {worker_bits} worker bits"
            ),
            Self::ZeroTick => f.write_str("the tick must be at least 1 ms"),
            Self::EndPastU64 { epoch_millis } => write!(
                f,
                "with epoch {epoch_millis} the time field would end past the largest 64-bit Unix millisecond"
            ),
        }
    }
}

impl fmt::Display for SnowflakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Detail::InvalidLayout(problem) => write!(f, "invalid Snowflake layout: {problem}"),
            Detail::UnknownPreset(name) => {
                write!(
                    f,
                    "unknown Snowflake layout preset {} (known:",
                    QuotedStr(name)
                )?;
                for (known, _) in SnowflakeLayout::PRESETS {
                    write!(f, " {known}")?;
                }
                f.write_str(")")
            }
            Detail::WorkerOutOfRange { field, value, max } => {
                write!(f, "{field} {value} is out of range 0..={max}")
            }
            Detail::SequenceOutOfRange { value, max } => {
                write!(f, "sequence {value} is out of range 0..={max}")
            }
            Detail::TimeBeforeEpoch {
                unix_millis,
                epoch_millis,
            } => write!(
                f,
                "time {unix_millis} ms lies before the layout's epoch {epoch_millis} ms"
            ),
            Detail::TimeAfterEnd {
                unix_millis,
                end_millis,
            } => write!(
                f,
                "time {unix_millis} ms lies past the end of the layout's time field ({end_millis} ms)"
            ),
            Detail::TickOutOfRange { tick, max } => {
                write!(f, "tick {tick} is out of range 0..={max}")
            }
            Detail::IdOutOfRange { id: Some(id), max } => {
                write!(
                    f,
                    "ID {id} is out of range: the layout's largest ID is {max}"
                )
            }
            Detail::IdOutOfRange { id: None, max } => {
                write!(
                    f,
                    "ID beyond 64 bits is out of range: the largest ID is {max}"
                )
            }
            Detail::InvalidText(TextProblem::EmptyDecimal) => {
                f.write_str("empty text is not a decimal Snowflake ID")
            }
            Detail::InvalidText(TextProblem::DecimalCharacter { byte, position })
                if byte.is_ascii_graphic() =>
            {
                write!(
                    f,
                    "invalid character {} at position {position} in a decimal Snowflake ID",
                    QuotedChar(char::from(*byte))
                )
            }
            Detail::InvalidText(TextProblem::DecimalCharacter { byte, position }) => write!(
                f,
                "invalid byte 0x{byte:02x} at position {position} in a decimal Snowflake ID"
            ),
            Detail::InvalidText(TextProblem::Base32(error)) => {
                write!(f, "invalid base32 Snowflake ID: {error}")
            }
            Detail::EpochInFuture {
                now_millis,
                epoch_millis,
            } => write!(
                f,
                "the clock reads {now_millis} ms, before the layout's epoch {epoch_millis} ms"
            ),
            Detail::ClockRolledBack {
                behind_millis,
                tolerance_millis,
            } => write!(
                f,
                "the clock is {behind_millis} ms behind the last ID issued; the rollback policy tolerates {tolerance_millis} ms"
            ),
            Detail::TimeExhausted { end_millis } => write!(
                f,
                "the layout's time field ran out at {end_millis} ms: no more IDs can be issued"
            ),
            Detail::WaitExceeded {
                paused_micros,
                target_millis,
                now_millis,
            } => write!(
                f,
                "paused {paused_micros} µs waiting for the clock to reach {target_millis} ms; it still reads {now_millis} ms"
            ),
        }
    }
}

impl core::error::Error for SnowflakeError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn codes_follow_kinds() {
        let error = SnowflakeError::new(Detail::WorkerOutOfRange {
            field: "worker",
            value: 1024,
            max: 1023,
        });
        assert_eq!(error.kind(), SnowflakeErrorKind::WorkerOutOfRange);
        assert_eq!(error.code(), "snowflake.worker_out_of_range");
        assert_eq!(error.to_string(), "worker 1024 is out of range 0..=1023");
    }

    #[test]
    fn time_problems_share_one_kind() {
        for detail in [
            Detail::TimeBeforeEpoch {
                unix_millis: 1,
                epoch_millis: 2,
            },
            Detail::TimeAfterEnd {
                unix_millis: 9,
                end_millis: 8,
            },
            Detail::TickOutOfRange { tick: 4, max: 3 },
        ] {
            assert_eq!(
                SnowflakeError::new(detail).code(),
                "snowflake.time_out_of_range"
            );
        }
    }

    #[test]
    fn messages_name_the_values() {
        let rolled = SnowflakeError::new(Detail::ClockRolledBack {
            behind_millis: 2000,
            tolerance_millis: 5,
        });
        assert!(rolled.to_string().contains("2000 ms"));
        let text = SnowflakeError::new(Detail::InvalidText(TextProblem::DecimalCharacter {
            byte: b'x',
            position: 3,
        }));
        assert!(text.to_string().contains("'x' at position 3"));
    }
}
