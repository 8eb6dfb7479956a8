//! Replays `tests/vectors/record.json` against the record state machine.

mod common;

use common::{int, text};
use std::collections::HashMap;

use mintid::fingerprint::Fingerprint;
use mintid::record::{
    Claim, Decision, Failure, Fence, Incoming, Outcome, PROBLEM_CONTENT_TYPE, Problem,
    REPLAYED_HEADER, REPLAYED_VALUE, RETRY_AFTER_HEADER, Record, RecordPolicy, Status, decide,
    retry_after_secs,
};
use serde_json::Value;

fn fingerprint(text: &str) -> Fingerprint {
    let digest = common::hex(text).try_into().expect("a 32-byte fingerprint");
    Fingerprint::from_digest(digest)
}

fn policy(value: &Value) -> Result<RecordPolicy, String> {
    RecordPolicy::new(int(value, "lease_millis"), int(value, "retention_millis"))
        .map(|p| p.with_store_errors(value["store_errors"].as_bool().expect("store_errors")))
        .and_then(|p| p.with_retry_after_millis(int(value, "retry_after_millis")))
        .and_then(|p| p.with_wait(int(value, "max_wait_millis"), int(value, "poll_millis")))
        .map_err(|e| e.code().to_owned())
}

fn record(value: &Value) -> Record {
    Record {
        status: Status::parse(text(value, "status")).expect("status"),
        fingerprint: fingerprint(text(value, "fingerprint")),
        token: int(value, "token"),
        lease_deadline_millis: int(value, "lease_deadline"),
        created_millis: int(value, "created"),
        expires_millis: int(value, "expires"),
    }
}

/// Checks an `"ok"` / `{"error": code}` expectation against a result.
fn check_result<T>(name: &str, expect: &Value, result: Result<T, String>) -> Option<T> {
    match (expect, result) {
        (Value::String(ok), Ok(value)) if ok == "ok" => Some(value),
        (expected, Err(code)) if expected["error"] == code.as_str() => None,
        (expected, Ok(_)) => panic!("{name}: expected {expected}, got ok"),
        (expected, Err(code)) => panic!("{name}: expected {expected}, got error {code}"),
    }
}

fn check_decision(name: &str, expect: &Value, decision: &Decision, incoming: &Incoming) {
    assert_eq!(decision.name(), text(expect, "decision"), "{name}");
    match decision {
        Decision::Execute(claim) => {
            let new = claim.record;
            assert_eq!(new.status, Status::Pending, "{name}");
            assert_eq!(new.fingerprint, incoming.fingerprint, "{name}");
            assert_eq!(new.token, int(expect, "token"), "{name}: token");
            assert_eq!(
                new.lease_deadline_millis,
                int(expect, "lease_deadline"),
                "{name}: lease deadline"
            );
            assert_eq!(
                new.created_millis,
                int(expect, "created"),
                "{name}: created"
            );
            assert_eq!(
                new.expires_millis,
                int(expect, "expires"),
                "{name}: expires"
            );
            let replaces = &expect["replaces"];
            match claim.expected {
                None => assert!(replaces.is_null(), "{name}: expected a compare-and-set"),
                Some(expected) => {
                    assert_eq!(expected.fence.token, int(replaces, "token"), "{name}");
                    assert_eq!(
                        expected.fence.created_millis,
                        int(replaces, "created"),
                        "{name}"
                    );
                    assert_eq!(expected.status.as_str(), text(replaces, "status"), "{name}");
                }
            }
        }
        Decision::Replay(outcome) => {
            assert_eq!(outcome.as_str(), text(expect, "outcome"), "{name}");
            let expected = match text(expect, "outcome") {
                "succeeded" => Outcome::Succeeded,
                "failed" => Outcome::Failed,
                other => panic!("{name}: unknown outcome {other:?}"),
            };
            assert_eq!(*outcome, expected, "{name}");
        }
        Decision::InProgress { retry_after_millis } => {
            assert_eq!(
                *retry_after_millis,
                int(expect, "retry_after_millis"),
                "{name}"
            );
            assert_eq!(
                decision.retry_after_secs(),
                Some(int(expect, "retry_after_secs")),
                "{name}"
            );
        }
        Decision::Wait { poll_millis } => {
            assert_eq!(*poll_millis, int(expect, "poll_millis"), "{name}");
        }
        Decision::FingerprintMismatch | Decision::KeyTooOld => {}
    }
    match decision.problem() {
        Some(problem) => assert_eq!(problem.name(), text(expect, "problem"), "{name}"),
        None => assert!(
            expect.get("problem").is_none(),
            "{name}: no problem expected"
        ),
    }
}

