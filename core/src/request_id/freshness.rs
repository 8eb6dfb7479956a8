//! How old or how far ahead a request ID's UUIDv7 may be.

use super::RequestIdError;
use super::error::Form;
use crate::uuid7::Uuid7;

/// The window a request ID's timestamp `t` must fall in:
/// `now − max_age_millis ≤ t ≤ now + max_skew_millis`.
///
/// Keep `max_age_millis` at most the retention of idempotency records, so a
/// retry arriving after its record may have been removed is rejected as too
/// old instead of running again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Freshness {
    /// The greatest age accepted, in milliseconds.
    pub max_age_millis: u64,
    /// How far ahead of the server's clock a timestamp may be, in
    /// milliseconds (for clients whose clocks run fast).
    pub max_skew_millis: u64,
}

impl Freshness {
    /// 24 hours of age (the records' default retention) and 5 minutes of skew.
    pub const DEFAULT: Self = Self {
        max_age_millis: 86_400_000,
        max_skew_millis: 300_000,
    };

    /// Checks the timestamp of `uuid` against the window at `now_millis`:
    /// `request_id.too_old` or `request_id.in_future` when outside.
    pub fn check(&self, uuid: &Uuid7, now_millis: u64) -> Result<(), RequestIdError> {
        let timestamp = uuid.timestamp_millis();
        if timestamp < now_millis.saturating_sub(self.max_age_millis) {
            return Err(RequestIdError::too_old(
                timestamp,
                now_millis,
                self.max_age_millis,
            ));
        }
        if timestamp > now_millis.saturating_add(self.max_skew_millis) {
            return Err(RequestIdError::in_future(
                timestamp,
                now_millis,
                self.max_skew_millis,
            ));
        }
        Ok(())
    }
}

impl Default for Freshness {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Verifies an unsigned request ID: the text of a UUIDv7 in any form
/// [`Uuid7::parse`] reads (`request_id.malformed` otherwise) whose timestamp
/// is fresh at `now_millis`. It proves nothing about who minted it.
pub fn verify_unsigned(
    text: &str,
    now_millis: u64,
    freshness: &Freshness,
) -> Result<Uuid7, RequestIdError> {
    let uuid: Uuid7 = text
        .parse()
        .map_err(|error| RequestIdError::malformed(Form::UnsignedText(error)))?;
    freshness.check(&uuid, now_millis)?;
    Ok(uuid)
}
