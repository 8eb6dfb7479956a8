//! Why a UUID text was rejected.

use super::TextForm;
use core::fmt;

use crate::quote::QuotedChar;

/// The lengths [`Uuid::parse`](super::Uuid::parse) accepts, in the order its messages name them.
const FORMS: [TextForm; 4] = [
    TextForm::Hyphenated,
    TextForm::Simple,
    TextForm::Urn,
    TextForm::Base32,
];

/// A UUID text that could not be read: which character, where, or which length.
///
/// Positions count characters from zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UuidParseError(Repr);

/// The kinds of [`UuidParseError`], each with a stable [`code`](Self::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UuidParseErrorKind {
    /// The text is not 36, 32, 45 or 26 characters long (`uuid.invalid_length`).
    InvalidLength,
    /// A character that does not belong where it is (`uuid.invalid_character`).
    InvalidCharacter,
    /// A 26-character base32 text whose first digit is above 7, so its value
    /// needs more than 128 bits (`uuid.base32_overflow`).
    Base32Overflow,
}

impl UuidParseErrorKind {
    /// The stable dotted code every language reports for this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidLength => "uuid.invalid_length",
            Self::InvalidCharacter => "uuid.invalid_character",
            Self::Base32Overflow => "uuid.base32_overflow",
        }
    }
}

/// What the parser expected where it found a bad character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expected {
    HexDigit,
    Hyphen,
    UrnPrefix,
    Base32Digit,
    /// The text has a valid length in characters but not in bytes.
    Ascii,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    Length {
        found: usize,
    },
    Character {
        character: char,
        position: usize,
        expected: Expected,
    },
    Base32Overflow {
        first: char,
    },
}

impl UuidParseError {
    /// The character at byte `index` of `text`, which the caller has checked
    /// to be preceded by ASCII only (so the byte index is the character index).
    pub(super) fn character(text: &str, index: usize, expected: Expected) -> Self {
        Self(Repr::Character {
            character: char_at(text, index),
            position: index,
            expected,
        })
    }

    /// A text whose length in bytes matches no form.
    pub(crate) fn length(text: &str) -> Self {
        let found = text.chars().count();
        if FORMS.iter().any(|form| form.text_len() == found) {
            if let Some((position, character)) =
                text.chars().enumerate().find(|(_, c)| !c.is_ascii())
            {
                return Self(Repr::Character {
                    character,
                    position,
                    expected: Expected::Ascii,
                });
            }
        }
        Self(Repr::Length { found })
    }

    pub(crate) fn base32_overflow(text: &str) -> Self {
        Self(Repr::Base32Overflow {
            first: char_at(text, 0),
        })
    }

    /// What kind of error this is.
    pub const fn kind(&self) -> UuidParseErrorKind {
        match self.0 {
            Repr::Length { .. } => UuidParseErrorKind::InvalidLength,
            Repr::Character { .. } => UuidParseErrorKind::InvalidCharacter,
            Repr::Base32Overflow { .. } => UuidParseErrorKind::Base32Overflow,
        }
    }

    /// The stable dotted code of the kind, e.g. `uuid.invalid_character`.
    pub const fn code(&self) -> &'static str {
        self.kind().code()
    }
}

fn char_at(text: &str, index: usize) -> char {
    text.get(index..)
        .and_then(|rest| rest.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

impl fmt::Display for UuidParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Length { found } => write!(
                f,
                "UUID text must be 36 (hyphenated), 32 (simple), 45 (URN) or 26 (base32) \
                 characters long, found {found}"
            ),
            Repr::Character {
                character,
                position,
                expected,
            } => {
                let expected = match expected {
                    Expected::HexDigit => "a hex digit",
                    Expected::Hyphen => "'-'",
                    Expected::UrnPrefix => "the prefix \"urn:uuid:\"",
                    Expected::Base32Digit => "a Crockford base32 digit",
                    Expected::Ascii => "ASCII only",
                };
                write!(
                    f,
                    "invalid character {} at position {position} of UUID text \
                     (expected {expected})",
                    QuotedChar(character)
                )
            }
            Repr::Base32Overflow { first } => write!(
                f,
                "base32 UUID text must start with a digit from 0 to 7, found {} \
                 (the value would need more than 128 bits)",
                QuotedChar(first)
            ),
        }
    }
}

impl core::error::Error for UuidParseError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uuid::Uuid;

    #[test]
    fn codes_are_stable() {
        assert_eq!(
            UuidParseErrorKind::InvalidLength.code(),
            "uuid.invalid_length"
        );
        assert_eq!(
            UuidParseErrorKind::InvalidCharacter.code(),
            "uuid.invalid_character"
        );
        assert_eq!(
            UuidParseErrorKind::Base32Overflow.code(),
            "uuid.base32_overflow"
        );
        let err = Uuid::parse("nope").unwrap_err();
        assert_eq!(err.code(), err.kind().code());
    }
}
