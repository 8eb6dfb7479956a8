//! The rules the HTTP integrations share: default key kind, body
//! fingerprints, problem and grant documents, the stored response envelope
//! and the integrations' defaults.

use crate::error::MintidError;
use crate::record::Problem;
use mintid::http as core;

/// One header: its name and value.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct HttpHeader {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

/// A complete HTTP response (the core's `HttpResponse`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<HttpHeader>,
    /// The body bytes.
    pub body: Vec<u8>,
}

/// A response as the store keeps it (the core's `StoredEnvelope`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StoredEnvelope {
    /// The content type; empty when the response had none.
    pub content_type: String,
    /// The envelope bytes.
    pub bytes: Vec<u8>,
}

/// The HTTP integrations' header names and defaults.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct HttpDefaults {
    /// The IETF draft's header of a plain idempotency key.
    pub idempotency_key_header: String,
    /// The header of a signed request ID.
    pub request_id_header: String,
    /// The largest body read, in bytes.
    pub body_limit: u64,
    /// The methods covered.
    pub methods: Vec<String>,
    /// The response headers stored besides content-type.
    pub stored_headers: Vec<String>,
    /// How long a grant lasts, in milliseconds.
    pub grant_ttl_millis: u64,
    /// The content type of a grant endpoint's answer.
    pub grant_content_type: String,
}

/// The integrations' header names and defaults.
#[uniffi::export]
pub fn http_defaults() -> HttpDefaults {
    let owned = |names: &[&str]| names.iter().map(|&name| name.into()).collect();
    HttpDefaults {
        idempotency_key_header: core::IDEMPOTENCY_KEY_HEADER.into(),
        request_id_header: core::REQUEST_ID_HEADER.into(),
        body_limit: core::DEFAULT_BODY_LIMIT,
        methods: owned(&core::DEFAULT_METHODS),
        stored_headers: owned(&core::DEFAULT_STORED_HEADERS),
        grant_ttl_millis: core::DEFAULT_GRANT_TTL_MILLIS,
        grant_content_type: core::GRANT_CONTENT_TYPE.into(),
    }
}

/// The default key kind of a request: `http.<method>.<10 hex of SHA-256(path)>`,
/// of its full path (mount prefix included; a query is cut off, escapes decoded).
///
/// Fails with `http.invalid_method`.
#[uniffi::export]
pub fn http_default_kind(method: String, path: String) -> Result<String, MintidError> {
    Ok(core::default_kind(&method, &path)?)
}

/// Whether a content type is JSON (`application/json` or `application/…+json`).
#[uniffi::export]
pub fn http_is_json_content_type(content_type: Option<String>) -> bool {
    core::is_json_content_type(content_type.as_deref())
}

/// The fingerprint (32 digest bytes) of a request body: JSON by its content
/// type through the canonicaliser, anything else as raw bytes.
///
/// Fails with `http.malformed_body` (problem `malformed_body`).
#[uniffi::export]
pub fn http_fingerprint_body(
    content_type: Option<String>,
    body: Vec<u8>,
) -> Result<Vec<u8>, MintidError> {
    Ok(core::fingerprint_body(content_type.as_deref(), &body)?
        .as_bytes()
        .to_vec())
}

/// The fingerprint (32 digest bytes) of a request: its body and its raw
/// query string (without the `?`).
///
/// Fails with `http.malformed_body` (problem `malformed_body`).
#[uniffi::export]
pub fn http_fingerprint_request(
    content_type: Option<String>,
    query: String,
    body: Vec<u8>,
) -> Result<Vec<u8>, MintidError> {
    Ok(
        core::fingerprint_request(content_type.as_deref(), &query, &body)?
            .as_bytes()
            .to_vec(),
    )
}

/// Whether the body a middleware read is the request's (the core's
/// `http::check_body_read`): fails with `http.body_consumed` when the request
/// declares a body (`declared_length` above 0, or `transfer_coded`) and the
/// stream had ended before the middleware read it (`ended_before_read`) or
/// gave fewer than `declared_length` bytes. Call it with a body within the
/// limit, before fingerprinting; `fix` names the framework's remedy.
#[uniffi::export]
pub fn http_check_body_read(
    declared_length: Option<u64>,
    transfer_coded: bool,
    ended_before_read: bool,
    read: u64,
    fix: String,
) -> Result<(), MintidError> {
    let read = core::BodyRead {
        declared_length,
        transfer_coded,
        ended_before_read,
        read,
    };
    Ok(core::check_body_read(read, &fix)?)
}

