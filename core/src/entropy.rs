//! Randomness, passed in by the caller.
//!
//! Generators draw random bytes through [`Entropy`]. Under the `std` feature
//! [`ThreadEntropy`] is a ChaCha8 generator per thread, seeded from the
//! operating system (`getrandom`) on first use and reseeded periodically, so
//! an ID never costs a system call. [`FixedEntropy`] replays given bytes, for
//! tests and the shared vectors.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

/// A source of random bytes, shared by reference.
///
/// Implementations must be safe to call from the thread that owns them; a
/// generator shared between threads additionally requires `Sync`.
pub trait Entropy {
    /// Fills `dest` with random bytes.
    fn fill_bytes(&self, dest: &mut [u8]);
}

impl<E: Entropy + ?Sized> Entropy for &E {
    fn fill_bytes(&self, dest: &mut [u8]) {
        (**self).fill_bytes(dest)
    }
}

/// Replays a fixed byte sequence, starting over when it runs out.
///
/// Deterministic by design: use it for tests and test vectors only.
#[derive(Debug)]
pub struct FixedEntropy {
    bytes: Vec<u8>,
    cursor: AtomicUsize,
}

impl FixedEntropy {
    /// Replays `bytes` (cycling). An empty sequence yields zeros.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            bytes: bytes.into(),
            cursor: AtomicUsize::new(0),
        }
    }

    /// How many bytes have been handed out so far.
    pub fn consumed(&self) -> usize {
        self.cursor.load(Ordering::SeqCst)
    }
}

impl Entropy for FixedEntropy {
    fn fill_bytes(&self, dest: &mut [u8]) {
        if self.bytes.is_empty() {
            dest.fill(0);
            return;
        }
        let start = self.cursor.fetch_add(dest.len(), Ordering::SeqCst);
        for (i, byte) in dest.iter_mut().enumerate() {
            *byte = self.bytes[(start + i) % self.bytes.len()];
        }
    }
}

#[cfg(feature = "std")]
mod thread {
    use super::Entropy;
    use core::cell::RefCell;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::{Rng, SeedableRng};

    /// Bytes drawn from one seed before the thread's generator reseeds itself.
    const RESEED_AFTER_BYTES: u64 = 1 << 26;

    struct Seeded {
        rng: ChaCha8Rng,
        drawn: u64,
    }

    std::thread_local! {
        static THREAD_RNG: RefCell<Option<Seeded>> = const { RefCell::new(None) };
    }

    fn os_seed() -> ChaCha8Rng {
        let mut seed = [0u8; 32];
        // Without an OS random source no ID can be made safely; this is the
        // one failure we cannot recover from, and it does not occur on any
        // supported platform.
        getrandom::fill(&mut seed).expect("the operating system's random source failed");
        ChaCha8Rng::from_seed(seed)
    }

    /// A ChaCha8 CSPRNG per thread, seeded from the OS on first use and
    /// reseeded every 64 MiB of output.
    ///
    /// After `fork()` a child shares its parent's state until it calls
    /// [`ThreadEntropy::reseed`]; host packages do that from their fork hooks.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct ThreadEntropy;

    impl ThreadEntropy {
        /// Discards the calling thread's generator state; the next draw seeds
        /// a fresh one from the operating system.
        pub fn reseed() {
            THREAD_RNG.with(|cell| *cell.borrow_mut() = None);
        }
    }

    impl Entropy for ThreadEntropy {
        fn fill_bytes(&self, dest: &mut [u8]) {
            THREAD_RNG.with(|cell| {
                let mut slot = cell.borrow_mut();
                let seeded = match &mut *slot {
                    Some(seeded) if seeded.drawn < RESEED_AFTER_BYTES => seeded,
                    other => other.insert(Seeded {
                        rng: os_seed(),
                        drawn: 0,
                    }),
                };
                seeded.rng.fill_bytes(dest);
                seeded.drawn += dest.len() as u64;
            })
        }
    }
}

#[cfg(feature = "std")]
pub use thread::ThreadEntropy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_entropy_cycles() {
        let e = FixedEntropy::new([1u8, 2, 3]);
        let mut buf = [0u8; 5];
        e.fill_bytes(&mut buf);
        assert_eq!(buf, [1, 2, 3, 1, 2]);
        e.fill_bytes(&mut buf[..2]);
        assert_eq!(&buf[..2], &[3, 1]);
        assert_eq!(e.consumed(), 7);
    }

    #[test]
    fn empty_fixed_entropy_gives_zeros() {
        let e = FixedEntropy::new(Vec::new());
        let mut buf = [9u8; 4];
        e.fill_bytes(&mut buf);
        assert_eq!(buf, [0; 4]);
    }

    #[cfg(feature = "std")]
    #[test]
    fn thread_entropy_differs_between_draws_and_threads() {
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        ThreadEntropy.fill_bytes(&mut a);
        ThreadEntropy.fill_bytes(&mut b);
        assert_ne!(a, b);
        let c = std::thread::spawn(|| {
            let mut c = [0u8; 32];
            ThreadEntropy.fill_bytes(&mut c);
            c
        })
        .join()
        .unwrap();
        assert_ne!(a, c);
        ThreadEntropy::reseed();
        ThreadEntropy.fill_bytes(&mut b);
        assert_ne!(a, b);
    }
}
