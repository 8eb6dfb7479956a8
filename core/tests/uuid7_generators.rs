//! Both UUIDv7 generators driven by a manual clock and fixed entropy.

use mintid::uuid7::{self, DEFAULT_ROLLBACK_POLICY, Uuid7ErrorKind};
use mintid::{
    Clock, FixedEntropy, ManualClock, RollbackPolicy, SharedUuid7Generator, Uuid7, Uuid7Error,
    Uuid7Generator,
};
use proptest::prelude::*;

const T: u64 = 1_700_000_000_000;
const MAX_MS: u64 = (1 << 48) - 1;

/// The two generators behind one interface, so every scenario runs on both.
trait Generate {
    fn next(&mut self) -> Result<Uuid7, Uuid7Error>;
    fn batch(&mut self, count: usize) -> Result<Vec<Uuid7>, Uuid7Error>;
}

impl Generate for Uuid7Generator<&ManualClock, &FixedEntropy> {
    fn next(&mut self) -> Result<Uuid7, Uuid7Error> {
        self.generate()
    }
    fn batch(&mut self, count: usize) -> Result<Vec<Uuid7>, Uuid7Error> {
        let mut out = vec![Uuid7::from_fields(0, 0, 0)?; count];
        self.fill(&mut out).map(|()| out)
    }
}

impl Generate for SharedUuid7Generator<&ManualClock, &FixedEntropy> {
    fn next(&mut self) -> Result<Uuid7, Uuid7Error> {
        self.generate()
    }
    fn batch(&mut self, count: usize) -> Result<Vec<Uuid7>, Uuid7Error> {
        let mut bytes = vec![0u8; 16 * count];
        self.fill_bytes(&mut bytes)?;
        bytes
            .chunks_exact(16)
            .map(|b| Uuid7::from_bytes(b.try_into().unwrap()))
            .collect()
    }
}

/// Runs `scenario` on a single-owner and on a shared generator.
fn on_both(
    policy: RollbackPolicy,
    entropy: &[u8],
    scenario: impl Fn(&ManualClock, &FixedEntropy, &mut dyn Generate),
) {
    let clock = ManualClock::new(T);
    let fixed = FixedEntropy::new(entropy.to_vec());
    scenario(
        &clock,
        &fixed,
        &mut Uuid7Generator::with_sources(&clock, &fixed).with_policy(policy),
    );
    let clock = ManualClock::new(T);
    let fixed = FixedEntropy::new(entropy.to_vec());
    scenario(
        &clock,
        &fixed,
        &mut SharedUuid7Generator::with_sources(&clock, &fixed).with_policy(policy),
    );
}

fn code(result: Result<Uuid7, Uuid7Error>) -> &'static str {
    result.expect_err("must fail").code()
}

#[test]
fn a_new_millisecond_seeds_the_counter_and_the_same_one_counts_on() {
    // Seed bytes 0xABCD -> counter 0x2BCD (top bit cleared); tails are 0x11.. and 0x22..
    let entropy = [[0xAB, 0xCD].as_slice(), &[0x11; 8], &[0x22; 8]].concat();
    on_both(DEFAULT_ROLLBACK_POLICY, &entropy, |clock, _, g| {
        let a = g.next().unwrap();
        assert_eq!((a.timestamp_millis(), a.counter()), (T, 0x2BCD));
        assert_eq!(
            a.rand_b() & ((1 << 58) - 1),
            0x1111_1111_1111_1111 & ((1 << 58) - 1)
        );
        let b = g.next().unwrap();
        assert_eq!((b.timestamp_millis(), b.counter()), (T, 0x2BCE));
        clock.advance_millis(3);
        let c = g.next().unwrap();
        assert_eq!(c.timestamp_millis(), T + 3);
        assert!(a < b && b < c);
        for id in [a, b, c] {
            let theirs = uuid::Uuid::from_bytes(*id.as_bytes());
            assert_eq!(theirs.get_version_num(), 7);
            assert_eq!(theirs.get_variant(), uuid::Variant::RFC4122);
        }
    });
}

