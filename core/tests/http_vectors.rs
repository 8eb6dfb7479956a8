//! Checks every case of `tests/vectors/http.json` against `mintid::http`.

mod common;

use common::{hex, text, to_hex};

use mintid::http::{
    ABOUT_BLANK, DEFAULT_BODY_LIMIT, DEFAULT_GRANT_TTL_MILLIS, DEFAULT_METHODS,
    DEFAULT_STORED_HEADERS, ENVELOPE_MAGIC, GRANT_CONTENT_TYPE, HttpError, HttpResponse,
    IDEMPOTENCY_KEY_HEADER, REQUEST_ID_HEADER, decode_envelope, default_kind, encode_envelope,
    fingerprint_body, fingerprint_request, grant_document, is_json_content_type, problem_document,
    status_document,
};
use mintid::record::Problem;
use serde_json::{Value, json};

fn strings(case: &Value, field: &str) -> Vec<String> {
    case[field]
        .as_array()
        .unwrap_or_else(|| panic!("no array {field:?} in {case}"))
        .iter()
        .map(|v| v.as_str().expect("string").to_owned())
        .collect()
}

fn headers(case: &Value, field: &str) -> Vec<(String, String)> {
    case[field]
        .as_array()
        .unwrap_or_else(|| panic!("no array {field:?} in {case}"))
        .iter()
        .map(|pair| {
            let [name, value] = pair.as_array().expect("pair").as_slice() else {
                panic!("not a [name, value] pair: {pair}")
            };
            (
                name.as_str().expect("name").to_owned(),
                value.as_str().expect("value").to_owned(),
            )
        })
        .collect()
}

fn status(case: &Value) -> u16 {
    u16::try_from(case["status"].as_u64().expect("status")).expect("u16 status")
}

/// Checks the case's `error` (and `position`) against a failed call.
fn check_error(name: &str, case: &Value, error: &HttpError) {
    assert_eq!(case["error"], error.code(), "{name}: {error}");
    if let Some(position) = case.get("position") {
        assert_eq!(
            position.as_u64(),
            error.position().map(|p| p as u64),
            "{name}: position of {error}"
        );
    }
}

fn check<T>(name: &str, case: &Value, result: Result<T, HttpError>, ok: impl FnOnce(T)) {
    match result {
        Ok(value) => {
            assert!(
                case.get("error").is_none(),
                "{name}: expected {}",
                case["error"]
            );
            ok(value);
        }
        Err(error) => check_error(name, case, &error),
    }
}

fn problem(name: &str) -> Problem {
    Problem::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_else(|| panic!("no problem {name}"))
}

fn run(case: &Value) {
    let name = text(case, "name");
    let detail = case.get("detail").map(|d| d.as_str().expect("detail"));
    match text(case, "op") {
        "default_kind" => check(
            name,
            case,
            default_kind(text(case, "method"), text(case, "path")),
            |kind| assert_eq!(kind, text(case, "kind"), "{name}"),
        ),
        "is_json_content_type" => assert_eq!(
            is_json_content_type(case["content_type"].as_str()),
            case["expect"].as_bool().expect("expect"),
            "{name}"
        ),
        "fingerprint_body" => check(
            name,
            case,
            fingerprint_body(case["content_type"].as_str(), &hex(text(case, "body"))),
            |fingerprint| assert_eq!(fingerprint.to_string(), text(case, "fingerprint"), "{name}"),
        ),
        "fingerprint_request" => check(
            name,
            case,
            fingerprint_request(
                case["content_type"].as_str(),
                text(case, "query"),
                &hex(text(case, "body")),
            ),
            |fingerprint| assert_eq!(fingerprint.to_string(), text(case, "fingerprint"), "{name}"),
        ),
        "problem_document" => assert_eq!(
            problem_document(problem(text(case, "problem")), detail),
            text(case, "body"),
            "{name}"
        ),
        "status_document" => check(name, case, status_document(status(case), detail), |body| {
            assert_eq!(body, text(case, "body"), "{name}")
        }),
        "grant_document" => assert_eq!(
            grant_document(
                text(case, "grant"),
                text(case, "expires").parse().expect("expires")
            ),
            text(case, "body"),
            "{name}"
        ),
        "encode_envelope" => {
            let response = HttpResponse {
                status: status(case),
                headers: headers(case, "headers"),
                body: hex(text(case, "body")),
            };
            let kept = strings(case, "stored_headers");
            check(name, case, encode_envelope(&response, &kept), |stored| {
                assert_eq!(stored.content_type, text(case, "content_type"), "{name}");
                assert_eq!(to_hex(&stored.bytes), text(case, "envelope"), "{name}");
            });
        }
        "decode_envelope" => check(
            name,
            case,
            decode_envelope(text(case, "content_type"), &hex(text(case, "envelope"))),
            |response| {
                assert_eq!(response.status, status(case), "{name}");
                assert_eq!(response.headers, headers(case, "headers"), "{name}");
                assert_eq!(to_hex(&response.body), text(case, "body"), "{name}");
            },
        ),
        "defaults" => {
            let expected = json!({
                "idempotency_key_header": IDEMPOTENCY_KEY_HEADER,
                "request_id_header": REQUEST_ID_HEADER,
                "body_limit": DEFAULT_BODY_LIMIT.to_string(),
                "methods": DEFAULT_METHODS,
                "stored_headers": DEFAULT_STORED_HEADERS,
                "grant_ttl_millis": DEFAULT_GRANT_TTL_MILLIS.to_string(),
                "envelope_magic": ENVELOPE_MAGIC,
                "about_blank": ABOUT_BLANK,
                "grant_content_type": GRANT_CONTENT_TYPE,
            });
            for (field, value) in expected.as_object().expect("object") {
                assert_eq!(&case[field], value, "{name}: {field}");
            }
        }
        op => panic!("{name}: no runner for op {op:?}"),
    }
}

#[test]
fn every_http_vector() {
    let file = common::vectors("http.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        run(case);
    }
}
