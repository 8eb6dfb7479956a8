//! Replays `tests/vectors/segment.json` against the segment allocator.

mod common;

use common::{int, text};
use mintid::segment::{SegmentAllocator, SegmentPolicy, SegmentRow};
use serde_json::Value;

fn policy(value: &Value) -> Result<SegmentPolicy, String> {
    let percent = value["fetch_at_percent"]
        .as_u64()
        .expect("fetch_at_percent");
    SegmentPolicy::new(
        int(value, "initial_step"),
        int(value, "min_step"),
        int(value, "max_step"),
    )
    .and_then(|p| p.with_fetch_at_percent(u8::try_from(percent).unwrap_or(u8::MAX)))
    .and_then(|p| {
        p.with_adaptation(
            int(value, "grow_below_millis"),
            int(value, "shrink_above_millis"),
        )
    })
    .map_err(|e| e.code().to_owned())
}

fn ids(values: &[Option<u64>]) -> Value {
    values
        .iter()
        .map(|id| id.map_or(Value::Null, |id| Value::String(id.to_string())))
        .collect()
}

fn step(name: &str, step: &Value, allocator: &mut SegmentAllocator) {
    let expect = &step["expect"];
    match text(step, "do") {
        "next" => {
            let count = expect.as_array().expect("expect list").len();
            let got: Vec<Option<u64>> = (0..count).map(|_| allocator.next_id()).collect();
            assert_eq!(ids(&got), *expect, "{name}");
        }
        "fill" => {
            let mut out = vec![0; common::number::<usize>(step, "count")];
            let written = allocator.fill(&mut out);
            let got: Vec<Option<u64>> = out[..written].iter().map(|&id| Some(id)).collect();
            assert_eq!(ids(&got), *expect, "{name}");
        }
        "fetch_due" => {
            let due = allocator.fetch_due(int(step, "now"));
            let got = due.map_or(Value::Null, |fetch| Value::String(fetch.step.to_string()));
            assert_eq!(got, *expect, "{name}");
        }
        "fetched" => {
            let row = SegmentRow {
                max_id: int(step, "max_id"),
                step: int(step, "step"),
            };
            match (allocator.fetched(row, int(step, "now")), expect) {
                (Ok(()), Value::String(ok)) if ok == "ok" => {}
                (Err(error), expected) if expected["error"] == error.code() => {}
                (result, expected) => panic!("{name}: expected {expected}, got {result:?}"),
            }
        }
        "fetch_failed" => allocator.fetch_failed(),
        "state" => {
            let state = serde_json::json!({
                "remaining": allocator.remaining().to_string(),
                "step": allocator.step().to_string(),
                "in_flight": allocator.fetch_in_flight(),
            });
            assert_eq!(state, *expect, "{name}");
        }
        other => panic!("{name}: unknown step {other:?}"),
    }
}

fn run(case: &Value) {
    let name = text(case, "name");
    match text(case, "op") {
        "policy" => match (policy(&case["policy"]), case.get("error")) {
            (Ok(_), None) => assert_eq!(case["expect"], "ok", "{name}"),
            (Err(code), Some(expected)) => assert_eq!(expected, code.as_str(), "{name}"),
            (result, expected) => panic!("{name}: expected {expected:?}, got {result:?}"),
        },
        "adapt" => {
            let policy = policy(&case["policy"]).expect("policy");
            assert_eq!(
                policy.adapt(int(case, "step"), int(case, "lasted")),
                int(case, "expect"),
                "{name}"
            );
        }
        "allocator" => {
            let mut allocator = SegmentAllocator::new(policy(&case["policy"]).expect("policy"));
            for each in case["steps"].as_array().expect("steps") {
                step(name, each, &mut allocator);
            }
        }
        other => panic!("{name}: unknown op {other:?}"),
    }
}

#[test]
fn every_segment_vector_passes() {
    let file: Value = common::vectors("segment.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(!cases.is_empty());
    for case in cases {
        run(case);
    }
}