/// What each policy must do when the clock goes back by `back` ms.
fn rollback_scenario(policy: RollbackPolicy, back: u64, bridged: bool) {
    on_both(policy, &[0x5A, 0x01, 0xC3], |clock, _, g| {
        let before = g.next().unwrap();
        clock.rewind_millis(back);
        let during = g.next();
        if bridged {
            let during = during.unwrap();
            assert_eq!(
                during.timestamp_millis(),
                T,
                "the timestamp never goes back"
            );
            assert_eq!(during.counter(), before.counter() + 1);
        } else {
            let err = during.unwrap_err();
            assert_eq!(
                err.kind(),
                Uuid7ErrorKind::ClockRollback,
                "{policy:?} {back}"
            );
            assert!(
                err.to_string().contains(&format!("went back {back} ms")),
                "{err}"
            );
        }
        clock.advance_millis(back);
        let after = g.next().unwrap();
        assert!(before < after);
        assert_eq!(after.timestamp_millis(), T);
    });
}

#[test]
fn rollback_under_fail() {
    for back in [1, 5, 2000] {
        rollback_scenario(RollbackPolicy::Fail, back, false);
    }
}

#[test]
fn rollback_under_logical() {
    let policy = RollbackPolicy::Logical { max_millis: 5 };
    rollback_scenario(policy, 1, true);
    rollback_scenario(policy, 5, true);
    rollback_scenario(policy, 2000, false);
    for back in [1, 5, 2000] {
        rollback_scenario(DEFAULT_ROLLBACK_POLICY, back, true);
    }
    rollback_scenario(DEFAULT_ROLLBACK_POLICY, 10_001, false);
}

#[test]
fn rollback_under_wait_with_a_stuck_clock() {
    let policy = RollbackPolicy::Wait { max_millis: 5 };
    for back in [1, 5, 2000] {
        rollback_scenario(policy, back, false);
    }
}

#[test]
fn rollback_under_wait_with_a_running_clock() {
    let policy = RollbackPolicy::Wait { max_millis: 5 };
    for back in [1, 5] {
        let clock = ManualClock::new(T).advancing_on_pause();
        let fixed = FixedEntropy::new(vec![7, 7, 7]);
        let shared = SharedUuid7Generator::with_sources(&clock, &fixed).with_policy(policy);
        let mut owned = Uuid7Generator::with_sources(&clock, &fixed).with_policy(policy);
        let (a, b) = (shared.generate().unwrap(), owned.generate().unwrap());
        clock.rewind_millis(back);
        let (c, d) = (shared.generate().unwrap(), owned.generate().unwrap());
        assert!(a < c && b < d, "waited {back} ms");
        assert!(clock.now_millis() >= T, "the clock caught up while waiting");
    }
    let clock = ManualClock::new(T).advancing_on_pause();
    let fixed = FixedEntropy::new(vec![7]);
    let mut owned = Uuid7Generator::with_sources(&clock, &fixed).with_policy(policy);
    owned.generate().unwrap();
    clock.rewind_millis(2000);
    assert_eq!(code(owned.generate()), "uuid7.clock_rollback");
    assert_eq!(clock.now_millis(), T - 2000, "no wait beyond the bound");
}

#[test]
fn counter_rollover_advances_the_timestamp_and_is_no_rollback() {
    // Seed 0x7FFF: counters 0x7FFF..=0xFFFF fit in the millisecond (32 769 IDs).
    on_both(RollbackPolicy::Fail, &[0xFF, 0xFF, 0x00], |clock, _, g| {
        let first = g.next().unwrap();
        assert_eq!(first.counter(), 0x7FFF);
        let rest = g.batch(32_768).unwrap();
        let last_of_millis = rest[32_767];
        assert_eq!(
            (last_of_millis.timestamp_millis(), last_of_millis.counter()),
            (T, 0xFFFF)
        );
        let carried = g.next().unwrap();
        assert_eq!((carried.timestamp_millis(), carried.counter()), (T + 1, 0));
        // The clock still reads T: behind the carried timestamp, yet no rollback.
        let again = g.next().unwrap();
        assert_eq!((again.timestamp_millis(), again.counter()), (T + 1, 1));
        clock.advance_millis(1);
        let same = g.next().unwrap();
        assert_eq!((same.timestamp_millis(), same.counter()), (T + 1, 2));
        clock.advance_millis(1);
        assert_eq!(g.next().unwrap().timestamp_millis(), T + 2);
        // A real rollback is still measured against the clock.
        clock.rewind_millis(1);
        assert_eq!(code(g.next()), "uuid7.clock_rollback");
    });
}

