//! The rules of the HTTP integrations that every language must compute
//! alike: the default key kind of a request (of its full path), which
//! bodies are fingerprinted as JSON and which are refused, the request
//! fingerprint (body and query string), the stored response envelope, the
//! problem and grant documents, and the integrations' defaults.
//!
//! The integrations themselves (reading headers and bodies, running the
//! handler through a store, writing the answer) are host work; they take
//! every value below from here. The statuses, types and titles of the
//! refusals are [`crate::record::Problem`]'s. The full rules are in
//! `docs/spec.md`, section "HTTP integrations".
//!
//! ```
//! use mintid::http::{HttpResponse, decode_envelope, default_kind, encode_envelope};
//!
//! assert_eq!(default_kind("POST", "/orders")?, "http.post.fc7d055239");
//! let response = HttpResponse {
//!     status: 201,
//!     headers: vec![("content-type".into(), "application/json".into()), ("location".into(), "/orders/7".into())],
//!     body: b"{}".to_vec(),
//! };
//! let stored = encode_envelope(&response, &mintid::http::DEFAULT_STORED_HEADERS)?;
//! assert_eq!(stored.bytes, b"mintid-http/1 201\r\nlocation: /orders/7\r\n\r\n{}");
//! assert_eq!(decode_envelope(&stored.content_type, &stored.bytes)?, response);
//! # Ok::<(), mintid::http::HttpError>(())
//! ```

mod admission;
mod body;
mod consumed;
mod document;
mod envelope;
mod error;
mod kind;
mod refusal;

pub use admission::{AcceptedKeys, Admission, KeyRequest, admission, admit_key, refusal_document};
pub use body::{QUERY_DOMAIN_TAG, fingerprint_body, fingerprint_request, is_json_content_type};
pub use consumed::{BodyRead, check_body_read};
pub use document::{
    ABOUT_BLANK, GRANT_CONTENT_TYPE, grant_document, plain_status_title, problem_document,
    status_document,
};
pub use envelope::{
    ENVELOPE_MAGIC, HttpResponse, StoredEnvelope, decode_envelope, encode_envelope,
};
pub use error::{HttpError, HttpErrorKind};
pub use kind::{MAX_METHOD_LEN, default_kind, normalise_path};
pub use refusal::{KeySource, key_refusal};

/// The IETF draft's header carrying a plain idempotency key.
pub const IDEMPOTENCY_KEY_HEADER: &str = "Idempotency-Key";
/// The header carrying a signed request ID, unless configured otherwise.
pub const REQUEST_ID_HEADER: &str = "Mintid-Request-Id";
/// The largest request body read by default, in bytes (1 MiB); above it the
/// answer is 413.
pub const DEFAULT_BODY_LIMIT: u64 = 1_048_576;
/// The methods covered by default; others pass through untouched.
pub const DEFAULT_METHODS: [&str; 2] = ["POST", "PATCH"];
/// The response headers stored and replayed by default besides
/// `content-type`. `set-cookie` is not among them: a replay must not hand one
/// client's cookies to another request.
pub const DEFAULT_STORED_HEADERS: [&str; 6] = [
    "location",
    "etag",
    "last-modified",
    "cache-control",
    "content-language",
    "content-location",
];
/// How long a grant from a grant endpoint lasts by default: one hour.
pub const DEFAULT_GRANT_TTL_MILLIS: u64 = 3_600_000;
