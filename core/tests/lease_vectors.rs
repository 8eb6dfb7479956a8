//! Replays `tests/vectors/lease.json` against the worker-id lease rules.

mod common;

use common::{int, text};
use mintid::lease::{
    Acquisition, LeaseCount, LeaseGuard, LeasePolicy, NoneFound, Renewal, WorkerLease, acquire,
    none_found,
};
use mintid::{SnowflakeId, SnowflakeLayout};
use serde_json::Value;

fn layout(value: &Value) -> SnowflakeLayout {
    match value {
        Value::String(name) => SnowflakeLayout::preset(name).expect("preset"),
        object => {
            let bits = |field: &str| u8::try_from(object[field].as_u64().expect("bits")).unwrap();
            SnowflakeLayout::new(
                bits("time_bits"),
                bits("worker_bits"),
                bits("sequence_bits"),
                int(object, "epoch_millis"),
                int(object, "tick_millis"),
            )
            .expect("layout")
        }
    }
}

fn policy(value: &Value) -> Result<LeasePolicy, String> {
    LeasePolicy::new(layout(&value["layout"]))
        .and_then(|p| {
            p.with_lease(
                int(value, "lease_millis"),
                int(value, "renew_interval_millis"),
                int(value, "safety_margin_millis"),
            )
        })
        .and_then(|p| p.with_renew_retry_millis(int(value, "renew_retry_millis")))
        .map(|p| {
            p.with_max_skew_millis(int(value, "max_skew_millis"))
                .with_max_start_wait_millis(int(value, "max_start_wait_millis"))
        })
        .map_err(|e| e.code().to_owned())
}

fn row(value: &Value) -> WorkerLease {
    WorkerLease {
        worker_id: int(value, "worker_id"),
        fencing_token: int(value, "fencing_token"),
        lease_deadline_millis: int(value, "lease_deadline"),
        high_water_millis: int(value, "high_water"),
        held: value["held"].as_bool().expect("held"),
    }
}

