//! Idempotency rules: payload fingerprints beside `serde_json`, and key
//! parsing, measured in the same run.
//!
//! Groups (criterion reports time per call):
//! * `fingerprint/order_1kb`: a realistic order body (`data/order-1kb.json`,
//!   1.1 KB as sent, pretty-printed): mintid's fingerprint, its canonical
//!   form alone, SHA-256 of the raw bytes, and `serde_json` parsing and
//!   re-serialising the same body for context.
//! * `key`: building and parsing idempotency keys and header values.
//! * `request_id`: minting and verifying signed request IDs, and verifying
//!   an unsigned one (no peer offers these).
//! * `record`: one `record::decide` call per kind of decision.
//! * `store_driver`: the record driver's own share of one request (no
//!   database: the answers are given): a fresh key's claim and completion,
//!   and a replay's claim and load, on each dialect's statements.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mintid::fingerprint::{self, FieldSelection, Fingerprint};
use mintid::record::{self, Incoming, Record, RecordPolicy, Status};
use mintid::request_id::{self, Freshness, KeyRing, RequestId, SecretKey};
use mintid::{IdempotencyKey, Uuid7, key};
use mintid_bench::quick;

/// The body every fingerprint benchmark hashes.
const ORDER: &[u8] = include_bytes!("../data/order-1kb.json");

fn fingerprint_order(c: &mut Criterion) {
    let mut group = c.benchmark_group("fingerprint/order_1kb");
    group.throughput(Throughput::Bytes(ORDER.len() as u64));
    let all = FieldSelection::all();
    group.bench_function("mintid fingerprint_json", |b| {
        b.iter(|| black_box(fingerprint::fingerprint_json(black_box(ORDER), &all)))
    });
    let volatile_excluded = FieldSelection::all()
        .exclude("/sent_at")
        .and_then(|selection| selection.exclude("/trace_id"))
        .expect("valid JSON pointers");
    group.bench_function("mintid fingerprint_json, 2 fields excluded", |b| {
        b.iter(|| {
            black_box(fingerprint::fingerprint_json(
                black_box(ORDER),
                &volatile_excluded,
            ))
        })
    });
    group.bench_function("mintid canonicalize", |b| {
        b.iter(|| black_box(fingerprint::canonicalize(black_box(ORDER))))
    });
    group.bench_function("mintid fingerprint_bytes (SHA-256 only)", |b| {
        b.iter(|| black_box(fingerprint::fingerprint_bytes(black_box(ORDER))))
    });
    group.bench_function("serde_json from_slice + to_vec", |b| {
        b.iter(|| {
            let value: serde_json::Value =
                serde_json::from_slice(black_box(ORDER)).expect("valid JSON");
            black_box(serde_json::to_vec(&value).expect("serialisable"))
        })
    });
    group.finish();
}

fn keys(c: &mut Criterion) {
    let mut group = c.benchmark_group("key");
    group.bench_function("IdempotencyKey::new", |b| {
        b.iter(|| {
            black_box(IdempotencyKey::new(
                black_box("order.create"),
                black_box("tenant-7:user-123"),
                black_box("0190a6f4-3b1e-7c2d-9e4f-5a6b7c8d9e0f"),
            ))
        })
    });
    group.bench_function("key::parse_header, bare", |b| {
        b.iter(|| {
            black_box(key::parse_header(black_box(
                b"0190a6f4-3b1e-7c2d-9e4f-5a6b7c8d9e0f",
            )))
        })
    });
    group.bench_function("key::parse_header, structured-field string", |b| {
        b.iter(|| {
            black_box(key::parse_header(black_box(
                b"\"0190a6f4-3b1e-7c2d-9e4f-5a6b7c8d9e0f\"",
            )))
        })
    });
    group.bench_function("IdempotencyKey::from_header", |b| {
        b.iter(|| {
            black_box(IdempotencyKey::from_header(
                black_box("order.create"),
                black_box("tenant-7:user-123"),
                black_box(b"\"0190a6f4-3b1e-7c2d-9e4f-5a6b7c8d9e0f\""),
            ))
        })
    });
    let text = b"order.create:tenant-7%3Auser-123:0190a6f4-3b1e-7c2d-9e4f-5a6b7c8d9e0f";
    group.bench_function("IdempotencyKey::parse (canonical text)", |b| {
        b.iter(|| black_box(IdempotencyKey::parse(black_box(text))))
    });
    group.bench_function("IdempotencyKey::from_fields", |b| {
        b.iter(|| {
            black_box(IdempotencyKey::from_fields(
                black_box("order.create"),
                black_box("tenant-7"),
                black_box(&["user", "123", "20231001_001"]),
            ))
        })
    });
    let fingerprint: Fingerprint = fingerprint::fingerprint_bytes(ORDER);
    group.bench_function("IdempotencyKey::derived", |b| {
        b.iter(|| {
            black_box(IdempotencyKey::derived(
                black_box("order.create"),
                black_box("tenant-7"),
                black_box(&fingerprint),
            ))
        })
    });
    group.finish();
}

/// The server's clock in the request ID and record benchmarks (Unix ms).
const NOW: u64 = 1_750_000_000_000;

