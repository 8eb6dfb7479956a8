//! Segment allocation (Meituan Leaf's "segment mode"): a process takes a
//! range of IDs of a tag from the database in one round trip and hands them
//! out from memory.
//!
//! Everything here is pure: the host runs the named queries of
//! `schema/<dialect>/queries.sql` and feeds the rows back.
//!
//! ```text
//!   id = allocator.next_id()              (None: fetch and wait)
//!   if let Some(fetch) = allocator.fetch_due(now):   in the background:
//!       BEGIN; segment_fetch(tag, fetch.step, now) = 1 row; row = segment_load(tag); COMMIT
//!       (0 rows: ROLLBACK; segment_create(tag, step, now) outside a transaction; start again)
//!       allocator.fetched(SegmentRow { max_id, step }, now)   (or fetch_failed())
//! ```
//!
//! Hosts use it through [`SegmentDriver`](crate::store::SegmentDriver), which
//! hands out runs of IDs ([`SegmentAllocator::take`]) and runs this fetch as
//! steps. The full rules are in `docs/spec.md`, section "Worker-id leases,
//! segments and the outbox".

mod allocator;
mod error;
mod policy;

pub use allocator::{Fetch, SegmentAllocator, SegmentRow};
pub use error::{SegmentError, SegmentErrorKind};
pub use policy::SegmentPolicy;
