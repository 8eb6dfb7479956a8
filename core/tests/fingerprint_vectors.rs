//! Runs every case of `tests/vectors/fingerprint.json`.

mod common;

use common::{hex, text};
use mintid::fingerprint::{
    FieldSelection, Fingerprint, FingerprintError, canonicalize_selection, fingerprint_bytes,
    fingerprint_json,
};
use serde_json::Value;

fn input(case: &Value) -> Vec<u8> {
    match (case.get("input"), case.get("input_hex")) {
        (Some(Value::String(s)), None) => s.as_bytes().to_vec(),
        (None, Some(Value::String(h))) => hex(h),
        _ => panic!("{}: needs exactly one of input, input_hex", case["name"]),
    }
}

fn pointers(case: &Value, field: &str) -> Vec<String> {
    case.get(field).map_or_else(Vec::new, |list| {
        list.as_array()
            .expect("pointer list")
            .iter()
            .map(|p| p.as_str().expect("pointer").to_owned())
            .collect()
    })
}

fn check_error(case: &Value, err: &FingerprintError) {
    let name = &case["name"];
    assert_eq!(err.code(), text(case, "error"), "{name}: {err}");
    if let Some(position) = case.get("position") {
        assert_eq!(
            err.position(),
            Some(position.as_u64().expect("position") as usize),
            "{name}: {err}"
        );
    }
    assert!(!err.to_string().is_empty());
}

fn run_json(case: &Value) {
    let name = &case["name"];
    let data = input(case);
    let selection = FieldSelection::new(&pointers(case, "include"), &pointers(case, "exclude"));
    let result = selection.and_then(|selection| {
        let canonical = canonicalize_selection(&data, &selection)?;
        let fingerprint = fingerprint_json(&data, &selection)?;
        Ok((canonical, fingerprint))
    });
    match (result, case.get("error")) {
        (Ok((canonical, fingerprint)), None) => {
            assert_eq!(canonical, text(case, "canonical"), "{name}");
            assert_eq!(fingerprint.to_string(), text(case, "fingerprint"), "{name}");
        }
        (Err(err), Some(_)) => check_error(case, &err),
        (Ok(ok), Some(_)) => panic!("{name}: expected an error, got {ok:?}"),
        (Err(err), None) => panic!("{name}: unexpected error {err}"),
    }
}

fn run_parse_fingerprint(case: &Value) {
    let name = &case["name"];
    match (text(case, "text").parse::<Fingerprint>(), case.get("error")) {
        (Ok(fp), None) => {
            assert_eq!(
                fp.as_bytes().to_vec(),
                hex(text(case, "digest_hex")),
                "{name}"
            );
            assert_eq!(fp.to_string(), text(case, "text"), "{name}");
        }
        (Err(err), Some(_)) => check_error(case, &err),
        (result, _) => panic!("{name}: unexpected {result:?}"),
    }
}

#[test]
fn fingerprint_vectors() {
    let file = common::vectors("fingerprint.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        match text(case, "op") {
            "fingerprint_json" => run_json(case),
            "fingerprint_bytes" => assert_eq!(
                fingerprint_bytes(&input(case)).to_string(),
                text(case, "fingerprint"),
                "{}",
                case["name"]
            ),
            "parse_fingerprint" => run_parse_fingerprint(case),
            op => panic!("{}: unknown op {op}", case["name"]),
        }
    }
}
