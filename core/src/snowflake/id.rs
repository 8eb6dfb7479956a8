//! The Snowflake ID value and its text forms.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

use super::error::{Detail, SnowflakeError, TextProblem};
use crate::base32::{self, Base32Error};

/// A 64-bit Snowflake ID whose sign bit is 0, so it is also a positive `i64`
/// (a SQL `BIGINT`).
///
/// The value alone does not say which layout made it: decode it with
/// [`SnowflakeLayout::decode`](super::SnowflakeLayout::decode).
///
/// Text forms: decimal ([`Display`](fmt::Display), [`FromStr`],
/// [`from_decimal`](Self::from_decimal)) and 13-character Crockford base32
/// ([`to_base32`](Self::to_base32), [`from_base32`](Self::from_base32)),
/// whose text order equals numeric order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct SnowflakeId(u64);

impl SnowflakeId {
    /// The largest value any layout can produce: 2^63 − 1.
    pub const MAX: Self = Self(i64::MAX as u64);

    /// Wraps a value whose sign bit is 0 (from storage or another language).
    ///
    /// Fails with `snowflake.id_out_of_range` when the sign bit is set.
    pub fn new(value: u64) -> Result<Self, SnowflakeError> {
        if value > Self::MAX.0 {
            return Err(SnowflakeError::new(Detail::IdOutOfRange {
                id: Some(value),
                max: Self::MAX.0,
            }));
        }
        Ok(Self(value))
    }

    /// Wraps a value the caller has already checked to be at most [`Self::MAX`].
    pub(crate) const fn from_checked(value: u64) -> Self {
        Self(value)
    }

    /// The value as `u64`.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Parses decimal digits (ASCII `0`-`9` only: no sign, no spaces).
    /// Leading zeros are accepted.
    pub fn from_decimal(text: &str) -> Result<Self, SnowflakeError> {
        if text.is_empty() {
            return Err(SnowflakeError::new(Detail::InvalidText(
                TextProblem::EmptyDecimal,
            )));
        }
        let mut value: Option<u64> = Some(0);
        for (position, &byte) in text.as_bytes().iter().enumerate() {
            if !byte.is_ascii_digit() {
                return Err(SnowflakeError::new(Detail::InvalidText(
                    TextProblem::DecimalCharacter { byte, position },
                )));
            }
            value = value
                .and_then(|v| v.checked_mul(10))
                .and_then(|v| v.checked_add(u64::from(byte - b'0')));
        }
        match value {
            Some(value) => Self::new(value),
            None => Err(Self::too_large()),
        }
    }

    /// Parses 13 Crockford base32 characters (case-insensitive; `I`/`L` read
    /// as 1 and `O` as 0).
    pub fn from_base32(text: &str) -> Result<Self, SnowflakeError> {
        match base32::decode_u64(text) {
            Ok(value) => Self::new(value),
            Err(Base32Error::Overflow) => Err(Self::too_large()),
            Err(error) => Err(SnowflakeError::new(Detail::InvalidText(
                TextProblem::Base32(error),
            ))),
        }
    }

    /// The 13 upper-case Crockford base32 characters, as bytes.
    pub fn base32_bytes(self) -> [u8; base32::U64_LEN] {
        base32::encode_u64(self.0)
    }

    /// The 13-character upper-case Crockford base32 text.
    pub fn to_base32(self) -> String {
        self.base32_bytes()
            .iter()
            .copied()
            .map(char::from)
            .collect()
    }

    fn too_large() -> SnowflakeError {
        SnowflakeError::new(Detail::IdOutOfRange {
            id: None,
            max: Self::MAX.0,
        })
    }
}

impl fmt::Display for SnowflakeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for SnowflakeId {
    type Err = SnowflakeError;

    /// Parses the decimal form, as [`from_decimal`](SnowflakeId::from_decimal).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::from_decimal(text)
    }
}

impl TryFrom<u64> for SnowflakeId {
    type Error = SnowflakeError;

    fn try_from(value: u64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<SnowflakeId> for u64 {
    fn from(id: SnowflakeId) -> Self {
        id.0
    }
}

impl From<SnowflakeId> for i64 {
    /// Lossless: the sign bit of an ID is always 0.
    fn from(id: SnowflakeId) -> Self {
        id.0 as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;

    #[test]
    fn sign_bit_is_rejected() {
        assert_eq!(
            SnowflakeId::new(1 << 63).unwrap_err().code(),
            "snowflake.id_out_of_range"
        );
        assert_eq!(SnowflakeId::new(i64::MAX as u64), Ok(SnowflakeId::MAX));
        assert_eq!(i64::from(SnowflakeId::MAX), i64::MAX);
    }

    #[test]
    fn decimal_is_strict() {
        assert_eq!(SnowflakeId::from_decimal("0042").map(u64::from), Ok(42));
        for bad in ["", "+1", "-1", " 1", "1_000", "١"] {
            let error = SnowflakeId::from_decimal(bad).unwrap_err();
            assert_eq!(error.code(), "snowflake.invalid_text", "{bad:?}");
        }
        for big in [
            "9223372036854775808",
            "18446744073709551616",
            "99999999999999999999999",
        ] {
            let error = SnowflakeId::from_decimal(big).unwrap_err();
            assert_eq!(error.code(), "snowflake.id_out_of_range", "{big}");
        }
    }

    #[test]
    fn base32_is_fixed_length() {
        let id = SnowflakeId::new(32).unwrap();
        assert_eq!(id.to_base32(), "0000000000010");
        assert_eq!(SnowflakeId::from_base32("000000000001o"), Ok(id));
        assert_eq!(SnowflakeId::MAX.to_base32(), "7ZZZZZZZZZZZZ");
        assert_eq!(
            SnowflakeId::from_base32("8000000000000")
                .unwrap_err()
                .code(),
            "snowflake.id_out_of_range"
        );
        assert_eq!(
            SnowflakeId::from_base32("G000000000000")
                .unwrap_err()
                .code(),
            "snowflake.id_out_of_range"
        );
        assert_eq!(
            SnowflakeId::from_base32("123").unwrap_err().code(),
            "snowflake.invalid_text"
        );
    }

    proptest! {
        #[test]
        fn text_round_trips(value in 0..=i64::MAX as u64, other in 0..=i64::MAX as u64) {
            let (id, other) = (SnowflakeId::new(value).unwrap(), SnowflakeId::new(other).unwrap());
            prop_assert_eq!(id.to_string().parse::<SnowflakeId>(), Ok(id));
            prop_assert_eq!(SnowflakeId::from_base32(&id.to_base32()), Ok(id));
            prop_assert_eq!(SnowflakeId::from_base32(&id.to_base32().to_ascii_lowercase()), Ok(id));
            prop_assert_eq!(id.cmp(&other), id.to_base32().cmp(&other.to_base32()));
        }
    }
}
