#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backend;
mod error;
mod idempotency;
mod store;

pub use backend::{Backend, classify};
pub use error::{Error, OperationError};
pub use idempotency::{Claimed, IdempotencyStore, RecordLease, RunResult, StoreRequest};
pub use mintid::store::{StoredRecord, StoredResponse};
pub use store::{Store, StoreClock};
