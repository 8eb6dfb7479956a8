//! The one error type of fingerprinting.

use alloc::string::String;
use core::fmt;

use crate::quote::QuotedStr;

/// The kinds of [`FingerprintError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FingerprintErrorKind {
    /// The input is not UTF-8.
    InvalidUtf8,
    /// The input is not JSON text (RFC 8259).
    InvalidJson,
    /// An object has two members with the same name (after unescaping).
    DuplicateMember,
    /// A `\u` escape names half of a surrogate pair without its other half.
    LoneSurrogate,
    /// An integer beyond ±(2^53−1), or a number too large for a double.
    NumberOutOfRange,
    /// Objects and arrays nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep,
    /// A field-selection pointer is not a valid JSON Pointer (RFC 6901).
    InvalidPointer,
    /// A fingerprint text is not `sha256:` followed by 43 base64url characters.
    InvalidText,
    /// A value to fingerprint is one string: it could be meant as JSON text,
    /// which [`fingerprint_json`](super::fingerprint_json) takes.
    StringValue,
}

impl FingerprintErrorKind {
    /// The stable dotted code of this kind, e.g. `"fingerprint.invalid_json"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidUtf8 => "fingerprint.invalid_utf8",
            Self::InvalidJson => "fingerprint.invalid_json",
            Self::DuplicateMember => "fingerprint.duplicate_member",
            Self::LoneSurrogate => "fingerprint.lone_surrogate",
            Self::NumberOutOfRange => "fingerprint.number_out_of_range",
            Self::TooDeep => "fingerprint.too_deep",
            Self::InvalidPointer => "fingerprint.invalid_pointer",
            Self::InvalidText => "fingerprint.invalid_text",
            Self::StringValue => "fingerprint.string_value",
        }
    }
}

/// Why a payload could not be fingerprinted, or a fingerprint text not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FingerprintError {
    kind: FingerprintErrorKind,
    position: Option<usize>,
    reason: &'static str,
    subject: Subject,
}

/// What an error message names after its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    Nothing,
    /// An excerpt of the input or of a pointer, quoted.
    Text(String),
    /// A UTF-16 code unit, written `U+XXXX`.
    CodeUnit(u16),
}

/// The longest excerpt of the input an error message quotes.
const SUBJECT_MAX_CHARS: usize = 40;

impl FingerprintError {
    /// An error at byte `position` of the input, quoting `subject` (shortened
    /// to 40 characters) unless it is empty.
    pub(crate) fn at(
        kind: FingerprintErrorKind,
        position: usize,
        reason: &'static str,
        subject: &str,
    ) -> Self {
        Self {
            kind,
            position: Some(position),
            reason,
            subject: shorten(subject),
        }
    }

    /// An error at byte `position` of the input naming a UTF-16 code unit.
    pub(crate) fn at_code_unit(
        kind: FingerprintErrorKind,
        position: usize,
        reason: &'static str,
        unit: u16,
    ) -> Self {
        Self {
            kind,
            position: Some(position),
            reason,
            subject: Subject::CodeUnit(unit),
        }
    }

    /// An error without a position in a JSON input, quoting `subject`.
    pub(crate) fn about(kind: FingerprintErrorKind, reason: &'static str, subject: &str) -> Self {
        Self {
            kind,
            position: None,
            reason,
            subject: shorten(subject),
        }
    }

    /// What kind of error this is.
    pub const fn kind(&self) -> FingerprintErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"fingerprint.duplicate_member"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The zero-based byte offset in the JSON input where the problem was
    /// found, for errors about the input.
    pub const fn position(&self) -> Option<usize> {
        self.position
    }
}

fn shorten(subject: &str) -> Subject {
    match subject.char_indices().nth(SUBJECT_MAX_CHARS) {
        _ if subject.is_empty() => Subject::Nothing,
        Some((end, _)) => {
            let mut short = String::from(&subject[..end]);
            short.push('…');
            Subject::Text(short)
        }
        None => Subject::Text(String::from(subject)),
    }
}

impl fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason)?;
        match &self.subject {
            Subject::Nothing => {}
            Subject::Text(text) => write!(f, " {}", QuotedStr(text))?,
            Subject::CodeUnit(unit) => write!(f, " U+{unit:04X}")?,
        }
        if let Some(position) = self.position {
            write!(f, " at byte {position}")?;
        }
        Ok(())
    }
}

impl core::error::Error for FingerprintError {}
