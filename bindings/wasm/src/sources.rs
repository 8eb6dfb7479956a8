//! The clock and randomness a generator reads: the JS host's, or manual ones
//! for tests and the shared vectors.

use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use mintid::clock::ManualClock;
use mintid::{Clock, Entropy, FixedEntropy, RollbackPolicy};
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

/// Random bytes drawn from `crypto.getRandomValues` per call (a call costs
/// microseconds in Node, so it is never made per ID).
const POOL_LEN: usize = 4096;

/// The platform's CSPRNG (`crypto.getRandomValues`), drawn in bulk.
///
/// Used instead of the core's `ThreadEntropy` (a ChaCha8 seeded from the
/// same source), which would add its ChaCha code to the module for no gain
/// in quality.
pub(crate) struct CryptoPool {
    bytes: [u8; POOL_LEN],
    next: usize,
}

impl CryptoPool {
    const fn new() -> Self {
        Self {
            bytes: [0; POOL_LEN],
            next: POOL_LEN,
        }
    }

    fn fill(&mut self, mut dest: &mut [u8]) {
        while !dest.is_empty() {
            if self.next == POOL_LEN {
                // Without a random source no ID can be made safely: trap
                // rather than hand out predictable IDs. Every browser and
                // Node since 15 has `crypto.getRandomValues`.
                getrandom::fill(&mut self.bytes).expect("crypto.getRandomValues failed");
                self.next = 0;
            }
            let available = &self.bytes[self.next..];
            let n = available.len().min(dest.len());
            let (head, tail) = dest.split_at_mut(n);
            head.copy_from_slice(&available[..n]);
            // Bytes handed out are never handed out again.
            self.bytes[self.next..self.next + n].fill(0);
            self.next += n;
            dest = tail;
        }
    }
}

/// The randomness of a generator: the platform's CSPRNG, or fixed bytes for
/// tests and vectors.
pub(crate) enum HostEntropy {
    /// `crypto.getRandomValues`, through a pool.
    Crypto(RefCell<Box<CryptoPool>>),
    /// `FixedEntropy` over the given bytes.
    Fixed(FixedEntropy),
}

impl HostEntropy {
    /// Fixed bytes when given, else the platform's CSPRNG.
    pub(crate) fn new(fixed: Option<Vec<u8>>) -> Self {
        fixed.map_or_else(
            || Self::Crypto(RefCell::new(Box::new(CryptoPool::new()))),
            |bytes| Self::Fixed(FixedEntropy::new(bytes)),
        )
    }
}

impl Entropy for HostEntropy {
    fn fill_bytes(&self, dest: &mut [u8]) {
        match self {
            Self::Crypto(pool) => pool.borrow_mut().fill(dest),
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
            "rollback kind must be \"fail\", \"wait\" or \"logical\", got \"{other}\""
        ))),
    }
}
