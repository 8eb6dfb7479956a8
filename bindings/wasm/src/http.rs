//! The rules the HTTP integrations share: default key kind, body
//! fingerprints, problem and grant documents, the stored response envelope
//! and the integrations' defaults.
//!
//! Headers cross as one flat array of strings: `[name, value, name, value, …]`.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use mintid::http as core;
use mintid::record::Problem;
use wasm_bindgen::prelude::*;

use crate::error::{to_js, type_error};
use crate::store::object;

/// A response as the store keeps it.
#[wasm_bindgen(getter_with_clone)]
pub struct StoredEnvelopeFields {
    /// The content type; empty when the response had none.
    #[wasm_bindgen(js_name = contentType)]
    pub content_type: String,
    /// The envelope bytes.
    pub bytes: Vec<u8>,
}

/// The response a stored envelope replays.
#[wasm_bindgen(getter_with_clone)]
pub struct HttpResponseFields {
    /// The status code.
    pub status: u16,
    /// The headers, flat: `[name, value, …]`.
    pub headers: Vec<String>,
    /// The body bytes.
    pub body: Vec<u8>,
}

/// `[idempotency-key header, request-id header, body limit, grant TTL ms,
/// grant content type]`, then `methods` and `storedHeaders` via
/// [`http_default_methods`] and [`http_default_stored_headers`].
#[wasm_bindgen(js_name = httpDefaults)]
pub fn http_defaults() -> Vec<String> {
    alloc::vec![
        core::IDEMPOTENCY_KEY_HEADER.into(),
        core::REQUEST_ID_HEADER.into(),
        core::DEFAULT_BODY_LIMIT.to_string(),
        core::DEFAULT_GRANT_TTL_MILLIS.to_string(),
        core::GRANT_CONTENT_TYPE.into(),
    ]
}

/// The methods covered by default.
#[wasm_bindgen(js_name = httpDefaultMethods)]
pub fn http_default_methods() -> Vec<String> {
    core::DEFAULT_METHODS.iter().map(|&m| m.into()).collect()
}

/// The response headers stored by default besides content-type.
#[wasm_bindgen(js_name = httpDefaultStoredHeaders)]
pub fn http_default_stored_headers() -> Vec<String> {
    core::DEFAULT_STORED_HEADERS
        .iter()
        .map(|&h| h.into())
        .collect()
}

/// The default key kind of a request, of its full path (mount prefix
/// included; a query is cut off, escapes decoded) (`http.invalid_method`).
#[wasm_bindgen(js_name = httpDefaultKind)]
pub fn http_default_kind(method: &str, path: &str) -> Result<String, JsValue> {
    core::default_kind(method, path).map_err(to_js)
}

/// Whether a content type is JSON.
#[wasm_bindgen(js_name = httpIsJsonContentType)]
pub fn http_is_json_content_type(content_type: Option<String>) -> bool {
    core::is_json_content_type(content_type.as_deref())
}

/// The text form of a request body's fingerprint (`http.malformed_body`).
#[wasm_bindgen(js_name = httpFingerprintBody)]
pub fn http_fingerprint_body(content_type: Option<String>, body: &[u8]) -> Result<String, JsValue> {
    core::fingerprint_body(content_type.as_deref(), body)
        .map(|fingerprint| fingerprint.to_string())
        .map_err(to_js)
}

/// The text form of a request's fingerprint: its body and its raw query
/// string (`http.malformed_body`).
#[wasm_bindgen(js_name = httpFingerprintRequest)]
pub fn http_fingerprint_request(
    content_type: Option<String>,
    query: &str,
    body: &[u8],
) -> Result<String, JsValue> {
    core::fingerprint_request(content_type.as_deref(), query, body)
        .map(|fingerprint| fingerprint.to_string())
        .map_err(to_js)
}

/// Whether the body a middleware read is the request's (the core's
/// `http::check_body_read`): `http.body_consumed` when the request declares a
/// body (`declaredLength` above 0, or `transferCoded`) and its stream had
/// ended or been taken before the middleware read it (`endedBeforeRead`), or
/// gave fewer than `declaredLength` bytes; `fix` names the framework's remedy.
#[wasm_bindgen(js_name = httpCheckBodyRead)]
pub fn http_check_body_read(
    declared_length: Option<u64>,
    transfer_coded: bool,
    ended_before_read: bool,
    read: u64,
    fix: &str,
) -> Result<(), JsValue> {
    let read = core::BodyRead {
        declared_length,
        transfer_coded,
        ended_before_read,
        read,
    };
    core::check_body_read(read, fix).map_err(to_js)
}