#[test]
fn a_large_batch_carries_across_milliseconds_in_order() {
    on_both(RollbackPolicy::Fail, &[0, 0, 1, 2, 3], |_, _, g| {
        let ids = g.batch(200_000).unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids[0].counter(), 0);
        let last = ids[199_999];
        assert_eq!(last.timestamp_millis(), T + 199_999 / 65_536);
        assert_eq!(last.counter(), (199_999 % 65_536) as u16);
    });
}

#[test]
fn the_end_of_the_48_bit_timestamp_is_an_error() {
    // All-ones entropy: every seed is 0x7FFF, even after a failed batch drew one.
    on_both(RollbackPolicy::Fail, &[0xFF], |clock, _, g| {
        clock.set_millis(MAX_MS + 1);
        assert_eq!(code(g.next()), "uuid7.timestamp_overflow");
        clock.set_millis(MAX_MS);
        assert_eq!(
            g.batch(32_770).unwrap_err().code(),
            "uuid7.timestamp_overflow"
        );
        let ids = g.batch(32_769).unwrap();
        assert_eq!(
            ids[32_768].to_string(),
            "ffffffff-ffff-7fff-bfff-ffffffffffff"
        );
        assert_eq!(code(g.next()), "uuid7.timestamp_overflow");
        assert_eq!(g.batch(0).unwrap(), vec![], "an empty batch needs no ID");
    });
}

#[test]
fn bulk_paths_give_the_same_ids_as_one_by_one() {
    let entropy: Vec<u8> = (0..=255u8).rev().chain(0..=100).collect();
    let clock = ManualClock::new(T);
    let one_by_one: Vec<Uuid7> = {
        let fixed = FixedEntropy::new(entropy.clone());
        let mut g = Uuid7Generator::with_sources(&clock, &fixed);
        (0..300).map(|_| g.generate().unwrap()).collect()
    };
    let fixed = FixedEntropy::new(entropy.clone());
    let mut owned = Uuid7Generator::with_sources(&clock, &fixed);
    let mut filled = vec![Uuid7::from_fields(0, 0, 0).unwrap(); 300];
    owned.fill(&mut filled[..7]).unwrap();
    owned.fill(&mut filled[7..]).unwrap();
    assert_eq!(filled, one_by_one);

    let fixed = FixedEntropy::new(entropy.clone());
    let mut owned = Uuid7Generator::with_sources(&clock, &fixed);
    let mut bytes = vec![0u8; 16 * 300];
    owned.fill_bytes(&mut bytes).unwrap();
    let from_bytes: Vec<Uuid7> = bytes
        .chunks_exact(16)
        .map(|b| Uuid7::from_bytes(b.try_into().unwrap()).unwrap())
        .collect();
    assert_eq!(from_bytes, one_by_one);

    let fixed = FixedEntropy::new(entropy);
    let shared = SharedUuid7Generator::with_sources(&clock, &fixed);
    let mut shared_ids = vec![Uuid7::from_fields(0, 0, 0).unwrap(); 300];
    shared.fill(&mut shared_ids[..100]).unwrap();
    shared.fill(&mut shared_ids[100..]).unwrap();
    assert_eq!(shared_ids, one_by_one);
}

#[test]
fn a_bad_byte_buffer_or_a_failure_writes_nothing() {
    let clock = ManualClock::new(T);
    let fixed = FixedEntropy::new(vec![1, 2, 3]);
    let mut owned = Uuid7Generator::with_sources(&clock, &fixed).with_policy(RollbackPolicy::Fail);
    let shared =
        SharedUuid7Generator::with_sources(&clock, &fixed).with_policy(RollbackPolicy::Fail);
    let mut odd = [9u8; 17];
    assert_eq!(
        owned.fill_bytes(&mut odd).unwrap_err().code(),
        "uuid7.buffer_length"
    );
    assert_eq!(
        shared.fill_bytes(&mut odd).unwrap_err().code(),
        "uuid7.buffer_length"
    );
    assert_eq!(odd, [9u8; 17]);
    owned.generate().unwrap();
    shared.generate().unwrap();
    clock.rewind_millis(1);
    let mut out = [9u8; 32];
    assert_eq!(
        owned.fill_bytes(&mut out).unwrap_err().code(),
        "uuid7.clock_rollback"
    );
    assert_eq!(
        shared.fill_bytes(&mut out).unwrap_err().code(),
        "uuid7.clock_rollback"
    );
    assert_eq!(out, [9u8; 32]);
    assert_eq!(owned.fill_bytes(&mut []), Ok(()));
}

