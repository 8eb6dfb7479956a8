//! State transitions: the third defence against a request that happens
//! twice (a payment callback retried, a message redelivered), a state
//! machine's compare-and-set.
//!
//! A [`TransitionTable`] declares the states and the moves allowed between
//! them once; [`TransitionTable::check`] refuses an unknown state
//! (`transition.unknown_state`) or a move the table does not allow
//! (`transition.not_allowed`). The store driver
//! ([`TransitionDriver`](crate::store::TransitionDriver)) then runs one
//! `UPDATE … SET state = :to WHERE id = :id AND state = :from` on the
//! caller's table ([`TransitionTarget`]: identifiers validated and quoted
//! per dialect, [`Identifier`]) and answers [`TransitionOutcome`]:
//! `applied`, `already` (the row is in the target state: the duplicate
//! callback) or `refused` with the row's current state. The rules are in
//! `docs/spec.md`, "State transitions".

mod error;
mod identifier;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

pub use error::{TransitionError, TransitionErrorKind};
pub use identifier::{Identifier, MAX_IDENTIFIER_BYTES};

use crate::quote::QuotedStr;

/// The longest state name, in bytes.
pub const MAX_STATE_BYTES: usize = 64;

/// The states of an entity and the moves allowed between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionTable {
    states: Vec<String>,
    /// Allowed moves, as indexes into `states`.
    moves: Vec<(usize, usize)>,
}

impl TransitionTable {
    /// A table of `states` (each 1 to 64 bytes, no control character,
    /// named once) and the allowed `moves` (from, to), each between two
    /// declared, different states, given once.
    ///
    /// Fails with `transition.invalid_table` naming the first fault.
    pub fn new<S: AsRef<str>, M: AsRef<str>>(
        states: &[S],
        moves: &[(M, M)],
    ) -> Result<Self, TransitionError> {
        let invalid = |reason: String| {
            TransitionError::new(
                TransitionErrorKind::InvalidTable,
                format!("invalid transition table: {reason}"),
            )
        };
        if states.is_empty() {
            return Err(invalid("it declares no state".into()));
        }
        let mut names: Vec<String> = Vec::with_capacity(states.len());
        for state in states {
            let state = state.as_ref();
            if state.is_empty()
                || state.len() > MAX_STATE_BYTES
                || state.chars().any(char::is_control)
            {
                return Err(invalid(format!(
                    "state {} must be 1 to 64 bytes without control characters",
                    QuotedStr(state)
                )));
            }
            if names.iter().any(|name| name == state) {
                return Err(invalid(format!(
                    "state {} is declared twice",
                    QuotedStr(state)
                )));
            }
            names.push(state.into());
        }
        let mut table = Self {
            states: names,
            moves: Vec::with_capacity(moves.len()),
        };
        for (from, to) in moves {
            let (from, to) = (from.as_ref(), to.as_ref());
            let (Some(a), Some(b)) = (table.index(from), table.index(to)) else {
                let unknown = if table.index(from).is_none() {
                    from
                } else {
                    to
                };
                return Err(invalid(format!(
                    "move {} -> {} names the undeclared state {}",
                    QuotedStr(from),
                    QuotedStr(to),
                    QuotedStr(unknown)
                )));
            };
            if a == b {
                return Err(invalid(format!(
                    "move {} -> {} goes nowhere",
                    QuotedStr(from),
                    QuotedStr(to)
                )));
            }
            if table.moves.contains(&(a, b)) {
                return Err(invalid(format!(
                    "move {} -> {} is given twice",
                    QuotedStr(from),
                    QuotedStr(to)
                )));
            }
            table.moves.push((a, b));
        }
        Ok(table)
    }

    fn index(&self, state: &str) -> Option<usize> {
        self.states.iter().position(|name| name == state)
    }

    /// The declared states, in order.
    pub fn states(&self) -> impl ExactSizeIterator<Item = &str> {
        self.states.iter().map(String::as_str)
    }

