//! The one error type of the UUIDv7 module.

use crate::RollbackPolicy;
use crate::uuid::{UuidParseError, Variant};
use core::fmt;

/// Why a UUIDv7 could not be read, built or generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uuid7Error(Repr);

/// The kinds of [`Uuid7Error`], each with a stable [`code`](Self::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Uuid7ErrorKind {
    /// The text is not a UUID in any of the four forms (`uuid7.invalid_text`);
    /// [`source`](core::error::Error::source) is the [`UuidParseError`].
    InvalidText,
    /// A UUID of another version (`uuid7.wrong_version`).
    WrongVersion,
    /// A version 7 field but not the RFC 9562 variant (`uuid7.wrong_variant`).
    WrongVariant,
    /// A Unix millisecond timestamp above 2^48 - 1 (`uuid7.timestamp_out_of_range`).
    TimestampOutOfRange,
    /// A `rand_a` above 2^12 - 1 (`uuid7.rand_a_out_of_range`).
    RandAOutOfRange,
    /// A `rand_b` above 2^62 - 1 (`uuid7.rand_b_out_of_range`).
    RandBOutOfRange,
    /// The clock went back further, or for longer, than the generator's
    /// [`RollbackPolicy`] tolerates (`uuid7.clock_rollback`).
    ClockRollback,
    /// The 48-bit timestamp is used up: the clock reads past year 10889, or
    /// counter rollover would carry past it (`uuid7.timestamp_overflow`).
    TimestampOverflow,
    /// A byte buffer whose length is not a multiple of 16 (`uuid7.buffer_length`).
    BufferLength,
}

impl Uuid7ErrorKind {
    /// The stable dotted code every language reports for this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidText => "uuid7.invalid_text",
            Self::WrongVersion => "uuid7.wrong_version",
            Self::WrongVariant => "uuid7.wrong_variant",
            Self::TimestampOutOfRange => "uuid7.timestamp_out_of_range",
            Self::RandAOutOfRange => "uuid7.rand_a_out_of_range",
            Self::RandBOutOfRange => "uuid7.rand_b_out_of_range",
            Self::ClockRollback => "uuid7.clock_rollback",
            Self::TimestampOverflow => "uuid7.timestamp_overflow",
            Self::BufferLength => "uuid7.buffer_length",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    InvalidText(UuidParseError),
    WrongVersion {
        found: u8,
    },
    WrongVariant {
        found: Variant,
    },
    TimestampOutOfRange {
        unix_millis: u64,
    },
    RandAOutOfRange {
        rand_a: u16,
    },
    RandBOutOfRange {
        rand_b: u64,
    },
    ClockRollback {
        behind_millis: u64,
        policy: RollbackPolicy,
        waited: bool,
    },
    TimestampOverflow {
        clock_millis: u64,
    },
    BufferLength {
        len: usize,
    },
}

impl Uuid7Error {
    pub(crate) const fn invalid_text(cause: UuidParseError) -> Self {
        Self(Repr::InvalidText(cause))
    }

    pub(crate) const fn wrong_version(found: u8) -> Self {
        Self(Repr::WrongVersion { found })
    }

    pub(crate) const fn wrong_variant(found: Variant) -> Self {
        Self(Repr::WrongVariant { found })
    }

    pub(crate) const fn timestamp_out_of_range(unix_millis: u64) -> Self {
        Self(Repr::TimestampOutOfRange { unix_millis })
    }

    pub(crate) const fn rand_a_out_of_range(rand_a: u16) -> Self {
        Self(Repr::RandAOutOfRange { rand_a })
    }

    pub(crate) const fn rand_b_out_of_range(rand_b: u64) -> Self {
        Self(Repr::RandBOutOfRange { rand_b })
    }

    /// The clock reads `behind_millis` earlier than the latest reading the
    /// generator used; `waited` says whether the policy waited in vain.
    pub(crate) const fn clock_rollback(
        behind_millis: u64,
        policy: RollbackPolicy,
        waited: bool,
    ) -> Self {
        Self(Repr::ClockRollback {
            behind_millis,
            policy,
            waited,
        })
    }

    pub(crate) const fn timestamp_overflow(clock_millis: u64) -> Self {
        Self(Repr::TimestampOverflow { clock_millis })
    }

    pub(crate) const fn buffer_length(len: usize) -> Self {
        Self(Repr::BufferLength { len })
    }

    /// What kind of error this is.
    pub const fn kind(&self) -> Uuid7ErrorKind {
        match self.0 {
            Repr::InvalidText(_) => Uuid7ErrorKind::InvalidText,
            Repr::WrongVersion { .. } => Uuid7ErrorKind::WrongVersion,
            Repr::WrongVariant { .. } => Uuid7ErrorKind::WrongVariant,
            Repr::TimestampOutOfRange { .. } => Uuid7ErrorKind::TimestampOutOfRange,
            Repr::RandAOutOfRange { .. } => Uuid7ErrorKind::RandAOutOfRange,
            Repr::RandBOutOfRange { .. } => Uuid7ErrorKind::RandBOutOfRange,
            Repr::ClockRollback { .. } => Uuid7ErrorKind::ClockRollback,
            Repr::TimestampOverflow { .. } => Uuid7ErrorKind::TimestampOverflow,
            Repr::BufferLength { .. } => Uuid7ErrorKind::BufferLength,
        }
    }

