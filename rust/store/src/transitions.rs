//! State transitions on the caller's table, driven by the core's
//! `TransitionDriver`: one compare-and-set `UPDATE`, the statement rendered
//! by the core with the table and columns it validated and quoted.

use mintid::store::{Answer, Step, TransitionDriver, TransitionYield, Value};
use mintid::transition::{TransitionOutcome, TransitionTable, TransitionTarget};

use crate::backend::Backend;
use crate::error::Error;

/// An entity's id as its id column holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntityId {
    /// An integer id.
    Int(i64),
    /// A text id.
    Text(String),
}

impl From<i64> for EntityId {
    fn from(id: i64) -> Self {
        EntityId::Int(id)
    }
}

impl From<&str> for EntityId {
    fn from(id: &str) -> Self {
        EntityId::Text(id.into())
    }
}

impl From<String> for EntityId {
    fn from(id: String) -> Self {
        EntityId::Text(id)
    }
}

/// The state machine of one kind of entity: its [`TransitionTable`] and
/// where its state lives ([`TransitionTarget`]), declared once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transitions {
    table: TransitionTable,
    target: TransitionTarget,
}

impl Transitions {
    /// The state machine of `table`, stored in `target`.
    pub fn new(table: TransitionTable, target: TransitionTarget) -> Self {
        Self { table, target }
    }

    /// Moves the entity `id` from `from` to `to` on `conn` (a pool's
    /// connection, or the caller's transaction: `&mut *tx`, inside
    /// [`Inbox::consume`](crate::Inbox::consume) or `run_once`'s operation):
    /// [`TransitionOutcome::Applied`], [`TransitionOutcome::Already`] (the
    /// duplicate callback: nothing written) or
    /// [`TransitionOutcome::Refused`] with the row's current state.
    ///
    /// Fails with `transition.unknown_state` or `transition.not_allowed`
    /// before any SQL runs, `transition.not_found` when no row has the id,
    /// or a `store.*` error.
    pub async fn transition<DB: Backend>(
        &self,
        conn: &mut DB::Connection,
        id: impl Into<EntityId>,
        from: &str,
        to: &str,
    ) -> Result<TransitionOutcome, Error> {
        let id = match id.into() {
            EntityId::Int(id) => Value::Int(id),
            EntityId::Text(id) => Value::Text(id),
        };
        let manifest = crate::Store::<DB>::manifest();
        let mut driver =
            TransitionDriver::new(manifest, &self.table, self.target.clone(), id, from, to);
        let mut step = driver.start();
        loop {
            step = match step {
                Step::Yield(TransitionYield::Execute { statement, params }) => {
                    let answer = DB::run(conn, &statement, params).await;
                    if let Answer::Failed(error) = &answer {
                        crate::telemetry::store_error(error.class);
                    }
                    driver.push(answer)
                }
                Step::Yield(TransitionYield::Done(outcome)) => return Ok(outcome),
                Step::Fail(error) => return Err(error.into()),
                _ => return Err(crate::steps::unexpected_step("a transaction step").into()),
            };
        }
    }
}
