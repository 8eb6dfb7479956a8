#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backend;
mod error;
#[cfg(feature = "redis")]
mod fast_path;
#[cfg(not(feature = "redis"))]
#[path = "fast_path_off.rs"]
mod fast_path;
mod idempotency;
#[cfg(feature = "tower")]
mod layer;
mod leases;
mod outbox;
mod segments;
mod steps;
mod store;
mod telemetry;

pub use backend::{Backend, classify};
pub use error::{Error, OperationError};
#[cfg(feature = "redis")]
pub use fast_path::{FastPathMetrics, RedisFastPath};
pub use idempotency::{Claimed, IdempotencyStore, RecordLease, RunResult, StoreRequest};
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
