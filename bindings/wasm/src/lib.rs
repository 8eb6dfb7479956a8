//! wasm-bindgen exports of the `mintid` core for the npm package `mintid`.
//!
//! Only type and error conversion lives here; every rule is in the core. The
//! hand-written TypeScript wrapper in `js/src/` turns these exports into the
//! package's idiomatic API (classes, `bigint` checks, `Error` subclasses).
//!
//! On wasm32 the crate is `no_std` with its own panic handler (a trap) and
//! allocator, which keeps std's panic and formatting machinery out of the
//! module; the core is used without its `std` feature. Time comes from
//! [`DateClock`] (`Date.now()`: `SystemTime::now()` panics on
//! `wasm32-unknown-unknown`), randomness from `crypto.getRandomValues`,
//! drawn 4 KiB at a time.
//!
//! Build it on its own (`cargo build -p mintid-wasm --target
//! wasm32-unknown-unknown`): built together with a crate that enables the
//! core's `std`, std's panic handler would clash with this one.
//!
//! The `snowflake` feature adds Snowflake layouts, IDs and generators; the
//! `server` feature (on by default) adds them, fingerprints, idempotency
//! keys, request-ID verification, record decisions, the HTTP integrations'
//! rules, worker-id leases, segments, the outbox and the store drivers
//! (`mintid::store`). The browser build (UUIDs and request-ID minting)
//! has neither.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

mod clock;
mod error;
#[cfg(feature = "server")]
mod error_codes;
#[cfg(feature = "server")]
mod fingerprint;
#[cfg(feature = "server")]
mod http;
#[cfg(feature = "server")]
mod id_buffer;
#[cfg(feature = "server")]
mod key;
#[cfg(feature = "server")]
mod lease;
#[cfg(feature = "server")]
mod metrics;
#[cfg(feature = "server")]
mod outbox;
#[cfg(feature = "server")]
mod record;
mod request_id;
#[cfg(feature = "server")]
mod segment;
#[cfg(feature = "snowflake")]
mod snowflake;
mod sources;
#[cfg(feature = "server")]
mod store;
mod uuid;
mod uuid7;
mod version;
#[cfg(feature = "server")]
mod wire;

pub use clock::DateClock;

/// The allocator of the wasm module: Talc, growing wasm memory as needed
/// (smaller than dlmalloc, std's choice on wasm32).
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

/// A panic (a bug: the bindings and the core never panic on any input)
/// traps; JS sees a `RuntimeError`.
#[cfg(target_arch = "wasm32")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    core::arch::wasm32::unreachable()
}