/// The name of the problem that refuses a request whose key failed to read
/// with the error `code` (and the key `part` it names), from a signed request
/// ID (`signed`) or an `Idempotency-Key`; `undefined`: the server's failure
/// (the core's `http::key_refusal`).
#[wasm_bindgen(js_name = httpKeyRefusal)]
pub fn http_key_refusal(signed: bool, code: &str, part: Option<String>) -> Option<String> {
    let source = if signed {
        core::KeySource::SignedRequestId
    } else {
        core::KeySource::IdempotencyKey
    };
    core::key_refusal(source, code, part.as_deref()).map(|problem| problem.name().to_string())
}

/// Where a covered request's key is read from, or why it is refused first
/// (the core's `http::admit_key`): `{source: "signed"}` or `{source:
/// "plain"}`, else `{status, code, document}`: 401 `http.unauthenticated`
/// when there is no caller, 400 `http.missing_key` (its problem document
/// naming the header(s) the route accepts) when no accepted header was sent.
#[wasm_bindgen(js_name = httpAdmitKey, unchecked_return_type = "KeyAdmission")]
pub fn http_admit_key(
    request_id_header: Option<String>,
    accepts_idempotency_key: bool,
    caller: bool,
    request_id_sent: bool,
    idempotency_key_sent: bool,
) -> JsValue {
    let admission = core::admission(
        request_id_header.as_deref(),
        accepts_idempotency_key,
        caller,
        request_id_sent,
        idempotency_key_sent,
    );
    match admission {
        core::Admission::Read(source) => object(&[(
            "source",
            JsValue::from_str(match source {
                core::KeySource::SignedRequestId => "signed",
                core::KeySource::IdempotencyKey => "plain",
            }),
        )]),
        core::Admission::Refused {
            status,
            code,
            document,
        } => object(&[
            ("status", JsValue::from(status)),
            ("code", JsValue::from_str(code)),
            ("document", JsValue::from_str(&document)),
        ]),
    }
}

#[wasm_bindgen(typescript_custom_section)]
const KEY_ADMISSION: &str = r#"
/** Where a covered request's key is read from, or the refusal to answer (`httpAdmitKey`). */
export type KeyAdmission =
  | { source: "signed" | "plain" }
  | { status: number; code: string; document: string };
"#;

/// The `application/problem+json` body of the problem named `name`.
#[wasm_bindgen(js_name = httpProblemDocument)]
pub fn http_problem_document(name: &str, detail: Option<String>) -> Result<String, JsValue> {
    let problem = Problem::ALL
        .into_iter()
        .find(|problem| problem.name() == name)
        .ok_or_else(|| type_error("no such problem"))?;
    Ok(core::problem_document(problem, detail.as_deref()))
}

/// The `about:blank` problem body of a plain status (`http.invalid_status`).
#[wasm_bindgen(js_name = httpStatusDocument)]
pub fn http_status_document(status: u16, detail: Option<String>) -> Result<String, JsValue> {
    core::status_document(status, detail.as_deref()).map_err(to_js)
}

/// The body of a grant endpoint's answer.
#[wasm_bindgen(js_name = httpGrantDocument)]
pub fn http_grant_document(grant: &str, expires_millis: u64) -> String {
    core::grant_document(grant, expires_millis)
}

/// The stored form of a response (`http.invalid_status`, `http.invalid_header`).
#[wasm_bindgen(js_name = httpEncodeEnvelope)]
pub fn http_encode_envelope(
    status: u16,
    headers: Vec<String>,
    body: Vec<u8>,
    stored_headers: Vec<String>,
) -> Result<StoredEnvelopeFields, JsValue> {
    if headers.len() % 2 != 0 {
        return Err(type_error("headers must be [name, value, …] pairs"));
    }
    let mut pairs = Vec::with_capacity(headers.len() / 2);
    let mut flat = headers.into_iter();
    while let (Some(name), Some(value)) = (flat.next(), flat.next()) {
        pairs.push((name, value));
    }
    let response = core::HttpResponse {
        status,
        headers: pairs,
        body,
    };
    let stored = core::encode_envelope(&response, &stored_headers).map_err(to_js)?;
    Ok(StoredEnvelopeFields {
        content_type: stored.content_type,
        bytes: stored.bytes,
    })
}

/// The response a stored envelope replays (`http.bad_stored_response`).
#[wasm_bindgen(js_name = httpDecodeEnvelope)]
pub fn http_decode_envelope(
    content_type: &str,
    bytes: &[u8],
) -> Result<HttpResponseFields, JsValue> {
    let response = core::decode_envelope(content_type, bytes).map_err(to_js)?;
    Ok(HttpResponseFields {
        status: response.status,
        headers: response
            .headers
            .into_iter()
            .flat_map(|(name, value)| [name, value])
            .collect(),
        body: response.body,
    })
}
