//! The outbox (local message table): messages written in the caller's
//! business transaction, sent later by relays, at least once.
//!
//! Everything here is pure: the host runs the named queries of
//! `schema/<dialect>/queries.sql` and feeds the rows back.
//!
//! ```text
//!   in the business transaction: check_message; outbox_enqueue ─▶ Enqueued::from_rows
//!   relay loop:  claim = policy.claim(now, draw); outbox_claim(claim) ; rows = outbox_claimed(token)
//!                per row: policy.delivery(attempts) ── Send ──▶ send; outbox_mark_sent
//!                                                   │           failed: policy.after_failure ─▶ mark_retry / mark_dead
//!                                                   └─ GiveUp ─▶ outbox_mark_dead
//!                every mark: check_marked(rows, message_id, token)
//! ```
//!
//! No transaction stays open while a message is sent: a claim is a lease on
//! its messages (`next_attempt_millis` moved to the claim's end, a claim
//! token written), and every mark is guarded by the token. The full rules are
//! in `docs/spec.md`, section "Worker-id leases, segments and the outbox".

mod error;
mod policy;
mod relay;
mod status;

pub use error::{OutboxError, OutboxErrorKind};
pub use policy::RelayPolicy;
pub use relay::{
    ATTEMPTS_EXHAUSTED, AfterFailure, BatchClaim, Delivery, Enqueued, MAX_BUSINESS_KEY_BYTES,
    MAX_KIND_BYTES, MAX_PAYLOAD_BYTES, check_marked, check_message,
};
pub use status::OutboxStatus;
