//! The JS host's wall clock.

use mintid::Clock;

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
}
