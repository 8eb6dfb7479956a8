//! The one error type every export returns: a core error's concern, its
//! stable code and its message.

use core::fmt;

/// A failure reported by the core, by concern.
///
/// `code` is the core's stable dotted code (`"uuid7.wrong_version"`) that the
/// shared vectors name; `detail` is the core's one-line message. Hosts map the
/// code to their own error classes.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Error)]
pub enum MintidError {
    /// A value passed across the boundary that no core type can hold, such as
    /// a byte string of the wrong length (`argument.*` codes).
    Argument {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
    },
    /// Snowflake layouts, IDs and generators (`snowflake.*`).
    Snowflake {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
    },
    /// UUID text or fields (`uuid.*`).
    Uuid {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
    },
    /// UUIDv7 values and generators (`uuid7.*`).
    Uuid7 {
        /// The stable dotted code.
        code: String,
        /// What was wrong, with the value.
        detail: String,
    },
}

impl MintidError {
    /// The stable dotted code.
    pub fn code(&self) -> &str {
        match self {
            Self::Argument { code, .. }
            | Self::Snowflake { code, .. }
            | Self::Uuid { code, .. }
            | Self::Uuid7 { code, .. } => code,
        }
    }

    /// The core's message.
    pub fn detail(&self) -> &str {
        match self {
            Self::Argument { detail, .. }
            | Self::Snowflake { detail, .. }
            | Self::Uuid { detail, .. }
            | Self::Uuid7 { detail, .. } => detail,
        }
    }

    /// A byte string that must be exactly `expected` bytes long was `found` long.
    pub(crate) fn byte_length(what: &str, expected: usize, found: usize) -> Self {
        Self::Argument {
            code: "argument.byte_length".into(),
            detail: format!("{what} must be {expected} bytes, got {found}"),
        }
    }
}

impl fmt::Display for MintidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.detail())
    }
}

impl std::error::Error for MintidError {}

impl From<mintid::SnowflakeError> for MintidError {
    fn from(error: mintid::SnowflakeError) -> Self {
        Self::Snowflake {
            code: error.code().into(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::UuidParseError> for MintidError {
    fn from(error: mintid::UuidParseError) -> Self {
        Self::Uuid {
            code: error.code().into(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::Uuid7Error> for MintidError {
    fn from(error: mintid::Uuid7Error) -> Self {
        Self::Uuid7 {
            code: error.code().into(),
            detail: error.to_string(),
        }
    }
}

/// Reads exactly `N` bytes, or fails with `argument.byte_length`.
pub(crate) fn fixed_bytes<const N: usize>(
    what: &str,
    bytes: &[u8],
) -> Result<[u8; N], MintidError> {
    <[u8; N]>::try_from(bytes).map_err(|_| MintidError::byte_length(what, N, bytes.len()))
}
