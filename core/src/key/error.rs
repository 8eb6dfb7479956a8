//! The one error type of idempotency keys.

use core::fmt;

use super::KeyPart;

/// The kinds of [`KeyError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyErrorKind {
    /// A part of the key is empty, or a builder was given an empty list or
    /// an empty business field.
    Empty,
    /// A part is longer than its limit.
    TooLong,
    /// A part holds a character outside its character set.
    InvalidCharacter,
    /// An `Idempotency-Key` header value is neither a structured-field string
    /// nor a bare token.
    InvalidHeader,
    /// A key text is not `kind:scope:id` as the canonical form writes it.
    InvalidText,
}

impl KeyErrorKind {
    /// The stable dotted code of this kind, e.g. `"key.too_long"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Empty => "key.empty",
            Self::TooLong => "key.too_long",
            Self::InvalidCharacter => "key.invalid_character",
            Self::InvalidHeader => "key.invalid_header",
            Self::InvalidText => "key.invalid_text",
        }
    }
}

/// Why a key, a key part, a header value or a key text was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyError {
    kind: KeyErrorKind,
    part: Option<KeyPart>,
    position: Option<usize>,
    detail: Detail,
}

/// What the message says beyond the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    EmptyPart,
    NoFields,
    EmptyField { index: usize },
    Length { len: usize },
    Character(char),
    Byte(u8),
    Reason(&'static str),
}

impl KeyError {
    pub(crate) const fn empty(part: KeyPart) -> Self {
        Self::new(KeyErrorKind::Empty, Some(part), None, Detail::EmptyPart)
    }

    pub(crate) const fn no_fields() -> Self {
        Self::new(
            KeyErrorKind::Empty,
            Some(KeyPart::Id),
            None,
            Detail::NoFields,
        )
    }

    pub(crate) const fn empty_field(index: usize) -> Self {
        Self::new(
            KeyErrorKind::Empty,
            Some(KeyPart::Id),
            None,
            Detail::EmptyField { index },
        )
    }

    pub(crate) const fn too_long(part: KeyPart, len: usize) -> Self {
        Self::new(
            KeyErrorKind::TooLong,
            Some(part),
            None,
            Detail::Length { len },
        )
    }

    /// An invalid character at byte `position` of `part`: the character when
    /// `bytes` decodes as UTF-8 there, else the raw byte.
    pub(crate) fn invalid_character(part: KeyPart, bytes: &[u8], position: usize) -> Self {
        let rest = bytes.get(position..).unwrap_or_default();
        let detail = match rest.utf8_chunks().next() {
            Some(chunk) => match chunk.valid().chars().next() {
                Some(c) => Detail::Character(c),
                None => Detail::Byte(chunk.invalid().first().copied().unwrap_or_default()),
            },
            None => Detail::Byte(0),
        };
        Self::new(
            KeyErrorKind::InvalidCharacter,
            Some(part),
            Some(position),
            detail,
        )
    }

    pub(crate) const fn header(reason: &'static str, position: usize) -> Self {
        Self::new(
            KeyErrorKind::InvalidHeader,
            None,
            Some(position),
            Detail::Reason(reason),
        )
    }

    pub(crate) const fn text(reason: &'static str, position: Option<usize>) -> Self {
        Self::new(
            KeyErrorKind::InvalidText,
            None,
            position,
            Detail::Reason(reason),
        )
    }

    const fn new(
        kind: KeyErrorKind,
        part: Option<KeyPart>,
        position: Option<usize>,
        detail: Detail,
    ) -> Self {
        Self {
            kind,
            part,
            position,
            detail,
        }
    }

    /// What kind of error this is.
    pub const fn kind(&self) -> KeyErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"key.invalid_character"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The part of the key at fault, when one is.
    pub const fn part(&self) -> Option<KeyPart> {
        self.part
    }

    /// The zero-based byte offset of the problem: within the part for
    /// `key.invalid_character` (the part as written, when reading a key
    /// text), within the header value for `key.invalid_header`, within the
    /// key text for `key.invalid_text`.
    pub const fn position(&self) -> Option<usize> {
        self.position
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = self.part.map_or("key", KeyPart::name);
        let position = self.position.unwrap_or_default();
        match self.detail {
            Detail::EmptyPart => write!(f, "the {part} of an idempotency key is empty"),
            Detail::NoFields => f.write_str(
                "the list of business fields to build an idempotency key id from is empty",
            ),
            Detail::EmptyField { index } => {
                write!(
                    f,
                    "business field {index} of an idempotency key id is empty"
                )
            }
            Detail::Length { len } => write!(
                f,
                "the {part} of an idempotency key is {len} bytes long, at most {} allowed",
                self.part.map_or(0, KeyPart::max_len)
            ),
            Detail::Character(c) => write!(
                f,
                "character U+{:04X} at position {position} of the {part} is not allowed ({})",
                u32::from(c),
                self.part.map_or("", KeyPart::charset)
            ),
            Detail::Byte(b) => write!(
                f,
                "byte 0x{b:02X} (not UTF-8) at position {position} of the {part} is not allowed ({})",
                self.part.map_or("", KeyPart::charset)
            ),
            Detail::Reason(reason) if self.kind == KeyErrorKind::InvalidHeader => write!(
                f,
                "invalid Idempotency-Key header: {reason} at position {position}"
            ),
            Detail::Reason(reason) => match self.position {
                Some(position) => {
                    write!(
                        f,
                        "invalid idempotency key text: {reason} at position {position}"
                    )
                }
                None => write!(f, "invalid idempotency key text: {reason}"),
            },
        }
    }
}

impl core::error::Error for KeyError {}
