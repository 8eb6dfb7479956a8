//! The shared, lock-free Snowflake generator.

use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::error::{Detail, SnowflakeError};
use super::id::SnowflakeId;
use super::layout::SnowflakeLayout;
use crate::clock::Clock;
use crate::rollback::RollbackPolicy;

/// What a generator does when a tick's sequence numbers are used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SequencePolicy {
    /// Wait for the clock to reach the next tick (the default). The wait asks
    /// the clock to [`pause`](Clock::pause) for the time left, which
    /// [`SystemClock`](crate::SystemClock) spends asleep rather than spinning.
    #[default]
    Wait,
    /// Go on issuing from the following ticks, before the clock reaches them,
    /// while the ticks issued are at most `max_ticks` ahead of the clock;
    /// beyond that, wait as [`Wait`](Self::Wait) does.
    BorrowAhead {
        /// How many ticks IDs may run ahead of the clock.
        max_ticks: u64,
    },
}

impl SequencePolicy {
    const fn borrow_ticks(self) -> u64 {
        match self {
            Self::Wait => 0,
            Self::BorrowAhead { max_ticks } => max_ticks,
        }
    }
}

/// Pauses beyond the time a wait needs that a generator grants a clock
/// before it gives up with `snowflake.wait_exceeded`: one tick plus this.
const WAIT_SLACK_MILLIS: u64 = 20;

/// A Snowflake generator for one worker, shared by reference between threads.
///
/// Every ID it issues is unique and greater than every ID it issued before
/// (in the order the calls took effect, whichever thread made them). The
/// whole state is one atomic word, the next free *slot*
/// `tick << sequence_bits | sequence`; a call reserves slots with a
/// compare-and-swap, so a full tick's sequence carries into the next tick.
///
/// ```
/// # #[cfg(feature = "std")] {
/// use mintid::{Snowflake, SnowflakeLayout};
/// let generator = Snowflake::new(SnowflakeLayout::CLASSIC, 7)?;
/// let (a, b) = (generator.next_id()?, generator.next_id()?);
/// assert!(a < b);
/// assert_eq!(SnowflakeLayout::CLASSIC.decode(b)?.worker, 7);
/// # }
/// # Ok::<(), mintid::SnowflakeError>(())
/// ```
#[derive(Debug)]
pub struct Snowflake<C> {
    clock: C,
    layout: SnowflakeLayout,
    worker: u64,
    rollback: RollbackPolicy,
    sequence: SequencePolicy,
    /// The next free slot: `tick << sequence_bits | sequence`.
    next_slot: AtomicU64,
    /// `worker << sequence_bits`, ready to be or-ed into an ID.
    shifted_worker: u64,
    /// One past the last slot the layout holds: `2^time_bits << sequence_bits`.
    slot_end: u64,
    /// The most a single reservation may pause, in microseconds.
    wait_budget_micros: u64,
}

/// Options for a [`Snowflake`] generator; made by [`Snowflake::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct SnowflakeBuilder<C> {
    clock: C,
    layout: SnowflakeLayout,
    worker: u64,
    rollback: RollbackPolicy,
    sequence: SequencePolicy,
    after_id: Option<SnowflakeId>,
    after_unix_millis: Option<u64>,
}

impl<C: Clock> SnowflakeBuilder<C> {
    /// What to do when the clock goes back (default [`RollbackPolicy::DEFAULT`]:
    /// wait out up to 5 ms).
    pub fn rollback(mut self, policy: RollbackPolicy) -> Self {
        self.rollback = policy;
        self
    }

    /// What to do when a tick's sequence is used up (default
    /// [`SequencePolicy::Wait`]).
    pub fn sequence_policy(mut self, policy: SequencePolicy) -> Self {
        self.sequence = policy;
        self
    }

    /// Issues only IDs whose (tick, sequence) comes after `id`'s: a restarted
    /// worker passes the [`high_water`](Snowflake::high_water) it saved so it
    /// never goes below what it issued before. The worker field of `id` is
    /// not compared.
    pub fn starting_after_id(mut self, id: SnowflakeId) -> Self {
        self.after_id = Some(id);
        self
    }