#[test]
fn discard_entropy_drops_the_buffered_bytes() {
    let clock = ManualClock::new(T);
    let fixed = FixedEntropy::new((0..=255u8).collect::<Vec<_>>());
    let mut g = Uuid7Generator::with_sources(&clock, &fixed);
    g.generate().unwrap();
    assert_eq!(
        fixed.consumed(),
        1024,
        "randomness is drawn 1024 bytes at a time"
    );
    g.discard_entropy();
    g.generate().unwrap();
    assert_eq!(fixed.consumed(), 2048);
}

#[test]
fn policies_and_debug() {
    let clock = ManualClock::new(T);
    let fixed = FixedEntropy::new(vec![1]);
    let g = Uuid7Generator::with_sources(&clock, &fixed);
    assert_eq!(g.policy(), DEFAULT_ROLLBACK_POLICY);
    assert_eq!(
        DEFAULT_ROLLBACK_POLICY,
        RollbackPolicy::Logical { max_millis: 10_000 }
    );
    let s = SharedUuid7Generator::with_sources(&clock, &fixed).with_policy(RollbackPolicy::Fail);
    assert_eq!(s.policy(), RollbackPolicy::Fail);
    s.generate().unwrap();
    let debug = format!("{s:?}");
    assert!(debug.contains(&format!("last_millis: {T}")), "{debug}");
    assert!(format!("{g:?}").starts_with("Uuid7Generator"));
}

#[cfg(feature = "std")]
#[test]
fn std_conveniences_make_increasing_version_7_ids() {
    let a = uuid7::now().unwrap();
    let b = uuid7::global().generate().unwrap();
    let mut g = Uuid7Generator::new();
    let c = g.generate().unwrap();
    let d = g.generate().unwrap();
    assert!(a < b && c < d);
    let mut bulk = vec![0u8; 16 * 1000];
    uuid7::global().fill_bytes(&mut bulk).unwrap();
    assert!(
        bulk.chunks_exact(16)
            .all(|b| { uuid::Uuid::from_slice(b).unwrap().get_version_num() == 7 })
    );
    let now_millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(a.timestamp_millis().abs_diff(now_millis) < 10_000);
    let _ = SharedUuid7Generator::default();
    let _ = Uuid7Generator::default();
}

#[derive(Debug, Clone)]
enum Move {
    Forward(u64),
    Back(u64),
    Batch(usize),
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    prop::collection::vec(
        prop_oneof![
            (0..3u64).prop_map(Move::Forward),
            (1..4u64).prop_map(Move::Back),
            (0..300usize).prop_map(Move::Batch),
        ],
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under any clock wandering a bridging policy tolerates, both
    /// generators give the same strictly increasing IDs.
    #[test]
    fn monotonic_and_identical_under_any_clock(moves in moves(), seed: Vec<u8>) {
        let policy = RollbackPolicy::Logical { max_millis: 1_000 };
        let run = |shared: bool| -> Vec<Uuid7> {
            let clock = ManualClock::new(T);
            let fixed = FixedEntropy::new(seed.clone());
            let mut owned = Uuid7Generator::with_sources(&clock, &fixed).with_policy(policy);
            let common = SharedUuid7Generator::with_sources(&clock, &fixed).with_policy(policy);
            let mut all = Vec::new();
            for m in &moves {
                match *m {
                    Move::Forward(ms) => clock.advance_millis(ms),
                    Move::Back(ms) => clock.rewind_millis(ms),
                    Move::Batch(n) => {
                        let mut out = vec![Uuid7::from_fields(0, 0, 0).unwrap(); n];
                        if shared { common.fill(&mut out).unwrap() } else { owned.fill(&mut out).unwrap() }
                        all.extend(out);
                        all.push(if shared { common.generate() } else { owned.generate() }.unwrap());
                    }
                }
            }
            all
        };
        let owned = run(false);
        prop_assert!(owned.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(owned.windows(2).all(|w| w[0].to_string() < w[1].to_string()));
        prop_assert_eq!(owned, run(true));
    }
}
