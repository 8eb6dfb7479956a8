//! Which header a covered request's key is read from, or why the request is
//! refused before: the one rule every HTTP integration applies once it has
//! asked its scope function for the caller (issue 27, items 3 and 7).
//!
//! 1. No caller (the scope function found no authenticated user or tenant):
//!    `http.unauthenticated`, answered 401 (`about:blank`). Keys are kept
//!    per caller; a request without one has no scope to run under.
//! 2. A signed request ID, when the route has a key ring and it was sent.
//! 3. An `Idempotency-Key`, when the route accepts one and it was sent.
//! 4. Else `http.missing_key`, answered 400 `missing_key`, its detail naming
//!    the header(s) the route accepts, and saying so when an
//!    `Idempotency-Key` was sent to a route that does not accept one.

use alloc::string::String;

use super::{HttpError, IDEMPOTENCY_KEY_HEADER, KeySource, status_document};
use crate::http::problem_document;

/// The headers a route takes a key from: its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptedKeys<'a> {
    /// The header of signed request IDs (`Mintid-Request-Id` by default),
    /// when the route has a key ring; `None` without one.
    pub request_id_header: Option<&'a str>,
    /// Whether a plain `Idempotency-Key` is accepted (by default: only
    /// without a key ring).
    pub idempotency_key: bool,
}

/// What a covered request carries: the host's facts, pushed to
/// [`admit_key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRequest {
    /// Whether the scope function found a caller (it gave a scope).
    pub caller: bool,
    /// Whether the request has the route's signed request ID header (false
    /// when the route has no key ring).
    pub request_id_sent: bool,
    /// Whether the request has an `Idempotency-Key` header, accepted or not.
    pub idempotency_key_sent: bool,
}

/// Where the key of a covered request is read from, or the error refusing
/// it before any key is read (see the module's rule).
///
/// # Errors
///
/// - `http.unauthenticated` (401, [`HttpError::status`]): no caller;
/// - `http.missing_key` (400 `missing_key`): no header the route accepts.
///
/// ```
/// use mintid::http::{AcceptedKeys, KeyRequest, KeySource, admit_key};
///
/// let ring = AcceptedKeys { request_id_header: Some("Mintid-Request-Id"), idempotency_key: false };
/// let plain_only = KeyRequest { caller: true, request_id_sent: false, idempotency_key_sent: true };
/// let refused = admit_key(ring, plain_only).unwrap_err();
/// assert_eq!(refused.code(), "http.missing_key");
/// assert!(refused.to_string().contains("Mintid-Request-Id"));
/// let signed = KeyRequest { request_id_sent: true, ..plain_only };
/// assert_eq!(admit_key(ring, signed)?, KeySource::SignedRequestId);
/// # Ok::<(), mintid::http::HttpError>(())
/// ```
pub fn admit_key(accepted: AcceptedKeys<'_>, request: KeyRequest) -> Result<KeySource, HttpError> {
    if !request.caller {
        return Err(HttpError::unauthenticated());
    }
    if accepted.request_id_header.is_some() && request.request_id_sent {
        return Ok(KeySource::SignedRequestId);
    }
    if accepted.idempotency_key && request.idempotency_key_sent {
        return Ok(KeySource::IdempotencyKey);
    }
    let ignored = request.idempotency_key_sent && !accepted.idempotency_key;
    Err(HttpError::missing_key(
        expected_headers(accepted),
        if ignored {
            "; the Idempotency-Key sent is not accepted here: this server verifies signed \
             request IDs, which prove a grant for the caller's scope"
        } else {
            ""
        },
    ))
}

/// The headers a route accepts, in words: `the header Mintid-Request-Id (a
/// signed request ID)`, `the header Idempotency-Key`, or both.
fn expected_headers(accepted: AcceptedKeys<'_>) -> String {
    let signed = accepted
        .request_id_header
        .map(|name| alloc::format!("{name} (a signed request ID from a grant)"));
    match (signed, accepted.idempotency_key) {
        (Some(signed), true) => {
            alloc::format!("the header {signed} or the header {IDEMPOTENCY_KEY_HEADER}")
        }
        (Some(signed), false) => alloc::format!("the header {signed}"),
        (None, true) => alloc::format!("the header {IDEMPOTENCY_KEY_HEADER}"),
        (None, false) => String::from("no header: the server accepts none (its configuration)"),
    }
}

/// The `application/problem+json` body a client is answered with for an
/// HTTP error that is the client's (the error's [`HttpError::status`]):
/// the core's problem with the error's message as its detail, or for
/// `http.unauthenticated` the plain 401 (`about:blank`); `None` for the
/// server's own faults.
pub fn refusal_document(error: &HttpError) -> Option<String> {
    let detail = alloc::string::ToString::to_string(error);
    match error.problem() {
        Some(problem) => Some(problem_document(problem, Some(&detail))),
        None => status_document(error.status()?, Some(&detail)).ok(),
    }
}

/// What a binding answers a covered request with: the header its key is
/// read from, or the refusal ([`admission`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Read the key from this header.
    Read(KeySource),
    /// Answer `status` with `document` (`application/problem+json`).
    Refused {
        /// 401 (`http.unauthenticated`) or 400 (`http.missing_key`).
        status: u16,
        /// The error code, for the log.
        code: &'static str,
        /// The problem document, its detail naming the fix
        /// ([`refusal_document`]).
        document: String,
    },
}

