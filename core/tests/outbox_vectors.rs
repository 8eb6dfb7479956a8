//! Replays `tests/vectors/outbox.json` against the outbox rules.

mod common;

use common::{int, text};
use mintid::outbox::{
    AfterFailure, Delivery, Enqueued, OutboxStatus, RelayPolicy, check_marked, check_message,
};
use serde_json::{Value, json};

fn policy(value: &Value) -> Result<RelayPolicy, String> {
    let jitter = value["jitter_percent"].as_u64().expect("jitter_percent");
    RelayPolicy::new(int(value, "batch_size"), int(value, "claim_millis"))
        .and_then(|p| {
            p.with_backoff(
                int(value, "base_backoff_millis"),
                int(value, "max_backoff_millis"),
                u8::try_from(jitter).unwrap_or(u8::MAX),
            )
        })
        .and_then(|p| p.with_max_attempts(int(value, "max_attempts")))
        .map_err(|e| e.code().to_owned())
}

/// The case's outcome as `{"expect": …}` or `{"error": code}`.
fn outcome(case: &Value) -> Value {
    match case.get("error") {
        Some(code) => json!({ "error": code }),
        None => json!({ "expect": case["expect"] }),
    }
}

fn got<T>(result: Result<T, mintid::OutboxError>, shown: impl FnOnce(T) -> Value) -> Value {
    match result {
        Ok(value) => json!({ "expect": shown(value) }),
        Err(error) => json!({ "error": error.code() }),
    }
}

fn run(case: &Value) {
    let name = text(case, "name");
    let result = match text(case, "op") {
        "status" => got(OutboxStatus::parse(text(case, "text")), |status| {
            json!(status.as_str())
        }),
        "policy" => match policy(&case["policy"]) {
            Ok(_) => json!({ "expect": "ok" }),
            Err(code) => json!({ "error": code }),
        },
        "backoff" => {
            let policy = policy(&case["policy"]).expect("policy");
            let millis = policy.backoff_millis(int(case, "attempts"), int(case, "draw"));
            json!({ "expect": millis.to_string() })
        }
        "claim" => {
            let policy = policy(&case["policy"]).expect("policy");
            let now = int(case, "now");
            got(policy.claim(now, int(case, "draw")), |claim| {
                assert_eq!(claim.now_millis, now, "{name}");
                json!({
                    "claim_token": claim.claim_token.to_string(),
                    "claimed_until": claim.claimed_until_millis.to_string(),
                    "batch_size": claim.batch_size.to_string(),
                })
            })
        }
        "delivery" => {
            let policy = policy(&case["policy"]).expect("policy");
            let delivery = match policy.delivery(int(case, "attempts")) {
                Delivery::Send => "send",
                Delivery::GiveUp => "give_up",
            };
            json!({ "expect": delivery })
        }
        "after_failure" => {
            let policy = policy(&case["policy"]).expect("policy");
            let result =
                policy.after_failure(int(case, "attempts"), int(case, "now"), int(case, "draw"));
            got(result, |after| match after {
                AfterFailure::Dead => json!("dead"),
                AfterFailure::Retry {
                    next_attempt_millis,
                } => json!({ "retry": next_attempt_millis.to_string() }),
            })
        }
        "enqueued" => got(Enqueued::from_rows(int(case, "rows")), |enqueued| {
            json!(enqueued.name())
        }),
        "marked" => got(
            check_marked(
                int(case, "rows"),
                int(case, "message_id"),
                int(case, "claim_token"),
            ),
            |()| json!("ok"),
        ),
        "message" => {
            let length = usize::try_from(int(case, "payload_len")).expect("length");
            got(
                check_message(text(case, "kind"), text(case, "business_key"), length),
                |()| json!("ok"),
            )
        }
        other => panic!("{name}: unknown op {other:?}"),
    };
    assert_eq!(result, outcome(case), "{name}");
}

#[test]
fn every_outbox_vector_passes() {
    let file: Value = common::vectors("outbox.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        run(case);
    }
}
