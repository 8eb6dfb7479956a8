//! How a complete HTTP response is stored, so that any integration in any
//! language replays what another stored.
//!
//! The store keeps a response in two columns: the content type, and the
//! bytes of this envelope (a UTF-8 head with CRLF line ends, then the body):
//!
//! ```text
//! mintid-http/1 <status>\r\n
//! <header name in lower case>: <value>\r\n      (zero or more; repeated names repeat)
//! \r\n
//! <the response body bytes, as sent>
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::HttpError;

/// The start of every envelope.
pub const ENVELOPE_MAGIC: &str = "mintid-http/1 ";

const CONTENT_TYPE: &str = "content-type";
const CRLF: &[u8] = b"\r\n";
const BLANK_LINE: &[u8] = b"\r\n\r\n";

/// A complete HTTP response: status, headers (names in lower case when they
/// come from [`decode_envelope`]) and body bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct HttpResponse {
    /// The status code, 100–599.
    pub status: u16,
    /// Header names and values, in order; a name may repeat.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

/// A response as the store keeps it: the record's content-type column and
/// its body column.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct StoredEnvelope {
    /// The response's content type; empty when it had none.
    pub content_type: String,
    /// The envelope: status, kept headers and body.
    pub bytes: Vec<u8>,
}

/// Whether `name` is an HTTP token (RFC 9110 §5.6.2).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Whether `value` can stand on one head line.
fn is_storable_value(value: &str) -> bool {
    !value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0))
}

/// The stored form of `response`: its `content-type` (the last one, if it
/// has several) goes to [`StoredEnvelope::content_type`]; of its other
/// headers, those named in `stored_headers` (names compared
/// case-insensitively) go to the head, lower-cased, in order; every other
/// header is dropped.
///
/// # Errors
///
/// - `http.invalid_status`: the status is outside 100–599;
/// - `http.invalid_header`: a header to store has a name that is not an
///   HTTP token, or a value holding CR, LF or NUL.
pub fn encode_envelope<S: AsRef<str>>(
    response: &HttpResponse,
    stored_headers: &[S],
) -> Result<StoredEnvelope, HttpError> {
    if !(100..=599).contains(&response.status) {
        return Err(HttpError::invalid_status(
            response.status,
            "is not within 100-599",
        ));
    }
    let mut content_type = "";
    let mut bytes = Vec::with_capacity(64 + response.body.len());
    bytes.extend_from_slice(ENVELOPE_MAGIC.as_bytes());
    bytes.extend_from_slice(response.status.to_string().as_bytes());
    bytes.extend_from_slice(CRLF);
    for (name, value) in &response.headers {
        if name.eq_ignore_ascii_case(CONTENT_TYPE) {
            content_type = value;
            continue;
        }
        if !stored_headers
            .iter()
            .any(|kept| kept.as_ref().eq_ignore_ascii_case(name))
        {
            continue;
        }
        if !is_token(name) {
            return Err(HttpError::invalid_header(
                name,
                "the name is not an HTTP token",
            ));
        }
        if !is_storable_value(value) {
            return Err(HttpError::invalid_header(
                name,
                "the value holds CR, LF or NUL",
            ));
        }
        bytes.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(value.as_bytes());
        bytes.extend_from_slice(CRLF);
    }
    bytes.extend_from_slice(CRLF);
    bytes.extend_from_slice(&response.body);
    Ok(StoredEnvelope {
        content_type: content_type.into(),
        bytes,
    })
}

