//! The fingerprint of a request body, chosen by its content type.

use crate::fingerprint::{FieldSelection, Fingerprint, fingerprint_bytes, fingerprint_json};

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

/// The fingerprint of a request body: a body whose content type is JSON
/// ([`is_json_content_type`]) through the JSON canonicaliser, so that
/// whitespace and member order do not count; any other body, or JSON the
/// canonicaliser refuses, as raw bytes ([`fingerprint_bytes`]).
pub fn fingerprint_body(content_type: Option<&str>, body: &[u8]) -> Fingerprint {
    if is_json_content_type(content_type) {
        if let Ok(fingerprint) = fingerprint_json(body, &FieldSelection::all()) {
            return fingerprint;
        }
    }
    fingerprint_bytes(body)
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
            fingerprint_body(Some("text/plain"), b"{}"),
            fingerprint_bytes(b"{}")
        );
        assert_eq!(fingerprint_body(json, b"{bad"), fingerprint_bytes(b"{bad"));
        assert_eq!(fingerprint_body(None, b""), fingerprint_bytes(b""));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(content_type in proptest::option::of(".*"), body in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let _ = fingerprint_body(content_type.as_deref(), &body);
        }
    }
}
