//! Which problem refuses a request whose idempotency key could not be read:
//! the one rule the HTTP integrations of every host apply when verifying a
//! signed request ID or reading an `Idempotency-Key` fails.

use crate::error_codes::error_code;
use crate::record::Problem;

/// Where a request's key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeySource {
    /// A signed request ID (the `Mintid-Request-Id` header by default),
    /// verified by the server's key ring.
    SignedRequestId,
    /// A plain `Idempotency-Key` header.
    IdempotencyKey,
}

/// The problem a request is refused with when reading its key from `source`
/// failed with the error `code` (and, for a `key.*` error, the `part` it
/// names: `kind`, `scope` or `id`); `None` when the failure is not the
/// client's, and the host lets the error reach its framework (a 500).
///
/// - A `key.*` error of the key's `kind` or `scope` is the server's: it
///   computed them. Any other `key.*` error is the client's header:
///   `malformed_key` for an `Idempotency-Key`, `invalid_request_id` for a
///   signed request ID.
/// - A `request_id.*` error of a signed request ID is answered with the
///   problem the registry gives its code (`invalid_request_id`,
///   `grant_expired`, `key_too_old`); a code without one (a scope the core
///   refuses, a ring that cannot verify) is the server's.
/// - Any other code is the server's.
///
/// ```
/// use mintid::http::{KeySource, key_refusal};
/// use mintid::record::Problem;
///
/// let plain = key_refusal(KeySource::IdempotencyKey, "key.too_long", Some("id"));
/// assert_eq!(plain, Some(Problem::MalformedKey));
/// let expired = key_refusal(KeySource::SignedRequestId, "request_id.grant_expired", None);
/// assert_eq!(expired, Some(Problem::GrantExpired));
/// assert_eq!(key_refusal(KeySource::IdempotencyKey, "key.empty", Some("scope")), None);
/// ```
pub fn key_refusal(source: KeySource, code: &str, part: Option<&str>) -> Option<Problem> {
    let (concern, _) = code.split_once('.')?;
    match (concern, source) {
        ("key", _) if matches!(part, Some("kind" | "scope")) => None,
        ("key", KeySource::IdempotencyKey) => Some(Problem::MalformedKey),
        ("key", KeySource::SignedRequestId) => Some(Problem::InvalidRequestId),
        ("request_id", KeySource::SignedRequestId) => error_code(code)?.problem,
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_codes::ERROR_CODES;

    #[test]
    fn a_key_error_is_the_clients_unless_it_names_the_kind_or_the_scope() {
        for part in [None, Some("id")] {
            assert_eq!(
                key_refusal(KeySource::IdempotencyKey, "key.invalid_header", part),
                Some(Problem::MalformedKey)
            );
            assert_eq!(
                key_refusal(KeySource::SignedRequestId, "key.invalid_header", part),
                Some(Problem::InvalidRequestId)
            );
        }
        for source in [KeySource::IdempotencyKey, KeySource::SignedRequestId] {
            for part in ["kind", "scope"] {
                assert_eq!(key_refusal(source, "key.too_long", Some(part)), None);
            }
        }
    }

    #[test]
    fn a_request_id_error_takes_the_registrys_problem_and_only_for_a_signed_id() {
        for entry in ERROR_CODES.iter().filter(|e| e.concern() == "request_id") {
            assert_eq!(
                key_refusal(KeySource::SignedRequestId, entry.code, None),
                entry.problem,
                "{}",
                entry.code
            );
            assert_eq!(
                key_refusal(KeySource::IdempotencyKey, entry.code, None),
                None
            );
        }
        assert_eq!(
            key_refusal(KeySource::SignedRequestId, "request_id.invalid_scope", None),
            None
        );
        assert_eq!(
            key_refusal(KeySource::SignedRequestId, "request_id.too_old", None),
            Some(Problem::KeyTooOld)
        );
    }

    #[test]
    fn another_concern_or_an_unknown_code_is_the_servers() {
        for code in [
            "store.unavailable",
            "fingerprint.invalid_json",
            "nodot",
            "request_id.nope",
        ] {
            assert_eq!(
                key_refusal(KeySource::SignedRequestId, code, None),
                None,
                "{code}"
            );
            assert_eq!(
                key_refusal(KeySource::IdempotencyKey, code, None),
                None,
                "{code}"
            );
        }
    }
}