#[derive(Default)]
struct Sequence {
    store: Option<Record>,
    claims: HashMap<String, Claim>,
    fences: HashMap<String, Fence>,
}

impl Sequence {
    fn step(&mut self, name: &str, step: &Value, policy: &RecordPolicy) {
        let expect = &step["expect"];
        let worker = step["worker"].as_str().unwrap_or_default().to_owned();
        match text(step, "do") {
            "decide" => {
                let mut incoming = Incoming::new(fingerprint(text(step, "fingerprint")));
                if step.get("key_created").is_some() {
                    incoming = incoming.with_key_created_millis(int(step, "key_created"));
                }
                if step.get("waited").is_some() {
                    incoming = incoming.with_waited_millis(int(step, "waited"));
                }
                let result = decide(self.store.as_ref(), &incoming, int(step, "now"), policy);
                match result {
                    Ok(decision) => {
                        check_decision(name, expect, &decision, &incoming);
                        if let Decision::Execute(claim) = decision {
                            self.claims.insert(worker, claim);
                        }
                    }
                    Err(error) => assert_eq!(expect["error"], error.code(), "{name}"),
                }
            }
            "claim" => {
                let claim = self.claims[&worker];
                let result = claim
                    .apply(self.store.as_ref(), int(step, "now"))
                    .map_err(|e| e.code().to_owned());
                if let Some(written) = check_result(name, expect, result) {
                    self.store = Some(written);
                    self.fences.insert(worker, claim.fence());
                }
            }
            "complete" | "fail" => {
                let current = self.store.expect("a record to end");
                let fence = self.fences[&worker];
                let result = if text(step, "do") == "complete" {
                    current.complete(fence)
                } else {
                    let failure = match text(step, "failure") {
                        "retryable" => Failure::Retryable,
                        "final" => Failure::Final,
                        other => panic!("{name}: unknown failure {other:?}"),
                    };
                    current.fail(fence, failure, policy)
                };
                if let Some(ended) = check_result(name, expect, result.map_err(|e| e.code().into()))
                {
                    self.store = Some(ended);
                }
            }
            "check" => match expect {
                Value::Null => assert_eq!(self.store, None, "{name}"),
                expected => assert_eq!(self.store, Some(record(expected)), "{name}"),
            },
            "store" => self.store = Some(record(&step["record"])),
            "cleanup" => {
                let removable = self.store.is_some_and(|r| r.is_removable(int(step, "now")));
                assert_eq!(
                    if removable { "removed" } else { "kept" },
                    expect.as_str().expect("removed or kept"),
                    "{name}"
                );
                if removable {
                    self.store = None;
                }
            }
            other => panic!("{name}: unknown step {other:?}"),
        }
    }
}

fn problem_named(name: &str) -> Problem {
    Problem::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_else(|| panic!("unknown problem {name:?}"))
}

#[test]
fn record_vectors() {
    let doc: Value = common::vectors("record.json");
    let cases = doc["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        let name = text(case, "name");
        match text(case, "op") {
            "sequence" => {
                let policy = policy(&case["policy"]).expect("a valid policy");
                let mut sequence = Sequence::default();
                for (i, step) in case["steps"].as_array().expect("steps").iter().enumerate() {
                    sequence.step(&format!("{name}, step {i}"), step, &policy);
                }
            }
            "status" => {
                let result = Status::parse(text(case, "text"));
                match case.get("error") {
                    Some(code) => assert_eq!(result.unwrap_err().code(), code, "{name}"),
                    None => assert_eq!(result.unwrap().as_str(), text(case, "expect"), "{name}"),
                }
            }
            "policy" => {
                let expect = match case.get("error") {
                    Some(error) => serde_json::json!({ "error": error }),
                    None => case["expect"].clone(),
                };
                check_result(name, &expect, policy(&case["policy"]));
            }
            "problem" => {
                let problem = problem_named(text(case, "problem"));
                assert_eq!(Some(u64::from(problem.status())), case["status"].as_u64());
                assert_eq!(problem.type_uri(), text(case, "type"), "{name}");
                assert_eq!(problem.title(), text(case, "title"), "{name}");
            }
            "retry_after_secs" => {
                assert_eq!(
                    retry_after_secs(int(case, "millis")),
                    int(case, "expect"),
                    "{name}"
                );
            }
            "http_constants" => {
                assert_eq!(PROBLEM_CONTENT_TYPE, text(case, "problem_content_type"));
                assert_eq!(REPLAYED_HEADER, text(case, "replayed_header"));
                assert_eq!(REPLAYED_VALUE, text(case, "replayed_value"));
                assert_eq!(RETRY_AFTER_HEADER, text(case, "retry_after_header"));
            }
            other => panic!("{name}: unknown op {other:?}"),
        }
    }
}
