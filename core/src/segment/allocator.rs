//! The double-buffered allocator of one process for one tag.

use super::policy::MAX_ID;
use super::{SegmentError, SegmentPolicy};

/// A fetch the host must run now: `segment_fetch` with this step (and the
/// tag), then `segment_load`, in one transaction; then report the row to
/// [`SegmentAllocator::fetched`] (or a failure to
/// [`SegmentAllocator::fetch_failed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fetch {
    /// The `:step` of `segment_fetch`: how many IDs to take.
    pub step: u64,
}

/// The row `segment_load` returned after a fetch: the tag's new `max_id` and
/// the `step` just added. The segment is `max_id − step + 1 ..= max_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SegmentRow {
    /// The tag's largest ID handed out to any process, this segment's last.
    pub max_id: u64,
    /// The step of the fetch: the size of the segment.
    pub step: u64,
}

/// The IDs left of one segment: `next ..= last`, empty when `next > last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Buffer {
    first: u64,
    next: u64,
    last: u64,
    fetched_millis: u64,
}

impl Buffer {
    const fn remaining(&self) -> u64 {
        (self.last + 1).saturating_sub(self.next)
    }
}

/// Hands out IDs of one tag from memory: the current segment, and the next
/// one fetched in the background before the current one runs out (Leaf's
/// double buffer).
///
/// ```text
///   next_id() ─▶ current ─(used up)─▶ next becomes current ─(none)─▶ None: fetch and wait
///   fetch_due(now) ─▶ Some(Fetch) once per fetch: no next segment yet, none in flight,
///                     and fetch_at_percent of the current one used (or no current one)
/// ```
///
/// IDs are unique across every process sharing the tag (each segment is one
/// atomic `max_id + step` in the database) and increasing within this
/// allocator (the tag's `max_id` only grows, and one fetch at a time is in
/// flight). A restart loses the unused rest of the current segment and the
/// whole next one: gaps, never duplicates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentAllocator {
    policy: SegmentPolicy,
    current: Option<Buffer>,
    next: Option<Buffer>,
    in_flight: Option<Fetch>,
    step: u64,
    highest: u64,
}

impl SegmentAllocator {
    /// An empty allocator: its first [`fetch_due`](Self::fetch_due) asks for
    /// the policy's initial step.
    pub const fn new(policy: SegmentPolicy) -> Self {
        Self {
            policy,
            current: None,
            next: None,
            in_flight: None,
            step: policy.initial_step(),
            highest: 0,
        }
    }

    /// The next ID, or `None` when no segment in memory has one left: run
    /// the due fetch (or wait for the one in flight) and try again.
    pub fn next_id(&mut self) -> Option<u64> {
        let buffer = self.current_with_ids()?;
        let id = buffer.next;
        buffer.next += 1;
        Some(id)
    }

    /// Fills `out` from the front with consecutive IDs of the segments in
    /// memory; returns how many it wrote (fewer than `out.len()` when the
    /// segments ran out).
    pub fn fill(&mut self, out: &mut [u64]) -> usize {
        let mut written = 0;
        while written < out.len() {
            let Some(buffer) = self.current_with_ids() else {
                break;
            };
            let wanted = u64::try_from(out.len() - written).unwrap_or(u64::MAX);
            let count = wanted.min(buffer.remaining());
            for (slot, id) in out[written..]
                .iter_mut()
                .zip(buffer.next..buffer.next + count)
            {
                *slot = id;
            }
            buffer.next += count;
            written += usize::try_from(count).unwrap_or(out.len() - written);
        }
        written
    }

    /// Hands out a run of consecutive IDs of the current segment at once:
    /// `Some((first, count))` for `first .. first + count`, or `None` when no
    /// segment in memory has one left. While the next fetch is still to be
    /// arranged (no next segment, none in flight), the run stops where
    /// `fetch_at_percent` of the segment is used, so the next
    /// [`fetch_due`](Self::fetch_due) asks for it just as it would after
    /// [`next_id`](Self::next_id) one by one; otherwise it is the rest of the
    /// segment.
    pub fn take(&mut self) -> Option<(u64, u64)> {
        let percent = u128::from(self.policy.fetch_at_percent());
        self.current_with_ids()?;
        let arranged = self.in_flight.is_some() || self.next.is_some();
        let buffer = self.current.as_mut()?;
        let mut count = buffer.remaining();
        if !arranged {
            let size = u128::from(buffer.last - buffer.first) + 1;
            let used = u128::from(buffer.next - buffer.first);
            // The first `used` at which `used * 100 >= size * percent`.
            let due_at = (size * percent).div_ceil(100);
            if due_at > used {
                count = count.min(u64::try_from(due_at - used).unwrap_or(u64::MAX));
            }
        }
        let first = buffer.next;
        buffer.next += count;
        Some((first, count))
    }

