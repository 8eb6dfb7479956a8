//! The fingerprint of a request: its body, chosen by its content type, and
//! its query string.

use sha2::{Digest, Sha256};

use super::HttpError;
use crate::fingerprint::{
    FieldSelection, Fingerprint, FingerprintErrorKind, fingerprint_bytes, fingerprint_json,
};

/// The first byte hashed by [`fingerprint_request`] for a request with a
/// query string (a body's own fingerprint starts with
/// [`BYTES_DOMAIN_TAG`](crate::fingerprint::BYTES_DOMAIN_TAG), 0x00, or
/// with canonical JSON text, never 0x01).
pub const QUERY_DOMAIN_TAG: u8 = 0x01;

/// Whether a content type is JSON: its essence (before any `;`, trimmed of
/// spaces and tabs, compared case-insensitively) is `application/json` or
/// `application/<anything>+json`.
pub fn is_json_content_type(content_type: Option<&str>) -> bool {
    let Some(content_type) = content_type else {
        return false;
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim_matches([' ', '\t']);
    let Some(subtype) = strip_prefix_ignore_case(essence, "application/") else {
        return false;
    };
    subtype.eq_ignore_ascii_case("json")
        || (subtype.len() > "+json".len()
            && subtype
                .get(subtype.len() - "+json".len()..)
                .is_some_and(|suffix| suffix.eq_ignore_ascii_case("+json")))
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// The fingerprint of a request body: a non-empty body whose content type
/// is JSON ([`is_json_content_type`]) through the JSON canonicaliser, so
/// that whitespace and member order do not count; any other body (an empty
/// one included) as raw bytes ([`fingerprint_bytes`]). JSON the
/// canonicaliser refuses although it is JSON (duplicate member names, a
/// lone surrogate escape, an integer beyond ±(2^53−1), nesting deeper than
/// 128) is fingerprinted as raw bytes too.
///
/// # Errors
///
/// `http.malformed_body` (problem `malformed_body`, 400) when the content
/// type is JSON and the body is not JSON at all (not UTF-8, or not JSON
/// text), with the byte position at fault: the request is refused before
/// anything runs or is stored.
pub fn fingerprint_body(content_type: Option<&str>, body: &[u8]) -> Result<Fingerprint, HttpError> {
    if body.is_empty() || !is_json_content_type(content_type) {
        return Ok(fingerprint_bytes(body));
    }
    match fingerprint_json(body, &FieldSelection::all()) {
        Ok(fingerprint) => Ok(fingerprint),
        Err(error)
            if matches!(
                error.kind(),
                FingerprintErrorKind::InvalidJson | FingerprintErrorKind::InvalidUtf8
            ) =>
        {
            Err(HttpError::malformed_body(error))
        }
        Err(_) => Ok(fingerprint_bytes(body)),
    }
}

/// The fingerprint of a request, compared when its key is used again: the
/// body's ([`fingerprint_body`]) when the query string is empty, else
/// SHA-256 of [`QUERY_DOMAIN_TAG`], the body's 32 digest bytes and the
/// query string's bytes. So the same key with `?amount=1` and then
/// `?amount=9999` is a fingerprint mismatch, never a replay.
///
/// `query` is the raw query string, as received, without the `?` (ASGI
/// `query_string`, WSGI `QUERY_STRING`, the URL after its first `?`);
/// parameters are compared as sent (another order is another query).
///
/// # Errors
///
/// `http.malformed_body`, as [`fingerprint_body`].
pub fn fingerprint_request(
    content_type: Option<&str>,
    query: &str,
    body: &[u8],
) -> Result<Fingerprint, HttpError> {
    let body = fingerprint_body(content_type, body)?;
    if query.is_empty() {
        return Ok(body);
    }
    let digest = Sha256::new()
        .chain_update([QUERY_DOMAIN_TAG])
        .chain_update(body.as_bytes())
        .chain_update(query.as_bytes())
        .finalize();
    Ok(Fingerprint::from_digest(digest.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        for json in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/problem+json ",
            "application/vnd.api+json;v=1",
            "\tapplication/json\t",
        ] {
            assert!(is_json_content_type(Some(json)), "{json:?}");
        }
        for other in [
            "",
            "text/plain",
            "application/+json",
            "application/jsonx",
            "text/json",
            "application/x-json-stream",
            "application",
            "applicatio\u{e9}/json",
        ] {
            assert!(!is_json_content_type(Some(other)), "{other:?}");
        }
        assert!(!is_json_content_type(None));
    }

    #[test]
    fn json_by_content_type_else_bytes() {
        let json = Some("application/json");
        assert_eq!(
            fingerprint_body(json, br#"{"b":1,"a":2}"#),
            fingerprint_body(json, br#"{ "a": 2, "b": 1 }"#)
        );
        assert_eq!(
            fingerprint_body(Some("text/plain"), b"{bad"),
            Ok(fingerprint_bytes(b"{bad"))
        );
        assert_eq!(fingerprint_body(json, b""), Ok(fingerprint_bytes(b"")));
        assert_eq!(fingerprint_body(None, b""), Ok(fingerprint_bytes(b"")));
        for refused in [
            &br#"{"a":1,"a":2}"#[..],
            b"[9007199254740993]",
            br#""\ud800""#,
        ] {
            assert_eq!(
                fingerprint_body(json, refused),
                Ok(fingerprint_bytes(refused))
            );
        }
    }

    #[test]
    fn a_json_content_type_needs_json() {
        for (body, position) in [(&b"{bad"[..], 1), (b"{\"a\":\xff}", 5), (b"[1] [2]", 4)] {
            let error = fingerprint_body(Some("application/json"), body).unwrap_err();
            assert_eq!(error.code(), "http.malformed_body");
            assert_eq!(error.position(), Some(position), "{error}");
            assert_eq!(error.problem(), Some(crate::record::Problem::MalformedBody));
            assert_eq!(
                fingerprint_request(Some("application/json"), "a=1", body).unwrap_err(),
                error
            );
        }
    }

    #[test]
    fn the_query_takes_part() {
        let json = Some("application/json");
        let body = br#"{"sku":"tea"}"#;
        let plain = fingerprint_body(json, body).unwrap();
        assert_eq!(fingerprint_request(json, "", body), Ok(plain));
        let one = fingerprint_request(json, "amount=1", body).unwrap();
        let many = fingerprint_request(json, "amount=9999", body).unwrap();
        assert_ne!(one, plain);
        assert_ne!(one, many);
        assert_ne!(one, fingerprint_request(json, "amount=1", b"{}").unwrap());
        let mut hashed = alloc::vec![QUERY_DOMAIN_TAG];
        hashed.extend_from_slice(plain.as_bytes());
        hashed.extend_from_slice(b"amount=1");
        assert_eq!(one.as_bytes()[..], Sha256::digest(&hashed)[..]);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(content_type in proptest::option::of(".*"), query in ".*", body in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = fingerprint_request(content_type.as_deref(), &query, &body);
        }
    }
}
