#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

/// `Clone` for a type generic over its [`Backend`] whose fields all clone
/// (a derive would ask `DB: Clone` of sqlx's database types, which are not).
macro_rules! clone_fields {
    ($name:ident, $($field:ident),+) => {
        impl<DB: $crate::Backend> Clone for $name<DB> {
            fn clone(&self) -> Self {
                Self { $($field: self.$field.clone()),+ }
            }
        }
    };
}

mod backend;
mod error;
#[cfg(feature = "redis")]
mod fast_path;
#[cfg(not(feature = "redis"))]
#[path = "fast_path_off.rs"]
mod fast_path;
mod idempotency;
mod inbox;
#[cfg(feature = "tower")]
mod layer;
mod leases;
mod outbox;
mod segments;
mod steps;
mod store;
mod telemetry;
mod transitions;

pub use backend::{Backend, classify};
pub use error::{Error, OperationError};
#[cfg(feature = "redis")]
pub use fast_path::{FastPathMetrics, RedisFastPath};
pub use idempotency::{Claimed, IdempotencyStore, RecordLease, RunResult, StoreRequest};
pub use inbox::{Consumption, Inbox};
#[cfg(feature = "tower")]
pub use layer::{
    BoxError, GrantRoute, Idempotency, IdempotencyLayer, LayerBody, Transaction, TransactionEnded,
    TransactionWork,
};
pub use leases::{LeasedSnowflake, WorkerLeaseRow, WorkerLeases};
pub use mintid::outbox::Enqueued;
pub use mintid::store::{ClaimedMessage, RelayReport, StoredMessage};
pub use mintid::store::{StoredRecord, StoredResponse};
pub use outbox::{Outbox, OutboxMessage};
pub use segments::SegmentIds;
pub use store::{StatementFault, Store, StoreClock};
pub use transitions::{EntityId, Transitions};
