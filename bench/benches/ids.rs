//! ID generation: mintid beside `uuid`, `ulid`, `snowflaked` and
//! `rs-snowflake`, all measured in the same run.
//!
//! Groups (criterion reports time per ID):
//! * `uuid7/one_thread`: one ID per call, one thread.
//! * `uuid7/two_threads`: two threads sharing one generator, wall time per ID
//!   in total.
//! * `snowflake/in_tick`: one call inside a tick, timed in bursts of 2048
//!   started at the beginning of a millisecond (the classic 4096-per-ms
//!   layouts never wait inside such a burst).
//! * `snowflake/borrow_ahead`: mintid with borrowing ahead, which never waits
//!   while IDs run at most `max_ticks` ahead of the clock; each sample is
//!   one burst from a fresh generator.
//!
//! Then `snowflake/sustained` (not criterion): each generator for 200 ms,
//! three times, median IDs/s and the CPU time of the issuing threads.

use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use mintid::{
    SequencePolicy, SharedUuid7Generator, Snowflake, SnowflakeLayout, SystemClock, Uuid7Generator,
};
use mintid_bench::{Sustained, sustain_on_two_threads};
use mintid_bench::{in_fresh_ticks, median, on_two_threads, quick, selected, sustain};

/// The worker id of every Snowflake generator here.
const WORKER: u64 = 1;

/// How far the borrow-ahead generators may run ahead of the clock: one
/// minute of ticks (245 M IDs), more than one criterion sample issues.
const BORROW_TICKS: u64 = 60_000;

/// IDs per call of the bulk paths.
const BULK: usize = 256;

fn uuid7_one_thread(c: &mut Criterion) {
    let mut group = c.benchmark_group("uuid7/one_thread");
    let mut owned = Uuid7Generator::new();
    group.bench_function("mintid Uuid7Generator::generate", |b| {
        b.iter(|| black_box(owned.generate()))
    });
    let shared = SharedUuid7Generator::new();
    group.bench_function("mintid SharedUuid7Generator::generate", |b| {
        b.iter(|| black_box(shared.generate()))
    });
    group.bench_function("mintid uuid7::now", |b| {
        b.iter(|| black_box(mintid::uuid7::now()))
    });
    let mut bulk = Uuid7Generator::new();
    let mut bytes = vec![0u8; BULK * 16];
    group.bench_function("mintid Uuid7Generator::fill_bytes (per ID)", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let mut left = iters;
            while left > 0 {
                let ids = usize::try_from(left).map_or(BULK, |left| left.min(BULK));
                bulk.fill_bytes(&mut bytes[..ids * 16])
                    .expect("a UUIDv7 batch");
                black_box(&bytes);
                left -= ids as u64;
            }
            start.elapsed()
        })
    });
    group.bench_function("uuid Uuid::now_v7", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7()))
    });
    let context = uuid::ContextV7::new();
    group.bench_function("uuid Uuid::new_v7 + local ContextV7", |b| {
        b.iter(|| black_box(uuid::Uuid::new_v7(uuid::Timestamp::now(&context))))
    });
    let mut ulids = ulid::Generator::new();
    group.bench_function("ulid Generator::generate", |b| {
        b.iter(|| black_box(ulids.generate()))
    });
    group.finish();
}

fn uuid7_two_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("uuid7/two_threads");
    let shared = SharedUuid7Generator::new();
    group.bench_function("mintid SharedUuid7Generator (one, shared)", |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |n| {
                for _ in 0..n {
                    black_box(shared.generate().expect("a UUIDv7"));
                }
            })
        })
    });
    group.bench_function("mintid uuid7::now (global)", |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |n| {
                for _ in 0..n {
                    black_box(mintid::uuid7::now().expect("a UUIDv7"));
                }
            })
        })
    });
    group.bench_function("mintid Uuid7Generator (one per thread)", |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |n| {
                let mut owned = Uuid7Generator::new();
                for _ in 0..n {
                    black_box(owned.generate().expect("a UUIDv7"));
                }
            })
        })
    });
    group.bench_function("uuid Uuid::now_v7 (shared global context)", |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |n| {
                for _ in 0..n {
                    black_box(uuid::Uuid::now_v7());
                }
            })
        })
    });
    let ulids = Mutex::new(ulid::Generator::new());
    group.bench_function("ulid Mutex<Generator>", |b| {
        b.iter_custom(|iters| {
            on_two_threads(iters, |n| {
                for _ in 0..n {
                    let next = ulids.lock().map(|mut g| g.generate());
                    black_box(next.ok());
                }
            })
        })
    });
    group.finish();
}

