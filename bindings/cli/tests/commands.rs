//! Runs the built `mintid` binary and checks its output against the core.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use mintid::fingerprint::{FieldSelection, canonicalize, fingerprint_bytes, fingerprint_json};
use mintid::uuid::TextForm;
use mintid::{IdempotencyKey, SnowflakeId, SnowflakeLayout, Uuid7};
use serde_json::Value;

/// What one run of the command gave.
struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn mintid_with_stdin(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mintid"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin)
        .expect("stdin takes the input");
    let output = child.wait_with_output().expect("the binary finishes");
    Run {
        status: output.status.code().expect("the binary exits, not killed"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

fn mintid(args: &[&str]) -> Run {
    mintid_with_stdin(args, b"")
}

/// Plain output of a run that must succeed silently on stderr.
fn text(args: &[&str]) -> String {
    let run = mintid(args);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""), "{args:?}");
    run.stdout
}

/// `--json` output of a run that must succeed.
fn json(args: &[&str]) -> Value {
    json_with_stdin(args, b"")
}

fn json_with_stdin(args: &[&str], stdin: &[u8]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let run = mintid_with_stdin(&args, stdin);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""), "{args:?}");
    serde_json::from_str(&run.stdout).expect("--json output is JSON")
}

/// A run that must fail with `exit` and one stderr line `mintid: <code>: …`.
fn fails(args: &[&str], exit: i32, code: &str) {
    fails_with_stdin(args, b"", exit, code);
}

fn fails_with_stdin(args: &[&str], stdin: &[u8], exit: i32, code: &str) {
    let run = mintid_with_stdin(args, stdin);
    assert_eq!(run.status, exit, "{args:?}: {}", run.stderr);
    assert_eq!(run.stdout, "", "{args:?}");
    let prefix = format!("mintid: {code}: ");
    assert!(
        run.stderr.starts_with(&prefix) && run.stderr.len() > prefix.len(),
        "{args:?}: {:?}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {:?}", run.stderr);
    assert!(run.stderr.ends_with('\n'));
}

fn now_millis() -> u64 {
    let elapsed = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(elapsed.as_millis()).unwrap()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| item.as_str().expect("a string").to_owned())
        .collect()
}

fn field<'a>(value: &'a Value, name: &str) -> &'a Value {
    value
        .get(name)
        .unwrap_or_else(|| panic!("no {name} in {value}"))
}

// Snowflake generation

#[test]
fn snowflakes_are_increasing_and_decode_to_the_worker() {
    let before = now_millis();
    let ids = strings(&json(&["snowflake", "-n", "1000", "--worker", "7"]));
    let after = now_millis();
    assert_eq!(ids.len(), 1000);
    let ids: Vec<SnowflakeId> = ids
        .iter()
        .map(|id| SnowflakeId::from_decimal(id).unwrap())
        .collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
    for id in ids {
        let parts = SnowflakeLayout::CLASSIC.decode(id).unwrap();
        assert_eq!(parts.worker, 7);
        // IDs may borrow no time ahead by default, but a full tick waits for
        // the next one: the times lie within the run, give or take a tick.
        assert!(
            (before..=after + 1).contains(&parts.unix_millis),
            "{parts:?}"
        );
    }
}