    /// The states `from` may move to, in the order the moves were given
    /// (none for a state the table does not declare).
    pub fn targets<'t>(&'t self, from: &str) -> impl Iterator<Item = &'t str> {
        let index = self.index(from);
        self.moves
            .iter()
            .filter(move |(a, _)| Some(*a) == index)
            .map(|(_, b)| self.states[*b].as_str())
    }

    /// Whether the table allows the move `from` → `to`: `Ok`, or
    /// `transition.unknown_state` (either state undeclared, `from` first),
    /// or `transition.not_allowed`.
    pub fn check(&self, from: &str, to: &str) -> Result<(), TransitionError> {
        for state in [from, to] {
            if self.index(state).is_none() {
                return Err(TransitionError::new(
                    TransitionErrorKind::UnknownState,
                    format!("state {} is not in the transition table", QuotedStr(state)),
                ));
            }
        }
        if self.targets(from).any(|target| target == to) {
            Ok(())
        } else {
            Err(TransitionError::new(
                TransitionErrorKind::NotAllowed,
                format!(
                    "the transition table does not allow {} -> {}",
                    QuotedStr(from),
                    QuotedStr(to)
                ),
            ))
        }
    }
}

/// Where an entity's state lives: the caller's table, its id column and its
/// state column, each validated ([`Identifier`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TransitionTarget {
    /// The table (`name` or `schema.name`).
    pub table: Identifier,
    /// The id column (unique: the driver expects at most one row).
    pub id_column: Identifier,
    /// The state column.
    pub state_column: Identifier,
}

impl TransitionTarget {
    /// The target of `table`, `id_column` and `state_column`, each checked
    /// (`transition.invalid_identifier` names the first refused).
    pub fn new(table: &str, id_column: &str, state_column: &str) -> Result<Self, TransitionError> {
        Ok(Self {
            table: Identifier::table(table)?,
            id_column: Identifier::column(id_column)?,
            state_column: Identifier::column(state_column)?,
        })
    }
}

/// What a transition came to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TransitionOutcome {
    /// The row was in the `from` state and is now in the `to` state.
    Applied,
    /// The row was already in the `to` state (a duplicate: nothing written).
    Already,
    /// The row is in another state, which it keeps.
    Refused {
        /// The row's state now.
        current: String,
    },
}

impl TransitionOutcome {
    /// `applied`, `already` or `refused`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            TransitionOutcome::Applied => "applied",
            TransitionOutcome::Already => "already",
            TransitionOutcome::Refused { .. } => "refused",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_states_and_moves() {
        let table = TransitionTable::new(
            &["WAIT_PAY", "PAID", "CANCELLED"],
            &[("WAIT_PAY", "PAID"), ("WAIT_PAY", "CANCELLED")],
        )
        .unwrap();
        assert_eq!(table.check("WAIT_PAY", "PAID"), Ok(()));
        let code = |from, to| table.check(from, to).unwrap_err().code();
        assert_eq!(code("PAID", "WAIT_PAY"), "transition.not_allowed");
        assert_eq!(code("NEW", "PAID"), "transition.unknown_state");
        assert_eq!(code("PAID", "REFUNDED"), "transition.unknown_state");
        let bad = |states: &[&str], moves: &[(&str, &str)]| {
            TransitionTable::new(states, moves).unwrap_err().code()
        };
        assert_eq!(bad(&[], &[]), "transition.invalid_table");
        assert_eq!(bad(&["A", "A"], &[]), "transition.invalid_table");
        assert_eq!(bad(&["A"], &[("A", "B")]), "transition.invalid_table");
        assert_eq!(bad(&["A"], &[("A", "A")]), "transition.invalid_table");
        assert_eq!(
            bad(&["A", "B"], &[("A", "B"), ("A", "B")]),
            "transition.invalid_table"
        );
    }
}