fn classic(sequence: SequencePolicy) -> Snowflake<SystemClock> {
    Snowflake::builder(SnowflakeLayout::CLASSIC, WORKER, SystemClock)
        .sequence_policy(sequence)
        .build()
        .expect("a classic-layout generator")
}

fn borrowing() -> Snowflake<SystemClock> {
    classic(SequencePolicy::BorrowAhead {
        max_ticks: BORROW_TICKS,
    })
}

fn snowflake_in_tick(c: &mut Criterion) {
    let mut group = c.benchmark_group("snowflake/in_tick");
    // Bursts wait for a fresh millisecond between them: keep the timed
    // part short, or the waits stretch the run far beyond it.
    group
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(150));
    let ours = classic(SequencePolicy::Wait);
    group.bench_function("mintid Snowflake::next_id", |b| {
        b.iter_custom(|iters| {
            in_fresh_ticks(iters, || {
                black_box(ours.next_id().expect("a Snowflake ID"));
            })
        })
    });
    let snowflaked = snowflaked::sync::Generator::new(WORKER as u16);
    group.bench_function("snowflaked sync::Generator::generate", |b| {
        b.iter_custom(|iters| {
            in_fresh_ticks(iters, || {
                black_box(snowflaked.generate::<u64>());
            })
        })
    });
    let mut rs = snowflake::SnowflakeIdGenerator::new(0, WORKER as i32);
    group.bench_function("rs-snowflake real_time_generate", |b| {
        b.iter_custom(|iters| {
            in_fresh_ticks(iters, || {
                black_box(rs.real_time_generate());
            })
        })
    });
    let mut rs_lazy = snowflake::SnowflakeIdGenerator::new(0, WORKER as i32);
    group.bench_function("rs-snowflake generate", |b| {
        b.iter_custom(|iters| {
            in_fresh_ticks(iters, || {
                black_box(rs_lazy.generate());
            })
        })
    });
    group.finish();
}

/// Times `iters` IDs from a fresh borrow-ahead generator, issued by
/// `issue(generator, n)` on `threads` threads (1 or 2) sharing it: each
/// sample is one burst from a generator that has not borrowed yet.
fn borrow_ahead_burst(
    iters: u64,
    threads: usize,
    issue: impl Fn(&Snowflake<SystemClock>, u64) + Sync,
) -> Duration {
    let generator = borrowing();
    if threads == 2 {
        on_two_threads(iters, |n| issue(&generator, n))
    } else {
        let start = Instant::now();
        issue(&generator, iters);
        start.elapsed()
    }
}

fn next_ids(generator: &Snowflake<SystemClock>, n: u64) {
    for _ in 0..n {
        black_box(generator.next_id().expect("a Snowflake ID"));
    }
}

fn filled_ids(generator: &Snowflake<SystemClock>, n: u64) {
    let mut ids = [0u64; BULK];
    let mut left = n;
    while left > 0 {
        let count = usize::try_from(left).map_or(BULK, |left| left.min(BULK));
        generator
            .fill(&mut ids[..count])
            .expect("a Snowflake batch");
        black_box(&ids);
        left -= count as u64;
    }
}

