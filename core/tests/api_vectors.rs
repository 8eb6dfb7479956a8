//! Runs every case of `tests/vectors/api.json` through the Rust API. Rust
//! has no dynamic JSON value in its `no_std` core, so a `fingerprint` case
//! (a parsed value) is made with `fingerprint_value` of the value's JSON
//! text, as every host does after writing its value as JSON.

mod common;

use common::{hex, text, to_hex};
use mintid::fingerprint::{
    FieldSelection, Fingerprint, FingerprintError, fingerprint_bytes, fingerprint_json,
    fingerprint_value,
};
use mintid::record::{Decision, Incoming, Record, Status, decide};
use mintid::request_id::{KeyRing, SecretKey};
use mintid::{LeasePolicy, RecordPolicy, RelayPolicy, SegmentPolicy, SnowflakeLayout};
use serde_json::{Value, json};

fn pointers(case: &Value, field: &str) -> Vec<String> {
    case.get(field).map_or_else(Vec::new, |list| {
        list.as_array()
            .expect("a pointer list")
            .iter()
            .map(|p| p.as_str().expect("a pointer").to_owned())
            .collect()
    })
}

/// The JSON text or UTF-8 bytes of a case: `field`, or `field_bytes` in hex.
fn bytes(case: &Value, field: &str) -> Vec<u8> {
    match (case.get(field), case.get(format!("{field}_bytes").as_str())) {
        (Some(value), None) if field == "value" => value.to_string().into_bytes(),
        (Some(Value::String(text)), None) => text.as_bytes().to_vec(),
        (None, Some(Value::String(hex_text))) => hex(hex_text),
        _ => panic!("{}: needs one of {field}, {field}_bytes", case["name"]),
    }
}

fn fingerprint(case: &Value) -> Result<Fingerprint, String> {
    if case.get("value_bytes").is_some() {
        // Bytes as a parsed value: the hosts refuse them with this code; in
        // Rust no call takes bytes for a value, so there is nothing to run.
        return Err("fingerprint.invalid_json".to_owned());
    }
    let code = |error: FingerprintError| error.code().to_owned();
    let selection = FieldSelection::new(&pointers(case, "include"), &pointers(case, "exclude"))
        .map_err(code)?;
    match text(case, "op") {
        "fingerprint" => fingerprint_value(&bytes(case, "value"), &selection).map_err(code),
        "fingerprint_json" => fingerprint_json(&bytes(case, "text"), &selection).map_err(code),
        _ => Ok(fingerprint_bytes(&hex(text(case, "raw")))),
    }
}

fn arg(args: &Value, field: &str) -> Option<u64> {
    args.get(field).map(|value| {
        value
            .as_str()
            .expect("a decimal string")
            .parse()
            .expect("a u64")
    })
}

/// Fails on an argument this runner does not apply: no case is skipped silently.
fn only(args: &Value, known: &[&str]) {
    for field in args.as_object().expect("args").keys() {
        assert!(known.contains(&field.as_str()), "unknown argument {field}");
    }
}

fn policy(case: &Value) -> Result<Value, String> {
    let args = &case["args"];
    match text(case, "op") {
        "record_policy" => {
            only(args, &["lease_millis", "retention_millis"]);
            let d = RecordPolicy::DEFAULT;
            let p = RecordPolicy::new(
                arg(args, "lease_millis").unwrap_or(d.lease_millis()),
                arg(args, "retention_millis").unwrap_or(d.retention_millis()),
            )
            .map_err(|e| e.code().to_owned())?;
            Ok(json!({
                "lease_millis": p.lease_millis().to_string(),
                "retention_millis": p.retention_millis().to_string(),
                "store_errors": p.store_errors(),
                "retry_after_millis": p.retry_after_millis().to_string(),
                "max_wait_millis": p.max_wait_millis().to_string(),
                "poll_millis": p.poll_millis().to_string(),
            }))
        }
        "segment_policy" => {
            only(args, &["initial_step", "min_step", "max_step"]);
            let d = SegmentPolicy::DEFAULT;
            let p = SegmentPolicy::new(
                arg(args, "initial_step").unwrap_or(d.initial_step()),
                arg(args, "min_step").unwrap_or(d.min_step()),
                arg(args, "max_step").unwrap_or(d.max_step()),
            )
            .map_err(|e| e.code().to_owned())?;
            Ok(json!({
                "initial_step": p.initial_step().to_string(),
                "min_step": p.min_step().to_string(),
                "max_step": p.max_step().to_string(),
                "fetch_at_percent": p.fetch_at_percent(),
                "grow_below_millis": p.grow_below_millis().to_string(),
                "shrink_above_millis": p.shrink_above_millis().to_string(),
            }))
        }
        "relay_policy" => {
            only(args, &["batch_size", "claim_millis"]);
            let d = RelayPolicy::DEFAULT;
            let p = RelayPolicy::new(
                arg(args, "batch_size").unwrap_or(d.batch_size()),
                arg(args, "claim_millis").unwrap_or(d.claim_millis()),
            )
            .map_err(|e| e.code().to_owned())?;
            Ok(json!({
                "batch_size": p.batch_size().to_string(),
                "claim_millis": p.claim_millis().to_string(),
                "base_backoff_millis": p.base_backoff_millis().to_string(),
                "max_backoff_millis": p.max_backoff_millis().to_string(),
                "jitter_percent": p.jitter_percent(),
                "max_attempts": p.max_attempts().to_string(),
            }))
        }
        _ => {
            only(args, &[]);
            let p = LeasePolicy::new(SnowflakeLayout::CLASSIC).map_err(|e| e.code().to_owned())?;
            Ok(json!({
                "max_worker": p.max_worker().to_string(),
                "lease_millis": p.lease_millis().to_string(),
                "renew_interval_millis": p.renew_interval_millis().to_string(),
            }))
        }
    }
}

