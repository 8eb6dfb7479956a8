//! The four text forms of a UUID: writing and reading.

use super::error::{Expected, UuidParseError};
use crate::base32::{self, Base32Error};
use core::fmt;

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
const URN_PREFIX: &[u8; 9] = b"urn:uuid:";
/// Byte offsets of the hyphens in the hyphenated form.
const HYPHENS: [usize; 4] = [8, 13, 18, 23];
/// The longest form (URN).
const MAX_LEN: usize = 45;

/// A text form of a UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextForm {
    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`: 36 characters, lower-case hex.
    Hyphenated,
    /// 32 lower-case hex digits, no hyphens.
    Simple,
    /// `urn:uuid:` followed by the hyphenated form: 45 characters (RFC 9562 §4).
    Urn,
    /// 26 upper-case Crockford base32 digits of the 128-bit value (see
    /// [`crate::base32`]), sortable like the other forms.
    Base32,
}

impl TextForm {
    /// Every form, in declaration order.
    pub const ALL: [Self; 4] = [Self::Hyphenated, Self::Simple, Self::Urn, Self::Base32];

    /// The number of characters of the form: 36, 32, 45 or 26.
    pub const fn text_len(self) -> usize {
        match self {
            Self::Hyphenated => 36,
            Self::Simple => 32,
            Self::Urn => MAX_LEN,
            Self::Base32 => base32::U128_LEN,
        }
    }
}

/// A UUID written in one [`TextForm`], held on the stack.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct UuidText {
    bytes: [u8; MAX_LEN],
    len: usize,
}

impl UuidText {
    pub(super) fn new(uuid: &[u8; 16], form: TextForm) -> Self {
        let mut bytes = [0u8; MAX_LEN];
        match form {
            TextForm::Hyphenated => write_hyphenated(uuid, &mut bytes),
            TextForm::Simple => write_hex(uuid, &mut bytes),
            TextForm::Urn => {
                let (prefix, rest) = bytes.split_at_mut(URN_PREFIX.len());
                prefix.copy_from_slice(URN_PREFIX);
                write_hyphenated(uuid, rest);
            }
            TextForm::Base32 => {
                let digits = base32::encode_u128(u128::from_be_bytes(*uuid));
                bytes[..digits.len()].copy_from_slice(&digits);
            }
        }
        Self {
            bytes,
            len: form.text_len(),
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written, so this cannot fail.
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The text as ASCII bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl AsRef<str> for UuidText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for UuidText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl fmt::Debug for UuidText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// The two lower-case hex digits of every byte: one load per byte written.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        pairs[byte] = [HEX_DIGITS[byte >> 4], HEX_DIGITS[byte & 0x0F]];
        byte += 1;
    }
    pairs
};

/// Where the two digits of each of the 16 bytes go in the hyphenated form.
const HYPHENATED_AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/// Writes the 32 hex digits at the start of `out` (at least 32 bytes).
fn write_hex(uuid: &[u8; 16], out: &mut [u8]) {
    for (byte, pair) in uuid.iter().zip(out.chunks_exact_mut(2)) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(*byte)]);
    }
}

/// Writes the 36-character 8-4-4-4-12 form at the start of `out` (at least 36 bytes).
fn write_hyphenated(uuid: &[u8; 16], out: &mut [u8]) {
    let Some(out) = out.first_chunk_mut::<36>() else {
        return;
    };
    for (byte, at) in uuid.iter().zip(HYPHENATED_AT) {
        out[at..at + 2].copy_from_slice(&HEX_PAIRS[usize::from(*byte)]);
    }
    for at in HYPHENS {
        out[at] = b'-';
    }
}

const fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// Reads any text form, dispatching on its length in bytes.
pub(super) fn parse(text: &str) -> Result<[u8; 16], UuidParseError> {
    let bytes = text.as_bytes();
    match bytes.len() {
        36 => parse_hyphenated(text, 0),
        32 => parse_simple(text),
        MAX_LEN => {
            let prefix_ok = bytes
                .iter()
                .zip(URN_PREFIX)
                .position(|(byte, expected)| !byte.eq_ignore_ascii_case(expected));
            match prefix_ok {
                Some(position) => Err(UuidParseError::character(
                    text,
                    position,
                    Expected::UrnPrefix,
                )),
                None => parse_hyphenated(text, URN_PREFIX.len()),
            }
        }
        base32::U128_LEN => parse_base32(text),
        _ => Err(UuidParseError::length(text)),
    }
}

/// Reads the hyphenated form that starts at byte `offset` of `text` and runs to its end.
fn parse_hyphenated(text: &str, offset: usize) -> Result<[u8; 16], UuidParseError> {
    let mut digits = [0u8; 32];
    let mut count = 0;
    for (i, &byte) in text.as_bytes().iter().enumerate().skip(offset) {
        if HYPHENS.contains(&(i - offset)) {
            if byte != b'-' {
                return Err(UuidParseError::character(text, i, Expected::Hyphen));
            }
        } else if let Some(slot) = digits.get_mut(count) {
            *slot = hex_value(byte)
                .ok_or_else(|| UuidParseError::character(text, i, Expected::HexDigit))?;
            count += 1;
        }
    }
    Ok(pack(&digits))
}

/// Reads the simple form (32 hex digits).
fn parse_simple(text: &str) -> Result<[u8; 16], UuidParseError> {
    let mut digits = [0u8; 32];
    for ((i, &byte), slot) in text.as_bytes().iter().enumerate().zip(&mut digits) {
        *slot = hex_value(byte)
            .ok_or_else(|| UuidParseError::character(text, i, Expected::HexDigit))?;
    }
    Ok(pack(&digits))
}

fn pack(digits: &[u8; 32]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = (pair[0] << 4) | pair[1];
    }
    out
}

fn parse_base32(text: &str) -> Result<[u8; 16], UuidParseError> {
    match base32::decode_u128(text) {
        Ok(value) => Ok(value.to_be_bytes()),
        Err(Base32Error::Character { position, .. }) => Err(UuidParseError::character(
            text,
            position,
            Expected::Base32Digit,
        )),
        Err(Base32Error::Overflow) => Err(UuidParseError::base32_overflow(text)),
        // `parse` dispatched on the length, so the base32 decoder accepts it.
        Err(Base32Error::Length { .. }) => Err(UuidParseError::length(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uuid::{Uuid, UuidParseErrorKind};
    use alloc::string::ToString;

    fn error(text: &str) -> (UuidParseErrorKind, alloc::string::String) {
        let err = Uuid::parse(text).unwrap_err();
        (err.kind(), err.to_string())
    }

    #[test]
    fn wrong_lengths_name_the_length() {
        let (kind, message) = error("017f22e2-79b0-7cc3-98c4-dc0c0c07398");
        assert_eq!(kind, UuidParseErrorKind::InvalidLength);
        assert!(message.contains("found 35"), "{message}");
        assert_eq!(error("").0, UuidParseErrorKind::InvalidLength);
        assert_eq!(
            Uuid::parse("{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}")
                .unwrap_err()
                .code(),
            "uuid.invalid_length"
        );
    }

    #[test]
    fn bad_characters_name_character_and_position() {
        let (kind, message) = error("017f22e2-79b0-7cc3-98c4-dc0c0c07398g");
        assert_eq!(kind, UuidParseErrorKind::InvalidCharacter);
        assert_eq!(
            message,
            "invalid character 'g' at position 35 of UUID text (expected a hex digit)"
        );
        let (_, message) = error("017f22e2x79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(
            message,
            "invalid character 'x' at position 8 of UUID text (expected '-')"
        );
        let (_, message) = error("017f22e2-79b0-7cc3-98c4-dc0c0c07398-");
        assert!(message.contains("'-' at position 35"), "{message}");
        let (_, message) = error("017f22e279b07cc398c4dc0c0c0739-f");
        assert!(message.contains("position 30"), "{message}");
        let (_, message) = error("urn:uueid017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(
            message,
            "invalid character 'e' at position 6 of UUID text (expected the prefix \"urn:uuid:\")"
        );
        let (_, message) = error("urn:uuid:017f22e2-79b0-7cc3-98c4+dc0c0c07398f");
        assert!(message.contains("'+' at position 32"), "{message}");
        let (_, message) = error("01FWHE4YDGFK1SHH6W1G60EECU");
        assert_eq!(
            message,
            "invalid character 'U' at position 25 of UUID text (expected a Crockford base32 digit)"
        );
    }

    #[test]
    fn non_ascii_is_reported_by_character_position() {
        // 36 characters but 37 bytes: the 'é' is the problem, not the length.
        let (kind, message) = error("017f22e2-79b0-7cc3-98c4-dc0c0c07398é");
        assert_eq!(kind, UuidParseErrorKind::InvalidCharacter);
        assert!(message.contains("U+00E9 at position 35"), "{message}");
        // 36 bytes: dispatched as hyphenated, fails at the first byte of 'é'.
        let (kind, message) = error("017f22e2-79b0-7cc3-98c4-dc0c0c0739é");
        assert_eq!(kind, UuidParseErrorKind::InvalidCharacter);
        assert!(message.contains("U+00E9 at position 34"), "{message}");
        let (kind, message) = error("ééé");
        assert_eq!(kind, UuidParseErrorKind::InvalidLength);
        assert!(message.contains("found 3"), "{message}");
    }

    #[test]
    fn base32_overflow_is_its_own_error() {
        let (kind, message) = error("81FWHE4YDGFK1SHH6W1G60EECF");
        assert_eq!(kind, UuidParseErrorKind::Base32Overflow);
        assert!(message.contains("'8'"), "{message}");
        assert_eq!(
            Uuid::parse("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
            Ok(Uuid::MAX),
            "the largest base32 value is the Max UUID"
        );
    }

    #[test]
    fn text_is_displayable_and_sized() {
        let text = Uuid::MAX.format(TextForm::Urn);
        assert_eq!(text.to_string().len(), 45);
        assert_eq!(text.as_ref(), text.as_str());
        assert_eq!(text.as_bytes().len(), TextForm::Urn.text_len());
        assert_eq!(
            alloc::format!("{:?}", Uuid::NIL.format(TextForm::Simple)),
            "\"00000000000000000000000000000000\""
        );
    }
}