fn row_json(lease: &WorkerLease) -> Value {
    serde_json::json!({
        "worker_id": lease.worker_id.to_string(),
        "fencing_token": lease.fencing_token.to_string(),
        "lease_deadline": lease.lease_deadline_millis.to_string(),
        "high_water": lease.high_water_millis.to_string(),
        "held": lease.held,
    })
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

/// Checks a case-level `expect` or `error` against a result.
fn check_case<T>(name: &str, case: &Value, result: Result<T, String>) -> Option<T> {
    match (case.get("error"), result) {
        (Some(code), Err(got)) => {
            assert_eq!(code, got.as_str(), "{name}");
            None
        }
        (Some(code), Ok(_)) => panic!("{name}: expected error {code}, got a value"),
        (None, Err(got)) => panic!("{name}: unexpected error {got}"),
        (None, Ok(value)) => Some(value),
    }
}

fn guard_step(name: &str, step: &Value, guard: &LeaseGuard, renewal: &mut Option<Renewal>) {
    let expect = &step["expect"];
    match text(step, "do") {
        "state" => {
            let state = serde_json::json!({
                "lease_deadline": guard.lease_deadline_millis().to_string(),
                "stop_at": guard.stop_at_millis().to_string(),
                "next_renewal_at": guard.next_renewal_at_millis().to_string(),
                "live": guard.is_live(),
            });
            assert_eq!(&state, expect, "{name}");
        }
        "check" => {
            let result = guard
                .check(int(step, "now"))
                .map_err(|e| e.code().to_owned());
            check_result(name, expect, result);
        }
        "admit" => {
            let result = SnowflakeId::new(int(step, "id"))
                .map_err(|e| e.to_string())
                .and_then(|id| guard.admit(id).map_err(|e| e.code().to_owned()));
            check_result(name, expect, result);
        }
        "admit_all" => {
            let ids: Vec<u64> = step["ids"]
                .as_array()
                .expect("ids")
                .iter()
                .map(|id| id.as_str().expect("decimal id").parse().expect("u64 id"))
                .collect();
            check_result(
                name,
                expect,
                guard.admit_all(&ids).map_err(|e| e.code().to_owned()),
            );
        }
        "renew_due" => {
            assert_eq!(
                Value::Bool(guard.renew_due(int(step, "now"))),
                *expect,
                "{name}"
            );
        }
        "renewal" => match guard.renewal(int(step, "now"), int(step, "high_water")) {
            Ok(made) => {
                assert_eq!(made.worker_id, guard.worker_id(), "{name}");
                assert_eq!(made.fencing_token, guard.fencing_token(), "{name}");
                assert_eq!(made.now_millis, int(step, "now"), "{name}");
                assert_eq!(
                    made.lease_deadline_millis,
                    int(expect, "lease_deadline"),
                    "{name}"
                );
                assert_eq!(made.high_water_millis, int(expect, "high_water"), "{name}");
                *renewal = Some(made);
            }
            Err(error) => assert_eq!(expect["error"], error.code(), "{name}"),
        },
        "renewed" => {
            let made = renewal.expect("a renewal before renewed");
            let result = guard
                .renewed(&made, int(step, "rows"))
                .map_err(|e| e.code().to_owned());
            check_result(name, expect, result);
        }
        "renewal_failed" => guard.renewal_failed(int(step, "now")),
        "release" => {
            let release = guard.release(int(step, "now"), int(step, "high_water"));
            assert_eq!(
                (release.worker_id, release.fencing_token, release.now_millis),
                (guard.worker_id(), guard.fencing_token(), int(step, "now")),
                "{name}"
            );
            assert_eq!(
                release.high_water_millis,
                int(expect, "high_water"),
                "{name}"
            );
        }
        other => panic!("{name}: unknown guard step {other:?}"),
    }
}

fn run(case: &Value) {
    let name = text(case, "name");
    match text(case, "op") {
        "policy" => {
            if let Some(policy) = check_case(name, case, policy(&case["policy"])) {
                assert_eq!(
                    policy.max_worker(),
                    int(&case["expect"], "max_worker"),
                    "{name}"
                );
            }
        }
        "acquire" => {
            let policy = policy(&case["policy"]).expect("policy");
            let result = acquire(&row(&case["row"]), int(case, "now"), &policy)
                .map_err(|e| e.code().to_owned());
            if let Some(acquisition) = check_case(name, case, result) {
                let expect = &case["expect"];
                assert_eq!(row_json(&acquisition.lease), expect["lease"], "{name}");
                assert_eq!(
                    acquisition.expected_token,
                    int(expect, "expected_token"),
                    "{name}"
                );
                assert_eq!(acquisition.acquired_millis, int(case, "now"), "{name}");
                assert_eq!(
                    acquisition.start_after_millis,
                    int(expect, "start_after"),
                    "{name}"
                );
                assert_eq!(
                    acquisition.ready_at_millis,
                    int(expect, "ready_at"),
                    "{name}"
                );
            }
        }
        "none_found" => {
            let policy = policy(&case["policy"]).expect("policy");
            let count = LeaseCount {
                present: int(case, "present"),
                free: int(case, "free"),
            };
            let result = none_found(count, &policy).map_err(|e| e.code().to_owned());
            if let Some(next) = check_case(name, case, result) {
                let named = match next {
                    NoneFound::Seed => "seed",
                    NoneFound::Retry => "retry",
                };
                assert_eq!(named, text(case, "expect"), "{name}");
            }
        }
        "guard" => {
            let policy = policy(&case["policy"]).expect("policy");
            let acquisition: Acquisition =
                acquire(&row(&case["row"]), int(case, "now"), &policy).expect("acquisition");
            let guard = LeaseGuard::new(&acquisition, &policy);
            let mut renewal = None;
            for step in case["steps"].as_array().expect("steps") {
                guard_step(name, step, &guard, &mut renewal);
            }
        }
        other => panic!("{name}: unknown op {other:?}"),
    }
}

#[test]
fn every_lease_vector_passes() {
    let file: Value = common::vectors("lease.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        run(case);
    }
}
