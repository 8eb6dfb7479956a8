//! One shared UUIDv7 generator, many threads: no duplicate, increasing per thread.
#![cfg(feature = "std")]

use mintid::{
    Entropy, ManualClock, RollbackPolicy, SharedUuid7Generator, SystemClock, ThreadEntropy, Uuid7,
};
use std::sync::Barrier;

/// No randomness at all: every random bit is zero, so distinct IDs prove
/// distinct generator states (random bits cannot hide a repeated state).
struct Zeros;

impl Entropy for Zeros {
    fn fill_bytes(&self, dest: &mut [u8]) {
        dest.fill(0);
    }
}

/// Runs `threads` threads that each take `per_thread` IDs from `generate`
/// (in batches of `batch`); checks order per thread and uniqueness overall.
fn hammer(
    threads: usize,
    per_thread: usize,
    batch: usize,
    generate: &(dyn Fn(&mut [Uuid7]) + Sync),
) -> Vec<Uuid7> {
    let barrier = Barrier::new(threads);
    let mut all: Vec<Uuid7> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut ids = vec![Uuid7::from_fields(0, 0, 0).unwrap(); per_thread];
                    barrier.wait();
                    for chunk in ids.chunks_mut(batch) {
                        generate(chunk);
                    }
                    assert!(
                        ids.windows(2).all(|w| w[0] < w[1]),
                        "IDs must increase within a thread"
                    );
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread panicked"))
            .collect()
    });
    let total = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), total, "duplicate IDs across threads");
    all
}

#[test]
fn eight_threads_on_the_system_clock_never_see_a_false_rollback() {
    // `Fail` turns any rollback the generator wrongly sees between threads
    // into a panic here.
    let generator =
        SharedUuid7Generator::with_sources(SystemClock, Zeros).with_policy(RollbackPolicy::Fail);
    let ids = hammer(8, 250_000, 1, &|out| {
        out[0] = generator.generate().expect("no error on a healthy clock")
    });
    assert_eq!(ids.len(), 2_000_000);
    for id in [ids[0], ids[ids.len() - 1]] {
        assert_eq!(uuid::Uuid::from_bytes(*id.as_bytes()).get_version_num(), 7);
    }
}

#[test]
fn threads_with_real_randomness_in_bulk() {
    let generator = SharedUuid7Generator::with_sources(SystemClock, ThreadEntropy);
    hammer(4, 50_000, 1_000, &|out| generator.fill(out).unwrap());
}

#[test]
fn threads_sharing_a_frozen_clock_carry_into_later_milliseconds() {
    // 4 × 100 000 IDs in one clock millisecond: the counter rolls over about
    // six times, under contention, with single IDs and with batches mixed.
    let clock = ManualClock::new(1_700_000_000_000);
    let generator =
        SharedUuid7Generator::with_sources(&clock, Zeros).with_policy(RollbackPolicy::Fail);
    let ids = hammer(4, 100_000, 7, &|out| {
        out[0] = generator.generate().unwrap();
        generator.fill(&mut out[1..]).unwrap();
    });
    let last = ids[ids.len() - 1];
    assert!(last.timestamp_millis() > 1_700_000_000_000 + 5);
}