fn request_ids(c: &mut Criterion) {
    let mut group = c.benchmark_group("request_id");
    let ring = KeyRing::new(SecretKey::new(7, &[0x5A; 32]).expect("a 32-byte secret"));
    let scope = "user-123";
    let grant = ring
        .issue_grant(scope, NOW + 3_600_000)
        .expect("a grant for an hour");
    let uuid = Uuid7::from_fields(NOW - 1_000, 0x0C3, 0x18C4_DC0C_0C07_398F).expect("a UUIDv7");
    let text = grant.mint(&uuid).to_text();
    let freshness = Freshness::DEFAULT;
    assert_eq!(ring.verify(&text, scope, NOW, &freshness), Ok(uuid));
    group.bench_function("KeyRing::verify (signed, text)", |b| {
        b.iter(|| black_box(ring.verify(black_box(&text), scope, NOW, &freshness)))
    });
    group.bench_function("RequestId::parse", |b| {
        b.iter(|| black_box(RequestId::parse(black_box(&text))))
    });
    group.bench_function("Grant::mint + to_text", |b| {
        b.iter(|| black_box(grant.mint(black_box(&uuid)).to_text()))
    });
    let unsigned = uuid.to_string();
    group.bench_function("verify_unsigned", |b| {
        b.iter(|| {
            black_box(request_id::verify_unsigned(
                black_box(&unsigned),
                NOW,
                &freshness,
            ))
        })
    });
    group.finish();
}

fn decisions(c: &mut Criterion) {
    let mut group = c.benchmark_group("record/decide");
    let policy = RecordPolicy::DEFAULT;
    let fingerprint = fingerprint::fingerprint_bytes(ORDER);
    let incoming = Incoming::new(fingerprint).with_key_created_millis(NOW - 1_000);
    let stored = |status: Status| Record {
        status,
        fingerprint,
        token: 1,
        lease_deadline_millis: NOW + 10_000,
        created_millis: NOW - 1_000,
        expires_millis: NOW + 86_400_000,
    };
    let cases = [
        ("no record: execute", None),
        (
            "pending, leased: in progress",
            Some(stored(Status::Pending)),
        ),
        ("succeeded: replay", Some(stored(Status::Succeeded))),
        (
            "retryable failure: reclaim",
            Some(stored(Status::FailedRetryable)),
        ),
    ];
    for (name, existing) in cases {
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(record::decide(
                    black_box(existing.as_ref()),
                    black_box(&incoming),
                    NOW,
                    &policy,
                ))
            })
        });
    }
    let other = Incoming::new(fingerprint::fingerprint_bytes(b"other"));
    let succeeded = stored(Status::Succeeded);
    group.bench_function("other payload: mismatch", |b| {
        b.iter(|| {
            black_box(record::decide(
                black_box(Some(&succeeded)),
                black_box(&other),
                NOW,
                &policy,
            ))
        })
    });
    group.finish();
}

fn store_driver(c: &mut Criterion) {
    use mintid::store::{
        Answer, Dialect, Manifest, OperationOutcome, Placeholder, RecordDriver, StoredResponse,
        Value, Way,
    };
    let mut group = c.benchmark_group("store_driver");
    let key = IdempotencyKey::new("order.create", "tenant-1", "order-1001").expect("a valid key");
    let policy = RecordPolicy::new(30_000, 86_400_000).expect("a valid policy");
    let incoming = Incoming::new(Fingerprint::from_digest([7; 32]));
    let response = StoredResponse {
        content_type: "application/json".into(),
        body: br#"{"order":1001,"state":"created"}"#.to_vec(),
    };
    let stored = vec![
        Value::Text("succeeded".into()),
        Value::Bytes(vec![7; 32]),
        Value::Int(1),
        Value::Int(31_000),
        Value::Int(1_000),
        Value::Int(1_500),
        Value::Int(86_401_000),
        Value::Bytes(response.body.clone()),
        Value::Text(response.content_type.clone()),
        Value::Null,
    ];
    for (dialect, placeholder, inserted, duplicate) in [
        (
            Dialect::Postgres,
            Placeholder::Format,
            Answer::Rows(vec![vec![Value::Int(1)]]),
            Answer::Rows(vec![]),
        ),
        (
            Dialect::Mysql,
            Placeholder::Question,
            Answer::Affected(1),
            Answer::Affected(0),
        ),
        (
            Dialect::Sqlite,
            Placeholder::Question,
            Answer::Rows(vec![vec![Value::Int(1)]]),
            Answer::Rows(vec![]),
        ),
    ] {
        let manifest = Manifest::new(dialect, placeholder);
        let name = dialect.as_str();
        group.bench_function(
            format!("{name}: fresh key (start, push, finish, push)"),
            |b| {
                b.iter(|| {
                    let mut driver =
                        RecordDriver::new(manifest, policy, Way::RunOnce, &key, incoming);
                    black_box(driver.start(1_000));
                    black_box(driver.push(inserted.clone(), 1_000));
                    black_box(driver.finish(OperationOutcome::Succeeded(response.clone()), 1_500));
                    black_box(driver.push(Answer::Affected(1), 1_500))
                })
            },
        );
        group.bench_function(format!("{name}: replay (start, push, push)"), |b| {
            b.iter(|| {
                let mut driver = RecordDriver::new(manifest, policy, Way::RunOnce, &key, incoming);
                black_box(driver.start(2_000));
                black_box(driver.push(duplicate.clone(), 2_000));
                black_box(driver.push(Answer::Rows(vec![stored.clone()]), 2_000))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = quick();
    targets = fingerprint_order, keys, request_ids, decisions, store_driver
}
criterion_main!(benches);
