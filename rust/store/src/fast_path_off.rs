//! Without the `redis` feature there is no fast path: `BoundFastPath` has
//! no value, so a store's `Option<BoundFastPath>` is always `None` and the
//! store's calls of the fast path do nothing.

use mintid::store::{Finished, Held, StoredResponse};
use mintid::{Fingerprint, IdempotencyKey};

use crate::error::OperationError;
use crate::idempotency::{RunResult, StoreRequest};

/// No fast path (feature `redis` off).
#[derive(Debug, Clone)]
pub(crate) enum BoundFastPath {}

/// No request on the fast path (feature `redis` off): nothing to write.
#[derive(Debug)]
pub(crate) struct Settling;

impl BoundFastPath {
    pub(crate) async fn check(
        &self,
        _key: &IdempotencyKey,
        _request: &StoreRequest,
        _now_millis: u64,
    ) -> Option<RunResult> {
        match *self {}
    }

    pub(crate) fn settling(&self, _key: &IdempotencyKey, _fingerprint: Fingerprint) -> Settling {
        Settling
    }
}

impl Settling {
    pub(crate) async fn claimed(&mut self, _held: Held) {}

    pub(crate) fn ended(
        &mut self,
        _result: &Result<StoredResponse, OperationError>,
        _end: Option<&Finished>,
    ) {
    }

    pub(crate) async fn settle(&self, _now_millis: u64) {}
}