#[test]
fn snowflake_text_output_is_one_id_per_line() {
    let out = text(&[
        "snowflake",
        "-n",
        "5",
        "--layout",
        "js-safe",
        "--worker",
        "63",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5);
    for line in lines {
        let id = SnowflakeId::from_decimal(line).unwrap();
        assert!(id.get() < 1 << 53);
        assert_eq!(SnowflakeLayout::JS_SAFE.decode(id).unwrap().worker, 63);
    }
}

#[test]
fn snowflake_base32_with_a_datacenter() {
    let ids = strings(&json(&[
        "snowflake",
        "-n",
        "3",
        "--layout",
        "twitter",
        "--datacenter",
        "3",
        "--worker",
        "4",
        "--format",
        "base32",
    ]));
    for id in ids {
        assert_eq!(id.len(), 13);
        let parts = SnowflakeLayout::TWITTER
            .decode(SnowflakeId::from_base32(&id).unwrap())
            .unwrap();
        assert_eq!(
            SnowflakeLayout::TWITTER.split_worker_id(parts.worker),
            (3, 4)
        );
    }
}

#[test]
fn snowflake_with_custom_bits_epoch_and_tick() {
    let epoch = 1_700_000_000_000u64;
    let layout = SnowflakeLayout::new(40, 12, 11, epoch, 10)
        .unwrap()
        .with_datacenter_bits(4)
        .unwrap();
    let epoch_text = epoch.to_string();
    let ids = strings(&json(&[
        "snowflake",
        "-n",
        "50",
        "--bits",
        "40,4+8,11",
        "--epoch",
        &epoch_text,
        "--tick",
        "10",
        "--datacenter",
        "15",
        "--worker",
        "255",
    ]));
    for id in ids {
        let parts = layout
            .decode(SnowflakeId::from_decimal(&id).unwrap())
            .unwrap();
        assert_eq!(layout.split_worker_id(parts.worker), (15, 255));
        assert_eq!(parts.unix_millis % 10, 0);
    }
}

// UUIDv7 generation

#[test]
fn uuid7s_are_unique_increasing_version_7() {
    let ids = strings(&json(&["uuid7", "-n", "1000"]));
    assert_eq!(ids.len(), 1000);
    let ids: Vec<Uuid7> = ids.iter().map(|id| Uuid7::parse(id).unwrap()).collect();
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
    assert_eq!(ids[0].to_string().len(), 36);
}

#[test]
fn uuid7_in_every_format() {
    for (format, form) in [
        ("hyphenated", TextForm::Hyphenated),
        ("simple", TextForm::Simple),
        ("urn", TextForm::Urn),
        ("base32", TextForm::Base32),
    ] {
        let out = text(&["uuid7", "-n", "3", "--format", format]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        for line in lines {
            let id = Uuid7::parse(line).unwrap();
            assert_eq!(id.format(form).as_str(), line, "{format}");
        }
    }
}

// inspect

#[test]
fn inspect_the_rfc_9562_example_in_every_form() {
    for text in [
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017F22E279B07CC398C4DC0C0C07398F",
        "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "01FWHE4YDGFK1SHH6W1G60EECF",
    ] {
        let report = json(&["inspect", text]);
        assert_eq!(field(&report, "kind"), "uuid");
        assert_eq!(
            field(&report, "uuid"),
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
        );
        assert_eq!(field(&report, "base32"), "01FWHE4YDGFK1SHH6W1G60EECF");
        assert_eq!(field(&report, "version"), 7);
        assert_eq!(field(&report, "variant"), "rfc9562");
        assert_eq!(field(&report, "unix_ms"), 0x017F_22E2_79B0u64);
        assert_eq!(field(&report, "time"), "2022-02-22T19:22:22.000Z");
        assert_eq!(field(&report, "rand_a"), "0xcc3");
        assert_eq!(field(&report, "rand_b"), "0x18c4dc0c0c07398f");
        assert_eq!(field(&report, "counter"), 0xCC36);
    }
    let plain = text(&["inspect", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"]);
    assert!(
        plain.contains("time     2022-02-22T19:22:22.000Z\n"),
        "{plain}"
    );
}

#[test]
fn inspect_a_generated_uuid7_agrees_with_the_core() {
    let id = text(&["uuid7"]);
    let id = Uuid7::parse(id.trim_end()).unwrap();
    let report = json(&["inspect", &id.to_string()]);
    assert_eq!(field(&report, "unix_ms"), id.timestamp_millis());
    assert_eq!(field(&report, "counter"), id.counter());
    assert_eq!(
        field(&report, "rand_a"),
        format!("0x{:03x}", id.rand_a()).as_str()
    );
}

#[test]
fn inspect_other_uuid_versions() {
    let v4 = json(&["inspect", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6"]);
    assert_eq!(field(&v4, "version"), 4);
    assert!(
        field(&v4, "version_name")
            .as_str()
            .unwrap()
            .starts_with("random")
    );
    assert!(v4.get("unix_ms").is_none());
    let nil = json(&["inspect", "00000000-0000-0000-0000-000000000000"]);
    assert!(
        field(&nil, "version_name")
            .as_str()
            .unwrap()
            .contains("Nil")
    );
    assert_eq!(field(&nil, "variant"), "ncs");
    let v8 = json(&["inspect", "ffffffff-ffff-8fff-bfff-ffffffffffff"]);
    assert_eq!(field(&v8, "version"), 8);
    // Version 7 bits but the Microsoft variant: not a UUIDv7, no fields.
    let odd = json(&["inspect", "017f22e2-79b0-7cc3-d8c4-dc0c0c07398f"]);
    assert_eq!(field(&odd, "variant"), "microsoft");
    assert!(odd.get("unix_ms").is_none());
}

#[test]
fn inspect_a_composed_snowflake_in_both_forms() {
    let unix_millis = 1_796_000_000_123;
    let id = SnowflakeLayout::CLASSIC
        .compose(unix_millis, 7, 42)
        .unwrap();
    for text in [id.to_string(), id.to_base32()] {
        let report = json(&["inspect", &text]);
        assert_eq!(field(&report, "kind"), "snowflake");
        assert_eq!(field(&report, "id"), id.to_string().as_str());
        assert_eq!(field(&report, "base32"), id.to_base32().as_str());
        assert_eq!(field(&report, "unix_ms"), unix_millis);
        assert_eq!(field(&report, "time"), "2026-11-30T00:53:20.123Z");
        assert_eq!(field(&report, "worker"), 7);
        assert_eq!(field(&report, "sequence"), 42);
        assert_eq!(field(field(&report, "layout"), "name"), "classic");
    }
}

#[test]
fn inspect_a_twitter_id_splits_the_datacenter() {
    // A 2022 tweet: time, datacenter and worker computed by hand from the
    // 41 / 5 + 5 / 12 layout and Twitter's epoch.
    let report = json(&["inspect", "1541815603606036480", "--layout", "twitter"]);
    assert_eq!(field(&report, "time"), "2022-06-28T16:07:40.105Z");
    assert_eq!(field(&report, "datacenter"), 11);
    assert_eq!(field(&report, "worker"), 26);
    assert_eq!(field(&report, "worker_field"), 11 * 32 + 26);
    assert_eq!(field(&report, "sequence"), 0);
    assert!(report.get("note").is_none());
    // Read with the wrong epoch, the time lies decades ahead: the report says so.
    let wrong = json(&[
        "inspect",
        "1541815603606036480",
        "--layout",
        "datacenter-worker",
    ]);
    assert!(field(&wrong, "note").as_str().unwrap().contains("future"));
}

#[test]
fn inspect_with_custom_bits() {
    let layout = SnowflakeLayout::new(39, 16, 8, 1_000, 10).unwrap();
    let id = layout.compose_tick(12_345, 500, 9).unwrap();
    let report = json(&[
        "inspect",
        &id.to_string(),
        "--bits",
        "39,16,8",
        "--epoch",
        "1000",
        "--tick",
        "10",
    ]);
    assert_eq!(field(&report, "tick"), 12_345);
    assert_eq!(field(&report, "unix_ms"), 1_000 + 123_450);
    assert_eq!(field(&report, "worker"), 500);
    assert_eq!(field(&report, "sequence"), 9);
    assert!(field(field(&report, "layout"), "name").is_null());
}

// layout

#[test]
fn layout_reports_rate_and_lifetime() {
    let report = json(&["layout", "js-safe"]);
    let layout = SnowflakeLayout::JS_SAFE;
    assert_eq!(field(&report, "layout"), "js-safe");
    assert_eq!(field(&report, "bits"), "41,6,6");
    assert_eq!(field(&report, "js_safe"), true);
    assert_eq!(field(&report, "max_id"), "9007199254740991");
    assert_eq!(field(&report, "workers"), 64);
    assert_eq!(field(&report, "ids_per_tick"), 64);
    assert_eq!(field(&report, "ids_per_second"), 64_000.0);
    assert_eq!(field(&report, "expires"), "2094-09-07T15:47:35.552Z");
    assert_eq!(
        field(&report, "expires_ms"),
        layout.expires_at_unix_millis()
    );
    assert_eq!(field(&report, "lifetime_ms"), layout.lifetime_millis());
    let remaining = field(&report, "remaining_ms").as_u64().unwrap();
    assert!(remaining > 0 && remaining < layout.lifetime_millis());
    let plain = text(&["layout", "twitter"]);
    assert!(plain.contains("datacenters "), "{plain}");
    assert!(
        plain
            .lines()
            .any(|line| line.starts_with("expires ") && line.ends_with(" 2080-07-10T17:30:30.209Z")),
        "{plain}"
    );
}

#[test]
fn layout_of_custom_bits_and_an_expired_one() {
    // Baidu's 28-bit seconds from 2016-05-20 (Beijing time): ran out on 2024-11-20.
    let report = json(&[
        "layout",
        "--bits",
        "28,22,13",
        "--epoch",
        "1463673600000",
        "--tick",
        "1000",
    ]);
    let layout = SnowflakeLayout::new(28, 22, 13, 1_463_673_600_000, 1000).unwrap();
    assert_eq!(field(&report, "layout"), "custom");
    assert_eq!(
        field(&report, "expires_ms"),
        layout.expires_at_unix_millis()
    );
    assert_eq!(field(&report, "expires"), "2024-11-20T13:24:16.000Z");
    assert_eq!(field(&report, "remaining_ms"), 0);
    assert!(
        field(&report, "remaining")
            .as_str()
            .unwrap()
            .starts_with("none")
    );
}

#[test]
fn layout_without_a_name_lists_every_preset() {
    let list = json(&["layout"]);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|report| field(report, "layout").as_str().unwrap())
        .collect();
    let presets: Vec<&str> = SnowflakeLayout::PRESETS
        .iter()
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(names, presets);
    assert_eq!(text(&["layout"]).matches("expires ").count(), presets.len());
}

// key

#[test]
fn key_check_parse_and_build() {
    let key = IdempotencyKey::new("order.create", "tenant:7%", "a'b\"c").unwrap();
    let canonical = key.to_string();
    assert_eq!(
        text(&["key", "check", "order.create", "tenant:7%", "a'b\"c"]),
        format!("{canonical}\n")
    );
    let parsed = json(&["key", "parse", &canonical]);
    assert_eq!(field(&parsed, "scope"), "tenant:7%");
    assert_eq!(field(&parsed, "id"), "a'b\"c");
    assert_eq!(field(&parsed, "key"), canonical.as_str());
    let built = json(&[
        "key",
        "build",
        "order.create",
        "tenant-7",
        "user 1",
        "2023:10",
    ]);
    let expected =
        IdempotencyKey::from_fields("order.create", "tenant-7", &["user 1", "2023:10"]).unwrap();
    assert_eq!(field(&built, "id"), "user%201:2023%3A10");
    assert_eq!(field(&built, "key"), expected.to_string().as_str());
}

#[test]
fn key_header_quoted_and_bare() {
    assert_eq!(text(&["key", "header", "\"8e03-978e\""]), "8e03-978e\n");
    assert_eq!(text(&["key", "header", "  8e03-978e\t"]), "8e03-978e\n");
    assert_eq!(field(&json(&["key", "header", r#""a\"b""#]), "id"), "a\"b");
}

#[test]
fn key_derive_from_stdin_and_file() {
    let payload = br#"{"amount": 100, "sent_at": 5}"#;
    let selection = FieldSelection::all().exclude("/sent_at").unwrap();
    let fingerprint = fingerprint_json(payload, &selection).unwrap();
    let expected = IdempotencyKey::derived("payment.create", "user-1", &fingerprint).unwrap();
    let report = json_with_stdin(
        &[
            "key",
            "derive",
            "payment.create",
            "user-1",
            "--exclude",
            "/sent_at",
        ],
        payload,
    );
    assert_eq!(field(&report, "key"), expected.to_string().as_str());
    assert_eq!(
        field(&report, "fingerprint"),
        fingerprint.to_string().as_str()
    );
    let derived_id = field(&report, "id").as_str().unwrap();
    assert_eq!(field(&json(&["inspect", derived_id]), "version"), 8);

    let file = temp_file("derive.json", payload);
    let from_file = text(&[
        "key",
        "derive",
        "payment.create",
        "user-1",
        file.as_str(),
        "--exclude",
        "/sent_at",
    ]);
    assert_eq!(from_file, format!("{expected}\n"));
}

// fingerprint

/// A file in a directory of its own: tests run in parallel and must not rewrite
/// a file another one is reading.
fn temp_file(name: &str, contents: &[u8]) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mintid-cli-test-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn fingerprint_of_json_bytes_and_canonical_form() {
    let payload = br#"{ "b": [1.50, 2.0], "a": 1 }"#;
    // SHA-256 of {"a":1,"b":[1.5,2]}, computed with Python's hashlib.
    let expected = "sha256:S-YjshGXLN14_btiQf3mVSmmBl_tP8JQ96LO6fnqcOc";
    assert_eq!(
        fingerprint_json(payload, &FieldSelection::all())
            .unwrap()
            .to_string(),
        expected
    );
    let file = temp_file("payload.json", payload);
    assert_eq!(
        text(&["fingerprint", file.as_str()]),
        format!("{expected}\n")
    );
    let run = mintid_with_stdin(&["fingerprint", "-"], payload);
    assert_eq!(run.stdout, format!("{expected}\n"));
    let run = mintid_with_stdin(&["fingerprint", "--canonical"], payload);
    assert_eq!(run.stdout, format!("{}\n", canonicalize(payload).unwrap()));
    assert_eq!(run.stdout, "{\"a\":1,\"b\":[1.5,2]}\n");
    let both = json_with_stdin(&["fingerprint", "--canonical"], payload);
    assert_eq!(field(&both, "fingerprint"), expected);
    assert_eq!(field(&both, "canonical"), "{\"a\":1,\"b\":[1.5,2]}");
    assert_eq!(field(&both, "input"), "json");
}

#[test]
fn fingerprint_selection_and_raw_bytes() {
    let payload = br#"{"a":1,"b":{"c":2,"d":3}}"#;
    let selection = FieldSelection::new(&["/b"], &["/b/d"]).unwrap();
    let expected = fingerprint_json(payload, &selection).unwrap().to_string();
    let run = mintid_with_stdin(
        &["fingerprint", "--include", "/b", "--exclude", "/b/d"],
        payload,
    );
    assert_eq!(run.stdout, format!("{expected}\n"));
    let run = mintid_with_stdin(
        &[
            "fingerprint",
            "--include",
            "/b",
            "--exclude",
            "/b/d",
            "--canonical",
        ],
        payload,
    );
    // An include list selects an object keyed by the pointers' texts.
    assert_eq!(run.stdout, "{\"/b\":{\"c\":2}}\n");
    // SHA-256 of a zero byte and "hello", computed with Python's hashlib.
    let raw = json_with_stdin(&["fingerprint", "--bytes"], b"hello");
    assert_eq!(
        field(&raw, "fingerprint"),
        "sha256:iipcm3aIJ95alVLDigRMZpWcaPbS8htSYK9U0vh9uCc"
    );
    assert_eq!(
        field(&raw, "fingerprint"),
        fingerprint_bytes(b"hello").to_string().as_str()
    );
    assert_eq!(field(&raw, "input"), "bytes");
}

// errors

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frob"],
        &["key"],
        &["inspect"],
        &["inspect", "a", "b"],
        &["snowflake", "-n", "0"],
        &["snowflake", "--worker", "x"],
        &["snowflake", "--worker", "-1"],
        &["snowflake", "--datacenter", "1"],
        &["snowflake", "--bits", "41,10"],
        &["snowflake", "--bits", "41,x,12"],
        &["snowflake", "--layout", "classic", "--bits", "41,10,12"],
        &["snowflake", "--format", "hex"],
        &["uuid7", "--format", "base64"],
        &["uuid7", "-n", "many"],
        &[
            "inspect",
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
            "--layout",
            "classic",
        ],
        &["layout", "classic", "--bits", "41,10,12"],
        &["key", "build", "order.create", "tenant"],
        &["fingerprint", "--bytes", "--canonical"],
        &["fingerprint", "--bytes", "--exclude", "/a"],
    ] {
        fails(args, 2, "usage");
    }
}

#[test]
fn invalid_input_exits_1_with_the_core_code() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["snowflake", "--worker", "1024"],
            "snowflake.worker_out_of_range",
        ),
        (
            &["snowflake", "--layout", "twitter", "--datacenter", "32"],
            "snowflake.worker_out_of_range",
        ),
        (
            &["snowflake", "--layout", "nope"],
            "snowflake.unknown_preset",
        ),
        (
            &["snowflake", "--bits", "41,11,12"],
            "snowflake.invalid_layout",
        ),
        (&["snowflake", "--tick", "0"], "snowflake.invalid_layout"),
        (
            &["snowflake", "--epoch", "99999999999999"],
            "snowflake.epoch_in_future",
        ),
        (
            &["snowflake", "--bits", "10,1,1", "--epoch", "0"],
            "snowflake.time_exhausted",
        ),
        (&["layout", "nope"], "snowflake.unknown_preset"),
        (&["inspect", "abc"], "inspect.unrecognized"),
        (&["inspect", ""], "inspect.unrecognized"),
        (
            &["inspect", "9223372036854775808"],
            "snowflake.id_out_of_range",
        ),
        (
            &["inspect", "99999999999999999999999"],
            "snowflake.id_out_of_range",
        ),
        (
            &["inspect", "9007199254740992", "--layout", "js-safe"],
            "snowflake.id_out_of_range",
        ),
        (&["inspect", "U000000000000"], "snowflake.invalid_text"),
        (
            &["inspect", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g"],
            "uuid.invalid_character",
        ),
        (
            &["inspect", "Z1FWHE4YDGFK1SHH6W1G60EECF"],
            "uuid.base32_overflow",
        ),
        (
            &["key", "check", "Order", "s", "i"],
            "key.invalid_character",
        ),
        (&["key", "check", "order", "", "i"], "key.empty"),
        (
            &["key", "check", "order", "s", &"x".repeat(65)],
            "key.too_long",
        ),
        (&["key", "parse", "no-colons"], "key.invalid_text"),
        (&["key", "header", "\"open"], "key.invalid_header"),
        (&["key", "build", "order", "s", "a", ""], "key.empty"),
        (&["fingerprint", "/nonexistent/mintid"], "input.unreadable"),
        (
            &["fingerprint", "--exclude", "no-slash"],
            "fingerprint.invalid_pointer",
        ),
    ];
    for (args, code) in cases {
        fails(args, 1, code);
    }
    fails_with_stdin(
        &["fingerprint"],
        br#"{"a":1,"a":2}"#,
        1,
        "fingerprint.duplicate_member",
    );
    fails_with_stdin(
        &["fingerprint"],
        b"{\"a\":9007199254740993}",
        1,
        "fingerprint.number_out_of_range",
    );
    fails_with_stdin(
        &["key", "derive", "order", "s"],
        b"{",
        1,
        "fingerprint.invalid_json",
    );
}

#[test]
fn help_and_version_go_to_stdout() {
    let help = text(&["--help"]);
    for command in [
        "snowflake",
        "uuid7",
        "inspect",
        "layout",
        "key",
        "fingerprint",
    ] {
        assert!(help.contains(command), "{help}");
    }
    assert!(text(&["--version"]).starts_with("mintid "));
    assert!(text(&["key", "--help"]).contains("derive"));
    // The command says what it is for, before its usage, in -h and --help alike.
    for flag in ["-h", "--help"] {
        let help = text(&[flag]);
        let about = help.lines().next().unwrap_or_default();
        assert!(
            about.starts_with("Generate, inspect and verify IDs"),
            "{help}"
        );
        assert!(help.find("Usage:") > help.find("Generate"), "{help}");
    }
}

#[test]
fn a_dialect_without_its_option_is_hinted() {
    for args in [
        &["schema", "queries", "sqlite"][..],
        &["schema", "migrations", "postgres"],
    ] {
        fails(args, 2, "usage");
        let dialect = args[2];
        let run = mintid(args);
        assert!(
            run.stderr
                .contains(&format!("did you mean --dialect {dialect}?")),
            "{args:?}: {}",
            run.stderr
        );
    }
    // Any other stray value gets no such hint.
    let run = mintid(&["schema", "queries", "oracle"]);
    assert_eq!(run.status, 2);
    assert!(!run.stderr.contains("did you mean"), "{}", run.stderr);
}

// a reader that stops early

#[test]
fn a_closed_pipe_stops_quietly() {
    for args in [
        &["uuid7", "-n", "1000000"][..],
        &["snowflake", "-n", "1000000", "--json"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mintid"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        // The reader is dropped here: the pipe closes with most IDs unwritten.
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
    }
}
