//! Runs `mintid grant` and `mintid request-id` and checks them against the core.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use mintid::request_id::{Freshness, SecretKey};
use mintid::{Grant, KeyRing, RequestId, Uuid7};
use serde_json::Value;

/// The secret of the spec's example: bytes 0 to 31.
const SECRET_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const RFC_UUID: &str = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn mintid(args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_mintid"))
        .args(args)
        .output()
        .expect("the binary runs");
    Run {
        status: output.status.code().expect("the binary exits, not killed"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// The one line a successful run prints.
fn line(args: &[&str]) -> String {
    let run = mintid(args);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""), "{args:?}");
    assert_eq!(run.stdout.lines().count(), 1, "{args:?}");
    run.stdout.trim_end().to_owned()
}

fn json(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let run = mintid(&args);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""), "{args:?}");
    serde_json::from_str(&run.stdout).expect("--json output is JSON")
}

fn fails(args: &[&str], exit: i32, code: &str) {
    let run = mintid(args);
    assert_eq!(run.status, exit, "{args:?}: {}", run.stderr);
    assert_eq!(run.stdout, "", "{args:?}");
    assert!(
        run.stderr.starts_with(&format!("mintid: {code}: ")),
        "{args:?}: {:?}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}");
}

fn now_millis() -> u64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(elapsed.as_millis()).unwrap()
}