    /// How many IDs are left in memory (current and next segment).
    pub fn remaining(&self) -> u64 {
        let left = |buffer: &Option<Buffer>| buffer.map_or(0, |b| b.remaining());
        left(&self.current) + left(&self.next)
    }

    /// The step the next fetch will ask for, before adaptation.
    pub const fn step(&self) -> u64 {
        self.step
    }

    /// Whether a fetch is in flight.
    pub const fn fetch_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The fetch to start at `now_millis`, if one is due: no fetch is in
    /// flight, no next segment is waiting, and either the current segment
    /// has no IDs left (or there is none) or at least `fetch_at_percent` of it
    /// is used. The step adapts to how long the current segment has lasted
    /// (see [`SegmentPolicy::adapt`]). Marks the fetch in flight.
    pub fn fetch_due(&mut self, now_millis: u64) -> Option<Fetch> {
        if self.in_flight.is_some() || self.next.is_some_and(|b| b.remaining() > 0) {
            return None;
        }
        let step = match self.current.filter(|b| b.remaining() > 0) {
            None => self
                .current
                .map_or(self.step, |b| self.adapted(b, now_millis)),
            Some(buffer) => {
                let size = u128::from(buffer.last - buffer.first) + 1;
                let used = u128::from(buffer.next - buffer.first);
                if used * 100 < size * u128::from(self.policy.fetch_at_percent()) {
                    return None;
                }
                self.adapted(buffer, now_millis)
            }
        };
        let fetch = Fetch { step };
        self.in_flight = Some(fetch);
        Some(fetch)
    }

    /// Installs the segment of `row`, the result of the fetch in flight,
    /// fetched at `now_millis`: as the current segment when the current one
    /// is used up, else as the next.
    ///
    /// Fails with `segment.no_fetch` when no fetch is in flight,
    /// `segment.invalid_row` when the row is not a segment of the requested
    /// step, and `segment.went_back` when it is not above every ID this
    /// allocator already held; the fetch then ends unused (a failed fetch).
    pub fn fetched(&mut self, row: SegmentRow, now_millis: u64) -> Result<(), SegmentError> {
        let fetch = self.in_flight.take().ok_or(SegmentError::no_fetch())?;
        if row.step != fetch.step || row.step == 0 || row.max_id < row.step || row.max_id > MAX_ID {
            return Err(SegmentError::invalid_row(row.max_id, row.step, fetch.step));
        }
        let first = row.max_id - row.step + 1;
        if first <= self.highest {
            return Err(SegmentError::went_back(first, self.highest));
        }
        self.highest = row.max_id;
        self.step = fetch.step;
        let buffer = Buffer {
            first,
            next: first,
            last: row.max_id,
            fetched_millis: now_millis,
        };
        if self.current.is_some_and(|b| b.remaining() > 0) {
            self.next = Some(buffer);
        } else {
            self.current = Some(buffer);
            self.next = None;
        }
        Ok(())
    }

    /// Ends the fetch in flight without a segment (the database could not be
    /// reached); the next [`fetch_due`](Self::fetch_due) asks again.
    pub fn fetch_failed(&mut self) {
        self.in_flight = None;
    }

    /// Forgets every ID in memory and the fetch in flight, in a process
    /// forked from the one that holds them: the parent and every other child
    /// hold the same copies, so this process may hand out none of them (gaps,
    /// never duplicates). The step and the highest ID held stay: the next
    /// [`fetch_due`](Self::fetch_due) asks for a fresh segment, above them.
    pub fn forget_after_fork(&mut self) {
        self.current = None;
        self.next = None;
        self.in_flight = None;
    }

    /// The current segment if it has IDs left, after promoting the next one
    /// when the current one is used up.
    fn current_with_ids(&mut self) -> Option<&mut Buffer> {
        if self.current.is_none_or(|b| b.remaining() == 0) {
            self.current = self.next.take();
        }
        self.current.as_mut().filter(|b| b.remaining() > 0)
    }

