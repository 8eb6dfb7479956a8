//! Helpers shared by the benchmarks in `benches/`: one short criterion
//! configuration, a two-thread timing harness, bursts timed from the start
//! of a millisecond, and the CPU time of the calling thread.
//!
//! Run them with `make bench-rust` (`cargo bench -p mintid-bench`); peers
//! are always measured in the same run as mintid.
#![deny(missing_docs)]

use std::fs;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use criterion::Criterion;

/// The criterion configuration of every group: short runs (1 s warm-up,
/// 2 s of measurement, 10 samples) so that the whole suite takes a few
/// minutes on two cores.
pub fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
        .configure_from_args()
}

/// Runs `work(n)` on two threads at once, each with half of `iters`, and
/// returns the wall time from their common start until both are done: the
/// time per ID in total, as criterion's `iter_custom` expects.
pub fn on_two_threads(iters: u64, work: impl Fn(u64) + Sync) -> Duration {
    let halves = [iters / 2, iters - iters / 2];
    let start_line = Barrier::new(3);
    thread::scope(|scope| {
        for half in halves {
            let (work, start_line) = (&work, &start_line);
            scope.spawn(move || {
                start_line.wait();
                work(half);
            });
        }
        start_line.wait();
        let start = Instant::now();
        // Leaving the scope joins both threads.
        start
    })
    .elapsed()
}

/// The IDs in one timed burst of [`in_fresh_ticks`]: half of a classic
/// layout's 4096 sequence numbers per millisecond, so that no generator
/// under test runs out of its tick and waits inside a burst.
pub const BURST: u64 = 2048;

/// Times `next` for `iters` calls in bursts of at most [`BURST`], each
/// started right after the system clock enters a new millisecond; the
/// waits between bursts are not counted. This is the cost of one call
/// inside a tick, for generators that would otherwise wait (or spin) once
/// a tick's sequence is used up.
pub fn in_fresh_ticks(iters: u64, mut next: impl FnMut()) -> Duration {
    let mut left = iters;
    let mut timed = Duration::ZERO;
    while left > 0 {
        let burst = left.min(BURST);
        wait_for_next_millisecond();
        let start = Instant::now();
        for _ in 0..burst {
            next();
        }
        timed += start.elapsed();
        left -= burst;
    }
    timed
}

/// Waits until the system clock enters a new millisecond: asleep for most
/// of the wait, then spinning for the last stretch. Sleeping keeps a busy
/// machine's scheduler from charging the wait to the burst that follows.
pub fn wait_for_next_millisecond() {
    /// How long before the boundary the sleep ends and the spin begins.
    const SPIN_MICROS: u128 = 150;
    let now = unix_micros();
    let left = 1000 - now % 1000;
    if left > SPIN_MICROS {
        let sleep = u64::try_from(left - SPIN_MICROS).unwrap_or(0);
        thread::sleep(Duration::from_micros(sleep));
    }
    let millisecond = now / 1000;
    while unix_micros() / 1000 == millisecond {
        std::hint::spin_loop();
    }
}

fn unix_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_micros())
}

/// The CPU time the calling thread has used so far, read from
/// `/proc/thread-self/schedstat` (nanoseconds on the CPU); `None` where that
/// file does not exist (not Linux).
pub fn thread_cpu_time() -> Option<Duration> {
    let stat = fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// What a sustained run achieved: IDs issued, wall time, CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Sustained {
    /// IDs issued.
    pub ids: u64,
    /// Wall time of the run.
    pub wall: Duration,
    /// CPU time of the threads that issued them, if known.
    pub cpu: Option<Duration>,
}

impl Sustained {
    /// Millions of IDs per second.
    pub fn mega_ids_per_second(&self) -> f64 {
        self.ids as f64 / self.wall.as_secs_f64() / 1e6
    }

    /// CPU time as a percentage of wall time (100 = one core busy the
    /// whole time).
    pub fn cpu_percent(&self) -> Option<f64> {
        Some(self.cpu?.as_secs_f64() / self.wall.as_secs_f64() * 100.0)
    }
}

/// Calls `issue` in a loop for `window` on the calling thread, adding up
/// the IDs each call reports it issued, and the thread's CPU time.
pub fn sustain(window: Duration, mut issue: impl FnMut() -> u64) -> Sustained {
    /// IDs between two readings of the clock that ends the run.
    const STRIDE: u64 = 256;
    let cpu_before = thread_cpu_time();
    let start = Instant::now();
    let mut ids = 0;
    let mut next_check = 0;
    loop {
        ids += issue();
        if ids >= next_check {
            if start.elapsed() >= window {
                break;
            }
            next_check = ids + STRIDE;
        }
    }
    let wall = start.elapsed();
    let cpu = thread_cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| after - before);
    Sustained { ids, wall, cpu }
}

/// [`sustain`] on two threads at once, sharing whatever `next` captures;
/// the IDs and CPU times of both threads are added up.
pub fn sustain_on_two_threads(window: Duration, issue: impl Fn() -> u64 + Sync) -> Sustained {
    let runs: Vec<Sustained> = thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| sustain(window, &issue)))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    Sustained {
        ids: runs.iter().map(|run| run.ids).sum(),
        wall: runs.iter().map(|run| run.wall).max().unwrap_or(window),
        cpu: runs.iter().map(|run| run.cpu).sum(),
    }
}

/// The median of `runs` by rate (the middle one of an odd count).
pub fn median(mut runs: Vec<Sustained>) -> Option<Sustained> {
    runs.sort_by(|a, b| a.mega_ids_per_second().total_cmp(&b.mega_ids_per_second()));
    runs.get(runs.len() / 2).copied()
}

/// Whether the command line's benchmark filter (the first argument that is
/// not an option) selects the benchmark `name`; no filter selects all. The
/// match is by substring, a simplification of criterion's regular
/// expression.
pub fn selected(name: &str) -> bool {
    let mut args = std::env::args().skip(1);
    if std::env::args().any(|arg| arg == "--list" || arg == "--test") {
        return false;
    }
    match args.find(|arg| !arg.starts_with('-')) {
        Some(filter) => name.contains(&filter),
        None => true,
    }
}