    /// The stable dotted code of the kind, e.g. `uuid7.wrong_version`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

impl fmt::Display for Uuid7Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::InvalidText(cause) => write!(f, "invalid UUIDv7 text: {cause}"),
            Repr::WrongVersion { found } => write!(f, "expected version 7, found {found}"),
            Repr::WrongVariant { found } => write!(
                f,
                "expected the RFC 9562 variant (10xx), found the {found} variant"
            ),
            Repr::TimestampOutOfRange { unix_millis } => write!(
                f,
                "UUIDv7 timestamp {unix_millis} ms does not fit 48 bits (maximum {})",
                super::layout::MAX_UNIX_MS
            ),
            Repr::RandAOutOfRange { rand_a } => write!(
                f,
                "UUIDv7 rand_a {rand_a:#x} does not fit 12 bits (maximum 0xfff)"
            ),
            Repr::RandBOutOfRange { rand_b } => write!(
                f,
                "UUIDv7 rand_b {rand_b:#x} does not fit 62 bits (maximum 0x3fffffffffffffff)"
            ),
            Repr::ClockRollback {
                behind_millis,
                policy,
                waited,
            } => match policy {
                RollbackPolicy::Fail => write!(
                    f,
                    "the clock went back {behind_millis} ms and the rollback policy is Fail"
                ),
                RollbackPolicy::Wait { max_millis } if waited => write!(
                    f,
                    "the clock went back {behind_millis} ms and did not catch up within \
                     the {max_millis} ms the Wait policy allows"
                ),
                RollbackPolicy::Wait { max_millis } => write!(
                    f,
                    "the clock went back {behind_millis} ms, more than the {max_millis} ms \
                     the Wait policy waits out"
                ),
                RollbackPolicy::Logical { max_millis } => write!(
                    f,
                    "the clock went back {behind_millis} ms, more than the {max_millis} ms \
                     the Logical policy bridges"
                ),
            },
            Repr::TimestampOverflow { clock_millis } => write!(
                f,
                "the 48-bit UUIDv7 timestamp is used up (clock reads {clock_millis} ms, \
                 the last usable millisecond is {})",
                super::layout::MAX_UNIX_MS
            ),
            Repr::BufferLength { len } => write!(
                f,
                "a UUIDv7 byte buffer must hold 16 bytes per ID, but its length {len} \
                 is not a multiple of 16"
            ),
        }
    }
}

impl core::error::Error for Uuid7Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match &self.0 {
            Repr::InvalidText(cause) => Some(cause),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use core::error::Error;

    #[test]
    fn every_kind_has_its_code_and_message() {
        let cases = [
            (
                Uuid7Error::wrong_version(4),
                "uuid7.wrong_version",
                "expected version 7, found 4",
            ),
            (
                Uuid7Error::wrong_variant(Variant::Microsoft),
                "uuid7.wrong_variant",
                "expected the RFC 9562 variant (10xx), found the microsoft (110x) variant",
            ),
            (
                Uuid7Error::timestamp_out_of_range(1 << 48),
                "uuid7.timestamp_out_of_range",
                "UUIDv7 timestamp 281474976710656 ms does not fit 48 bits (maximum 281474976710655)",
            ),
            (
                Uuid7Error::rand_a_out_of_range(0x1000),
                "uuid7.rand_a_out_of_range",
                "UUIDv7 rand_a 0x1000 does not fit 12 bits (maximum 0xfff)",
            ),
            (
                Uuid7Error::rand_b_out_of_range(1 << 62),
                "uuid7.rand_b_out_of_range",
                "UUIDv7 rand_b 0x4000000000000000 does not fit 62 bits (maximum 0x3fffffffffffffff)",
            ),
            (
                Uuid7Error::clock_rollback(3, RollbackPolicy::Fail, false),
                "uuid7.clock_rollback",
                "the clock went back 3 ms and the rollback policy is Fail",
            ),
            (
                Uuid7Error::clock_rollback(3, RollbackPolicy::Wait { max_millis: 5 }, true),
                "uuid7.clock_rollback",
                "the clock went back 3 ms and did not catch up within the 5 ms the Wait policy allows",
            ),
            (
                Uuid7Error::clock_rollback(9, RollbackPolicy::Wait { max_millis: 5 }, false),
                "uuid7.clock_rollback",
                "the clock went back 9 ms, more than the 5 ms the Wait policy waits out",
            ),
            (
                Uuid7Error::clock_rollback(9, RollbackPolicy::Logical { max_millis: 5 }, false),
                "uuid7.clock_rollback",
                "the clock went back 9 ms, more than the 5 ms the Logical policy bridges",
            ),
            (
                Uuid7Error::timestamp_overflow(1 << 48),
                "uuid7.timestamp_overflow",
                "the 48-bit UUIDv7 timestamp is used up (clock reads 281474976710656 ms, \
                 the last usable millisecond is 281474976710655)",
            ),
            (
                Uuid7Error::buffer_length(17),
                "uuid7.buffer_length",
                "a UUIDv7 byte buffer must hold 16 bytes per ID, but its length 17 is not a multiple of 16",
            ),
        ];
        for (err, code, message) in cases {
            assert_eq!(err.code(), code);
            assert_eq!(err.kind().code(), code);
            assert_eq!(err.to_string(), message);
            assert!(err.source().is_none());
        }
    }

    #[test]
    fn invalid_text_keeps_its_cause() {
        let cause = crate::uuid::Uuid::parse("xyz").unwrap_err();
        let err = Uuid7Error::invalid_text(cause);
        assert_eq!(err.code(), "uuid7.invalid_text");
        assert_eq!(
            err.to_string(),
            alloc::format!("invalid UUIDv7 text: {cause}")
        );
        assert_eq!(
            err.source().map(ToString::to_string),
            Some(cause.to_string())
        );
    }
}