    fn adapted(&self, current: Buffer, now_millis: u64) -> u64 {
        self.policy
            .adapt(self.step, now_millis.saturating_sub(current.fetched_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::SegmentErrorKind;

    fn policy() -> SegmentPolicy {
        SegmentPolicy::new(10, 5, 40).unwrap()
    }

    #[test]
    fn first_fetch_then_ids_then_prefetch_at_the_threshold() {
        let mut allocator = SegmentAllocator::new(policy());
        assert_eq!(allocator.next_id(), None);
        let fetch = allocator.fetch_due(0).unwrap();
        assert_eq!(fetch, Fetch { step: 10 });
        assert_eq!(allocator.fetch_due(0), None, "one fetch at a time");
        allocator
            .fetched(
                SegmentRow {
                    max_id: 10,
                    step: 10,
                },
                0,
            )
            .unwrap();
        assert_eq!(allocator.next_id(), Some(1));
        assert_eq!(
            allocator.fetch_due(1),
            Some(Fetch { step: 20 }),
            "10% used after a fast segment"
        );
        allocator
            .fetched(
                SegmentRow {
                    max_id: 50,
                    step: 20,
                },
                1,
            )
            .unwrap();
        let mut out = [0; 12];
        assert_eq!(allocator.fill(&mut out), 12);
        assert_eq!(out, [2, 3, 4, 5, 6, 7, 8, 9, 10, 31, 32, 33]);
        assert_eq!(allocator.remaining(), 17);
    }

    #[test]
    fn a_forked_copy_forgets_its_segments_and_fetches_above_them() {
        let mut allocator = SegmentAllocator::new(policy());
        allocator.fetch_due(0).unwrap();
        let first = SegmentRow {
            max_id: 10,
            step: 10,
        };
        allocator.fetched(first, 0).unwrap();
        assert_eq!(allocator.next_id(), Some(1));
        allocator.fetch_due(0).unwrap();
        let mut child = allocator.clone();
        child.forget_after_fork();
        assert_eq!(child.remaining(), 0);
        assert_eq!(child.next_id(), None, "no ID the parent may hand out");
        assert!(
            !child.fetch_in_flight(),
            "the parent's fetch is not the child's"
        );
        let fetch = child.fetch_due(0).expect("a fetch of its own");
        let behind = SegmentRow {
            max_id: 10,
            step: fetch.step,
        };
        assert_eq!(
            child.fetched(behind, 0).unwrap_err().kind(),
            SegmentErrorKind::WentBack,
            "the highest ID held stays"
        );
        assert_eq!(allocator.next_id(), Some(2), "the parent keeps its segment");
    }

    #[test]
    fn rows_that_are_not_a_fresh_segment_are_refused() {
        let mut allocator = SegmentAllocator::new(policy());
        let row = SegmentRow {
            max_id: 10,
            step: 10,
        };
        assert_eq!(
            allocator.fetched(row, 0).unwrap_err().kind(),
            SegmentErrorKind::NoFetch
        );
        for (row, kind) in [
            (
                SegmentRow {
                    max_id: 10,
                    step: 9,
                },
                SegmentErrorKind::InvalidRow,
            ),
            (
                SegmentRow {
                    max_id: 9,
                    step: 10,
                },
                SegmentErrorKind::InvalidRow,
            ),
            (
                SegmentRow {
                    max_id: u64::MAX,
                    step: 10,
                },
                SegmentErrorKind::InvalidRow,
            ),
        ] {
            allocator.fetch_due(0).unwrap();
            assert_eq!(allocator.fetched(row, 0).unwrap_err().kind(), kind);
        }
        allocator.fetch_due(0).unwrap();
        allocator
            .fetched(
                SegmentRow {
                    max_id: 30,
                    step: 10,
                },
                0,
            )
            .unwrap();
        allocator.fill(&mut [0; 10]);
        let fetch = allocator.fetch_due(0).unwrap();
        allocator.fetch_failed();
        assert!(!allocator.fetch_in_flight());
        assert_eq!(allocator.fetch_due(0), Some(fetch));
        let back = SegmentRow {
            max_id: 40,
            step: fetch.step,
        };
        assert_eq!(
            allocator.fetched(back, 0).unwrap_err().kind(),
            SegmentErrorKind::WentBack
        );
    }
}
