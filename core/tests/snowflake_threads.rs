//! One Snowflake generator shared by 8 threads on the system clock.
#![cfg(feature = "std")]

use std::thread;

use mintid::{SequencePolicy, Snowflake, SnowflakeLayout, SystemClock};

const THREADS: usize = 8;
const PER_THREAD: usize = 250_000;

/// Runs `issue` on every thread against one generator; checks that each
/// thread saw increasing IDs and that no ID appeared twice.
fn check_shared(
    generator: &Snowflake<SystemClock>,
    issue: fn(&Snowflake<SystemClock>) -> Vec<u64>,
) {
    let per_thread: Vec<Vec<u64>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| scope.spawn(|| issue(generator)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all = Vec::with_capacity(THREADS * PER_THREAD);
    for ids in &per_thread {
        assert_eq!(ids.len(), PER_THREAD);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "not increasing");
        all.extend_from_slice(ids);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), THREADS * PER_THREAD, "duplicate IDs");
    let layout = generator.layout();
    for &id in [all[0], all[all.len() - 1]].iter() {
        let parts = layout.decode(id.try_into().unwrap()).unwrap();
        assert_eq!(parts.worker, generator.worker());
    }
    assert_eq!(generator.high_water().map(u64::from), all.last().copied());
}

#[test]
fn eight_threads_one_at_a_time() {
    let generator = Snowflake::new(SnowflakeLayout::CLASSIC, 9).unwrap();
    check_shared(&generator, |generator| {
        (0..PER_THREAD)
            .map(|_| generator.next_id().unwrap().get())
            .collect()
    });
}

#[test]
fn eight_threads_in_batches_borrowing_ahead() {
    let generator = Snowflake::builder(SnowflakeLayout::CLASSIC, 10, SystemClock)
        .sequence_policy(SequencePolicy::BorrowAhead { max_ticks: 50 })
        .build()
        .unwrap();
    check_shared(&generator, |generator| {
        // Runs of 999 from `fill` and 1 from `next_id`: 250 000 in all.
        let mut ids = Vec::with_capacity(PER_THREAD);
        let mut batch = [0u64; 999];
        while ids.len() < PER_THREAD {
            generator.fill(&mut batch).unwrap();
            ids.extend_from_slice(&batch);
            ids.push(generator.next_id().unwrap().get());
        }
        ids
    });
}
