//! The model check of the store drivers (`docs/spec.md`, "Model check"):
//! every interleaving of two or three drivers of one key up to a depth, with
//! faults at every step, against a simulated database, Redis and clocks;
//! and each deliberate mutation (a broken schema) found as a counterexample.
//!
//! `MINTID_MODEL_DEPTH=deep` (`make model-check-deep`) runs the larger
//! bounds.

#[path = "support/explore.rs"]
mod explore;
#[path = "support/fake_db.rs"]
mod fake_db;
#[path = "support/fake_redis.rs"]
mod fake_redis;
#[path = "support/model_lease.rs"]
mod model_lease;
#[path = "support/model_outbox.rs"]
mod model_outbox;
#[path = "support/model_record.rs"]
mod model_record;
#[path = "support/model_segment.rs"]
mod model_segment;
#[path = "support/sim.rs"]
mod sim;

use explore::{Counterexample, Model, Stats, explore};

fn deep() -> bool {
    std::env::var("MINTID_MODEL_DEPTH").as_deref() == Ok("deep")
}

/// `MINTID_MODEL_DEPTH=N` overrides every depth (for measuring).
fn depth(quick: usize, deeper: usize) -> usize {
    match std::env::var("MINTID_MODEL_DEPTH")
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(depth) => depth,
        None if deep() => deeper,
        None => quick,
    }
}

/// Explores and fails with the counterexample's trace, or prints the stats.
fn holds<M: Model>(name: &str, initial: &[M], depth: usize) -> Stats {
    match explore(initial, depth) {
        Ok(stats) => {
            println!("{name}: depth {depth}: {stats}");
            stats
        }
        Err(counterexample) => panic!("{name}: {counterexample:?}"),
    }
}

/// Explores and expects a counterexample (a mutation), returned.
fn broken<M: Model>(name: &str, initial: &[M], depth: usize) -> Counterexample<M::Action> {
    match explore(initial, depth) {
        Ok(stats) => panic!("{name}: the mutation was not found: {stats}"),
        Err(counterexample) => {
            assert!(!counterexample.trace.is_empty());
            println!("{name}: found as expected: {counterexample:?}");
            counterexample
        }
    }
}

mod record {
    use super::model_record::{Bounds, RecordModel, SKEW_MILLIS};
    use super::*;

    const S: i64 = SKEW_MILLIS as i64;

    fn bounds() -> Bounds {
        Bounds {
            faults: 1,
            crashes: 1,
            flushes: 1,
            advances: 3,
            renewals: 1,
            raises: deep(),
        }
    }

    fn check(skews: &[i64], quick: usize, deeper: usize) {
        let model = RecordModel::new(skews, bounds(), false);
        let name = format!("record, clocks off by {skews:?}");
        holds(&name, std::slice::from_ref(&model), depth(quick, deeper));
        for finding in model.findings.borrow().iter() {
            println!("{name}: finding: {finding}");
        }
    }

    #[test]
    fn two_requests_on_one_clock_execute_at_most_once_recorded() {
        check(&[0, 0], 11, 13);
    }

    #[test]
    fn two_requests_one_clock_fast_execute_at_most_once_recorded() {
        check(&[0, S], 11, 13);
    }

    #[test]
    fn two_requests_clocks_apart_execute_at_most_once_recorded() {
        check(&[-S, S], 11, 13);
    }

    #[test]
    fn three_requests_execute_at_most_once_recorded() {
        check(&[-S, 0, S], 8, 10);
    }

    #[test]
    fn a_completion_that_ignores_the_fencing_token_is_found() {
        let model = RecordModel::new(&[0, 0], bounds(), true);
        broken("record, fence ignored", &[model], 14);
    }
}

mod lease {
    use super::model_lease::{Bounds, LeaseModel, SKEW_MILLIS};
    use super::*;

    const S: i64 = SKEW_MILLIS as i64;

    fn bounds() -> Bounds {
        Bounds {
            faults: 1,
            crashes: 1,
            advances: 5,
            renewals: 1,
        }
    }

    fn models(skews: &[&[i64]], mutated: bool) -> Vec<LeaseModel> {
        skews
            .iter()
            .map(|skews| LeaseModel::new(skews, bounds(), mutated))
            .collect()
    }

    #[test]
    fn two_holders_of_one_worker_id_never_issue_one_id_twice() {
        let skews: &[&[i64]] = &[&[0, 0], &[S, -S], &[-S, S]];
        holds("lease, 2 holders", &models(skews, false), depth(14, 17));
    }

    #[test]
    fn a_release_that_skips_its_high_water_write_is_found() {
        let skews: &[&[i64]] = &[&[S, -S]];
        broken("lease, high water skipped", &models(skews, true), 14);
    }
}

mod outbox {
    use super::model_outbox::{Bounds, OutboxModel};
    use super::*;

    #[test]
    fn two_relays_never_send_a_message_twice_under_live_claims_nor_lose_one() {
        let bounds = Bounds {
            faults: 1,
            crashes: 1,
            advances: 2,
        };
        let model = OutboxModel::new(2, bounds);
        holds(
            "outbox, 2 relays",
            std::slice::from_ref(&model),
            depth(13, 15),
        );
        for finding in model.findings.borrow().iter() {
            println!("finding: {finding}");
        }
    }
}

mod segment {
    use super::model_segment::{Bounds, SegmentModel};
    use super::*;

    #[test]
    fn two_processes_of_one_tag_never_hand_out_one_id_twice() {
        let bounds = Bounds {
            faults: 1,
            crashes: 1,
            takes: 3,
        };
        let model = SegmentModel::new(2, bounds);
        holds("segment, 2 processes", &[model], depth(22, 28));
    }
}
