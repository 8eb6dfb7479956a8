//! One sample error of every code the core makes, each with the values its
//! message names: an error's `Display` must be its registry template filled
//! with them, so the templates and the messages cannot drift apart.

extern crate std;

use std::format;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use super::{ERROR_CODES, error_code};
use crate::fingerprint::{self, FieldSelection, Fingerprint, JsonPointer};
use crate::http::{self, HttpError};
use crate::inbox::{InboxPolicy, check_message};
use crate::key::{IdempotencyKey, KeyError, KeyPart, parse_header};
use crate::lease::LeaseError;
use crate::outbox::OutboxError;
use crate::record::{Fence, RecordError, Status};
use crate::request_id::{Grant, KeyRing, RequestId, RequestIdError, SecretKey};
use crate::segment::SegmentError;
use crate::snowflake::{Detail, SnowflakeError, SnowflakeLayout, TextProblem};
use crate::store::{DbError, DbErrorClass, StoreError, StoreErrorKind, database_failure};
use crate::uuid::{Uuid, Variant};
use crate::uuid7::{Uuid7, Uuid7Error};
use crate::{RollbackPolicy, base32::Base32Error};

/// A sample: its code, its message and the values its template names.
struct Sample {
    code: &'static str,
    message: String,
    fields: Vec<(&'static str, String)>,
}

/// A sample of `error`, whose message names `fields`.
macro_rules! sample {
    ($error:expr $(, $name:literal => $value:expr)* $(,)?) => {{
        let error = $error;
        Sample {
            code: error.code(),
            message: error.to_string(),
            fields: vec![$(($name, $value.to_string())),*],
        }
    }};
}

/// `template` with each `{name}` replaced by its value in `fields`; `None`
/// when a field the template names is missing or one of `fields` is unused.
fn fill(template: &str, fields: &[(&str, String)]) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}')? + open;
        let name = &rest[open + 1..close];
        let (_, value) = fields.iter().find(|(field, _)| *field == name)?;
        out.push_str(value);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    let named = fields
        .iter()
        .all(|(field, _)| template.contains(&format!("{{{field}}}")));
    named.then_some(out)
}

fn err<T, E>(result: Result<T, E>) -> E {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(error) => error,
    }
}

