//! Property tests of the segment allocator: several processes share one tag
//! in a simulated database; fetches run and their results arrive in random
//! interleavings with ID draws, failures and time passing. No ID is ever
//! handed out twice, each process's IDs increase, and the step stays within
//! its bounds.

use std::collections::HashSet;

use mintid::segment::{Fetch, SegmentAllocator, SegmentPolicy, SegmentRow};
use proptest::prelude::*;

const PROCESSES: usize = 3;

#[derive(Debug, Clone)]
enum Event {
    Advance(u64),
    Draw(usize, usize),
    Due(usize),
    /// The database runs the process's fetch (`segment_fetch` + `segment_load`).
    Run(usize),
    /// The result of the fetch reaches the process.
    Deliver(usize),
    Fail(usize),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0u64..2_000_000).prop_map(Event::Advance),
        (0..PROCESSES, 1usize..40).prop_map(|(p, n)| Event::Draw(p, n)),
        (0..PROCESSES).prop_map(Event::Due),
        (0..PROCESSES).prop_map(Event::Run),
        (0..PROCESSES).prop_map(Event::Deliver),
        (0..PROCESSES).prop_map(Event::Fail),
    ]
}

fn policy() -> impl Strategy<Value = SegmentPolicy> {
    (
        1u64..20,
        0u64..20,
        0u64..40,
        0u8..=100,
        0u64..1_000_000,
        0u64..1_000_000,
    )
        .prop_map(|(min, above_min, above_initial, percent, a, b)| {
            SegmentPolicy::new(min + above_min, min, min + above_min + above_initial)
                .unwrap()
                .with_fetch_at_percent(percent)
                .unwrap()
                .with_adaptation(a.min(b), a.max(b))
                .unwrap()
        })
}

/// One process: its allocator, its fetch in flight and the row the database
/// returned for it (once run).
struct Process {
    allocator: SegmentAllocator,
    requested: Option<Fetch>,
    result: Option<SegmentRow>,
    last_id: u64,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn no_id_twice_ids_increase_steps_stay_bounded(
        policy in policy(),
        events in prop::collection::vec(event(), 1..300),
    ) {
        let mut now = 0u64;
        let mut max_id = 0u64;
        let mut seen = HashSet::new();
        let mut processes: Vec<Process> = (0..PROCESSES)
            .map(|_| Process {
                allocator: SegmentAllocator::new(policy),
                requested: None,
                result: None,
                last_id: 0,
            })
            .collect();
        for event in events {
            match event {
                Event::Advance(ms) => now += ms,
                Event::Draw(p, n) => {
                    let process = &mut processes[p];
                    let mut out = vec![0; n];
                    let written = process.allocator.fill(&mut out);
                    if let Some(id) = process.allocator.next_id() {
                        out.truncate(written);
                        out.push(id);
                    } else {
                        out.truncate(written);
                    }
                    for id in out {
                        prop_assert!(id > process.last_id, "IDs of a process increase");
                        prop_assert!(seen.insert(id), "ID {} handed out twice", id);
                        process.last_id = id;
                    }
                }
                Event::Due(p) => {
                    let process = &mut processes[p];
                    if let Some(fetch) = process.allocator.fetch_due(now) {
                        prop_assert!(process.requested.is_none(), "one fetch at a time");
                        prop_assert!(
                            (policy.min_step()..=policy.max_step()).contains(&fetch.step)
                        );
                        process.requested = Some(fetch);
                    }
                }
                Event::Run(p) => {
                    let process = &mut processes[p];
                    if let (Some(fetch), None) = (process.requested, process.result) {
                        max_id += fetch.step;
                        process.result = Some(SegmentRow { max_id, step: fetch.step });
                    }
                }
                Event::Deliver(p) => {
                    let process = &mut processes[p];
                    if let Some(row) = process.result.take() {
                        process.requested = None;
                        prop_assert_eq!(process.allocator.fetched(row, now), Ok(()));
                    }
                }
                Event::Fail(p) => {
                    let process = &mut processes[p];
                    if process.requested.is_some() && process.result.is_none() {
                        process.requested = None;
                        process.allocator.fetch_failed();
                    }
                }
            }
            for process in &processes {
                let step = process.allocator.step();
                prop_assert!((policy.min_step()..=policy.max_step()).contains(&step));
                prop_assert_eq!(process.allocator.fetch_in_flight(), process.requested.is_some());
            }
        }
        let in_memory: u64 = processes.iter().map(|p| p.allocator.remaining()).sum();
        let undelivered: u64 = processes.iter().filter_map(|p| p.result.map(|r| r.step)).sum();
        prop_assert_eq!(seen.len() as u64 + in_memory + undelivered, max_id,
            "every ID taken from the database is handed out, in memory, or in flight");
    }
}
