//! The registry of live lease guards: how a wire names a worker lease's
//! [`LeaseGuard`] (`docs/spec.md`, "The wire", the guard registry).
//!
//! A guard is shared by the leased generator (every ID), the heartbeat and
//! the user, so it stays a binding object (uniffi's `LeaseGuard`, wasm's
//! `LeaseGuardHandle`). Each one holds a [`Registered`]: made with the
//! guard, it enters the guard in this registry under a process-unique
//! serial (never reused), and dropping it removes the entry. A renew or
//! release wire names the guard by that serial, which cannot be forged into
//! memory: an id not (or no longer) registered is refused. The registry
//! holds only a [`Weak`]: a wire never keeps a guard alive.

use alloc::collections::BTreeMap;
use alloc::sync::{Arc, Weak};
use core::ops::Deref;
use core::sync::atomic::{AtomicU64, Ordering};

use mintid::lease::LeaseGuard;
use spin::Mutex;

/// The serials handed out so far (the first is 1).
static SERIALS: AtomicU64 = AtomicU64::new(0);

/// The live guards by serial.
static GUARDS: Mutex<BTreeMap<u64, Weak<LeaseGuard>>> = Mutex::new(BTreeMap::new());

/// A lease guard entered in the registry for as long as this value lives:
/// what a binding's guard object holds.
#[derive(Debug)]
pub struct Registered {
    guard: Arc<LeaseGuard>,
    wire_id: u64,
}

impl Registered {
    /// Enters `guard` under a new serial.
    pub fn new(guard: LeaseGuard) -> Self {
        let guard = Arc::new(guard);
        let wire_id = SERIALS.fetch_add(1, Ordering::Relaxed) + 1;
        GUARDS.lock().insert(wire_id, Arc::downgrade(&guard));
        Self { guard, wire_id }
    }

    /// The serial a renew or release spec names this guard by.
    pub fn wire_id(&self) -> u64 {
        self.wire_id
    }
}

impl Deref for Registered {
    type Target = LeaseGuard;

    fn deref(&self) -> &LeaseGuard {
        &self.guard
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        GUARDS.lock().remove(&self.wire_id);
    }
}

/// The guard registered under `wire_id`, while its owner lives.
pub(crate) fn find(wire_id: u64) -> Option<Arc<LeaseGuard>> {
    GUARDS.lock().get(&wire_id).and_then(Weak::upgrade)
}
