//! A state transition as a driver: one compare-and-set `UPDATE` on the
//! caller's table, then, when it wrote nothing, the row's current state.
//! The rules are in `docs/spec.md`, "State transitions".

use alloc::string::String;
use alloc::vec::Vec;

use super::record_driver::db_error;
use super::{Answer, DriverError, Manifest, Statement, Step, StoreError, StoreErrorKind, Value};
use crate::transition::{
    TransitionError, TransitionErrorKind, TransitionOutcome, TransitionTable, TransitionTarget,
};

/// What a transition hands its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransitionYield {
    /// Run this statement (rendered for the caller's table: its SQL is not
    /// in the manifest's list) with these values, in its binding order, on
    /// the caller's connection, and push the answer.
    Execute {
        /// The statement: `transition_apply` or `transition_current`.
        statement: Statement,
        /// Its values, in binding order.
        params: Vec<Value>,
    },
    /// The protocol's end.
    Done(TransitionOutcome),
}

/// A step of a transition.
pub type TransitionStep = Step<TransitionYield>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Applying,
    Reading,
    Ended,
}

/// One transition of one entity, on the caller's connection (inside its
/// transaction, if any: no transaction step of its own, nothing retried).
///
/// Steps: `Yield(Execute(transition_apply))`; 1 row is
/// [`TransitionOutcome::Applied`]; 0 rows runs `transition_current`: the
/// `to` state is [`TransitionOutcome::Already`], another state
/// [`TransitionOutcome::Refused`], no row `transition.not_found`. More than
/// one row updated is `store.unexpected_row` (the id column is not unique).
#[derive(Debug, Clone)]
pub struct TransitionDriver {
    manifest: Manifest,
    target: TransitionTarget,
    entity_id: Value,
    from: String,
    to: String,
    refusal: Option<TransitionError>,
    state: State,
}

impl TransitionDriver {
    /// A transition of the entity `entity_id` (an integer or a text, as its
    /// id column holds it) in `target` from `from` to `to`, checked against
    /// `table` when the driver starts.
    pub fn new(
        manifest: Manifest,
        table: &TransitionTable,
        target: TransitionTarget,
        entity_id: Value,
        from: &str,
        to: &str,
    ) -> Self {
        let refusal = table.check(from, to).err();
        Self {
            manifest,
            target,
            entity_id,
            from: from.into(),
            to: to.into(),
            refusal,
            state: State::Idle,
        }
    }

    fn statement(&self, name: &str) -> Statement {
        let dialect = self.manifest.dialect;
        self.manifest.template(name, &|ident| match ident {
            "table" => Some(self.target.table.quoted(dialect)),
            "id_column" => Some(self.target.id_column.quoted(dialect)),
            "state_column" => Some(self.target.state_column.quoted(dialect)),
            _ => None,
        })
    }

    fn execute(&self, name: &str) -> TransitionStep {
        let statement = self.statement(name);
        let params = Manifest::bind(&statement, |param| match param {
            "entity_id" => Some(self.entity_id.clone()),
            "from_state" => Some(Value::Text(self.from.clone())),
            "to_state" => Some(Value::Text(self.to.clone())),
            _ => None,
        });
        Step::Yield(TransitionYield::Execute { statement, params })
    }

    /// The first step: `transition.unknown_state` or
    /// `transition.not_allowed` (nothing runs) when the table refuses the
    /// move; `transition.not_found` when the id is neither an integer nor a
    /// text; else the compare-and-set.
    pub fn start(&mut self) -> TransitionStep {
        if self.state != State::Idle {
            return self.fail(misuse("start"));
        }
        if let Some(refusal) = self.refusal.take() {
            return self.fail(refusal.into());
        }
        if !matches!(&self.entity_id, Value::Int(_) | Value::Text(_)) {
            return self.fail(self.not_found());
        }
        self.state = State::Applying;
        self.execute("transition_apply")
    }

    /// Push the answer to the last `Execute`.
    pub fn push(&mut self, answer: Answer) -> TransitionStep {
        let state = core::mem::replace(&mut self.state, State::Ended);
        match (state, answer) {
            (State::Applying, Answer::Affected(1)) => {
                Step::Yield(TransitionYield::Done(TransitionOutcome::Applied))
            }
            (State::Applying, Answer::Affected(0)) => {
                self.state = State::Reading;
                self.execute("transition_current")
            }
            (State::Applying, Answer::Affected(rows)) => self.fail(
                StoreError::new(
                    StoreErrorKind::UnexpectedRow,
                    alloc::format!(
                        "transition_apply updated {rows} rows: the id column {} must be unique",
                        self.target.id_column.as_text()
                    ),
                )
                .into(),
            ),
            (State::Reading, Answer::Rows(rows)) => match rows.first().map(|row| row.first()) {
                None => self.fail(self.not_found()),
                Some(Some(value)) if value.as_text() == Some(self.to.as_str()) => {
                    Step::Yield(TransitionYield::Done(TransitionOutcome::Already))
                }
                Some(Some(value)) => match value.as_text() {
                    Some(current) => {
                        Step::Yield(TransitionYield::Done(TransitionOutcome::Refused {
                            current: current.into(),
                        }))
                    }
                    None => self.fail(unexpected()),
                },
                Some(None) => self.fail(unexpected()),
            },
            (_, Answer::Failed(error)) => self.fail(db_error(&error, false).into()),
            (State::Applying | State::Reading, _) => self.fail(unexpected()),
            (state, _) => {
                self.state = state;
                self.fail(misuse("push"))
            }
        }
    }