fn snowflake_borrow_ahead(c: &mut Criterion) {
    let mut group = c.benchmark_group("snowflake/borrow_ahead");
    group.bench_function("mintid next_id", |b| {
        b.iter_custom(|iters| borrow_ahead_burst(iters, 1, next_ids))
    });
    group.bench_function("mintid fill (per ID)", |b| {
        b.iter_custom(|iters| borrow_ahead_burst(iters, 1, filled_ids))
    });
    group.bench_function("mintid next_id, two threads sharing one", |b| {
        b.iter_custom(|iters| borrow_ahead_burst(iters, 2, next_ids))
    });
    group.finish();
}

/// Keeps a peer's `id` from being optimised away; one ID issued.
fn one<T>(id: T) -> u64 {
    black_box(id);
    1
}

/// One ID issued if mintid's call succeeded (an error is not counted).
fn issued<T, E>(id: Result<T, E>) -> u64 {
    u64::from(black_box(id).is_ok())
}

/// How long each sustained run lasts, and how many runs give the median.
const WINDOW: Duration = Duration::from_millis(200);
const RUNS: usize = 3;

fn print_sustained(label: &str, mut run: impl FnMut() -> Sustained) {
    let result = median((0..RUNS).map(|_| run()).collect());
    let Some(result) = result else { return };
    let cpu = result
        .cpu_percent()
        .map_or_else(|| String::from("n/a"), |percent| format!("{percent:.0}%"));
    println!(
        "snowflake/sustained/{label:<46} {:>6.2} M IDs/s   CPU {cpu:>5}",
        result.mega_ids_per_second()
    );
}

/// Sustained rates with the classic layout (4096 IDs per ms at most):
/// mintid sleeps when a tick is used up, the peers spin.
fn snowflake_sustained() {
    if !selected("snowflake/sustained") {
        return;
    }
    println!(
        "snowflake/sustained: {RUNS} runs of {} ms each, median; CPU = issuing threads' CPU time / wall time",
        WINDOW.as_millis()
    );
    print_sustained("mintid next_id", || {
        let generator = classic(SequencePolicy::Wait);
        sustain(WINDOW, || issued(generator.next_id()))
    });
    print_sustained("mintid fill (256 per call)", || {
        let generator = classic(SequencePolicy::Wait);
        let mut ids = [0u64; BULK];
        sustain(WINDOW, || match black_box(generator.fill(&mut ids)) {
            Ok(()) => BULK as u64,
            Err(_) => 0,
        })
    });
    print_sustained("snowflaked sync::Generator", || {
        let generator = snowflaked::sync::Generator::new(WORKER as u16);
        sustain(WINDOW, || one(generator.generate::<u64>()))
    });
    print_sustained("rs-snowflake real_time_generate", || {
        let mut generator = snowflake::SnowflakeIdGenerator::new(0, WORKER as i32);
        sustain(WINDOW, || one(generator.real_time_generate()))
    });
    print_sustained("rs-snowflake generate", || {
        let mut generator = snowflake::SnowflakeIdGenerator::new(0, WORKER as i32);
        sustain(WINDOW, || one(generator.generate()))
    });
    print_sustained("two threads: mintid Snowflake (shared)", || {
        let generator = classic(SequencePolicy::Wait);
        sustain_on_two_threads(WINDOW, || issued(generator.next_id()))
    });
    print_sustained("two threads: snowflaked (shared)", || {
        let generator = snowflaked::sync::Generator::new(WORKER as u16);
        sustain_on_two_threads(WINDOW, || one(generator.generate::<u64>()))
    });
    print_sustained("two threads: rs-snowflake Mutex (shared)", || {
        let generator = Mutex::new(snowflake::SnowflakeIdGenerator::new(0, WORKER as i32));
        sustain_on_two_threads(WINDOW, || {
            one(generator.lock().map(|mut g| g.real_time_generate()).ok())
        })
    });
}

criterion_group! {
    name = benches;
    config = quick();
    targets = uuid7_one_thread, uuid7_two_threads, snowflake_in_tick, snowflake_borrow_ahead
}

fn main() {
    benches();
    snowflake_sustained();
    Criterion::default().configure_from_args().final_summary();
}
