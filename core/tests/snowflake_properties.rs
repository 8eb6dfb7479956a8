//! Properties of the Snowflake generator under a clock that jumps about:
//! every ID issued is unique, greater than the one before, from the right
//! worker, and never further ahead of the clock than the policies allow.

use mintid::{
    Clock, ManualClock, RollbackPolicy, SequencePolicy, Snowflake, SnowflakeId, SnowflakeLayout,
};
use proptest::prelude::*;

const EPOCH: u64 = 1_000_000;
const WORKER: u64 = 2;

#[derive(Debug, Clone)]
enum Step {
    Advance(u64),
    Rewind(u64),
    Next,
    Fill(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            (0u64..4).prop_map(Step::Advance),
            (0u64..8).prop_map(Step::Rewind),
            Just(Step::Next),
            Just(Step::Next),
            (0usize..12).prop_map(Step::Fill),
        ],
        1..80,
    )
}

fn rollback_policies() -> impl Strategy<Value = RollbackPolicy> {
    prop_oneof![
        Just(RollbackPolicy::Fail),
        (0u64..6).prop_map(|max_millis| RollbackPolicy::Wait { max_millis }),
        (0u64..6).prop_map(|max_millis| RollbackPolicy::Logical { max_millis }),
    ]
}

fn sequence_policies() -> impl Strategy<Value = SequencePolicy> {
    prop_oneof![
        Just(SequencePolicy::Wait),
        (0u64..4).prop_map(|max_ticks| SequencePolicy::BorrowAhead { max_ticks }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn ids_are_unique_increasing_and_bounded(
        steps in steps(),
        rollback in rollback_policies(),
        sequence in sequence_policies(),
        tick_millis in 1u64..4,
        advancing in any::<bool>(),
    ) {
        // 2 sequence bits: a tick's IDs run out every few steps.
        let layout = SnowflakeLayout::new(30, 3, 2, EPOCH, tick_millis).unwrap();
        let clock = ManualClock::new(EPOCH + 50);
        let clock = if advancing { clock.advancing_on_pause() } else { clock };
        let generator = Snowflake::builder(layout, WORKER, &clock)
            .rollback(rollback)
            .sequence_policy(sequence)
            .build()
            .unwrap();
        let allowed_lead = match sequence {
            SequencePolicy::Wait => 0,
            SequencePolicy::BorrowAhead { max_ticks } => max_ticks,
        } + match rollback {
            RollbackPolicy::Logical { max_millis } => max_millis / tick_millis,
            _ => 0,
        };
        for step in steps {
            let before = generator.high_water();
            let issued = match step {
                Step::Advance(ms) => { clock.advance_millis(ms); continue; }
                Step::Rewind(ms) => { clock.rewind_millis(ms); continue; }
                Step::Next => generator.next_id().map(|id| vec![id]),
                Step::Fill(n) => generator.next_batch(n).map(|ids| {
                    ids.into_iter().map(|id| SnowflakeId::new(id).unwrap()).collect()
                }),
            };
            let after = generator.high_water();
            let issued = match issued {
                Ok(issued) => issued,
                Err(_) => {
                    // A failed call hands out nothing; a failed batch may
                    // have used up IDs before the error.
                    prop_assert!(after >= before);
                    if matches!(step, Step::Next) {
                        prop_assert_eq!(after, before);
                    }
                    continue;
                }
            };
            let now_tick = clock.now_millis().saturating_sub(EPOCH) / tick_millis;
            let mut previous = before;
            for &id in &issued {
                prop_assert!(previous.is_none_or(|p| id > p), "{id:?} after {previous:?}");
                let parts = layout.decode(id).unwrap();
                prop_assert_eq!(parts.worker, WORKER);
                prop_assert!(parts.tick <= now_tick + allowed_lead,
                    "tick {} with the clock at {now_tick}", parts.tick);
                previous = Some(id);
            }
            prop_assert_eq!(after, previous);
        }
    }
}
