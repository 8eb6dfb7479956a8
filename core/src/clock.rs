//! Time, passed in by the caller.
//!
//! Every generator reads time through [`Clock`], so tests can drive it with a
//! [`ManualClock`] and a host can supply its own source (a browser's
//! `Date.now()`, a microcontroller's RTC). Under the `std` feature
//! [`SystemClock`] reads the operating system's wall clock.

/// A source of wall-clock time in Unix milliseconds.
///
/// Implementations may go backwards (NTP steps, VM migration): generators
/// handle that according to their [`RollbackPolicy`](crate::RollbackPolicy).
pub trait Clock {
    /// Milliseconds since the Unix epoch (1970-01-01T00:00:00Z).
    fn now_millis(&self) -> u64;

    /// Microseconds since the Unix epoch. The default derives it from
    /// [`now_millis`](Clock::now_millis); clocks with finer resolution override it.
    fn now_micros(&self) -> u64 {
        self.now_millis().saturating_mul(1000)
    }

    /// Lets roughly `micros` microseconds pass while a generator waits for the
    /// clock to move on (a new tick, or a clock that stepped back).
    ///
    /// Generators bound their own waiting by summing the pauses they asked
    /// for, so a clock whose time never moves cannot hang them. The default
    /// spins with [`core::hint::spin_loop`], which is all `no_std` offers.
    fn pause(&self, micros: u64) {
        for _ in 0..micros.saturating_mul(64) {
            core::hint::spin_loop();
        }
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now_millis(&self) -> u64 {
        (**self).now_millis()
    }
    fn now_micros(&self) -> u64 {
        (**self).now_micros()
    }
    fn pause(&self, micros: u64) {
        (**self).pause(micros)
    }
}

#[cfg(feature = "std")]
mod system {
    use super::Clock;
    use std::time::Duration;

    /// The operating system's wall clock: `CLOCK_REALTIME` read with the C
    /// library's `clock_gettime` on Linux and Android (the clock `SystemTime`
    /// reads, without its conversion), `SystemTime` elsewhere.
    ///
    /// [`pause`](Clock::pause) spins for waits under 50 µs and sleeps the
    /// thread for longer ones, so a generator waiting for the next
    /// millisecond does not hold a core busy.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct SystemClock;

    impl SystemClock {
        /// Whole seconds and the nanoseconds past them since the Unix epoch.
        ///
        /// A clock set before 1970 reads as the epoch itself; generators then
        /// see a clock that went backwards and apply their policy.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        #[inline]
        fn since_epoch() -> (u64, u32) {
            // The clock `SystemTime::now()` reads, without its `duration_since`
            // (a third of a UUIDv7's instructions: docs/benchmarks.md). Reading
            // CLOCK_REALTIME cannot fail; if it did, the epoch is the answer.
            use nix::time::{ClockId, clock_gettime};
            let Ok(now) = clock_gettime(ClockId::CLOCK_REALTIME) else {
                return (0, 0);
            };
            match (u64::try_from(now.tv_sec()), u32::try_from(now.tv_nsec())) {
                (Ok(secs), Ok(nanos)) => (secs, nanos),
                _ => (0, 0),
            }
        }

        /// Whole seconds and the nanoseconds past them since the Unix epoch.
        ///
        /// A clock set before 1970 reads as the epoch itself; generators then
        /// see a clock that went backwards and apply their policy.
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        #[inline]
        fn since_epoch() -> (u64, u32) {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or((0, 0), |since| (since.as_secs(), since.subsec_nanos()))
        }
    }

    impl Clock for SystemClock {
        fn now_millis(&self) -> u64 {
            let (secs, nanos) = Self::since_epoch();
            secs.saturating_mul(1000)
                .saturating_add(u64::from(nanos / 1_000_000))
        }
        fn now_micros(&self) -> u64 {
            let (secs, nanos) = Self::since_epoch();
            secs.saturating_mul(1_000_000)
                .saturating_add(u64::from(nanos / 1000))
        }
        fn pause(&self, micros: u64) {
            if micros < 50 {
                for _ in 0..micros.saturating_mul(64) {
                    core::hint::spin_loop();
                }
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(micros));
            }
        }
    }
}

