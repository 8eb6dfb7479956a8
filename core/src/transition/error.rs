//! The one error type of the state-transition rules.

use alloc::string::String;
use core::fmt;

/// Why a transition rule refused. See [`kind`](TransitionError::kind) and
/// [`code`](TransitionError::code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionError {
    kind: TransitionErrorKind,
    message: String,
}

/// The kinds of [`TransitionError`], each with a stable [`code`](TransitionErrorKind::code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransitionErrorKind {
    /// `transition.invalid_table`: a transition table that cannot be used
    /// (no state, a state named twice or badly, a move naming an unknown
    /// state, a move from a state to itself, a move given twice).
    InvalidTable,
    /// `transition.unknown_state`: a state the table does not declare.
    UnknownState,
    /// `transition.not_allowed`: a move the table does not allow.
    NotAllowed,
    /// `transition.invalid_identifier`: a table or column name the core
    /// will not put into SQL.
    InvalidIdentifier,
    /// `transition.not_found`: no row has the entity's id.
    NotFound,
}

impl TransitionErrorKind {
    /// The stable dotted code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidTable => "transition.invalid_table",
            Self::UnknownState => "transition.unknown_state",
            Self::NotAllowed => "transition.not_allowed",
            Self::InvalidIdentifier => "transition.invalid_identifier",
            Self::NotFound => "transition.not_found",
        }
    }
}

impl TransitionError {
    pub(crate) fn new(kind: TransitionErrorKind, message: String) -> Self {
        Self { kind, message }
    }

    /// What went wrong.
    pub const fn kind(&self) -> TransitionErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"transition.not_allowed"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for TransitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for TransitionError {}
