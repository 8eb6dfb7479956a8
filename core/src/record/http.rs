//! How refusals map to HTTP: status, `application/problem+json` (RFC 9457)
//! type and title, `Retry-After`, and the replay marker. Hosts answer with
//! these values and invent none of their own.

/// The media type of a problem answer.
pub const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";
/// The header that marks a replayed response (as Stripe names it).
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";
/// The value of [`REPLAYED_HEADER`] on a replayed response.
pub const REPLAYED_VALUE: &str = "true";
/// The header that carries [`retry_after_secs`].
pub const RETRY_AFTER_HEADER: &str = "Retry-After";

/// Why a request with an idempotency key or request ID was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Problem {
    /// 400: the route requires an idempotency key and none was sent.
    MissingKey,
    /// 400: the idempotency key is malformed.
    MalformedKey,
    /// 400: the request ID failed verification (malformed, unknown key,
    /// forged, another scope's, or minted too far in the future).
    InvalidRequestId,
    /// 400: the grant the request ID was minted from has expired; the client
    /// needs a new grant.
    GrantExpired,
    /// 409: a request with the same key is still running.
    InProgress,
    /// 422: the key was already used with a different payload.
    FingerprintMismatch,
    /// 400: the key is older than retention; its outcome is no longer
    /// known, and it is not run again.
    KeyTooOld,
    /// 503: the idempotency storage cannot be reached; nothing was run.
    StorageUnavailable,
    /// 400: the request's content type is JSON and its body is not JSON;
    /// nothing was run or stored.
    MalformedBody,
}

impl Problem {
    /// Every problem, in declaration order.
    pub const ALL: [Problem; 9] = [
        Problem::MissingKey,
        Problem::MalformedKey,
        Problem::InvalidRequestId,
        Problem::GrantExpired,
        Problem::InProgress,
        Problem::FingerprintMismatch,
        Problem::KeyTooOld,
        Problem::StorageUnavailable,
        Problem::MalformedBody,
    ];

    /// The stable name, e.g. `in_progress` (also the end of the type URI,
    /// with `-` for `_`).
    pub const fn name(self) -> &'static str {
        match self {
            Problem::MissingKey => "missing_key",
            Problem::MalformedKey => "malformed_key",
            Problem::InvalidRequestId => "invalid_request_id",
            Problem::GrantExpired => "grant_expired",
            Problem::InProgress => "in_progress",
            Problem::FingerprintMismatch => "fingerprint_mismatch",
            Problem::KeyTooOld => "key_too_old",
            Problem::StorageUnavailable => "storage_unavailable",
            Problem::MalformedBody => "malformed_body",
        }
    }

    /// The HTTP status code.
    pub const fn status(self) -> u16 {
        match self {
            Problem::MissingKey
            | Problem::MalformedKey
            | Problem::InvalidRequestId
            | Problem::GrantExpired
            | Problem::KeyTooOld
            | Problem::MalformedBody => 400,
            Problem::InProgress => 409,
            Problem::FingerprintMismatch => 422,
            Problem::StorageUnavailable => 503,
        }
    }

    /// The problem+json `type` URI.
    pub const fn type_uri(self) -> &'static str {
        match self {
            Problem::MissingKey => "https://mintid.dev/problems/missing-key",
            Problem::MalformedKey => "https://mintid.dev/problems/malformed-key",
            Problem::InvalidRequestId => "https://mintid.dev/problems/invalid-request-id",
            Problem::GrantExpired => "https://mintid.dev/problems/grant-expired",
            Problem::InProgress => "https://mintid.dev/problems/in-progress",
            Problem::FingerprintMismatch => "https://mintid.dev/problems/fingerprint-mismatch",
            Problem::KeyTooOld => "https://mintid.dev/problems/key-too-old",
            Problem::StorageUnavailable => "https://mintid.dev/problems/storage-unavailable",
            Problem::MalformedBody => "https://mintid.dev/problems/malformed-body",
        }
    }

    /// The problem+json `title`: short, the same for every occurrence.
    pub const fn title(self) -> &'static str {
        match self {
            Problem::MissingKey => "Idempotency key missing",
            Problem::MalformedKey => "Idempotency key malformed",
            Problem::InvalidRequestId => "Request ID not valid",
            Problem::GrantExpired => "Request ID grant expired",
            Problem::InProgress => "Request already in progress",
            Problem::FingerprintMismatch => "Idempotency key reused with a different payload",
            Problem::KeyTooOld => "Idempotency key older than retention",
            Problem::StorageUnavailable => "Idempotency storage unavailable",
            Problem::MalformedBody => "Request body malformed",
        }
    }
}

/// Milliseconds as `Retry-After` seconds: rounded up, at least 1.
pub const fn retry_after_secs(millis: u64) -> u64 {
    let secs = millis.div_ceil(1000);
    if secs == 0 { 1 } else { secs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_uri_ends_with_the_name() {
        for problem in Problem::ALL {
            let slug = problem.type_uri().rsplit('/').next().unwrap();
            assert!(slug.chars().eq(problem.name().chars().map(|c| match c {
                '_' => '-',
                c => c,
            })));
        }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(0), 1);
        assert_eq!(retry_after_secs(1), 1);
        assert_eq!(retry_after_secs(1000), 1);
        assert_eq!(retry_after_secs(1001), 2);
        assert_eq!(retry_after_secs(u64::MAX), u64::MAX.div_ceil(1000));
    }
}