#[cfg(feature = "std")]
pub use system::SystemClock;

#[cfg(target_has_atomic = "64")]
mod manual {
    use super::Clock;
    use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// A clock that moves only when told to: for tests and shared vectors.
    ///
    /// Time is kept in microseconds. With [`advancing_on_pause`](Self::advancing_on_pause)
    /// each [`pause`](Clock::pause) moves the clock forward by the time asked
    /// for, simulating real time passing while a generator waits.
    #[derive(Debug, Default)]
    pub struct ManualClock {
        micros: AtomicU64,
        advance_on_pause: AtomicBool,
    }

    impl ManualClock {
        /// A clock that reads `millis` and stays there until set or advanced.
        pub fn new(millis: u64) -> Self {
            Self {
                micros: AtomicU64::new(millis.saturating_mul(1000)),
                advance_on_pause: AtomicBool::new(false),
            }
        }

        /// Makes every [`pause`](Clock::pause) advance the clock by the pause's length.
        pub fn advancing_on_pause(self) -> Self {
            self.advance_on_pause.store(true, Ordering::Relaxed);
            self
        }

        /// Sets the time to `millis`, forwards or backwards.
        pub fn set_millis(&self, millis: u64) {
            self.micros
                .store(millis.saturating_mul(1000), Ordering::SeqCst);
        }

        /// Moves the time forward by `millis`.
        pub fn advance_millis(&self, millis: u64) {
            self.micros
                .fetch_add(millis.saturating_mul(1000), Ordering::SeqCst);
        }

        /// Moves the time backward by `millis` (a clock rollback), stopping at zero.
        pub fn rewind_millis(&self, millis: u64) {
            let delta = millis.saturating_mul(1000);
            let _ = self
                .micros
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |m| {
                    Some(m.saturating_sub(delta))
                });
        }
    }

    impl Clock for ManualClock {
        fn now_millis(&self) -> u64 {
            self.micros.load(Ordering::SeqCst) / 1000
        }
        fn now_micros(&self) -> u64 {
            self.micros.load(Ordering::SeqCst)
        }
        fn pause(&self, micros: u64) {
            if self.advance_on_pause.load(Ordering::Relaxed) {
                self.micros.fetch_add(micros.max(1), Ordering::SeqCst);
            }
        }
    }
}

#[cfg(target_has_atomic = "64")]
pub use manual::ManualClock;

#[cfg(all(test, target_has_atomic = "64"))]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(1_000);
        clock.pause(5_000);
        assert_eq!(clock.now_millis(), 1_000);
        clock.advance_millis(7);
        assert_eq!(clock.now_millis(), 1_007);
        clock.rewind_millis(2_000);
        assert_eq!(clock.now_millis(), 0);
        clock.set_millis(42);
        assert_eq!(clock.now_micros(), 42_000);
    }

    #[test]
    fn manual_clock_can_advance_on_pause() {
        let clock = ManualClock::new(10).advancing_on_pause();
        clock.pause(1_500);
        assert_eq!(clock.now_micros(), 11_500);
        assert_eq!(clock.now_millis(), 11);
    }

    #[cfg(feature = "std")]
    #[test]
    fn system_clock_is_after_2025() {
        let now = SystemClock.now_millis();
        assert!(now > 1_735_689_600_000, "{now}");
        let micros = SystemClock.now_micros();
        assert!(micros / 1000 >= now);
    }

    /// The system clock reads what `std`'s `SystemTime` reads, in both units:
    /// each reading lies between two of `SystemTime` taken around it (an
    /// order, not a duration: the same wall clock, read in sequence).
    #[cfg(feature = "std")]
    #[test]
    fn system_clock_reads_the_time_std_reads() {
        use std::time::{SystemTime, UNIX_EPOCH};
        let std_micros = || {
            let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
            u64::try_from(since.as_micros()).unwrap()
        };
        let before = std_micros();
        let millis = SystemClock.now_millis();
        let micros = SystemClock.now_micros();
        let after = std_micros();
        assert!(
            before / 1000 <= millis && millis <= after / 1000,
            "{before} {millis} {after}"
        );
        assert!(
            before <= micros && micros <= after,
            "{before} {micros} {after}"
        );
    }
}