    /// Issues only IDs from ticks after the one containing `unix_millis`. With
    /// [`starting_after_id`](Self::starting_after_id) too, the later bound holds.
    /// A time before the epoch bounds nothing.
    pub fn starting_after_unix_millis(mut self, unix_millis: u64) -> Self {
        self.after_unix_millis = Some(unix_millis);
        self
    }

    /// The generator.
    ///
    /// Fails with `snowflake.worker_out_of_range`, with
    /// `snowflake.id_out_of_range` when the `starting_after_id` ID does not
    /// fit the layout, and with `snowflake.time_exhausted` when the
    /// `starting_after_unix_millis` time lies past the layout's end.
    pub fn build(self) -> Result<Snowflake<C>, SnowflakeError> {
        let layout = self.layout;
        layout.check_worker(self.worker)?;
        let sequence_bits = layout.sequence_bits();
        let after_id_slot = match self.after_id {
            Some(id) => {
                let parts = layout.decode(id)?;
                ((parts.tick << sequence_bits) | parts.sequence) + 1
            }
            None => 0,
        };
        let after_time_slot = match self.after_unix_millis {
            Some(unix_millis) if unix_millis >= layout.epoch_millis() => {
                let tick = layout.ticks_in(unix_millis - layout.epoch_millis());
                if tick > layout.max_tick() {
                    return Err(SnowflakeError::new(Detail::TimeExhausted {
                        end_millis: layout.expires_at_unix_millis(),
                    }));
                }
                (tick + 1) << sequence_bits
            }
            _ => 0,
        };
        let rollback_wait = match self.rollback {
            RollbackPolicy::Wait { max_millis } => max_millis,
            RollbackPolicy::Fail | RollbackPolicy::Logical { .. } => 0,
        };
        let wait_budget_millis = rollback_wait
            .saturating_add(layout.tick_millis())
            .saturating_add(WAIT_SLACK_MILLIS);
        Ok(Snowflake {
            clock: self.clock,
            layout,
            worker: self.worker,
            rollback: self.rollback,
            sequence: self.sequence,
            next_slot: AtomicU64::new(after_id_slot.max(after_time_slot)),
            shifted_worker: self.worker << sequence_bits,
            slot_end: (layout.max_tick() + 1) << sequence_bits,
            wait_budget_micros: wait_budget_millis.saturating_mul(1000),
        })
    }
}

#[cfg(feature = "std")]
impl Snowflake<crate::SystemClock> {
    /// A generator for `worker` reading the system clock, with the default
    /// options (wait out rollbacks of up to 5 ms; wait for the next tick when
    /// the sequence is used up).
    ///
    /// Fails with `snowflake.worker_out_of_range`.
    pub fn new(layout: SnowflakeLayout, worker: u64) -> Result<Self, SnowflakeError> {
        Self::builder(layout, worker, crate::SystemClock).build()
    }
}

impl<C: Clock> Snowflake<C> {
    /// Options for a generator for `worker` reading `clock`.
    pub fn builder(layout: SnowflakeLayout, worker: u64, clock: C) -> SnowflakeBuilder<C> {
        SnowflakeBuilder {
            clock,
            layout,
            worker,
            rollback: RollbackPolicy::DEFAULT,
            sequence: SequencePolicy::Wait,
            after_id: None,
            after_unix_millis: None,
        }
    }

    /// The next ID.
    ///
    /// Fails with `snowflake.epoch_in_future`, `snowflake.clock_rolled_back`,
    /// `snowflake.time_exhausted` or `snowflake.wait_exceeded`; a failed call
    /// issues nothing.
    pub fn next_id(&self) -> Result<SnowflakeId, SnowflakeError> {
        let (first, _) = self.reserve(1)?;
        Ok(self.layout.id_of_slot(first, self.shifted_worker))
    }

