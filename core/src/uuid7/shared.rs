//! The shared generator: `&self`, lock-free, one atomic state word.

use super::clock_reading::read_clock;
use super::error::Uuid7Error;
use super::layout::{SEED_LEN, TAIL_LEN, encode, first_state, last_state, millis};
use super::{DEFAULT_ROLLBACK_POLICY, Uuid7, check_buffer_len};
use crate::{Clock, Entropy, RollbackPolicy};
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

/// IDs whose random bytes a bulk fill draws with one [`Entropy::fill_bytes`] call.
const CHUNK_IDS: usize = 64;

/// A UUIDv7 generator shared by many threads (`&self`, `Send + Sync` when
/// its clock and entropy are), lock-free.
///
/// Its whole state is one `AtomicU64` holding `unix_millis << 16 | counter` of
/// the last ID issued; an ID is claimed by one compare-and-swap, so IDs are
/// unique and each thread sees them strictly increase. A second atomic keeps
/// the latest clock reading, against which rollbacks are measured. IDs match
/// [`Uuid7Generator`](super::Uuid7Generator)'s exactly for the same clock
/// readings and entropy bytes.
pub struct SharedUuid7Generator<C, E> {
    /// State (`unix_millis << 16 | counter`) of the last ID issued.
    state: AtomicU64,
    /// The latest clock reading used.
    high: AtomicU64,
    clock: C,
    entropy: E,
    policy: RollbackPolicy,
}

impl<C, E> SharedUuid7Generator<C, E> {
    /// A generator reading `clock` and `entropy`, with the
    /// [`DEFAULT_ROLLBACK_POLICY`].
    pub const fn with_sources(clock: C, entropy: E) -> Self {
        Self {
            state: AtomicU64::new(0),
            high: AtomicU64::new(0),
            clock,
            entropy,
            policy: DEFAULT_ROLLBACK_POLICY,
        }
    }

    /// The same generator with `policy` for clock rollbacks.
    pub const fn with_policy(mut self, policy: RollbackPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The rollback policy in force.
    pub const fn policy(&self) -> RollbackPolicy {
        self.policy
    }
}

#[cfg(feature = "std")]
impl SharedUuid7Generator<crate::SystemClock, crate::ThreadEntropy> {
    /// A generator on the system clock and the per-thread ChaCha generator,
    /// with the [`DEFAULT_ROLLBACK_POLICY`].
    pub const fn new() -> Self {
        Self::with_sources(crate::SystemClock, crate::ThreadEntropy)
    }
}

#[cfg(feature = "std")]
impl Default for SharedUuid7Generator<crate::SystemClock, crate::ThreadEntropy> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock, E: Entropy> SharedUuid7Generator<C, E> {
    /// The next ID.
    pub fn generate(&self) -> Result<Uuid7, Uuid7Error> {
        let first = self.reserve(1)?;
        let mut tail = [0u8; TAIL_LEN];
        self.entropy.fill_bytes(&mut tail);
        Ok(encode(first, u64::from_be_bytes(tail)))
    }

    /// Fills `out` with consecutive IDs, claimed with one compare-and-swap
    /// after one clock reading.
    ///
    /// On error nothing is written and no ID is used up.
    pub fn fill(&self, out: &mut [Uuid7]) -> Result<(), Uuid7Error> {
        self.issue(out.iter_mut(), |slot, id| *slot = id)
    }

    /// Fills `out` with consecutive IDs, 16 bytes each (most significant
    /// first), claimed with one compare-and-swap: the bulk path for bindings.
    ///
    /// `out.len()` must be a multiple of 16 (else `uuid7.buffer_length`).
    /// On error nothing is written and no ID is used up.
    pub fn fill_bytes(&self, out: &mut [u8]) -> Result<(), Uuid7Error> {
        check_buffer_len(out.len())?;
        self.issue(out.chunks_exact_mut(16), |slot, id| {
            slot.copy_from_slice(id.as_bytes())
        })
    }

    fn issue<'a, S: ?Sized + 'a>(
        &self,
        slots: impl ExactSizeIterator<Item = &'a mut S>,
        write: impl Fn(&mut S, Uuid7),
    ) -> Result<(), Uuid7Error> {
        let count = slots.len();
        if count == 0 {
            return Ok(());
        }
        let first = self.reserve(count)?;
        let mut slots = (0u64..).zip(slots);
        let mut tails = [0u8; CHUNK_IDS * TAIL_LEN];
        let mut remaining = count;
        while remaining > 0 {
            let chunk = remaining.min(CHUNK_IDS);
            let tails = &mut tails[..chunk * TAIL_LEN];
            self.entropy.fill_bytes(tails);
            for (tail, (offset, slot)) in tails.chunks_exact(TAIL_LEN).zip(slots.by_ref()) {
                let mut bytes = [0u8; TAIL_LEN];
                bytes.copy_from_slice(tail);
                // `reserve` checked that `first + count - 1` does not overflow.
                write(slot, encode(first + offset, u64::from_be_bytes(bytes)));
            }
            remaining -= chunk;
        }
        Ok(())
    }

    /// Claims `count` (at least one) consecutive states; returns the first.
    fn reserve(&self, count: usize) -> Result<u64, Uuid7Error> {
        // Loading `high` before reading the clock means another thread's
        // later reading can never look like a rollback to this one.
        let high = self.high.load(Ordering::Acquire);
        let now = read_clock(&self.clock, self.policy, high)?;
        let mut seed = None;
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            let first = first_state(current, now, || {
                *seed.get_or_insert_with(|| {
                    let mut bytes = [0u8; SEED_LEN];
                    self.entropy.fill_bytes(&mut bytes);
                    bytes
                })
            })?;
            let last = last_state(first, count, now)?;
            match self.state.compare_exchange_weak(
                current,
                last,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if now > high {
                        self.high.fetch_max(now, Ordering::AcqRel);
                    }
                    return Ok(first);
                }
                Err(actual) => current = actual,
            }
        }
    }
}

impl<C, E> fmt::Debug for SharedUuid7Generator<C, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedUuid7Generator")
            .field("policy", &self.policy)
            .field("last_millis", &millis(self.state.load(Ordering::Relaxed)))
            .field("high", &self.high.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}
