//! wasm-bindgen exports of the `mintid` core for the npm package `mintid`.
//!
//! Only type and error conversion lives here; every rule is in the core. The
//! hand-written TypeScript wrapper in `js/src/` turns these exports into the
//! package's idiomatic API (classes, `bigint` checks, `Error` subclasses).
//!
//! Time comes from [`DateClock`] (`Date.now()`); randomness from the core's
//! `ThreadEntropy`, seeded once through `crypto.getRandomValues`.

mod clock;
mod error;
#[cfg(feature = "server")]
mod fingerprint;
#[cfg(feature = "server")]
mod key;
#[cfg(feature = "server")]
mod record;
mod request_id;
mod snowflake;
mod sources;
mod uuid;
mod uuid7;

pub use clock::DateClock;