    /// Fills `out` with consecutive new IDs, reserving as many at once as the
    /// current tick (and, when borrowing ahead, the ticks it may borrow)
    /// holds: one atomic operation per run, not per ID.
    ///
    /// The IDs are unique and increasing; another thread's IDs may fall
    /// between two runs. On an error (the same as [`next_id`](Self::next_id))
    /// the IDs already written are valid but lost to the caller, and the rest
    /// of `out` is left as it was.
    pub fn fill(&self, out: &mut [u64]) -> Result<(), SnowflakeError> {
        let mut rest = out;
        while !rest.is_empty() {
            let wanted = u64::try_from(rest.len()).unwrap_or(u64::MAX);
            let (first, count) = self.reserve(wanted)?;
            // `count` ≤ `wanted` = `rest.len()`, so it fits in usize.
            let (run, tail) = rest.split_at_mut(usize::try_from(count).unwrap_or(rest.len()));
            for (slot, id) in (first..).zip(run.iter_mut()) {
                *id = self.layout.id_of_slot(slot, self.shifted_worker).get();
            }
            rest = tail;
        }
        Ok(())
    }

    /// `count` new IDs, as [`fill`](Self::fill) issues them.
    pub fn next_batch(&self, count: usize) -> Result<Vec<u64>, SnowflakeError> {
        let mut ids = vec![0; count];
        self.fill(&mut ids)?;
        Ok(ids)
    }

    /// The highest ID this generator has issued, or was started after; the
    /// next ID is greater. `None` before the first ID when no starting point
    /// was given. Save it and pass it to
    /// [`starting_after_id`](SnowflakeBuilder::starting_after_id) on restart.
    pub fn high_water(&self) -> Option<SnowflakeId> {
        let last = self.next_slot.load(Ordering::Relaxed).checked_sub(1)?;
        Some(self.layout.id_of_slot(last, self.shifted_worker))
    }

    /// The Unix millisecond at which the tick of [`high_water`](Self::high_water)
    /// starts: a worker id's next holder starts after it with
    /// [`starting_after_unix_millis`](SnowflakeBuilder::starting_after_unix_millis).
    pub fn high_water_unix_millis(&self) -> Option<u64> {
        let last = self.next_slot.load(Ordering::Relaxed).checked_sub(1)?;
        Some(
            self.layout
                .unix_ms_of_tick(last >> self.layout.sequence_bits()),
        )
    }

    /// The layout of the IDs.
    pub fn layout(&self) -> &SnowflakeLayout {
        &self.layout
    }

    /// The worker id in every ID.
    pub fn worker(&self) -> u64 {
        self.worker
    }

    /// The clock rollback policy.
    pub fn rollback_policy(&self) -> RollbackPolicy {
        self.rollback
    }

    /// The policy for a used-up sequence.
    pub fn sequence_policy(&self) -> SequencePolicy {
        self.sequence
    }

