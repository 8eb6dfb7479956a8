//! A small exhaustive explorer: every sequence of actions of a model up to a
//! depth, depth first, each distinct state (by fingerprint) expanded once
//! per remaining depth, an invariant checked after every action.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::fmt::{self, Debug};
use std::hash::Hasher;
use std::time::{Duration, Instant};

/// A system to explore: its enabled actions, how one changes it, what must
/// always hold.
pub trait Model: Clone {
    /// One step the explorer may choose.
    type Action: Clone + Debug;
    /// The actions enabled in this state, appended to `out`.
    fn actions(&self, out: &mut Vec<Self::Action>);
    /// Takes `action` (one of [`actions`](Self::actions)).
    fn step(&mut self, action: &Self::Action);
    /// What must hold in every state: the violation, if any.
    fn check(&self) -> Result<(), String>;
    /// What must hold once nothing is enabled any more.
    fn check_end(&self) -> Result<(), String> {
        Ok(())
    }
    /// A fingerprint of the state: equal states give equal fingerprints.
    fn fingerprint(&self) -> u64;
}

/// The fingerprint of anything `Debug` (the drivers are `Debug` and `Clone`,
/// not all `Hash`): its Debug text, hashed.
pub fn debug_print(value: &impl Debug) -> u64 {
    struct Sink(DefaultHasher);
    impl fmt::Write for Sink {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            self.0.write(text.as_bytes());
            Ok(())
        }
    }
    let mut sink = Sink(DefaultHasher::new());
    fmt::Write::write_fmt(&mut sink, format_args!("{value:?}")).expect("Debug never fails");
    sink.0.finish()
}

/// What an exploration covered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stats {
    /// Distinct states reached.
    pub states: u64,
    /// Actions taken (edges explored, revisits included).
    pub transitions: u64,
    /// States reached at the depth bound with actions still enabled.
    pub cut: u64,
    /// States where nothing was enabled (runs that ended).
    pub ends: u64,
    /// How long it took.
    pub elapsed: Duration,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} distinct states, {} transitions, {} ended runs, {} states cut at the depth bound, {:.2?}",
            self.states, self.transitions, self.ends, self.cut, self.elapsed
        )
    }
}

/// A violation and the actions that lead to it from an initial state.
pub struct Counterexample<A> {
    /// Which initial state (index) the trace starts from.
    pub initial: usize,
    /// The actions, in order.
    pub trace: Vec<A>,
    /// What was violated.
    pub violation: String,
    /// What was explored before it was found.
    pub stats: Stats,
}

impl<A: Debug> Debug for Counterexample<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "violation: {}", self.violation)?;
        writeln!(f, "from initial state {}:", self.initial)?;
        for (at, action) in self.trace.iter().enumerate() {
            writeln!(f, "  {at:>3}. {action:?}")?;
        }
        write!(f, "after {}", self.stats)
    }
}

struct Search<M: Model> {
    depth: usize,
    /// Each fingerprint with the most depth left when it was expanded.
    seen: HashMap<u64, usize>,
    stats: Stats,
    trace: Vec<M::Action>,
}

impl<M: Model> Search<M> {
    fn visit(&mut self, state: &M, left: usize) -> Result<(), String> {
        let mut actions = Vec::new();
        state.actions(&mut actions);
        if actions.is_empty() {
            self.stats.ends += 1;
            return state.check_end();
        }
        if left == 0 {
            self.stats.cut += 1;
            return Ok(());
        }
        for action in actions {
            let mut next = state.clone();
            next.step(&action);
            self.stats.transitions += 1;
            self.trace.push(action);
            next.check()?;
            let print = next.fingerprint();
            let fresh = match self.seen.get(&print) {
                None => {
                    self.stats.states += 1;
                    true
                }
                Some(&had) => had < left - 1,
            };
            if fresh {
                self.seen.insert(print, left - 1);
                self.visit(&next, left - 1)?;
            }
            self.trace.pop();
        }
        Ok(())
    }
}

/// Explores every run of up to `depth` actions from each of `initial`.
pub fn explore<M: Model>(initial: &[M], depth: usize) -> Result<Stats, Counterexample<M::Action>> {
    let started = Instant::now();
    let mut search = Search::<M> {
        depth,
        seen: HashMap::new(),
        stats: Stats::default(),
        trace: Vec::new(),
    };
    for (at, state) in initial.iter().enumerate() {
        let result = state.check().and_then(|()| {
            search.stats.states += 1;
            search.seen.insert(state.fingerprint(), search.depth);
            search.visit(state, search.depth)
        });
        if let Err(violation) = result {
            search.stats.elapsed = started.elapsed();
            return Err(Counterexample {
                initial: at,
                trace: search.trace,
                violation,
                stats: search.stats,
            });
        }
    }
    search.stats.elapsed = started.elapsed();
    Ok(search.stats)
}
