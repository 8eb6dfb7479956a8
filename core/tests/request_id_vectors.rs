//! Replays `tests/vectors/request_id.json` against grants, request IDs and key rings.

mod common;

use common::{hex, number, text, to_hex};
use mintid::request_id::{
    Freshness, Grant, KeyRing, RequestId, RequestIdError, SecretKey, verify_unsigned,
};
use mintid::uuid7::Uuid7;
use serde_json::Value;

fn secret_key(value: &Value) -> Result<SecretKey, RequestIdError> {
    SecretKey::new(number(value, "id"), &hex(text(value, "secret")))
}

fn freshness(case: &Value) -> Freshness {
    Freshness {
        max_age_millis: number(case, "max_age"),
        max_skew_millis: number(case, "max_skew"),
    }
}

/// Checks a case's `expect` (compared by `check`) or `error` against a result.
fn check<T>(name: &str, case: &Value, result: Result<T, RequestIdError>, ok: impl FnOnce(T)) {
    match (case.get("error"), result) {
        (None, Ok(value)) => ok(value),
        (Some(code), Err(error)) => assert_eq!(error.code(), code, "{name}: {error}"),
        (None, Err(error)) => panic!("{name}: unexpected error {}: {error}", error.code()),
        (Some(code), Ok(_)) => panic!("{name}: expected {code}, got ok"),
    }
}

fn key_ring_steps(name: &str, steps: &[Value]) {
    let mut ring: Option<KeyRing> = None;
    for (i, step) in steps.iter().enumerate() {
        let name = format!("{name}, step {i}");
        let result = match text(step, "do") {
            "new" => secret_key(&step["key"]).map(|key| ring = Some(KeyRing::new(key))),
            "add" | "rotate" | "retire" => {
                let ring = ring.as_mut().expect("a ring");
                match text(step, "do") {
                    "add" => secret_key(&step["key"]).and_then(|key| ring.add(key)),
                    "rotate" => secret_key(&step["key"]).and_then(|key| ring.rotate(key)),
                    _ => ring.retire(number(step, "id")),
                }
            }
            other => panic!("{name}: unknown step {other:?}"),
        };
        match (step.get("error"), result) {
            (None, Ok(())) => assert_eq!(step["expect"], "ok", "{name}"),
            (Some(code), Err(error)) => assert_eq!(error.code(), code, "{name}"),
            (expected, got) => panic!("{name}: expected {expected:?}, got {got:?}"),
        }
        match step.get("current") {
            Some(current) => assert_eq!(
                ring.as_ref().map(|r| r.current_id().to_string()).as_deref(),
                current.as_str(),
                "{name}"
            ),
            None => assert!(ring.is_none(), "{name}"),
        }
    }
}

#[test]
fn request_id_vectors() {
    let doc: Value = common::vectors("request_id.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        let name = text(case, "name");
        match text(case, "op") {
            "issue_grant" => {
                let grant = secret_key(&case["key"]).and_then(|key| {
                    KeyRing::new(key).issue_grant(text(case, "scope"), number(case, "expires"))
                });
                check(name, case, grant, |grant| {
                    assert_eq!(to_hex(grant.grant_key()), text(case, "grant_key"), "{name}");
                    assert_eq!(grant.to_text(), text(case, "grant"), "{name}");
                    assert_eq!(grant.expires_millis(), number::<u64>(case, "expires"));
                    assert_eq!(grant.key_id(), number::<u32>(&case["key"], "id"));
                });
            }
            "parse_grant" => {
                check(name, case, Grant::parse(text(case, "text")), |grant| {
                    assert_eq!(grant.key_id(), number::<u32>(case, "key_id"), "{name}");
                    assert_eq!(grant.expires_millis(), number::<u64>(case, "expires"));
                    assert_eq!(to_hex(grant.grant_key()), text(case, "grant_key"));
                    assert_eq!(grant.to_text(), text(case, "text"), "{name}: round trip");
                });
            }
            "mint" => {
                let grant = Grant::parse(text(case, "grant")).expect("grant");
                let uuid: Uuid7 = text(case, "uuid").parse().expect("uuid");
                let id = grant.mint(&uuid);
                assert_eq!(to_hex(id.tag()), text(case, "tag"), "{name}");
                assert_eq!(id.to_string(), text(case, "request_id"), "{name}");
                let read = RequestId::parse(text(case, "request_id")).expect("parse");
                assert_eq!(read, id, "{name}: round trip");
                assert_eq!(read.unverified_uuid(), uuid);
                assert_eq!(read.key_id(), grant.key_id());
                assert_eq!(read.expires_millis(), grant.expires_millis());
            }
            "verify" => {
                let keys = case["keys"].as_array().expect("keys");
                let current: u32 = number(case, "current");
                let mut all = keys.iter().map(|k| secret_key(k).expect("key"));
                let mut ring = KeyRing::new(
                    all.clone()
                        .find(|k| k.id() == current)
                        .expect("current key"),
                );
                for key in all.by_ref().filter(|k| k.id() != current) {
                    ring.add(key).expect("distinct ids");
                }
                let result = ring.verify(
                    text(case, "request_id"),
                    text(case, "scope"),
                    number(case, "now"),
                    &freshness(case),
                );
                check(name, case, result, |uuid| {
                    assert_eq!(uuid.to_string(), text(case, "expect"), "{name}");
                });
            }
            "verify_unsigned" => {
                let result =
                    verify_unsigned(text(case, "text"), number(case, "now"), &freshness(case));
                check(name, case, result, |uuid| {
                    assert_eq!(uuid.to_string(), text(case, "expect"), "{name}");
                });
            }
            "key_ring" => key_ring_steps(name, case["steps"].as_array().expect("steps")),
            other => panic!("{name}: unknown op {other:?}"),
        }
    }
}