/// A key file in a fresh directory; returns its path.
/// A key file of its own: tests run in parallel, and one rewriting a shared file
/// would let another read it half-written.
fn key_file(name: &str, contents: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mintid-cli-keys-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The core's ring for the example secret under key id 1.
fn example_ring() -> KeyRing {
    let secret: Vec<u8> = (0..32).collect();
    KeyRing::new(SecretKey::new(1, &secret).unwrap())
}

fn example_keys() -> String {
    key_file(
        "example.keys",
        &format!("# the spec's example secret\n1 {SECRET_HEX}\n"),
    )
}

/// A request ID of the RFC example UUID from a core grant for `scope`.
fn core_request_id(scope: &str, expires: u64) -> String {
    let grant = example_ring().issue_grant(scope, expires).unwrap();
    grant.mint(&Uuid7::parse(RFC_UUID).unwrap()).to_text()
}

#[test]
fn grant_issue_matches_the_core() {
    let keys = example_keys();
    let before = now_millis();
    let report = json(&[
        "grant",
        "issue",
        "--secret-file",
        &keys,
        "--key-id",
        "1",
        "--scope",
        "user:42",
        "--ttl",
        "15m",
    ]);
    let after = now_millis();
    let expires = report["expires_ms"].as_u64().unwrap();
    assert!((before + 900_000..=after + 900_000).contains(&expires));
    assert_eq!(report["key_id"], 1);
    assert_eq!(report["scope"], "user:42");
    // The grant is a function of secret, key id, scope and expiry.
    let expected = example_ring().issue_grant("user:42", expires).unwrap();
    assert_eq!(report["grant"], expected.to_text().as_str());
    let text = line(&[
        "grant",
        "issue",
        "--secret-file",
        &keys,
        "--scope",
        "user:42",
        "--ttl",
        "1h",
    ]);
    let grant = Grant::parse(&text).unwrap();
    assert_eq!(grant.key_id(), 1);
}

#[test]
fn minted_ids_verify_in_the_core_for_their_scope_only() {
    let keys = example_keys();
    let grant = line(&[
        "grant",
        "issue",
        "--secret-file",
        &keys,
        "--scope",
        "user:42",
        "--ttl",
        "1h",
    ]);
    let run = mintid(&["request-id", "mint", "--grant", &grant, "-n", "20"]);
    assert_eq!(run.status, 0);
    let ring = example_ring();
    let now = now_millis();
    let mut uuids = Vec::new();
    for id in run.stdout.lines() {
        assert_eq!(id.len(), 58);
        let uuid = ring
            .verify(id, "user:42", now, &Freshness::DEFAULT)
            .unwrap();
        assert_eq!(
            ring.verify(id, "user:43", now, &Freshness::DEFAULT)
                .unwrap_err()
                .code(),
            "request_id.bad_tag"
        );
        uuids.push(uuid);
    }
    assert_eq!(uuids.len(), 20);
    assert!(uuids.windows(2).all(|pair| pair[0] < pair[1]));
}

#[test]
fn verify_a_core_minted_id() {
    let keys = example_keys();
    let id = core_request_id("user:42", now_millis() + 3_600_000);
    let args = [
        "request-id",
        "verify",
        "--secret-file",
        &keys,
        "--scope",
        "user:42",
        "--max-age",
        "100000d",
        &id,
    ];
    assert_eq!(line(&args), RFC_UUID);
    let report = json(&args);
    assert_eq!(report["valid"], true);
    assert_eq!(report["signed"], true);
    assert_eq!(report["uuid"], RFC_UUID);
    assert_eq!(report["key_id"], 1);
    let parsed = RequestId::parse(&id).unwrap();
    let inspected = json(&["inspect", &id]);
    assert_eq!(inspected["kind"], "request_id");
    assert_eq!(inspected["verified"], false);
    assert_eq!(inspected["uuid"], RFC_UUID);
    assert_eq!(inspected["grant_expires_ms"], parsed.expires_millis());
}

#[test]
fn a_round_trip_through_the_command_alone() {
    let secret = line(&["grant", "secret", "--key-id", "9"]);
    let (id, hex) = secret.split_once(' ').unwrap();
    assert_eq!(id, "9");
    assert_eq!(hex.len(), 64);
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let report = json(&["grant", "secret"]);
    assert_eq!(report["key_id"], 1);
    let hex = report["secret"].as_str().unwrap();
    assert_eq!(report["line"], format!("1 {hex}").as_str());
    let keys = key_file("generated.keys", &format!("{secret}\n"));
    let grant = line(&[
        "grant",
        "issue",
        "--secret-file",
        &keys,
        "--scope",
        "s",
        "--ttl",
        "60s",
    ]);
    let inspected = json(&["inspect", &grant]);
    assert_eq!(inspected["kind"], "grant");
    assert_eq!(inspected["key_id"], 9);
    let id = line(&["request-id", "mint", "--grant", &grant]);
    let uuid = line(&[
        "request-id",
        "verify",
        "--secret-file",
        &keys,
        "--scope",
        "s",
        &id,
    ]);
    assert_eq!(Uuid7::parse(&uuid).unwrap().to_string(), uuid);
}

#[test]
fn unsigned_request_ids() {
    let fresh = line(&["uuid7"]);
    assert_eq!(line(&["request-id", "verify", "--unsigned", &fresh]), fresh);
    let report = json(&["request-id", "verify", "--unsigned", &fresh]);
    assert_eq!(report["signed"], false);
    fails(
        &["request-id", "verify", "--unsigned", RFC_UUID],
        1,
        "request_id.too_old",
    );
    let ahead = Uuid7::from_fields(now_millis() + 3_600_000, 0, 0)
        .unwrap()
        .to_string();
    fails(
        &["request-id", "verify", "--unsigned", &ahead],
        1,
        "request_id.in_future",
    );
    assert_eq!(
        line(&[
            "request-id",
            "verify",
            "--unsigned",
            "--max-skew",
            "2h",
            &ahead
        ]),
        ahead
    );
    fails(
        &[
            "request-id",
            "verify",
            "--unsigned",
            "f81d4fae-7dec-41d0-a765-00a0c91e6bf6",
        ],
        1,
        "request_id.malformed",
    );
}

#[test]
fn every_verification_failure_has_its_code() {
    let keys = example_keys();
    let other_keys = key_file("other.keys", &format!("2 {SECRET_HEX}\n"));
    let later = now_millis() + 3_600_000;
    let id = core_request_id("user:42", later);
    let expired = core_request_id("user:42", now_millis() - 1);
    let mut tampered = id.clone().into_bytes();
    tampered[50] = if tampered[50] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let grant = example_ring()
        .issue_grant("user:42", later)
        .unwrap()
        .to_text();
    let long_scope = "s".repeat(65);
    let verify = |keys: &str, scope: &str, id: &str, code: &str| {
        fails(
            &[
                "request-id",
                "verify",
                "--secret-file",
                keys,
                "--scope",
                scope,
                "--max-age",
                "100000d",
                id,
            ],
            1,
            code,
        );
    };
    verify(&keys, "user:43", &id, "request_id.bad_tag");
    verify(&keys, "user:42", &tampered, "request_id.bad_tag");
    verify(&other_keys, "user:42", &id, "request_id.unknown_key");
    verify(&keys, "user:42", &expired, "request_id.grant_expired");
    verify(&keys, "user:42", "too-short", "request_id.malformed");
    verify(&keys, "user:42", &grant, "request_id.unsupported_version");
    verify(&keys, &long_scope, &id, "request_id.invalid_scope");
    fails(
        &[
            "request-id",
            "verify",
            "--secret-file",
            &keys,
            "--scope",
            "user:42",
            &id,
        ],
        1,
        "request_id.too_old",
    );
}

#[test]
fn grant_and_key_file_errors() {
    let keys = example_keys();
    let weak = key_file("weak.keys", "1 00010203\n");
    let malformed = key_file("malformed.keys", "one two\n");
    let empty = key_file("empty.keys", "# nothing yet\n");
    let twice = key_file("twice.keys", &format!("1 {SECRET_HEX}\n1 {SECRET_HEX}\n"));
    let issue = |file: &str, extra: &[&str], exit: i32, code: &str| {
        let mut args = vec!["grant", "issue", "--secret-file", file, "--scope", "s"];
        args.extend_from_slice(extra);
        if !extra.contains(&"--ttl") {
            args.extend_from_slice(&["--ttl", "1h"]);
        }
        fails(&args, exit, code);
    };
    issue(&weak, &[], 1, "request_id.weak_secret");
    issue(&malformed, &[], 1, "key_file.invalid");
    issue(&empty, &[], 1, "key_file.invalid");
    issue(&twice, &[], 1, "request_id.duplicate_key_id");
    issue(&keys, &["--key-id", "2"], 1, "key_file.invalid");
    issue("/nonexistent/mintid.keys", &[], 1, "input.unreadable");
    issue(
        &keys,
        &["--ttl", "100000000d"],
        1,
        "request_id.expiry_out_of_range",
    );
    issue(&keys, &["--ttl", "soon"], 2, "usage");
    issue(&keys, &["--ttl", "0s"], 2, "usage");
    issue(&keys, &["--ttl", "0ms"], 2, "usage");
    issue(&keys, &["--ttl", "15"], 2, "usage");
    issue(&keys, &["--key-id", "-3"], 2, "usage");
    fails(
        &[
            "grant",
            "issue",
            "--secret-file",
            &keys,
            "--scope",
            "",
            "--ttl",
            "1h",
        ],
        1,
        "request_id.invalid_scope",
    );
    // A grant's scope scopes the keys of its requests: no longer than a key's scope.
    let long_scope = "s".repeat(65);
    fails(
        &[
            "grant",
            "issue",
            "--secret-file",
            &keys,
            "--scope",
            &long_scope,
            "--ttl",
            "1h",
        ],
        1,
        "request_id.invalid_scope",
    );
    fails(
        &["grant", "issue", "--scope", "s", "--ttl", "1h"],
        2,
        "usage",
    );
    fails(&["grant", "secret", "--key-id", "4294967296"], 2, "usage");
    fails(
        &["request-id", "mint", "--grant", "nope"],
        1,
        "request_id.malformed_grant",
    );
    let id = core_request_id("s", now_millis() + 60_000);
    fails(
        &["request-id", "mint", "--grant", &id],
        1,
        "request_id.malformed_grant",
    );
    fails(&["request-id", "mint"], 2, "usage");
    fails(&["request-id", "verify", "--scope", "s", &id], 2, "usage");
    fails(
        &["request-id", "verify", "--secret-file", &keys, &id],
        2,
        "usage",
    );
    fails(
        &[
            "request-id",
            "verify",
            "--unsigned",
            "--secret-file",
            &keys,
            &id,
        ],
        2,
        "usage",
    );
    fails(
        &[
            "request-id",
            "verify",
            "--unsigned",
            "--max-age",
            "1y",
            RFC_UUID,
        ],
        2,
        "usage",
    );
}