    /// The clock the generator reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Reserves up to `wanted` (≥ 1) consecutive slots; returns the first
    /// slot and how many were reserved (at least 1).
    ///
    /// Relaxed ordering suffices: uniqueness and order come from the single
    /// modification order of `next_slot`, and no other memory is published
    /// through it.
    fn reserve(&self, wanted: u64) -> Result<(u64, u64), SnowflakeError> {
        let layout = &self.layout;
        let sequence_bits = layout.sequence_bits();
        let borrow = self.sequence.borrow_ticks();
        let mut wait = Wait::default();
        let mut next = self.next_slot.load(Ordering::Relaxed);
        loop {
            let now_millis = self.clock.now_millis();
            let now = self.clock_tick(now_millis)?;
            wait.note_clock(now);
            // How far IDs may run ahead of the clock, in ticks.
            let mut lead_limit = borrow;
            // Ticks the clock is behind the last slot issued, beyond what
            // borrowing explains: a rollback.
            let rolled_back = next
                .checked_sub(1)
                .map_or(0, |last| (last >> sequence_bits).saturating_sub(now))
                .saturating_sub(borrow);
            if rolled_back > 0 {
                let behind_millis = rolled_back.saturating_mul(layout.tick_millis());
                match self.rollback {
                    RollbackPolicy::Wait { max_millis } if behind_millis <= max_millis => {
                        self.pause_until(now_millis, now + rolled_back, &mut wait)?;
                        next = self.next_slot.load(Ordering::Relaxed);
                        continue;
                    }
                    RollbackPolicy::Logical { max_millis } if behind_millis <= max_millis => {
                        lead_limit = lead_limit.saturating_add(max_millis / layout.tick_millis());
                    }
                    policy => {
                        return Err(SnowflakeError::new(Detail::ClockRolledBack {
                            behind_millis,
                            tolerance_millis: policy.tolerance_millis(),
                        }));
                    }
                }
            }
            let first = next.max(now << sequence_bits);
            if first >= self.slot_end {
                return Err(self.time_exhausted());
            }
            // One past the last slot whose tick is at most `now + lead_limit`.
            let end = now
                .saturating_add(lead_limit)
                .saturating_add(1)
                .min(layout.max_tick() + 1)
                << sequence_bits;
            if first >= end {
                // `first`'s tick is `now + lead_limit + 1` or later (it is
                // below the layout's end): wait until the clock is close enough.
                let target = (first >> sequence_bits) - lead_limit;
                self.pause_until(now_millis, target, &mut wait)?;
                next = self.next_slot.load(Ordering::Relaxed);
                continue;
            }
            let count = wanted.min(end - first);
            match self.next_slot.compare_exchange_weak(
                next,
                first + count,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok((first, count)),
                Err(current) => next = current,
            }
        }
    }

    /// The tick of a clock reading.
    fn clock_tick(&self, now_millis: u64) -> Result<u64, SnowflakeError> {
        let epoch_millis = self.layout.epoch_millis();
        let Some(since_epoch) = now_millis.checked_sub(epoch_millis) else {
            return Err(SnowflakeError::new(Detail::EpochInFuture {
                now_millis,
                epoch_millis,
            }));
        };
        let tick = self.layout.ticks_in(since_epoch);
        if tick > self.layout.max_tick() {
            return Err(self.time_exhausted());
        }
        Ok(tick)
    }

    fn time_exhausted(&self) -> SnowflakeError {
        SnowflakeError::new(Detail::TimeExhausted {
            end_millis: self.layout.expires_at_unix_millis(),
        })
    }

    /// One pause toward the start of `target_tick`, which the clock (reading
    /// `now_millis`) has not reached. Counts at least 1 µs per call against the
    /// budget, so no clock can keep the generator waiting for ever.
    fn pause_until(
        &self,
        now_millis: u64,
        target_tick: u64,
        wait: &mut Wait,
    ) -> Result<(), SnowflakeError> {
        let target_millis = self.layout.unix_ms_of_tick(target_tick);
        let budget_left = self.wait_budget_micros.saturating_sub(wait.paused_micros);
        if budget_left == 0 {
            return Err(SnowflakeError::new(Detail::WaitExceeded {
                paused_micros: wait.paused_micros,
                target_millis,
                now_millis,
            }));
        }
        let step = target_millis
            .saturating_mul(1000)
            .saturating_sub(self.clock.now_micros())
            .clamp(1, budget_left);
        self.clock.pause(step);
        wait.paused_micros += step;
        wait.target_tick = Some(target_tick);
        Ok(())
    }
}

/// The pauses a reservation made while waiting for the clock.
///
/// The budget bounds waiting for a clock that does not get there: once the
/// clock reaches the tick waited for, the count starts over, so a thread that
/// loses the race for a fresh tick to other threads is not failed for it.
#[derive(Debug, Default)]
struct Wait {
    target_tick: Option<u64>,
    paused_micros: u64,
}

impl Wait {
    fn note_clock(&mut self, now_tick: u64) {
        if self.target_tick.is_some_and(|target| now_tick >= target) {
            *self = Self::default();
        }
    }
}