fn issue_grant(case: &Value) -> Result<Value, String> {
    let key_id = u32::try_from(case["key_id"].as_u64().expect("key_id")).expect("a u32");
    let key =
        SecretKey::new(key_id, &hex(text(case, "secret"))).map_err(|e| e.code().to_owned())?;
    let expires = text(case, "expires_millis").parse().expect("a u64");
    let grant = KeyRing::new(key)
        .issue_grant(text(case, "scope"), expires)
        .map_err(|e| e.code().to_owned())?;
    Ok(json!({
        "text": grant.to_text(),
        "key_id": grant.key_id(),
        "expires_millis": grant.expires_millis().to_string(),
        "grant_key": to_hex(grant.grant_key()),
    }))
}

/// A vector's stored record (numbers as decimal text), or `None`.
fn stored(record: &Value) -> Option<Record> {
    if record.is_null() {
        return None;
    }
    let millis = |field: &str| arg(record, field).expect(field);
    Some(Record {
        status: Status::parse(text(record, "status")).expect("a status"),
        fingerprint: text(record, "fingerprint").parse().expect("a fingerprint"),
        token: millis("token"),
        lease_deadline_millis: millis("lease_deadline_millis"),
        created_millis: millis("created_millis"),
        expires_millis: millis("expires_millis"),
    })
}

/// `decide(existing, incoming, now_millis, policy)`, the order of every host.
fn decide_case(case: &Value) -> Result<Value, String> {
    let args = &case["args"];
    only(args, &["lease_millis"]);
    let d = RecordPolicy::DEFAULT;
    let policy = RecordPolicy::new(
        arg(args, "lease_millis").unwrap_or(d.lease_millis()),
        d.retention_millis(),
    )
    .map_err(|e| e.code().to_owned())?;
    let fingerprint: Fingerprint = text(case, "fingerprint").parse().expect("a fingerprint");
    let now = arg(case, "now_millis").expect("now_millis");
    let existing = stored(&case["existing"]);
    let decision = decide(existing.as_ref(), &Incoming::new(fingerprint), now, &policy)
        .map_err(|e| e.code().to_owned())?;
    Ok(match &decision {
        Decision::Execute(claim) => json!({
            "decision": decision.name(),
            "token": claim.record.token.to_string(),
            "lease_deadline_millis": claim.record.lease_deadline_millis.to_string(),
            "created_millis": claim.record.created_millis.to_string(),
            "expires_millis": claim.record.expires_millis.to_string(),
        }),
        _ => json!({ "decision": decision.name() }),
    })
}

#[test]
fn api_vectors() {
    let file = common::vectors("api.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20);
    for case in cases {
        let name = &case["name"];
        let result = match text(case, "op") {
            "fingerprint" | "fingerprint_json" | "fingerprint_bytes" => {
                fingerprint(case).map(|fp| Value::String(fp.to_string()))
            }
            "issue_grant" => issue_grant(case),
            "decide" => decide_case(case),
            "record_policy" | "segment_policy" | "relay_policy" | "lease_policy" => policy(case),
            call => panic!("{name}: unknown op {call}"),
        };
        match case.get("error") {
            Some(code) => assert_eq!(result.err().as_deref(), code.as_str(), "{name}"),
            None => assert_eq!(result.as_ref(), Ok(&case["expect"]), "{name}"),
        }
    }
}
