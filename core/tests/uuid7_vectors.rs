//! Runs every case of the shared vectors in `tests/vectors/uuid7.json`.

use mintid::uuid::TextForm;
use mintid::{
    FixedEntropy, ManualClock, RollbackPolicy, SharedUuid7Generator, Uuid, Uuid7, Uuid7Error,
    Uuid7Generator,
};
use serde_json::Value;

mod common;
use common::hex;

fn str_field<'a>(case: &'a Value, key: &str) -> &'a str {
    case[key]
        .as_str()
        .unwrap_or_else(|| panic!("{}: field {key} is not a string", case["name"]))
}

fn u64_field(case: &Value, key: &str) -> u64 {
    str_field(case, key)
        .parse()
        .unwrap_or_else(|e| panic!("{}: field {key}: {e}", case["name"]))
}

fn small_field(case: &Value, key: &str) -> u64 {
    case[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{}: field {key} is not a number", case["name"]))
}

fn bytes16(text: &str) -> [u8; 16] {
    hex(text).try_into().expect("16 bytes")
}

fn check_error<T: std::fmt::Debug>(case: &Value, result: Result<T, impl ErrorCode>) {
    let name = &case["name"];
    match result {
        Ok(value) => panic!("{name}: expected {}, got {value:?}", case["error"]),
        Err(err) => assert_eq!(err.error_code(), str_field(case, "error"), "{name}"),
    }
}

trait ErrorCode {
    fn error_code(&self) -> &'static str;
}
impl ErrorCode for Uuid7Error {
    fn error_code(&self) -> &'static str {
        self.code()
    }
}
impl ErrorCode for mintid::UuidParseError {
    fn error_code(&self) -> &'static str {
        self.code()
    }
}

fn check_fields(case: &Value, id: Uuid7) {
    let name = &case["name"];
    assert_eq!(
        id.timestamp_millis(),
        u64_field(case, "unix_millis"),
        "{name}"
    );
    assert_eq!(
        u64::from(id.rand_a()),
        small_field(case, "rand_a"),
        "{name}"
    );
    assert_eq!(id.rand_b(), u64_field(case, "rand_b"), "{name}");
    assert_eq!(
        u64::from(id.counter()),
        small_field(case, "counter"),
        "{name}"
    );
}

fn check_forms(case: &Value, uuid: &Uuid) {
    let name = &case["name"];
    assert_eq!(
        uuid.as_bytes(),
        &bytes16(str_field(case, "bytes")),
        "{name}"
    );
    for (key, form) in [
        ("hyphenated", TextForm::Hyphenated),
        ("simple", TextForm::Simple),
        ("urn", TextForm::Urn),
        ("base32", TextForm::Base32),
    ] {
        if case.get(key).is_some() {
            let text = str_field(case, key);
            assert_eq!(uuid.format(form).as_str(), text, "{name}: {key}");
            assert_eq!(Uuid::parse(text).as_ref(), Ok(uuid), "{name}: parse {key}");
        }
    }
}

fn run_from_fields(case: &Value) {
    let rand_a = u16::try_from(small_field(case, "rand_a")).expect("rand_a fits u16");
    let result = Uuid7::from_fields(
        u64_field(case, "unix_millis"),
        rand_a,
        u64_field(case, "rand_b"),
    );
    if case.get("error").is_some() {
        return check_error(case, result);
    }
    let id = result.unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    check_forms(case, id.as_uuid());
    assert_eq!(u64::from(id.counter()), small_field(case, "counter"));
}

fn run_parse(case: &Value) {
    let result = Uuid7::parse(str_field(case, "text"));
    if case.get("error").is_some() {
        return check_error(case, result);
    }
    let id = result.unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    assert_eq!(id.as_bytes(), &bytes16(str_field(case, "bytes")));
    check_fields(case, id);
}

fn run_parse_uuid(case: &Value) {
    let result = Uuid::parse(str_field(case, "text"));
    if case.get("error").is_some() {
        return check_error(case, result);
    }
    let uuid = result.unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    assert_eq!(uuid.as_bytes(), &bytes16(str_field(case, "bytes")));
    assert_eq!(u64::from(uuid.version()), small_field(case, "version"));
    assert_eq!(uuid.variant().name(), str_field(case, "variant"));
}

fn run_from_bytes(case: &Value) {
    let result = Uuid7::from_bytes(bytes16(str_field(case, "bytes")));
    if case.get("error").is_some() {
        return check_error(case, result);
    }
    let id = result.unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    check_fields(case, id);
    assert_eq!(id.to_string(), str_field(case, "hyphenated"));
}