/// [`admit_key`] from a binding's flat arguments: the route's signed request
/// ID header (with a key ring) and whether it accepts an `Idempotency-Key`;
/// whether the request has a caller and which headers it sent. The refusal
/// comes with its status and problem document.
pub fn admission(
    request_id_header: Option<&str>,
    accepts_idempotency_key: bool,
    caller: bool,
    request_id_sent: bool,
    idempotency_key_sent: bool,
) -> Admission {
    let accepted = AcceptedKeys {
        request_id_header,
        idempotency_key: accepts_idempotency_key,
    };
    let request = KeyRequest {
        caller,
        request_id_sent,
        idempotency_key_sent,
    };
    match admit_key(accepted, request) {
        Ok(source) => Admission::Read(source),
        Err(error) => Admission::Refused {
            status: error.status().unwrap_or(500),
            code: error.code(),
            document: refusal_document(&error).unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::HttpErrorKind;
    use crate::record::Problem;
    use alloc::string::ToString;

    const RING: AcceptedKeys<'static> = AcceptedKeys {
        request_id_header: Some("Mintid-Request-Id"),
        idempotency_key: false,
    };
    const PLAIN: AcceptedKeys<'static> = AcceptedKeys {
        request_id_header: None,
        idempotency_key: true,
    };

    fn request(caller: bool, request_id_sent: bool, idempotency_key_sent: bool) -> KeyRequest {
        KeyRequest {
            caller,
            request_id_sent,
            idempotency_key_sent,
        }
    }

    #[test]
    fn no_caller_is_401_before_any_key() {
        for accepted in [RING, PLAIN] {
            for (signed, plain) in [(false, false), (true, true), (false, true)] {
                let error = admit_key(accepted, request(false, signed, plain)).unwrap_err();
                assert_eq!(error.kind(), HttpErrorKind::Unauthenticated);
                assert_eq!(error.status(), Some(401));
                assert_eq!(error.problem(), None);
            }
        }
        let document = refusal_document(&HttpError::unauthenticated()).unwrap();
        assert!(
            document.starts_with(
                r#"{"type":"about:blank","title":"Unauthorized","status":401,"detail":"#
            ),
            "{document}"
        );
    }

    #[test]
    fn the_source_is_the_signed_id_first_then_an_accepted_plain_key() {
        let both = AcceptedKeys {
            idempotency_key: true,
            ..RING
        };
        assert_eq!(
            admit_key(both, request(true, true, true)),
            Ok(KeySource::SignedRequestId)
        );
        assert_eq!(
            admit_key(both, request(true, false, true)),
            Ok(KeySource::IdempotencyKey)
        );
        assert_eq!(
            admit_key(PLAIN, request(true, false, true)),
            Ok(KeySource::IdempotencyKey)
        );
        // A signed ID header means nothing to a route without a key ring.
        assert_eq!(
            admit_key(PLAIN, request(true, true, false))
                .unwrap_err()
                .kind(),
            HttpErrorKind::MissingKey
        );
    }

    #[test]
    fn a_missing_key_names_the_headers_the_route_accepts() {
        let text = |accepted, plain_sent| {
            let error = admit_key(accepted, request(true, false, plain_sent)).unwrap_err();
            assert_eq!(error.problem(), Some(Problem::MissingKey));
            assert_eq!(error.status(), Some(400));
            error.to_string()
        };
        assert_eq!(
            text(PLAIN, false),
            "no idempotency key: this route takes it from the header Idempotency-Key"
        );
        let ring = text(RING, false);
        assert!(
            ring.contains("the header Mintid-Request-Id (a signed"),
            "{ring}"
        );
        assert!(!ring.contains("not accepted"), "{ring}");
        let plain_sent = text(RING, true);
        assert!(
            plain_sent.contains("the Idempotency-Key sent is not accepted here"),
            "{plain_sent}"
        );
        let renamed = AcceptedKeys {
            request_id_header: Some("X-Request-Id"),
            idempotency_key: true,
        };
        assert!(text(renamed, false).contains(
            "X-Request-Id (a signed request ID from a grant) or the header Idempotency-Key"
        ));
        let document =
            refusal_document(&admit_key(RING, request(true, false, true)).unwrap_err()).unwrap();
        assert!(
            document.starts_with(r#"{"type":"https://mintid.dev/problems/missing-key","#),
            "{document}"
        );
    }

    #[test]
    fn a_bindings_admission_carries_the_status_and_document() {
        assert_eq!(
            admission(Some("Mintid-Request-Id"), false, true, true, false),
            Admission::Read(KeySource::SignedRequestId)
        );
        let Admission::Refused {
            status,
            code,
            document,
        } = admission(None, true, false, false, true)
        else {
            panic!("no caller is refused");
        };
        assert_eq!((status, code), (401, "http.unauthenticated"));
        assert_eq!(
            Some(document),
            refusal_document(&HttpError::unauthenticated())
        );
        let Admission::Refused { status, code, .. } = admission(None, true, true, false, false)
        else {
            panic!("no header is refused");
        };
        assert_eq!((status, code), (400, "http.missing_key"));
    }

    #[test]
    fn the_servers_faults_have_no_refusal_document() {
        let error = HttpError::invalid_status(99, "is not within 100-599");
        assert_eq!(error.status(), None);
        assert_eq!(refusal_document(&error), None);
    }
}
