//! The single-owner generator: `&mut self`, no atomics, randomness drawn in bulk.

use super::clock_reading::read_clock;
use super::error::Uuid7Error;
use super::layout::{SEED_LEN, TAIL_LEN, encode, first_state, last_state, millis};
use super::{DEFAULT_ROLLBACK_POLICY, Uuid7, check_buffer_len};
use crate::{Clock, Entropy, RollbackPolicy};
use core::fmt;

/// Random bytes drawn from the [`Entropy`] at a time: 128 IDs' worth (a refill costs a
/// thread-local lookup and a cipher call whatever its length).
const POOL_LEN: usize = 1024;

/// A UUIDv7 generator owned by one thread (`&mut self`), the fastest way to
/// make IDs.
///
/// IDs strictly increase, follow the layout in the [module docs](super), and
/// match [`SharedUuid7Generator`](super::SharedUuid7Generator)'s exactly for
/// the same clock readings and entropy bytes. Random bytes are drawn 1024 at
/// a time and handed out in order.
///
/// After `fork()`, call [`discard_entropy`](Self::discard_entropy) in the
/// child (and reseed the entropy source, e.g. `ThreadEntropy::reseed()`),
/// or parent and child will issue IDs with the same random bits.
pub struct Uuid7Generator<C, E> {
    clock: C,
    entropy: E,
    policy: RollbackPolicy,
    /// State (`unix_millis << 16 | counter`) of the last ID issued.
    last: u64,
    /// The latest clock reading used.
    high: u64,
    pool: [u8; POOL_LEN],
    /// Bytes of `pool` already handed out.
    used: usize,
}

impl<C, E> Uuid7Generator<C, E> {
    /// A generator reading `clock` and `entropy`, with the
    /// [`DEFAULT_ROLLBACK_POLICY`].
    pub const fn with_sources(clock: C, entropy: E) -> Self {
        Self {
            clock,
            entropy,
            policy: DEFAULT_ROLLBACK_POLICY,
            last: 0,
            high: 0,
            pool: [0; POOL_LEN],
            used: POOL_LEN,
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

    /// Forgets the random bytes drawn but not yet used; the next ID draws fresh ones.
    pub fn discard_entropy(&mut self) {
        self.used = POOL_LEN;
    }
}

#[cfg(feature = "std")]
impl Uuid7Generator<crate::SystemClock, crate::ThreadEntropy> {
    /// A generator on the system clock and the per-thread ChaCha generator,
    /// with the [`DEFAULT_ROLLBACK_POLICY`].
    pub const fn new() -> Self {
        Self::with_sources(crate::SystemClock, crate::ThreadEntropy)
    }
}

#[cfg(feature = "std")]
impl Default for Uuid7Generator<crate::SystemClock, crate::ThreadEntropy> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Clock, E: Entropy> Uuid7Generator<C, E> {
    /// The next ID.
    pub fn generate(&mut self) -> Result<Uuid7, Uuid7Error> {
        let first = self.reserve(1)?;
        Ok(encode(first, self.take_tail()))
    }

    /// Fills `out` with consecutive IDs, reading the clock once.
    ///
    /// On error nothing is written and no ID is used up.
    pub fn fill(&mut self, out: &mut [Uuid7]) -> Result<(), Uuid7Error> {
        self.issue(out.iter_mut(), |slot, id| *slot = id)
    }

    /// Fills `out` with consecutive IDs, 16 bytes each (most significant
    /// first), reading the clock once: the bulk path for bindings.
    ///
    /// `out.len()` must be a multiple of 16 (else `uuid7.buffer_length`).
    /// On error nothing is written and no ID is used up.
    pub fn fill_bytes(&mut self, out: &mut [u8]) -> Result<(), Uuid7Error> {
        check_buffer_len(out.len())?;
        self.issue(out.chunks_exact_mut(16), |slot, id| {
            slot.copy_from_slice(id.as_bytes())
        })
    }

    fn issue<'a, S: ?Sized + 'a>(
        &mut self,
        slots: impl ExactSizeIterator<Item = &'a mut S>,
        write: impl Fn(&mut S, Uuid7),
    ) -> Result<(), Uuid7Error> {
        let count = slots.len();
        if count == 0 {
            return Ok(());
        }
        let first = self.reserve(count)?;
        for (offset, slot) in (0u64..).zip(slots) {
            // `reserve` checked that `first + count - 1` does not overflow.
            write(slot, encode(first + offset, self.take_tail()));
        }
        Ok(())
    }

    /// Claims `count` (at least one) consecutive states; returns the first.
    fn reserve(&mut self, count: usize) -> Result<u64, Uuid7Error> {
        let now = read_clock(&self.clock, self.policy, self.high)?;
        let first = first_state(self.last, now, || self.take::<SEED_LEN>())?;
        self.last = last_state(first, count, now)?;
        self.high = self.high.max(now);
        Ok(first)
    }

    fn take_tail(&mut self) -> u64 {
        u64::from_be_bytes(self.take::<TAIL_LEN>())
    }

    /// The next `N` bytes of the entropy stream, refilling the pool as needed.
    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(bytes) = self.pool.get(self.used..self.used + N) {
            out.copy_from_slice(bytes);
            self.used += N;
            return out;
        }
        let mut filled = 0;
        while filled < N {
            if self.used >= POOL_LEN {
                self.entropy.fill_bytes(&mut self.pool);
                self.used = 0;
            }
            let n = (N - filled).min(POOL_LEN - self.used);
            out[filled..filled + n].copy_from_slice(&self.pool[self.used..self.used + n]);
            filled += n;
            self.used += n;
        }
        out
    }
}

impl<C, E> fmt::Debug for Uuid7Generator<C, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Uuid7Generator")
            .field("policy", &self.policy)
            .field("last_millis", &millis(self.last))
            .field("high", &self.high)
            .finish_non_exhaustive()
    }
}
