//! The JSON documents the HTTP integrations answer with: RFC 9457 problem
//! details and the grant endpoint's answer.

use alloc::string::String;
use core::fmt::Write;

use super::HttpError;
use crate::fingerprint::jcs::write_string;
use crate::record::Problem;

/// The `type` of a plain-status problem (RFC 9457 §4.2.1).
pub const ABOUT_BLANK: &str = "about:blank";

/// The content type of a grant endpoint's answer.
pub const GRANT_CONTENT_TYPE: &str = "application/json";

/// The `application/problem+json` body of the core's `problem`:
/// `{"type":…,"title":…,"status":…}` with its type URI, title and status,
/// then `"detail":…` when a `detail` is given; no whitespace, strings
/// escaped as RFC 8785 writes them (non-ASCII characters as they are).
pub fn problem_document(problem: Problem, detail: Option<&str>) -> String {
    document(
        problem.type_uri(),
        problem.title(),
        problem.status(),
        detail,
    )
}

/// The title of a plain HTTP status that the integrations answer outside
/// the idempotency rules: 401 (`Unauthorized`, no user for a grant), 413
/// (`Content Too Large`, a body over the limit) and 500 (`Internal Server
/// Error`, a failure replayed without a stored response); `None` for any
/// other status.
pub const fn plain_status_title(status: u16) -> Option<&'static str> {
    match status {
        401 => Some("Unauthorized"),
        413 => Some("Content Too Large"),
        500 => Some("Internal Server Error"),
        _ => None,
    }
}

/// The `application/problem+json` body of a plain HTTP status (RFC 9457
/// §4.2.1): type [`ABOUT_BLANK`], the status's [`plain_status_title`], laid
/// out as [`problem_document`].
///
/// # Errors
///
/// `http.invalid_status` for a status without a plain-status title.
pub fn status_document(status: u16, detail: Option<&str>) -> Result<String, HttpError> {
    let title = plain_status_title(status).ok_or(HttpError::invalid_status(
        status,
        "has no plain-status problem (only 401, 413 and 500)",
    ))?;
    Ok(document(ABOUT_BLANK, title, status, detail))
}

fn document(type_uri: &str, title: &str, status: u16, detail: Option<&str>) -> String {
    let mut out = String::with_capacity(96 + detail.map_or(0, str::len));
    out.push_str("{\"type\":");
    write_string(type_uri, &mut out);
    out.push_str(",\"title\":");
    write_string(title, &mut out);
    // Writing into a String cannot fail.
    let _ = write!(out, ",\"status\":{status}");
    if let Some(detail) = detail {
        out.push_str(",\"detail\":");
        write_string(detail, &mut out);
    }
    out.push('}');
    out
}

/// The body of a grant endpoint's answer: `{"grant":…,"expiresMillis":…}`
/// with the grant's text and its expiry in Unix milliseconds. Send it as
/// [`GRANT_CONTENT_TYPE`] with `Cache-Control: no-store`: a grant is a
/// bearer secret of its scope.
pub fn grant_document(grant: &str, expires_millis: u64) -> String {
    let mut out = String::with_capacity(96);
    out.push_str("{\"grant\":");
    write_string(grant, &mut out);
    let _ = write!(out, ",\"expiresMillis\":{expires_millis}}}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::borrow::ToOwned;

    #[test]
    fn problem_documents() {
        assert_eq!(
            problem_document(Problem::InProgress, None),
            r#"{"type":"https://mintid.dev/problems/in-progress","title":"Request already in progress","status":409}"#
        );
        assert_eq!(
            problem_document(Problem::MissingKey, Some("say \"key\"\n\u{e9}")),
            r#"{"type":"https://mintid.dev/problems/missing-key","title":"Idempotency key missing","status":400,"detail":"say \"key\"\n"#
                .to_owned()
                + "\u{e9}\"}"
        );
    }

    #[test]
    fn plain_statuses() {
        assert_eq!(
            status_document(413, Some("the body exceeds 10 bytes")).unwrap(),
            r#"{"type":"about:blank","title":"Content Too Large","status":413,"detail":"the body exceeds 10 bytes"}"#
        );
        assert_eq!(
            status_document(401, None).unwrap(),
            r#"{"type":"about:blank","title":"Unauthorized","status":401}"#
        );
        assert_eq!(
            status_document(404, None).unwrap_err().code(),
            "http.invalid_status"
        );
    }

    #[test]
    fn grant_documents() {
        assert_eq!(
            grant_document("abc", 1_700_000_000_000),
            r#"{"grant":"abc","expiresMillis":1700000000000}"#
        );
    }

    proptest::proptest! {
        #[test]
        fn documents_are_json_with_the_detail(detail in ".*") {
            for problem in Problem::ALL {
                let text = problem_document(problem, Some(&detail));
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                proptest::prop_assert_eq!(value["detail"].as_str(), Some(detail.as_str()));
                proptest::prop_assert_eq!(value["status"].as_u64(), Some(u64::from(problem.status())));
            }
        }
    }
}
