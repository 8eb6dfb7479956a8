//! Without the `redis` feature there is no fast path: `BoundFastPath` has
//! no value, so a store's `Option<BoundFastPath>` is always `None`.

use mintid::store::{FastAnswer, FastPath, FastReport, RedisCall};

/// No fast path (feature `redis` off).
#[derive(Debug, Clone)]
pub(crate) enum BoundFastPath {}

impl BoundFastPath {
    pub(crate) fn core(&self) -> FastPath {
        match *self {}
    }

    pub(crate) async fn run(&self, _call: &RedisCall) -> FastAnswer {
        match *self {}
    }

    pub(crate) fn count(&self, _report: FastReport) {
        match *self {}
    }
}
