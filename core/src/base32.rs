//! Crockford base32: fixed-length, sortable text for 64- and 128-bit IDs.
//!
//! The alphabet is `0123456789ABCDEFGHJKMNPQRSTVWXYZ` (no I, L, O, U), most
//! significant digit first and zero-padded, so text order equals numeric
//! order. Encoding writes upper case. Decoding ignores case and, as Crockford
//! specifies, reads `I` and `L` as 1 and `O` as 0.

use core::fmt;

use crate::quote::QuotedChar;

/// The Crockford alphabet, in digit order.
pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters in the text of a 64-bit value (65 bits of room).
pub const U64_LEN: usize = 13;
/// Characters in the text of a 128-bit value (130 bits of room).
pub const U128_LEN: usize = 26;

/// Why a Crockford base32 text was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base32Error {
    /// The text does not have the fixed length.
    Length {
        /// The length required.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A character outside the alphabet.
    Character {
        /// The offending byte.
        byte: u8,
        /// Its zero-based position.
        position: usize,
    },
    /// The value does not fit the target width (the first digit is too large).
    Overflow,
}

impl fmt::Display for Base32Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length { expected, found } => write!(
                f,
                "base32 text must be {expected} characters long, found {found}"
            ),
            Self::Character { byte, position } if byte.is_ascii_graphic() => write!(
                f,
                "invalid base32 character {} at position {position}",
                QuotedChar(char::from(*byte))
            ),
            Self::Character { byte, position } => {
                write!(f, "invalid base32 byte 0x{byte:02x} at position {position}")
            }
            Self::Overflow => f.write_str("base32 value is too large for its type"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Base32Error {}

const fn digit_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'O' | b'o' => Some(0),
        b'I' | b'i' | b'L' | b'l' => Some(1),
        b'A'..=b'Z' | b'a'..=b'z' => {
            let upper = byte.to_ascii_uppercase();
            let mut i = 10;
            while i < 32 {
                if ALPHABET[i] == upper {
                    return Some(i as u8);
                }
                i += 1;
            }
            None
        }
        _ => None,
    }
}

fn encode_into(mut value: u128, out: &mut [u8]) {
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(value & 31) as usize];
        value >>= 5;
    }
}

fn decode_digits(text: &[u8], expected: usize, bits: u32) -> Result<u128, Base32Error> {
    if text.len() != expected {
        return Err(Base32Error::Length {
            expected,
            found: text.len(),
        });
    }
    let mut value: u128 = 0;
    for (position, &byte) in text.iter().enumerate() {
        let digit = digit_value(byte).ok_or(Base32Error::Character { byte, position })?;
        if position == 0 {
            let spare = (expected as u32) * 5 - bits;
            if u32::from(digit) >> (5 - spare) != 0 {
                return Err(Base32Error::Overflow);
            }
        }
        value = (value << 5) | u128::from(digit);
    }
    Ok(value)
}

/// Encodes a `u64` as 13 upper-case Crockford digits.
pub fn encode_u64(value: u64) -> [u8; U64_LEN] {
    let mut out = [0u8; U64_LEN];
    encode_into(u128::from(value), &mut out);
    out
}

/// Encodes a `u128` as 26 upper-case Crockford digits.
pub fn encode_u128(value: u128) -> [u8; U128_LEN] {
    let mut out = [0u8; U128_LEN];
    encode_into(value, &mut out);
    out
}

/// Decodes exactly 13 Crockford digits into a `u64`.
pub fn decode_u64(text: &str) -> Result<u64, Base32Error> {
    decode_digits(text.as_bytes(), U64_LEN, 64).map(|v| v as u64)
}

/// Decodes exactly 26 Crockford digits into a `u128`.
pub fn decode_u128(text: &str) -> Result<u128, Base32Error> {
    decode_digits(text.as_bytes(), U128_LEN, 128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        assert_eq!(&encode_u64(0), b"0000000000000");
        assert_eq!(&encode_u64(u64::MAX), b"FZZZZZZZZZZZZ");
        assert_eq!(&encode_u64(32), b"0000000000010");
        assert_eq!(&encode_u128(u128::MAX), b"7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
        assert_eq!(decode_u64("000000000001o"), Ok(32));
        assert_eq!(decode_u64("0000000000O1L"), Ok(33));
    }

    #[test]
    fn errors_are_precise() {
        assert_eq!(
            decode_u64("123"),
            Err(Base32Error::Length {
                expected: 13,
                found: 3
            })
        );
        assert_eq!(
            decode_u64("00000000000U0"),
            Err(Base32Error::Character {
                byte: b'U',
                position: 11
            })
        );
        assert_eq!(decode_u64("G000000000000"), Err(Base32Error::Overflow));
        assert_eq!(
            decode_u128("80000000000000000000000000"),
            Err(Base32Error::Overflow)
        );
    }

    proptest! {
        #[test]
        fn u64_round_trip_and_order(a: u64, b: u64) {
            let (ta, tb) = (encode_u64(a), encode_u64(b));
            prop_assert_eq!(decode_u64(core::str::from_utf8(&ta).unwrap()), Ok(a));
            prop_assert_eq!(a.cmp(&b), ta.cmp(&tb));
        }

        #[test]
        fn u128_round_trip_and_order(a: u128, b: u128) {
            let (ta, tb) = (encode_u128(a), encode_u128(b));
            prop_assert_eq!(decode_u128(core::str::from_utf8(&ta).unwrap()), Ok(a));
            prop_assert_eq!(a.cmp(&b), ta.cmp(&tb));
            let lower = core::str::from_utf8(&ta).unwrap().to_ascii_lowercase();
            prop_assert_eq!(decode_u128(&lower), Ok(a));
        }
    }
}
