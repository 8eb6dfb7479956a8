//! The JS host's wall clock.

use mintid::Clock;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: milliseconds with sub-millisecond resolution,
    /// monotonic (browsers, workers and Node 16+).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// `Date.now()` as a [`Clock`]: works in browsers, workers and Node.
///
/// `std::time::SystemTime::now()` panics on `wasm32-unknown-unknown`, so the
/// core's `SystemClock` is never used in this crate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DateClock;

impl Clock for DateClock {
    fn now_millis(&self) -> u64 {
        let millis = js_sys::Date::now();
        // `Date.now()` is an integral, non-negative f64 far below 2^53; a clock
        // set before 1970 reads as the epoch and generators see a rollback.
        if millis.is_finite() && millis > 0.0 {
            millis as u64
        } else {
            0
        }
    }

    /// Waits until `micros` of real time have passed (by `performance.now()`)
    /// or `Date.now()` has moved on, whichever comes first: what a generator
    /// waits for is a later millisecond, and this clock reads only whole
    /// milliseconds. A JS thread cannot sleep synchronously, so this spins;
    /// generators pause only for the next tick or a small clock rollback.
    fn pause(&self, micros: u64) {
        let start = js_sys::Date::now();
        let until = performance_now() + micros as f64 / 1000.0;
        while performance_now() < until && js_sys::Date::now() == start {}
    }
}
