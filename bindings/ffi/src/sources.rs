//! Time and randomness for generators: the system's, or fixed ones for tests
//! and the shared vectors.

use mintid::{Clock, Entropy, FixedEntropy, SystemClock, ThreadEntropy};
use std::sync::Arc;

/// A clock that moves only when told to (the core's `ManualClock`), for tests.
#[derive(Debug, uniffi::Object)]
pub struct ManualClock(mintid::ManualClock);

#[uniffi::export]
impl ManualClock {
    /// A clock reading `unix_millis` until set or moved; with
    /// `advance_on_pause`, each pause a generator asks for moves it forward
    /// by that long.
    #[uniffi::constructor(default(advance_on_pause = false))]
    pub fn new(unix_millis: u64, advance_on_pause: bool) -> Arc<Self> {
        let clock = mintid::ManualClock::new(unix_millis);
        Arc::new(Self(if advance_on_pause {
            clock.advancing_on_pause()
        } else {
            clock
        }))
    }

    /// The time, in Unix milliseconds.
    pub fn now_millis(&self) -> u64 {
        self.0.now_millis()
    }

    /// Sets the time to `unix_millis`, forwards or backwards.
    pub fn set_millis(&self, unix_millis: u64) {
        self.0.set_millis(unix_millis)
    }

    /// Moves the time forward by `millis`.
    pub fn advance_millis(&self, millis: u64) {
        self.0.advance_millis(millis)
    }

    /// Moves the time back by `millis` (a clock rollback), stopping at zero.
    pub fn rewind_millis(&self, millis: u64) {
        self.0.rewind_millis(millis)
    }
}

/// The clock a generator reads.
#[derive(Debug, Clone)]
pub(crate) enum HostClock {
    /// The operating system's wall clock.
    System,
    /// A test clock.
    Manual(Arc<ManualClock>),
}

impl HostClock {
    /// The system clock unless `manual` is given.
    pub(crate) fn from_option(manual: Option<Arc<ManualClock>>) -> Self {
        manual.map_or(Self::System, Self::Manual)
    }
}

impl Clock for HostClock {
    fn now_millis(&self) -> u64 {
        match self {
            Self::System => SystemClock.now_millis(),
            Self::Manual(clock) => clock.0.now_millis(),
        }
    }

    fn now_micros(&self) -> u64 {
        match self {
            Self::System => SystemClock.now_micros(),
            Self::Manual(clock) => clock.0.now_micros(),
        }
    }

    fn pause(&self, micros: u64) {
        match self {
            Self::System => SystemClock.pause(micros),
            Self::Manual(clock) => clock.0.pause(micros),
        }
    }
}

/// The randomness a generator draws.
#[derive(Debug)]
pub(crate) enum HostEntropy {
    /// The per-thread ChaCha generator seeded from the operating system.
    Thread,
    /// Given bytes, replayed and cycled: deterministic, for tests.
    Fixed(FixedEntropy),
}

impl HostEntropy {
    /// The thread's generator unless fixed bytes are given.
    pub(crate) fn from_option(fixed: Option<Vec<u8>>) -> Self {
        fixed.map_or(Self::Thread, |bytes| Self::Fixed(FixedEntropy::new(bytes)))
    }
}

impl Entropy for HostEntropy {
    fn fill_bytes(&self, dest: &mut [u8]) {
        match self {
            Self::Thread => ThreadEntropy.fill_bytes(dest),
            Self::Fixed(fixed) => fixed.fill_bytes(dest),
        }
    }
}

/// Discards the calling thread's random generator state so the next draw
/// seeds afresh from the operating system. Hosts call it in a child process
/// right after `fork()`, which would otherwise repeat the parent's stream.
#[uniffi::export]
pub fn reseed_thread_entropy() {
    ThreadEntropy::reseed()
}