/// The problem that refuses a request whose key failed to read with the
/// error `code` (and the key `part` it names), from a signed request ID
/// (`signed`) or an `Idempotency-Key`; `None`: the server's failure, not the
/// client's (the core's `http::key_refusal`).
#[uniffi::export]
pub fn http_key_refusal(signed: bool, code: String, part: Option<String>) -> Option<Problem> {
    let source = if signed {
        core::KeySource::SignedRequestId
    } else {
        core::KeySource::IdempotencyKey
    };
    core::key_refusal(source, &code, part.as_deref()).map(Problem::from)
}

/// Where a covered request's key is read from, or its refusal (the core's
/// `http::admit_key`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum KeyAdmission {
    /// Read the signed request ID header.
    SignedRequestId,
    /// Read the `Idempotency-Key` header.
    IdempotencyKey,
    /// Answer `status` with `document` (`application/problem+json`).
    Refused {
        /// 401 (`http.unauthenticated`) or 400 (`http.missing_key`).
        status: u16,
        /// The error code, for the log.
        code: String,
        /// The problem document, its detail naming the fix.
        document: String,
    },
}

/// Where a covered request's key is read from, or why it is refused first:
/// no caller (the scope function gave none) is 401; no header the route
/// accepts (`request_id_header` with a key ring, an `Idempotency-Key` when
/// `accepts_idempotency_key`) is 400 `missing_key`, naming the header(s)
/// (the core's `http::admit_key`).
#[uniffi::export]
pub fn http_admit_key(
    request_id_header: Option<String>,
    accepts_idempotency_key: bool,
    caller: bool,
    request_id_sent: bool,
    idempotency_key_sent: bool,
) -> KeyAdmission {
    let admission = core::admission(
        request_id_header.as_deref(),
        accepts_idempotency_key,
        caller,
        request_id_sent,
        idempotency_key_sent,
    );
    match admission {
        core::Admission::Read(core::KeySource::SignedRequestId) => KeyAdmission::SignedRequestId,
        core::Admission::Read(core::KeySource::IdempotencyKey) => KeyAdmission::IdempotencyKey,
        core::Admission::Refused {
            status,
            code,
            document,
        } => KeyAdmission::Refused {
            status,
            code: code.into(),
            document,
        },
    }
}

/// The `application/problem+json` body of a problem, with an optional detail.
#[uniffi::export]
pub fn http_problem_document(problem: Problem, detail: Option<String>) -> String {
    core::problem_document(problem.into(), detail.as_deref())
}

/// The `about:blank` problem body of a plain status (401, 413 or 500).
///
/// Fails with `http.invalid_status`.
#[uniffi::export]
pub fn http_status_document(status: u16, detail: Option<String>) -> Result<String, MintidError> {
    Ok(core::status_document(status, detail.as_deref())?)
}

/// The body of a grant endpoint's answer.
#[uniffi::export]
pub fn http_grant_document(grant: String, expires_millis: u64) -> String {
    core::grant_document(&grant, expires_millis)
}

/// The stored form of a response, keeping the headers named in
/// `stored_headers` besides content-type.
///
/// Fails with `http.invalid_status` or `http.invalid_header`.
#[uniffi::export]
pub fn http_encode_envelope(
    response: HttpResponse,
    stored_headers: Vec<String>,
) -> Result<StoredEnvelope, MintidError> {
    let response = core::HttpResponse {
        status: response.status,
        headers: response
            .headers
            .into_iter()
            .map(|header| (header.name, header.value))
            .collect(),
        body: response.body,
    };
    let stored = core::encode_envelope(&response, &stored_headers)?;
    Ok(StoredEnvelope {
        content_type: stored.content_type,
        bytes: stored.bytes,
    })
}

/// The response a stored envelope replays.
///
/// Fails with `http.bad_stored_response` (with the byte position).
#[uniffi::export]
pub fn http_decode_envelope(
    content_type: String,
    bytes: Vec<u8>,
) -> Result<HttpResponse, MintidError> {
    let response = core::decode_envelope(&content_type, &bytes)?;
    Ok(HttpResponse {
        status: response.status,
        headers: response
            .headers
            .into_iter()
            .map(|(name, value)| HttpHeader { name, value })
            .collect(),
        body: response.body,
    })
}