fn fingerprint_samples() -> Vec<Sample> {
    let all = FieldSelection::all();
    vec![
        sample!(err(fingerprint::canonicalize(br#"{"a":1,"a":2}"#)), "name" => "\"a\"", "position" => 7),
        sample!(err(fingerprint::canonicalize(b"[1,]")), "reason" => "expected a value, found \"]\"", "position" => 3),
        sample!(err(JsonPointer::parse("a")), "reason" => "must be empty or start with '/': \"a\""),
        sample!(err(Fingerprint::parse(b"md5:x")), "text" => "\"md5:x\""),
        sample!(err(fingerprint::canonicalize(b"\"\xff\"")), "position" => 1),
        sample!(err(fingerprint::canonicalize(br#""\ud800""#)), "unit" => "D800", "position" => 1),
        sample!(err(fingerprint::canonicalize(b"1e999")), "reason" => "number too large for a double:", "number" => "\"1e999\"", "position" => 0),
        sample!(err(fingerprint::fingerprint_value(br#""text""#, &all)), "text" => r#""\"text\"""#),
        sample!(err(fingerprint::canonicalize("[".repeat(200).as_bytes())), "max_depth" => 128, "position" => 128),
    ]
}

fn http_samples() -> Vec<Sample> {
    vec![
        sample!(err(http::decode_envelope("x", b"nope")), "reason" => "no blank line ends the head", "position" => 4),
        sample!(HttpError::invalid_header("bad name", "it is not a token"), "name" => "\"bad name\"", "excerpt" => "", "reason" => "it is not a token"),
        sample!(err(http::default_kind("GET POST", "/")), "method" => "\"GET POST\"", "excerpt" => ""),
        sample!(err(http::status_document(99, None)), "status" => 99, "reason" => "has no plain-status problem (only 401, 413 and 500)"),
        sample!(err(http::fingerprint_body(Some("application/json"), b"{")), "cause" => "invalid JSON: unexpected end of input at byte 1"),
        sample!(err(http::admit_key(
            http::AcceptedKeys {
                request_id_header: None,
                idempotency_key: false
            },
            http::KeyRequest {
                caller: false,
                request_id_sent: false,
                idempotency_key_sent: false
            }
        ))),
        sample!(err(http::admit_key(http::AcceptedKeys { request_id_header: None, idempotency_key: true }, http::KeyRequest { caller: true, request_id_sent: false, idempotency_key_sent: false })), "expected" => "the header Idempotency-Key", "ignored" => ""),
        sample!(err(http::check_body_read(http::BodyRead { declared_length: Some(14), transfer_coded: false, ended_before_read: true, read: 0 }, "mount it first")), "declared" => "14 bytes", "read" => 0, "fix" => "mount it first"),
    ]
}

fn key_samples() -> Vec<Sample> {
    vec![
        sample!(KeyError::empty(KeyPart::Scope), "part" => "the scope of an idempotency key"),
        sample!(err(IdempotencyKey::new("order.create", "a b", "1")), "character" => "character U+0020", "position" => 1, "part" => "scope", "allowed" => KeyPart::Scope.charset()),
        sample!(err(parse_header(b"\"abc")), "reason" => "unterminated string", "position" => 4),
        sample!(err(IdempotencyKey::parse(b"nope")), "reason" => "expected kind:scope:id, a ':' is missing at position 4"),
        sample!(KeyError::too_long(KeyPart::Scope, 65), "part" => "scope", "length" => 65, "limit" => KeyPart::Scope.max_len()),
    ]
}

fn lease_samples() -> Vec<Sample> {
    vec![
        sample!(LeaseError::acquire_timeout(10, None), "deadline_millis" => 10, "reason" => "all are held"),
        sample!(LeaseError::clock_behind(20, 10), "renewed_deadline_millis" => 10, "deadline_millis" => 20),
        sample!(LeaseError::expired(10, 20), "stop_at_millis" => 10, "at_millis" => 20),
        sample!(LeaseError::wrong_worker(3, 4), "reason" => "carries worker 3, but the lease is on worker id 4"),
        sample!(LeaseError::high_water_ahead(1, 50, 10, 30), "worker_id" => 1, "ready_at_millis" => 50, "wait_millis" => 40, "now_millis" => 10, "max_wait_millis" => 30),
        sample!(LeaseError::invalid_policy("lease_millis", "must be positive"), "field" => "lease_millis", "reason" => "must be positive"),
        sample!(LeaseError::lost(1, 7), "worker_id" => 1, "fencing_token" => 7),
        sample!(LeaseError::no_worker_free(1023), "max_worker" => 1023),
        sample!(LeaseError::not_ready(50, 10), "ready_at_millis" => 50, "now_millis" => 10),
        sample!(LeaseError::released(2), "worker_id" => 2),
        sample!(LeaseError::still_held(2, 50, 10), "worker_id" => 2, "lease_deadline_millis" => 50, "now_millis" => 10),
        sample!(LeaseError::time_overflow(u64::MAX, 1), "millis" => u64::MAX, "duration_millis" => 1),
        sample!(LeaseError::token_exhausted(2), "worker_id" => 2),
        sample!(LeaseError::worker_out_of_range(2000, 1023), "worker_id" => 2000, "max_worker" => 1023),
    ]
}

fn outbox_samples() -> Vec<Sample> {
    vec![
        sample!(OutboxError::claim_lost(5, 9), "claim_token" => 9, "message_id" => 5),
        sample!(OutboxError::invalid_message("topic", "is empty"), "field" => "topic", "reason" => "is empty"),
        sample!(OutboxError::invalid_policy("batch", "must be positive"), "field" => "batch", "reason" => "must be positive"),
        sample!(OutboxError::time_overflow(u64::MAX, 1), "millis" => u64::MAX, "duration_millis" => 1),
        sample!(OutboxError::unexpected_rows("mark_sent", 2), "statement" => "mark_sent", "rows" => 2),
        sample!(OutboxError::unknown_status("lost"), "status" => "\"lost\"", "excerpt" => ""),
    ]
}

fn receiving_samples() -> Vec<Sample> {
    use crate::transition::{Identifier, TransitionTable};
    use crate::webhook::{SignatureScheme, key_from_body, verify_signature};
    let table = TransitionTable::new(&["WAIT_PAY", "PAID"], &[("WAIT_PAY", "PAID")]).unwrap();
    let stripe = SignatureScheme::Timestamped {
        tolerance_millis: 300_000,
    };
    let github = SignatureScheme::Sha256Prefixed;
    let hex = "0".repeat(64);
    vec![
        sample!(err(check_message("a b", "m")), "field" => "consumer", "value" => "\"a b\"", "reason" => "must be 1 to 64 bytes of printable ASCII without spaces"),
        sample!(err(InboxPolicy::new(0, 0)), "field" => "retention_millis", "rule" => "at least 1", "value" => 0),
        sample!(err(InboxPolicy::new(1, 2)), "retention_millis" => 1, "redelivery_horizon_millis" => 2),
        sample!(err(Identifier::table("a;b")), "identifier" => "\"a;b\"", "reason" => "must be ASCII letters, digits and '_', not starting with a digit"),
        sample!(err(TransitionTable::new::<&str, &str>(&[], &[])), "reason" => "it declares no state"),
        sample!(err(table.check("PAID", "WAIT_PAY")), "from" => "\"PAID\"", "to" => "\"WAIT_PAY\""),
        sample!(err(table.check("NEW", "PAID")), "state" => "\"NEW\""),
        sample!(
            match crate::store::TransitionDriver::new(
                crate::store::Manifest::new(crate::store::Dialect::Sqlite, crate::store::Placeholder::Question),
                &table,
                crate::transition::TransitionTarget::new("orders", "id", "status").unwrap(),
                crate::store::Value::Null,
                "WAIT_PAY",
                "PAID",
            )
            .start()
            {
                crate::store::Step::Fail(error) => error,
                other => panic!("{other:?}"),
            },
            "table" => "orders", "id_column" => "id"
        ),
        sample!(err(key_from_body(b"{", "/id")), "reason" => "invalid JSON: unexpected end of input at byte 1"),
        sample!(err(key_from_body(b"{}", "id")), "reason" => "JSON Pointer must be empty or start with '/': \"id\""),
        sample!(err(verify_signature(github, b"", "x", b"", 0))),
        sample!(err(key_from_body(b"{}", "/id")), "pointer" => "\"/id\""),
        sample!(err(key_from_body(br#"{"id":null}"#, "/id")), "pointer" => "\"/id\"", "found" => "null"),
        sample!(err(key_from_body(format!(r#"{{"id":"{}"}}"#, "x".repeat(256)).as_bytes(), "/id")), "pointer" => "\"/id\"", "length" => 256),
        sample!(err(verify_signature(stripe, b"k", &format!("t=1,v1={hex}"), b"", 400_000)), "timestamp" => 1, "tolerance_millis" => 300_000, "now_millis" => 400_000),
        sample!(err(verify_signature(github, b"k", "md5=1", b"", 0)), "form" => "sha256=<64 hex digits>"),
        sample!(err(verify_signature(
            github,
            b"k",
            &format!("sha256={hex}"),
            b"",
            0
        ))),
        sample!(err(verify_signature(github, b"k", " ", b"", 0))),
    ]
}

fn record_samples() -> Vec<Sample> {
    let fence = |token, created_millis| Fence {
        token,
        created_millis,
    };
    vec![
        sample!(RecordError::claim_conflict()),
        sample!(RecordError::claim_expired(10), "lease_deadline_millis" => 10),
        sample!(RecordError::invalid_policy("lease_millis", "must be positive"), "field" => "lease_millis", "reason" => "must be positive"),
        sample!(RecordError::not_pending(Status::Succeeded), "status" => "succeeded"),
        sample!(RecordError::stale_token(fence(1, 10), fence(2, 20)), "token" => 1, "created_millis" => 10, "reason" => "the key was reclaimed, its current token is 2 (record created at 20 ms)"),
        sample!(RecordError::time_overflow(u64::MAX, 1), "millis" => u64::MAX, "duration_millis" => 1),
        sample!(RecordError::token_exhausted()),
        sample!(RecordError::unknown_status(&"x".repeat(100)), "status" => format!("\"{}\"", "x".repeat(32)), "excerpt" => "… (100 bytes)"),
    ]
}

fn request_id_samples() -> Vec<Sample> {
    let secret = [7u8; 32];
    let mut ring = KeyRing::new(SecretKey::new(1, &secret).expect("a key"));
    vec![
        sample!(RequestIdError::bad_tag()),
        sample!(err(ring.retire(1)), "key_id" => 1),
        sample!(err(ring.add(SecretKey::new(1, &secret).expect("a key"))), "key_id" => 1),
        sample!(RequestIdError::expiry_out_of_range(1 << 48), "expires_millis" => 1u64 << 48, "limit" => 1u64 << 48),
        sample!(RequestIdError::grant_expired(10, 20), "expires_millis" => 10, "now_millis" => 20),
        sample!(RequestIdError::in_future(50, 10, 5), "minted_millis" => 50, "max_skew_millis" => 5, "now_millis" => 10),
        sample!(RequestIdError::invalid_scope(0), "limit" => 64, "length" => 0),
        sample!(err(RequestId::parse("x")), "reason" => "it must be 58 base64url characters, found 1"),
        sample!(err(Grant::parse("x")), "reason" => "it must be 58 base64url characters, found 1"),
        sample!(RequestIdError::too_old(10, 50, 5), "minted_millis" => 10, "max_age_millis" => 5, "now_millis" => 50),
        sample!(RequestIdError::unknown_key(9), "key_id" => 9),
        sample!(RequestIdError::unsupported_version(9), "reason" => "unsupported request ID format byte 0x09 (version 1 is 0x01)"),
        sample!(err(SecretKey::new(1, b"short")), "limit" => 32, "length" => 5),
    ]
}

fn segment_samples() -> Vec<Sample> {
    vec![
        sample!(SegmentError::invalid_policy("step", "must be positive"), "field" => "step", "reason" => "must be positive"),
        sample!(SegmentError::invalid_row(1, 2, 3), "max_id" => 1, "step" => 2, "requested" => 3),
        sample!(SegmentError::invalid_tag(65), "length" => 65),
        sample!(SegmentError::no_fetch()),
        sample!(SegmentError::went_back(5, 10), "first" => 5, "highest" => 10),
    ]
}

fn snowflake_samples() -> Vec<Sample> {
    let layout = SnowflakeLayout::new(41, 10, 12, 0, 1).expect("a layout");
    vec![
        sample!(SnowflakeError::new(Detail::ClockRolledBack { behind_millis: 5, tolerance_millis: 1 }), "behind_millis" => 5, "tolerance_millis" => 1),
        sample!(SnowflakeError::new(Detail::EpochInFuture { now_millis: 5, epoch_millis: 10 }), "now_millis" => 5, "epoch_millis" => 10),
        sample!(SnowflakeError::new(Detail::IdOutOfRange { id: None, max: 7 }), "id" => "beyond 64 bits", "limit" => "the largest ID is 7"),
        sample!(err(SnowflakeLayout::new(0, 10, 12, 0, 1)), "reason" => "the time field needs at least 1 bit"),
        sample!(SnowflakeError::new(Detail::InvalidText(TextProblem::Base32(Base32Error::Overflow))), "reason" => "invalid base32 Snowflake ID: base32 value is too large for its type"),
        sample!(err(layout.compose(0, 0, 1 << 13)), "value" => 1 << 13, "max" => 4095),
        sample!(SnowflakeError::new(Detail::TimeExhausted { end_millis: 9 }), "end_millis" => 9),
        sample!(SnowflakeError::new(Detail::TickOutOfRange { tick: 9, max: 7 }), "time" => "tick 9", "reason" => "is out of range 0..=7"),
        sample!(err(SnowflakeLayout::preset("nope")), "name" => "\"nope\"", "known" => "classic twitter datacenter-worker sonyflake-like js-safe"),
        sample!(SnowflakeError::new(Detail::WaitExceeded { paused_micros: 3, target_millis: 9, now_millis: 8 }), "paused_micros" => 3, "target_millis" => 9, "now_millis" => 8),
        sample!(err(layout.worker_id(0, 2000)), "field" => "worker", "value" => 2000, "max" => 1023),
    ]
}

fn store_samples() -> Vec<Sample> {
    let db = |class| DbError {
        class,
        message: String::from("driver says no"),
    };
    let store = |kind, message: &str| StoreError::new(kind, message);
    vec![
        sample!(database_failure(&db(DbErrorClass::Serialization))),
        sample!(store(StoreErrorKind::NotAResponse, "the operation returned a str, not a response: the claim was released"), "type_name" => "str"),
        sample!(database_failure(&db(DbErrorClass::Other)), "reason" => "a store query failed (other)"),
        sample!(store(
            StoreErrorKind::RecordLost,
            "the record's lease was lost: the key was taken over or completed"
        )),
        sample!(store(StoreErrorKind::ResponseNotStorable, "the response's content type (300 bytes) is over 255 bytes or not printable ASCII"), "length" => 300, "limit" => 255),
        sample!(store(StoreErrorKind::ResponseTooLarge, "the response has 2000000 bytes, more than the 1048576 stored"), "length" => 2_000_000, "limit" => 1_048_576),
        sample!(store(StoreErrorKind::StaleSnapshot, "the claim neither inserted nor found its record 3 times: the transaction reads an old snapshot (claim before reading, or use READ COMMITTED)"), "rounds" => 3),
        sample!(database_failure(&db(DbErrorClass::ConnectionLost)), "reason" => "is unavailable: nothing was run"),
        sample!(database_failure(&db(DbErrorClass::SchemaMissing))),
        sample!(StoreError::unexpected_step("Pause"), "reason" => "the driver asked for a step this host does not expect: Pause"),
    ]
}

fn uuid_samples() -> Vec<Sample> {
    vec![
        sample!(err(Uuid::parse("8zzzzzzzzzzzzzzzzzzzzzzzzz")), "first" => "'8'"),
        sample!(err(Uuid::parse("0000000g-0000-0000-0000-000000000000")), "character" => "'g'", "position" => 7, "expected" => "a hex digit"),
        sample!(err(Uuid::parse("x")), "length" => 1),
        sample!(Uuid7Error::buffer_length(17), "length" => 17),
        sample!(Uuid7Error::clock_rollback(5, RollbackPolicy::Fail, false), "behind_millis" => 5, "outcome" => " and the rollback policy is Fail"),
        sample!(err(Uuid7::parse("x")), "cause" => "UUID text must be 36 (hyphenated), 32 (simple), 45 (URN) or 26 (base32) characters long, found 1"),
        sample!(Uuid7Error::rand_a_out_of_range(0x1000), "rand_a" => "0x1000"),
        sample!(Uuid7Error::rand_b_out_of_range(1 << 62), "rand_b" => "0x4000000000000000"),
        sample!(Uuid7Error::timestamp_out_of_range(1 << 48), "unix_millis" => 1u64 << 48, "max" => (1u64 << 48) - 1),
        sample!(Uuid7Error::timestamp_overflow(1 << 48), "clock_millis" => 1u64 << 48, "max" => (1u64 << 48) - 1),
        sample!(Uuid7Error::wrong_variant(Variant::Microsoft), "variant" => "microsoft (110x)"),
        sample!(Uuid7Error::wrong_version(4), "version" => 4),
    ]
}

fn samples() -> Vec<Sample> {
    [
        fingerprint_samples(),
        http_samples(),
        key_samples(),
        lease_samples(),
        outbox_samples(),
        receiving_samples(),
        record_samples(),
        request_id_samples(),
        segment_samples(),
        snowflake_samples(),
        store_samples(),
        uuid_samples(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[test]
fn every_code_has_a_template_of_named_fields() {
    for entry in ERROR_CODES {
        let mut rest = entry.template;
        assert!(!rest.is_empty(), "{}", entry.code);
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').map(|at| at + open);
            let name = close.map(|close| &rest[open + 1..close]);
            assert!(
                name.is_some_and(|name| !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')),
                "{}: {}",
                entry.code,
                entry.template
            );
            rest = &rest[close.unwrap_or(open) + 1..];
        }
        assert!(!rest.contains('}'), "{}: {}", entry.code, entry.template);
    }
}

#[test]
fn every_message_is_its_template_filled() {
    let samples = samples();
    let mut failures = Vec::new();
    for sample in &samples {
        let template = error_code(sample.code).map_or("", |entry| entry.template);
        let filled = fill(template, &sample.fields);
        if filled.as_deref() != Some(sample.message.as_str()) {
            failures.push(format!(
                "{}\n  message:  {}\n  template: {template}\n  filled:   {filled:?}",
                sample.code, sample.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // One sample of every code the core makes (the `argument.*`,
    // `internal.*` and `snowflake.forked` codes are the bindings' own, and
    // `base64url.*` errors become another concern's before they leave).
    let sampled: std::collections::BTreeSet<&str> = samples.iter().map(|s| s.code).collect();
    let unsampled: Vec<&str> = ERROR_CODES
        .iter()
        .map(|entry| entry.code)
        .filter(|code| !sampled.contains(code))
        .collect();
    assert_eq!(
        unsampled,
        [
            "argument.batch_too_large",
            "argument.byte_length",
            "argument.negative",
            "argument.out_of_range",
            "base64url.invalid_character",
            "base64url.invalid_length",
            "base64url.non_canonical",
            "base64url.wrong_length",
            "internal.panic",
            "snowflake.forked",
        ]
    );
}
