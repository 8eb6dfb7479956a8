//! Runs every case of `tests/vectors/keys.json`.

mod common;

use common::{hex, text};
use mintid::fingerprint::Fingerprint;
use mintid::key::{IdempotencyKey, KeyError, parse_header};
use serde_json::Value;

/// Checks an error against the case's `error`, and `part`/`position` when given.
fn check_error(case: &Value, err: &KeyError) {
    let name = &case["name"];
    assert_eq!(err.code(), text(case, "error"), "{name}: {err}");
    if let Some(part) = case.get("part") {
        assert_eq!(err.part().map(|p| p.name()), part.as_str(), "{name}: {err}");
    }
    if let Some(position) = case.get("position") {
        let expected = position.as_u64().expect("position") as usize;
        assert_eq!(err.position(), Some(expected), "{name}: {err}");
    }
    assert!(!err.to_string().is_empty());
}

/// Checks a built key against the case's `id` and `text`, or its error.
fn check_key(case: &Value, result: Result<IdempotencyKey, KeyError>) {
    let name = &case["name"];
    match (result, case.get("error")) {
        (Ok(key), None) => {
            assert_eq!(key.id(), text(case, "id"), "{name}");
            assert_eq!(key.to_string(), text(case, "text"), "{name}");
            assert_eq!(key.to_string().parse::<IdempotencyKey>(), Ok(key), "{name}");
        }
        (Err(err), Some(_)) => check_error(case, &err),
        (result, _) => panic!("{name}: unexpected {result:?}"),
    }
}

fn run(case: &Value) {
    let name = &case["name"];
    match text(case, "op") {
        "new_key" => check_key(
            case,
            IdempotencyKey::new(text(case, "kind"), text(case, "scope"), text(case, "id")),
        ),
        "id_from_fields" => {
            let fields: Vec<&str> = case["fields"]
                .as_array()
                .expect("fields")
                .iter()
                .map(|f| f.as_str().expect("field"))
                .collect();
            check_key(
                case,
                IdempotencyKey::from_fields(text(case, "kind"), text(case, "scope"), &fields),
            );
        }
        "derived_key" => {
            let fingerprint: Fingerprint = text(case, "fingerprint").parse().expect("fingerprint");
            check_key(
                case,
                IdempotencyKey::derived(text(case, "kind"), text(case, "scope"), &fingerprint),
            );
        }
        "parse_header" => {
            let value = match (case.get("header"), case.get("header_hex")) {
                (Some(Value::String(s)), None) => s.as_bytes().to_vec(),
                (None, Some(Value::String(h))) => hex(h),
                _ => panic!("{name}: needs exactly one of header, header_hex"),
            };
            match (parse_header(&value), case.get("error")) {
                (Ok(id), None) => assert_eq!(id, text(case, "id"), "{name}"),
                (Err(err), Some(_)) => check_error(case, &err),
                (result, _) => panic!("{name}: unexpected {result:?}"),
            }
        }
        "parse_key_text" => match (
            text(case, "text").parse::<IdempotencyKey>(),
            case.get("error"),
        ) {
            (Ok(key), None) => {
                let parts = (key.kind(), key.scope(), key.id());
                let expected = (text(case, "kind"), text(case, "scope"), text(case, "id"));
                assert_eq!(parts, expected, "{name}");
                assert_eq!(key.to_string(), text(case, "text"), "{name}");
            }
            (Err(err), Some(_)) => check_error(case, &err),
            (result, _) => panic!("{name}: unexpected {result:?}"),
        },
        op => panic!("{name}: unknown op {op}"),
    }
}

#[test]
fn key_vectors() {
    let file = common::vectors("keys.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    cases.iter().for_each(run);
}