    /// `transition.not_found` (also for a null or byte-string id, which
    /// matches no row).
    fn not_found(&self) -> DriverError {
        TransitionError::new(
            TransitionErrorKind::NotFound,
            alloc::format!(
                "no row of {} has this {}",
                self.target.table.as_text(),
                self.target.id_column.as_text()
            ),
        )
        .into()
    }

    fn fail(&mut self, error: DriverError) -> TransitionStep {
        self.state = State::Ended;
        Step::Fail(error)
    }
}

fn misuse(call: &str) -> DriverError {
    StoreError::new(
        StoreErrorKind::UnexpectedRow,
        alloc::format!("a transition cannot take {call} now"),
    )
    .into()
}

fn unexpected() -> DriverError {
    StoreError::new(
        StoreErrorKind::UnexpectedRow,
        "the answer to a transition statement is not what the query returns",
    )
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Dialect, Placeholder};
    use alloc::vec;

    fn driver(dialect: Dialect, from: &str, to: &str) -> TransitionDriver {
        let table = TransitionTable::new(
            &["WAIT_PAY", "PAID", "CANCELLED"],
            &[("WAIT_PAY", "PAID"), ("WAIT_PAY", "CANCELLED")],
        )
        .unwrap();
        let target = TransitionTarget::new("shop.orders", "id", "status").unwrap();
        let manifest = Manifest::new(dialect, Placeholder::Question);
        TransitionDriver::new(manifest, &table, target, Value::Int(7), from, to)
    }

    #[test]
    fn applies_by_compare_and_set_with_quoted_identifiers() {
        let mut mysql = driver(Dialect::Mysql, "WAIT_PAY", "PAID");
        let Step::Yield(TransitionYield::Execute { statement, params }) = mysql.start() else {
            panic!()
        };
        assert_eq!(
            statement.sql,
            "UPDATE `shop`.`orders` SET `status` = ?\nWHERE `id` = ? AND `status` = ?"
        );
        assert_eq!(
            params,
            [
                Value::Text("PAID".into()),
                Value::Int(7),
                Value::Text("WAIT_PAY".into())
            ]
        );
        assert_eq!(
            mysql.push(Answer::Affected(1)),
            Step::Yield(TransitionYield::Done(TransitionOutcome::Applied))
        );
    }

    #[test]
    fn reads_the_current_state_when_nothing_was_written() {
        let current = |state: Option<&str>| {
            let mut pg = driver(Dialect::Postgres, "WAIT_PAY", "PAID");
            pg.start();
            let Step::Yield(TransitionYield::Execute { statement, .. }) =
                pg.push(Answer::Affected(0))
            else {
                panic!()
            };
            assert_eq!(
                statement.sql,
                "SELECT \"status\" FROM \"shop\".\"orders\" WHERE \"id\" = ?"
            );
            let rows = state
                .map(|s| vec![vec![Value::Text(s.into())]])
                .unwrap_or_default();
            pg.push(Answer::Rows(rows))
        };
        assert_eq!(
            current(Some("PAID")),
            Step::Yield(TransitionYield::Done(TransitionOutcome::Already))
        );
        assert_eq!(
            current(Some("CANCELLED")),
            Step::Yield(TransitionYield::Done(TransitionOutcome::Refused {
                current: "CANCELLED".into()
            }))
        );
        let Step::Fail(error) = current(None) else {
            panic!()
        };
        assert_eq!(error.code(), "transition.not_found");
    }

    #[test]
    fn refuses_a_move_the_table_does_not_allow_before_any_sql() {
        let Step::Fail(error) = driver(Dialect::Sqlite, "PAID", "WAIT_PAY").start() else {
            panic!()
        };
        assert_eq!(error.code(), "transition.not_allowed");
        let mut templates_hidden = Manifest::new(Dialect::Sqlite, Placeholder::Question)
            .statements()
            .into_iter()
            .map(|s| s.name);
        assert!(templates_hidden.all(|name| !name.starts_with("transition_")));
    }
}