/// The response a stored envelope replays: its status, `content-type` first
/// (from `content_type`, when not empty), then the head's headers in order,
/// and the body.
///
/// Only what [`encode_envelope`] writes is read: the head must be UTF-8,
/// start with [`ENVELOPE_MAGIC`] and a status of three digits within
/// 100–599, and each header line must be a lower-case token name, `": "`
/// and a value without CR, LF or NUL (never `content-type`).
///
/// # Errors
///
/// `http.bad_stored_response`, with the byte offset at fault, for anything
/// else.
pub fn decode_envelope(content_type: &str, bytes: &[u8]) -> Result<HttpResponse, HttpError> {
    let bad = HttpError::bad_stored_response;
    let head_len = bytes
        .windows(BLANK_LINE.len())
        .position(|window| window == BLANK_LINE)
        .ok_or(bad(bytes.len(), "no blank line ends the head"))?;
    let (head, rest) = bytes.split_at(head_len);
    let body = rest.get(BLANK_LINE.len()..).unwrap_or_default();
    let head = core::str::from_utf8(head)
        .map_err(|error| bad(error.valid_up_to(), "the head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let status = first
        .strip_prefix(ENVELOPE_MAGIC)
        .ok_or(bad(0, "it does not start with \"mintid-http/1 \""))?;
    let status =
        parse_status(status).ok_or(bad(ENVELOPE_MAGIC.len(), "the status is not 100-599"))?;
    let mut headers = Vec::new();
    if !content_type.is_empty() {
        headers.push((CONTENT_TYPE.into(), content_type.into()));
    }
    let mut at = first.len() + CRLF.len();
    for line in lines {
        let (name, value) = line
            .split_once(": ")
            .ok_or(bad(at, "a header line has no \": \""))?;
        let lower_token = is_token(name) && !name.bytes().any(|b| b.is_ascii_uppercase());
        if !lower_token || name == CONTENT_TYPE {
            return Err(bad(
                at,
                "a header name is not a lower-case token other than content-type",
            ));
        }
        if !is_storable_value(value) {
            return Err(bad(
                at + name.len() + 2,
                "a header value holds CR, LF or NUL",
            ));
        }
        headers.push((name.into(), value.into()));
        at += line.len() + CRLF.len();
    }
    Ok(HttpResponse {
        status,
        headers,
        body: body.to_vec(),
    })
}

fn parse_status(text: &str) -> Option<u16> {
    if text.len() != 3 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse()
        .ok()
        .filter(|status| (100..=599).contains(status))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> HttpResponse {
        HttpResponse {
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).into(), (*v).into()))
                .collect(),
            body: body.to_vec(),
        }
    }

    #[test]
    fn encodes_the_documented_layout() {
        let stored = encode_envelope(
            &response(
                201,
                &[
                    ("content-type", "application/json"),
                    ("Location", "/orders/7"),
                    ("set-cookie", "s=1"),
                    ("etag", "\"x\""),
                ],
                b"{}",
            ),
            &["location", "ETag"],
        )
        .unwrap();
        assert_eq!(stored.content_type, "application/json");
        assert_eq!(
            stored.bytes,
            b"mintid-http/1 201\r\nlocation: /orders/7\r\netag: \"x\"\r\n\r\n{}"
        );
        let replayed = decode_envelope(&stored.content_type, &stored.bytes).unwrap();
        assert_eq!(
            replayed,
            response(
                201,
                &[
                    ("content-type", "application/json"),
                    ("location", "/orders/7"),
                    ("etag", "\"x\"")
                ],
                b"{}"
            )
        );
    }

    #[test]
    fn refuses_what_it_cannot_store() {
        let keep = ["x-a", "x a"];
        for (status, headers, code) in [
            (99, vec![], "http.invalid_status"),
            (600, vec![], "http.invalid_status"),
            (200, vec![("x-a", "1\r\nx-b: 2")], "http.invalid_header"),
            (200, vec![("x a", "1")], "http.invalid_header"),
            (200, vec![("x-a", "nul\0")], "http.invalid_header"),
        ] {
            let error = encode_envelope(&response(status, &headers, b""), &keep).unwrap_err();
            assert_eq!(error.code(), code, "{status} {headers:?}");
        }
        // A header not stored is not checked.
        assert!(encode_envelope(&response(200, &[("x b", "\n")], b""), &keep).is_ok());
    }

    #[test]
    fn refuses_what_it_did_not_write() {
        for (bytes, position) in [
            (&b""[..], 0),
            (b"mintid-http/1 200\r\n", 19),
            (b"mintid-http/2 200\r\n\r\n", 0),
            (b"mintid-http/1 20\r\n\r\n", 14),
            (b"mintid-http/1 +20\r\n\r\n", 14),
            (b"mintid-http/1 600\r\n\r\n", 14),
            (b"mintid-http/1 200\r\nlocation:/x\r\n\r\n", 19),
            (b"mintid-http/1 200\r\nLocation: /x\r\n\r\n", 19),
            (b"mintid-http/1 200\r\ncontent-type: a/b\r\n\r\n", 19),
            (b"mintid-http/1 200\r\na: 1\r\n: 2\r\n\r\n", 25),
            (b"mintid-http/1 200\r\na: 1\n2\r\n\r\n", 22),
            (b"mintid-http/1 200\r\na: \xff\r\n\r\n", 22),
        ] {
            let error = decode_envelope("", bytes).unwrap_err();
            assert_eq!(error.code(), "http.bad_stored_response");
            assert_eq!(
                error.position(),
                Some(position),
                "{:?}: {error}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn the_body_may_hold_anything() {
        let replayed = decode_envelope("", b"mintid-http/1 500\r\n\r\n\r\n\r\n\xff").unwrap();
        assert_eq!(replayed.status, 500);
        assert!(replayed.headers.is_empty());
        assert_eq!(replayed.body, b"\r\n\r\n\xff");
    }

    fn header() -> impl Strategy<Value = (String, String)> {
        ("[a-z0-9!#$%&'*+.^_`|~-]{1,12}", "[^\r\n\0]{0,12}")
            .prop_filter("content-type goes to its column", |(n, _)| {
                n != CONTENT_TYPE
            })
    }

    proptest! {
        #[test]
        fn encode_then_decode_round_trips(
            status in 100u16..=599,
            content_type in "[^\r\n\0]{0,20}",
            headers in proptest::collection::vec(header(), 0..6),
            body in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut all = vec![(String::from("Content-Type"), content_type.clone())];
            all.extend(headers.iter().cloned());
            let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
            let stored = encode_envelope(&HttpResponse { status, headers: all, body: body.clone() }, &names).unwrap();
            prop_assert_eq!(&stored.content_type, &content_type);
            let replayed = decode_envelope(&stored.content_type, &stored.bytes).unwrap();
            let mut expected = Vec::new();
            if !content_type.is_empty() {
                expected.push((String::from(CONTENT_TYPE), content_type));
            }
            expected.extend(headers);
            prop_assert_eq!(replayed, HttpResponse { status, headers: expected, body });
        }

        #[test]
        fn whatever_decodes_encodes_back_to_the_same_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(replayed) = decode_envelope("", &bytes) {
                let names: Vec<&str> = replayed.headers.iter().map(|(n, _)| n.as_str()).collect();
                let stored = encode_envelope(&replayed, &names).unwrap();
                prop_assert_eq!(stored.bytes, bytes);
            }
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(
            content_type in ".{0,8}",
            head in "(mintid-http/1 [0-9]{3}\r\n)?([a-zA-Z: \r\n]{0,12}\r\n)?",
            tail in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut bytes = head.into_bytes();
            bytes.extend(tail);
            let _ = decode_envelope(&content_type, &bytes);
        }
    }
}