fn run_new_v8(case: &Value) {
    let uuid = Uuid::new_v8(bytes16(str_field(case, "custom")));
    check_forms(case, &uuid);
}

fn policy(case: &Value) -> RollbackPolicy {
    let policy = &case["policy"];
    let max_millis = || u64_field(policy, "max_millis");
    match str_field(policy, "kind") {
        "fail" => RollbackPolicy::Fail,
        "wait" => RollbackPolicy::Wait {
            max_millis: max_millis(),
        },
        "logical" => RollbackPolicy::Logical {
            max_millis: max_millis(),
        },
        other => panic!("{}: unknown policy kind {other}", case["name"]),
    }
}

/// The ways a generator can be driven; every one must give the vectors' IDs.
#[derive(Debug, Clone, Copy)]
enum Path {
    OwnedOneByOne,
    OwnedFill,
    SharedOneByOne,
    SharedFillBytes,
}

fn run_generate_on(case: &Value, path: Path) {
    let name = &case["name"];
    let clock = ManualClock::new(0);
    let entropy = FixedEntropy::new(hex(str_field(case, "entropy")));
    let policy = policy(case);
    let mut owned = Uuid7Generator::with_sources(&clock, &entropy).with_policy(policy);
    let shared = SharedUuid7Generator::with_sources(&clock, &entropy).with_policy(policy);
    let mut batch = |count: usize| -> Result<Vec<Uuid7>, Uuid7Error> {
        match path {
            Path::OwnedOneByOne => (0..count).map(|_| owned.generate()).collect(),
            Path::SharedOneByOne => (0..count).map(|_| shared.generate()).collect(),
            Path::OwnedFill => {
                let mut out = vec![Uuid7::from_fields(0, 0, 0)?; count];
                owned.fill(&mut out).map(|()| out)
            }
            Path::SharedFillBytes => {
                let mut out = vec![0u8; 16 * count];
                shared.fill_bytes(&mut out)?;
                Ok(out
                    .chunks_exact(16)
                    .map(|b| Uuid7::from_bytes(b.try_into().unwrap()).unwrap())
                    .collect())
            }
        }
    };
    let mut previous: Option<Uuid7> = None;
    let steps = case["steps"].as_array().expect("steps");
    for (i, step) in steps.iter().enumerate() {
        clock.set_millis(u64_field(step, "clock_millis"));
        if step.get("error").is_some() {
            let err = batch(1).expect_err(&format!("{name} step {i} ({path:?}) must fail"));
            assert_eq!(
                err.code(),
                str_field(step, "error"),
                "{name} step {i} ({path:?})"
            );
            continue;
        }
        let skip = step.get("skip").map_or(0, |_| small_field(step, "skip")) as usize;
        let expect = step["expect"].as_array().expect("expect");
        let ids = batch(skip + expect.len())
            .unwrap_or_else(|e| panic!("{name} step {i} ({path:?}): {e}"));
        for id in &ids {
            assert!(
                previous < Some(*id),
                "{name} step {i} ({path:?}): not increasing"
            );
            previous = Some(*id);
        }
        let got: Vec<String> = ids[skip..].iter().map(ToString::to_string).collect();
        let want: Vec<&str> = expect.iter().map(|v| v.as_str().expect("id")).collect();
        assert_eq!(got, want, "{name} step {i} ({path:?})");
        for id in &ids[skip..] {
            let reference = uuid::Uuid::from_bytes(*id.as_bytes());
            assert_eq!(reference.get_version_num(), 7);
        }
    }
}

fn run_generate(case: &Value) {
    for path in [
        Path::OwnedOneByOne,
        Path::OwnedFill,
        Path::SharedOneByOne,
        Path::SharedFillBytes,
    ] {
        run_generate_on(case, path);
    }
}

#[test]
fn every_vector_passes() {
    let vectors = common::vectors("uuid7.json");
    let cases = vectors["cases"].as_array().expect("cases");
    let mut names = std::collections::HashSet::new();
    for case in cases {
        let name = str_field(case, "name");
        assert!(names.insert(name), "duplicate case name {name}");
        match str_field(case, "op") {
            "from_fields" => run_from_fields(case),
            "parse" => run_parse(case),
            "parse_uuid" => run_parse_uuid(case),
            "from_bytes" => run_from_bytes(case),
            "new_v8" => run_new_v8(case),
            "generate" => run_generate(case),
            other => panic!("{name}: unknown op {other}"),
        }
    }
    assert!(cases.len() >= 60, "only {} cases", cases.len());
}
