//! What the model check's simulated databases share: the faults a query
//! can meet and reading a query's parameters by name.

use mintid::store::{Answer, DbError, DbErrorClass, Manifest, Query, Value};

/// What happens to one query (or Redis call) on its way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// It runs and its answer comes back.
    None,
    /// An outage: it fails `connection_lost` without being applied.
    Outage,
    /// A lost reply: it is applied (committed), and its answer is
    /// `connection_lost`.
    LostReply,
}

/// The faults to try for a query that writes (a lost reply of a read is an
/// outage), or only `None` when the fault budget is spent.
pub fn faults(writes: bool, budget_left: bool) -> &'static [Fault] {
    match (budget_left, writes) {
        (false, _) => &[Fault::None],
        (true, false) => &[Fault::None, Fault::Outage],
        (true, true) => &[Fault::None, Fault::Outage, Fault::LostReply],
    }
}

/// A lost connection, as a host's executor classifies it.
pub fn connection_lost() -> Answer {
    Answer::Failed(DbError {
        class: DbErrorClass::ConnectionLost,
        message: "server closed the connection unexpectedly".into(),
    })
}

/// Runs `query` on `run` under `fault`.
pub fn under(fault: Fault, run: impl FnOnce() -> Answer) -> Answer {
    match fault {
        Fault::None => run(),
        Fault::Outage => connection_lost(),
        Fault::LostReply => {
            run();
            connection_lost()
        }
    }
}

/// The parameter `name` of `query`, by the manifest's statement.
pub fn param<'q>(manifest: &Manifest, query: &'q Query, name: &str) -> Option<&'q Value> {
    let statement = manifest.statement(query.name)?;
    let at = statement.params.iter().position(|p| *p == name)?;
    query.params.get(at)
}

/// The integer parameter `name` of `query`.
pub fn int_param(manifest: &Manifest, query: &Query, name: &str) -> i64 {
    param(manifest, query, name)
        .and_then(Value::as_int)
        .unwrap_or_else(|| panic!("{} has no integer {name}", query.name))
}
