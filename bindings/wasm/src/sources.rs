//! The clock and randomness a generator reads: the JS host's, or manual ones
//! for tests and the shared vectors.

use mintid::clock::ManualClock;
use mintid::{Clock, Entropy, FixedEntropy, RollbackPolicy, ThreadEntropy};
use std::rc::Rc;
use wasm_bindgen::prelude::*;

use crate::clock::DateClock;
use crate::error::type_error;

/// A clock that moves only when told to, shared between JS and the
/// generators built on it (the core's `ManualClock`).
#[wasm_bindgen]
pub struct ManualClockHandle(Rc<ManualClock>);

#[wasm_bindgen]
impl ManualClockHandle {
    /// A clock reading `millis`; with `advance_on_pause` every pause a
    /// generator asks for moves it forward by that long.
    #[wasm_bindgen(constructor)]
    pub fn new(millis: u64, advance_on_pause: bool) -> Self {
        let clock = ManualClock::new(millis);
        Self(Rc::new(if advance_on_pause {
            clock.advancing_on_pause()
        } else {
            clock
        }))
    }

    /// Another handle on the same clock, to give to a generator.
    pub fn share(&self) -> ManualClockHandle {
        Self(Rc::clone(&self.0))
    }

    /// The time in Unix milliseconds.
    #[wasm_bindgen(js_name = nowMillis)]
    pub fn now_millis(&self) -> u64 {
        self.0.now_millis()
    }

    /// Sets the time, forwards or backwards.
    #[wasm_bindgen(js_name = setMillis)]
    pub fn set_millis(&self, millis: u64) {
        self.0.set_millis(millis);
    }

    /// Moves the time forward.
    #[wasm_bindgen(js_name = advanceMillis)]
    pub fn advance_millis(&self, millis: u64) {
        self.0.advance_millis(millis);
    }

    /// Moves the time backward, stopping at zero.
    #[wasm_bindgen(js_name = rewindMillis)]
    pub fn rewind_millis(&self, millis: u64) {
        self.0.rewind_millis(millis);
    }
}

/// The clock of a generator: `Date.now()` or a shared manual clock.
pub(crate) enum HostClock {
    /// `Date.now()`.
    Date,
    /// A [`ManualClockHandle`]'s clock.
    Manual(Rc<ManualClock>),
}

impl HostClock {
    /// The manual clock of `handle`, or `Date.now()` without one.
    pub(crate) fn new(handle: Option<&ManualClockHandle>) -> Self {
        handle.map_or(Self::Date, |handle| Self::Manual(Rc::clone(&handle.0)))
    }
}

impl Clock for HostClock {
    fn now_millis(&self) -> u64 {
        match self {
            Self::Date => DateClock.now_millis(),
            Self::Manual(clock) => clock.now_millis(),
        }
    }
    fn now_micros(&self) -> u64 {
        match self {
            Self::Date => DateClock.now_micros(),
            Self::Manual(clock) => clock.now_micros(),
        }
    }
    fn pause(&self, micros: u64) {
        match self {
            Self::Date => DateClock.pause(micros),
            Self::Manual(clock) => clock.pause(micros),
        }
    }
}

/// The randomness of a generator: the core's per-thread ChaCha (seeded by
/// `crypto.getRandomValues`) or fixed bytes for tests and vectors.
pub(crate) enum HostEntropy {
    /// `ThreadEntropy`.
    Thread,
    /// `FixedEntropy` over the given bytes.
    Fixed(FixedEntropy),
}

impl HostEntropy {
    /// Fixed bytes when given, else the per-thread ChaCha.
    pub(crate) fn new(fixed: Option<Vec<u8>>) -> Self {
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

/// A rollback policy from its JS form: `kind` is `"fail"`, `"wait"` or
/// `"logical"`; `None` takes `default`.
pub(crate) fn rollback_policy(
    kind: Option<String>,
    max_millis: u64,
    default: RollbackPolicy,
) -> Result<RollbackPolicy, JsValue> {
    match kind.as_deref() {
        None => Ok(default),
        Some("fail") => Ok(RollbackPolicy::Fail),
        Some("wait") => Ok(RollbackPolicy::Wait { max_millis }),
        Some("logical") => Ok(RollbackPolicy::Logical { max_millis }),
        Some(other) => Err(type_error(&format!(
            "rollback kind must be \"fail\", \"wait\" or \"logical\", got {other:?}"
        ))),
    }
}
