//! Completing and failing a claim: accepted only from its holder.

use super::{Fence, Record, RecordError, RecordPolicy, Status};

/// How an operation failed, as its holder reports it to [`Record::fail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// Worth retrying (a timeout, an unavailable dependency): the key is
    /// released and the next request with it runs again.
    Retryable,
    /// Final (a refused payment, a validation error): the error is stored
    /// and replayed, unless the policy does not store errors.
    Final,
}

impl Record {
    /// The record after its holder completed the operation: succeeded, with
    /// the response stored beside it.
    ///
    /// Accepted when `fence` is the record's latest claim and the record is
    /// still pending, even after the lease deadline: until another request
    /// reclaims the key, the late holder is still the only one that ran, and
    /// keeping its result spares a second run. Storage guards the write with
    /// `token`, `created` and `status = 'pending'`.
    ///
    /// Errors: `record.stale_token` when the key was reclaimed since (or the
    /// record is a newer one of the same key), `record.not_pending` when the
    /// claim already ended.
    pub fn complete(&self, fence: Fence) -> Result<Record, RecordError> {
        self.end(fence, Status::Succeeded)
    }

    /// The record after its holder failed the operation: failed (replayed)
    /// for a [`Failure::Final`] when the policy stores errors, otherwise
    /// failed_retryable (released). Accepted exactly as [`complete`](Record::complete) is.
    pub fn fail(
        &self,
        fence: Fence,
        failure: Failure,
        policy: &RecordPolicy,
    ) -> Result<Record, RecordError> {
        let status = match failure {
            Failure::Final if policy.store_errors() => Status::Failed,
            Failure::Final | Failure::Retryable => Status::FailedRetryable,
        };
        self.end(fence, status)
    }

    fn end(&self, fence: Fence, status: Status) -> Result<Record, RecordError> {
        if fence != self.fence() {
            return Err(RecordError::stale_token(fence, self.fence()));
        }
        if self.status != Status::Pending {
            return Err(RecordError::not_pending(self.status));
        }
        Ok(Record { status, ..*self })
    }
}
