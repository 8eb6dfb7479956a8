//! Replays `tests/vectors/wire.json` against the wire's codec: every spec
//! and input decodes to its meaning and encodes back to its bytes; every
//! step packed from its meaning (as the core's value) is its bytes, and its
//! bytes read back (by this runner's own reader, as a host's codec reads
//! them) are its meaning.

use std::fmt;

use mintid::fingerprint::Fingerprint;
use mintid::lease::{Acquisition, WorkerLease};
use mintid::outbox::{Enqueued, OutboxStatus, RelayPolicy};
use mintid::record::{Outcome as Stored, Record, RecordPolicy, Status};
use mintid::segment::{SegmentPolicy, SegmentRow};
use mintid::store::{
    ClaimedMessage, DbError, DbErrorClass, Dialect, DriverError, FastAnswer, FastReport, Finished,
    Held, Manifest, MigrationYield, Placeholder, Query, RecordYield, RedisCall, RelayReport,
    RelayYield, Step, StoredMessage, StoredRecord, StoredResponse, Taken, Value, Way,
    database_failure,
};
use mintid_wire::{Fields, Input, KeyParts, LeasePolicyParts, Outcome, Refusal, Spec, step};
use serde_json::{Map, Value as Json, json};

type Meaning = Map<String, Json>;

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).expect("hex"))
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn text<'a>(m: &'a Meaning, name: &str) -> &'a str {
    m[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} is not a text"))
}

fn string(m: &Meaning, name: &str) -> String {
    text(m, name).into()
}

fn number(m: &Meaning, name: &str) -> u64 {
    match &m[name] {
        Json::String(decimal) => decimal.parse().expect("a decimal"),
        Json::Number(number) => number.as_u64().expect("a u32"),
        other => panic!("{name}: {other} is not a number"),
    }
}

fn flag(m: &Meaning, name: &str) -> bool {
    m[name].as_bool().expect("a boolean")
}

fn object(json: &Json) -> &Meaning {
    json.as_object().expect("an object")
}

fn optional<T>(m: &Meaning, name: &str, read: impl FnOnce(&Json) -> T) -> Option<T> {
    (!m[name].is_null()).then(|| read(&m[name]))
}

// --- meaning to values ---------------------------------------------------------------------

fn manifest(m: &Meaning) -> Manifest {
    Manifest::new(
        Dialect::parse(text(m, "dialect")).expect("a dialect"),
        Placeholder::parse(text(m, "placeholder")).expect("a placeholder"),
    )
}

fn record_policy(m: &Meaning) -> RecordPolicy {
    let m = object(&m["policy"]);
    RecordPolicy::new(number(m, "lease_millis"), number(m, "retention_millis"))
        .and_then(|p| p.with_retry_after_millis(number(m, "retry_after_millis")))
        .and_then(|p| p.with_wait(number(m, "max_wait_millis"), number(m, "poll_millis")))
        .expect("a policy")
        .with_store_errors(flag(m, "store_errors"))
}

fn key(m: &Meaning) -> KeyParts {
    let m = object(&m["key"]);
    KeyParts {
        kind: string(m, "kind"),
        scope: string(m, "scope"),
        id: string(m, "id"),
    }
}

fn spec(m: &Meaning) -> Spec {
    let manifest = manifest(m);
    match text(m, "kind") {
        "record" => Spec::Record {
            manifest,
            policy: record_policy(m),
            way: match text(m, "way") {
                "run_once" => Way::RunOnce,
                "same_transaction" => Way::SameTransaction,
                "lease" => Way::Lease,
                other => panic!("way {other}"),
            },
            fast: optional(m, "fast", |fast| {
                optional(object(fast), "ttl_millis", |_| {
                    number(object(fast), "ttl_millis")
                })
            }),
            key: key(m),
            digest: hex(text(m, "digest")).try_into().expect("32 bytes"),
            key_created_millis: optional(m, "key_created_millis", |_| {
                number(m, "key_created_millis")
            }),
        },
        "relay" => {
            let p = object(&m["policy"]);
            Spec::Relay {
                manifest,
                policy: RelayPolicy::new(number(p, "batch_size"), number(p, "claim_millis"))
                    .and_then(|policy| {
                        policy.with_backoff(
                            number(p, "base_backoff_millis"),
                            number(p, "max_backoff_millis"),
                            u8::try_from(number(p, "jitter_percent")).expect("a u8"),
                        )
                    })
                    .and_then(|policy| policy.with_max_attempts(number(p, "max_attempts")))
                    .expect("a relay policy"),
                seed: number(m, "seed"),
            }
        }
        "record_renewal" => Spec::RecordRenewal {
            manifest,
            policy: record_policy(m),
            key: key(m),
            held: Held {
                token: number(m, "token"),
                created_millis: number(m, "created_millis"),
                lease_deadline_millis: number(m, "lease_deadline_millis"),
                renew_every_millis: None,
            },
        },
        "record_cleanup" => Spec::RecordCleanup {
            manifest,
            batch_size: number(m, "batch_size"),
        },
        "outbox_cleanup" => Spec::OutboxCleanup {
            manifest,
            sent_before_millis: number(m, "sent_before_millis"),
            batch_size: number(m, "batch_size"),
        },
        "record_load" => Spec::RecordLoad {
            manifest,
            key: key(m),
        },
        "outbox_load" => Spec::OutboxLoad {
            manifest,
            kind: string(m, "message_kind"),
            business_key: string(m, "business_key"),
        },
        "enqueue" => Spec::Enqueue {
            manifest,
            message_id: number(m, "message_id"),
            kind: string(m, "message_kind"),
            business_key: string(m, "business_key"),
            payload: hex(text(m, "payload")),
        },
        "migrations" => Spec::Migrations {
            manifest,
            pending: flag(m, "pending"),
        },
        "heartbeat" => Spec::Heartbeat {
            manifest,
            policy: record_policy(m),
            key: key(m),
            held: Held {
                token: number(m, "token"),
                created_millis: number(m, "created_millis"),
                lease_deadline_millis: number(m, "lease_deadline_millis"),
                renew_every_millis: optional(m, "renew_every_millis", |_| {
                    number(m, "renew_every_millis")
                }),
            },
        },
        "segment" => {
            let p = object(&m["policy"]);
            Spec::Segment {
                manifest,
                tag: string(m, "tag"),
                policy: SegmentPolicy::new(
                    number(p, "initial_step"),
                    number(p, "min_step"),
                    number(p, "max_step"),
                )
                .and_then(|policy| policy.with_fetch_at_percent(small(p, "fetch_at_percent")))
                .and_then(|policy| {
                    policy.with_adaptation(
                        number(p, "grow_below_millis"),
                        number(p, "shrink_above_millis"),
                    )
                })
                .expect("a segment policy"),
            }
        }
        "lease_acquire" => {
            let p = object(&m["policy"]);
            Spec::LeaseAcquire {
                manifest,
                policy: LeasePolicyParts {
                    time_bits: small(p, "time_bits"),
                    worker_bits: small(p, "worker_bits"),
                    sequence_bits: small(p, "sequence_bits"),
                    datacenter_bits: small(p, "datacenter_bits"),
                    epoch_millis: number(p, "epoch_millis"),
                    tick_millis: number(p, "tick_millis"),
                    lease_millis: number(p, "lease_millis"),
                    renew_interval_millis: number(p, "renew_interval_millis"),
                    safety_margin_millis: number(p, "safety_margin_millis"),
                    renew_retry_millis: number(p, "renew_retry_millis"),
                    max_skew_millis: number(p, "max_skew_millis"),
                    max_start_wait_millis: number(p, "max_start_wait_millis"),
                },
                owner: string(m, "owner"),
                timeout_millis: optional(m, "timeout_millis", |_| number(m, "timeout_millis")),
            }
        }
        "lease_renew" => Spec::LeaseRenew {
            manifest,
            guard: number(m, "guard"),
        },
        "lease_release" => Spec::LeaseRelease {
            manifest,
            guard: number(m, "guard"),
        },
        other => panic!("no spec kind {other}"),
    }
}

/// A `u8` field.
fn small(m: &Meaning, name: &str) -> u8 {
    u8::try_from(number(m, name)).expect("a u8")
}

fn value(json: &Json) -> Value {
    let m = object(json);
    match text(m, "type") {
        "null" => Value::Null,
        "int" => Value::Int(text(m, "value").parse().expect("an i64")),
        "text" => Value::Text(string(m, "value")),
        "bytes" => Value::Bytes(hex(text(m, "value"))),
        other => panic!("no value type {other}"),
    }
}

fn values(json: &Json) -> Vec<Value> {
    json.as_array().expect("a list").iter().map(value).collect()
}

fn response(json: &Json) -> StoredResponse {
    let m = object(json);
    StoredResponse {
        content_type: string(m, "content_type"),
        body: hex(text(m, "body")),
    }
}

fn outcome(m: &Meaning) -> Outcome {
    match text(m, "outcome") {
        "succeeded" => Outcome::Succeeded(response(&m["response"])),
        "failed" => Outcome::Failed {
            retryable: flag(m, "retryable"),
            message: text(m, "message").as_bytes().to_vec(),
            response: optional(m, "response", response),
        },
        "not_a_response" => Outcome::NotAResponse(string(m, "type_name")),
        "raised" => Outcome::Raised {
            type_name: text(m, "type_name").as_bytes().to_vec(),
            message: text(m, "message").as_bytes().to_vec(),
        },
        other => panic!("no outcome {other}"),
    }
}

fn input(m: &Meaning) -> (u64, Input) {
    let input = match text(m, "tag") {
        "start" => Input::Start,
        "rows" => Input::Rows(
            m["rows"]
                .as_array()
                .expect("rows")
                .iter()
                .map(values)
                .collect(),
        ),
        "affected" => Input::Affected(number(m, "count")),
        "failed" => Input::Failed {
            class: DbErrorClass::parse(text(m, "class")).expect("a class"),
            message: text(m, "message").as_bytes().to_vec(),
        },
        "resume" => Input::Resume,
        "finish" => Input::Finish(outcome(object(&m["outcome"]))),
        "sent" => Input::Sent,
        "send_failed" => Input::SendFailed(text(m, "error").as_bytes().to_vec()),
        "redis" => {
            let a = object(&m["answer"]);
            Input::Redis(match text(a, "answer") {
                "nil" => FastAnswer::Nil,
                "fields" => FastAnswer::Fields(
                    a["fields"]
                        .as_array()
                        .expect("fields")
                        .iter()
                        .map(|field| field.as_str().map(hex))
                        .collect(),
                ),
                "failed" => FastAnswer::Failed(string(a, "message")),
                "noscript" => FastAnswer::NoScript,
                other => panic!("no answer {other}"),
            })
        }
        "report" => Input::Report,
        "stop" => Input::Stop,
        "take" => Input::Take,
        "fetch" => Input::Fetch,
        "abandon" => Input::Abandon,
        "forked" => Input::Forked,
        "mark" => Input::Mark(number(m, "high_water_millis")),
        other => panic!("no input {other}"),
    };
    (number(m, "now_millis"), input)
}

/// A failure as the meaning gives it.
#[derive(Debug)]
struct Packed(Meaning);

impl From<DriverError> for Packed {
    fn from(error: DriverError) -> Self {
        panic!("the runner packs no driver error: {error}")
    }
}

impl From<mintid::key::KeyError> for Packed {
    fn from(error: mintid::key::KeyError) -> Self {
        panic!("the runner packs no key error: {error}")
    }
}

impl From<mintid::SnowflakeError> for Packed {
    fn from(error: mintid::SnowflakeError) -> Self {
        panic!("the runner packs no layout error: {error}")
    }
}

impl Refusal for Packed {
    fn out_of_range(detail: &str) -> Self {
        panic!("the runner packs no argument error: {detail}")
    }

    fn fields(&self) -> Fields<'_> {
        let m = &self.0;
        Fields {
            code: text(m, "code"),
            detail: text(m, "detail"),
            part: m["part"].as_str(),
            position: optional(m, "position", |_| number(m, "position")),
            problem: m["problem"].as_str(),
            concern: text(m, "concern"),
        }
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// A common step of any kind, or `None` for a kind's own.
fn common<Y>(m: &Meaning) -> Option<Step<Y>> {
    Some(match text(m, "tag") {
        "run" => Step::Run(Query {
            name: leak(text(m, "name")),
            params: values(&m["params"]),
        }),
        "pause" => Step::Pause {
            millis: number(m, "millis"),
        },
        "begin" => Step::Begin {
            write: flag(m, "write"),
        },
        "commit" => Step::Commit,
        "rollback" => Step::Rollback,
        _ => return None,
    })
}

fn record_done(m: &Meaning) -> Finished {
    match text(m, "finished") {
        "executed" => Finished::Executed,
        "operation_failed" => Finished::OperationFailed {
            stored: flag(m, "stored"),
        },
        "replay" => Finished::Replay {
            outcome: match text(m, "outcome") {
                "succeeded" => Stored::Succeeded,
                _ => Stored::Failed,
            },
            response: optional(m, "response", response),
            error: m["error"].as_str().map(String::from),
        },
        "in_progress" => Finished::InProgress {
            retry_after_millis: number(m, "retry_after_millis"),
        },
        "fingerprint_mismatch" => Finished::FingerprintMismatch,
        "key_too_old" => Finished::KeyTooOld,
        "operation_failed_unrecorded" => {
            let store_error = database_failure(&DbError {
                class: DbErrorClass::ConnectionLost,
                message: String::from("the socket closed"),
            });
            assert_eq!(store_error.code(), text(m, "store_code"));
            assert_eq!(store_error.to_string(), text(m, "store_message"));
            Finished::OperationFailedUnrecorded { store_error }
        }
        other => panic!("no end {other}"),
    }
}

fn stored_record(json: &Json) -> StoredRecord {
    let m = object(json);
    StoredRecord {
        record: Record {
            status: Status::parse(text(m, "status")).expect("a status"),
            fingerprint: Fingerprint::from_digest(
                hex(text(m, "fingerprint")).try_into().expect("32 bytes"),
            ),
            token: number(m, "token"),
            lease_deadline_millis: number(m, "lease_deadline_millis"),
            created_millis: number(m, "created_millis"),
            expires_millis: number(m, "expires_millis"),
        },
        response: optional(m, "response", response),
        error: m["error"].as_str().map(String::from),
    }
}

fn stored_message(json: &Json) -> StoredMessage {
    let m = object(json);
    StoredMessage {
        message_id: number(m, "message_id"),
        kind: string(m, "message_kind"),
        business_key: string(m, "business_key"),
        payload: hex(text(m, "payload")),
        status: OutboxStatus::parse(text(m, "status")).expect("a status"),
        attempts: number(m, "attempts"),
        next_attempt_millis: number(m, "next_attempt_millis"),
        last_error: m["last_error"].as_str().map(String::from),
        created_millis: number(m, "created_millis"),
        updated_millis: number(m, "updated_millis"),
    }
}

/// Packs the step the meaning describes, as the wire packs the core's.
fn pack_step(kind: &str, m: &Meaning) -> Vec<u8> {
    let mut out = Vec::new();
    let tag = text(m, "tag");
    if tag == "fail" {
        mintid_wire::pack_error(&mut out, &Packed(m.clone()));
        return out;
    }
    if tag == "taken" {
        let (count, fetch_due) = match text(m, "action") {
            "hand_out" => (number(m, "count"), false),
            "fetch_beside" => (number(m, "count"), true),
            "fetch_now" => (0, true),
            _ => (0, false),
        };
        let taken = Taken {
            first: number(m, "first"),
            count,
            fetch_due,
        };
        step::taken(&mut out, taken);
        return out;
    }
    if (kind, tag) == ("segment", "yield") {
        step::idle(&mut out);
        return out;
    }
    if tag == "report" {
        let lookup = m["lookup"].as_str().map(leak);
        let write_failures = u32::try_from(number(m, "write_failures")).expect("a u32");
        step::report(
            &mut out,
            FastReport {
                lookup,
                write_failures,
            },
        );
        return out;
    }
    let yielded = |m: &Meaning| match (kind, tag) {
        ("record" | "any", "yield") => Step::Yield(RecordYield::Execute(Held {
            token: number(m, "token"),
            created_millis: number(m, "created_millis"),
            lease_deadline_millis: number(m, "lease_deadline_millis"),
            renew_every_millis: optional(m, "renew_every_millis", |_| {
                number(m, "renew_every_millis")
            }),
        })),
        (_, "done") => Step::Yield(RecordYield::Done(record_done(m))),
        (_, "redis") => Step::Yield(RecordYield::Redis(RedisCall {
            script: leak(text(m, "script")),
            sha1: if flag(m, "eval") {
                ""
            } else {
                leak(text(m, "code"))
            },
            source: if flag(m, "eval") {
                leak(text(m, "code"))
            } else {
                ""
            },
            eval: flag(m, "eval"),
            keys: m["keys"]
                .as_array()
                .expect("keys")
                .iter()
                .map(|k| k.as_str().expect("a key").into())
                .collect(),
            args: m["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| hex(a.as_str().expect("hex")))
                .collect(),
        })),
        _ => common(m).expect("a common step"),
    };
    match kind {
        "any" | "record" => step::record::<Packed>(&mut out, yielded(m)),
        "relay" => step::relay::<Packed>(
            &mut out,
            match tag {
                "yield" => Step::Yield(RelayYield::Send(ClaimedMessage {
                    message_id: number(m, "message_id"),
                    kind: string(m, "message_kind"),
                    business_key: string(m, "business_key"),
                    payload: hex(text(m, "payload")),
                    attempts: number(m, "attempts"),
                    created_millis: number(m, "created_millis"),
                })),
                _ => Step::Yield(RelayYield::Done(RelayReport {
                    sent: number(m, "sent"),
                    retried: number(m, "retried"),
                    dead: number(m, "dead"),
                    given_up: number(m, "given_up"),
                    claim_lost: number(m, "claim_lost"),
                    released: number(m, "released"),
                    mark_failed: number(m, "mark_failed"),
                })),
            },
        ),
        "heartbeat" => step::heartbeat::<Packed>(
            &mut out,
            match tag {
                "yield" => Step::Pause {
                    millis: number(m, "millis"),
                },
                "done" => Step::Yield(number(m, "lease_deadline_millis")),
                _ => common(m).expect("a common step"),
            },
            number(m, "lease_deadline_millis"),
        ),
        "record_renewal" | "lease_renew" => {
            step::number::<Packed>(&mut out, Step::Yield(number(m, "lease_deadline_millis")));
        }
        "segment" => step::segment::<Packed>(
            &mut out,
            Step::Yield(SegmentRow {
                max_id: number(m, "max_id"),
                step: number(m, "step"),
            }),
        ),
        "lease_acquire" => step::acquisition::<Packed>(
            &mut out,
            Step::Yield(Acquisition {
                lease: WorkerLease {
                    worker_id: number(m, "worker_id"),
                    fencing_token: number(m, "fencing_token"),
                    lease_deadline_millis: number(m, "lease_deadline_millis"),
                    high_water_millis: number(m, "high_water_millis"),
                    held: true,
                },
                expected_token: number(m, "expected_token"),
                acquired_millis: number(m, "acquired_millis"),
                start_after_millis: number(m, "start_after_millis"),
                ready_at_millis: number(m, "ready_at_millis"),
            }),
        ),
        "lease_release" => {
            step::released::<Packed>(&mut out, Step::Yield(flag(m, "released")));
        }
        "migrations" => step::migration::<Packed>(
            &mut out,
            match tag {
                "yield" => Step::Yield(MigrationYield::Execute {
                    version: u32::try_from(number(m, "version")).expect("a u32"),
                    sql: leak(text(m, "sql")),
                }),
                "done" => Step::Yield(MigrationYield::Done(
                    m["versions"]
                        .as_array()
                        .expect("versions")
                        .iter()
                        .map(|v| u32::try_from(v.as_u64().expect("a number")).expect("a u32"))
                        .collect(),
                )),
                _ => common(m).expect("a common step"),
            },
        ),
        "record_cleanup" | "outbox_cleanup" => {
            step::number::<Packed>(&mut out, Step::Yield(number(m, "deleted")));
        }
        "record_load" => {
            step::record_load::<Packed>(&mut out, Step::Yield(optional(m, "record", stored_record)))
        }
        "outbox_load" => step::outbox_load::<Packed>(
            &mut out,
            Step::Yield(optional(m, "message", stored_message)),
        ),
        "enqueue" => step::enqueue::<Packed>(
            &mut out,
            Step::Yield(match text(m, "enqueued") {
                "new" => Enqueued::New,
                _ => Enqueued::AlreadyEnqueued,
            }),
        ),
        other => panic!("no kind {other}"),
    }
    out
}

// --- bytes to meaning: a host's reader of steps ---------------------------------------------

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, count: usize) -> &[u8] {
        let (head, rest) = self.0.split_at(count);
        self.0 = rest;
        head
    }
    fn u8(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }
    fn u64(&mut self) -> Json {
        json!(u64::from_le_bytes(self.take(8).try_into().expect("8 bytes")).to_string())
    }
    fn bytes(&mut self) -> Vec<u8> {
        let length = self.u32() as usize;
        self.take(length).to_vec()
    }
    fn hex(&mut self) -> Json {
        json!(to_hex(&self.bytes()))
    }
    fn text(&mut self) -> Json {
        json!(String::from_utf8(self.bytes()).expect("UTF-8"))
    }
    fn flag(&mut self) -> bool {
        self.u8() == 1
    }
    fn optional(&mut self, read: impl FnOnce(&mut Self) -> Json) -> Json {
        if self.flag() { read(self) } else { Json::Null }
    }
    fn list(&mut self, mut read: impl FnMut(&mut Self) -> Json) -> Json {
        let count = self.u32();
        Json::Array((0..count).map(|_| read(self)).collect())
    }
    fn value(&mut self) -> Json {
        match self.u8() {
            0 => json!({"type": "null"}),
            1 => {
                json!({"type": "int", "value": i64::from_le_bytes(self.take(8).try_into().expect("8")).to_string()})
            }
            2 => json!({"type": "text", "value": self.text()}),
            _ => json!({"type": "bytes", "value": self.hex()}),
        }
    }
    fn response(&mut self) -> Json {
        json!({"content_type": self.text(), "body": self.hex()})
    }
    fn fields(&mut self, names: &[&str], m: &mut Meaning, read: impl Fn(&mut Self) -> Json) {
        for name in names {
            m.insert((*name).into(), read(self));
        }
    }
}

const TAGS: [&str; 11] = [
    "run", "pause", "yield", "done", "fail", "redis", "begin", "commit", "rollback", "report",
    "taken",
];

fn read_step(kind: &str, bytes: &[u8]) -> Meaning {
    let mut r = Reader(bytes);
    let tag = TAGS[usize::from(r.u8()) - 1];
    let mut m = Meaning::new();
    m.insert("tag".into(), json!(tag));
    match (kind, tag) {
        (_, "run") => {
            m.insert("name".into(), r.text());
            m.insert("params".into(), r.list(Reader::value));
        }
        ("heartbeat", "yield") => {
            r.fields(&["millis", "lease_deadline_millis"], &mut m, Reader::u64);
        }
        (_, "pause") => r.fields(&["millis"], &mut m, Reader::u64),
        (_, "fail") => {
            r.fields(&["code", "detail"], &mut m, Reader::text);
            m.insert("part".into(), r.optional(Reader::text));
            m.insert("position".into(), r.optional(Reader::u64));
            m.insert("problem".into(), r.optional(Reader::text));
            m.insert("concern".into(), r.text());
        }
        (_, "redis") => {
            m.insert("eval".into(), json!(r.flag()));
            r.fields(&["script", "code"], &mut m, Reader::text);
            m.insert("keys".into(), r.list(Reader::text));
            m.insert("args".into(), r.list(Reader::hex));
        }
        (_, "begin") => {
            m.insert("write".into(), json!(r.flag()));
        }
        (_, "commit" | "rollback") => {}
        (_, "report") => {
            m.insert("lookup".into(), r.optional(Reader::text));
            m.insert("write_failures".into(), json!(r.u32()));
        }
        ("record", "yield") => {
            m.insert("decision".into(), r.text());
            r.fields(
                &["token", "created_millis", "lease_deadline_millis"],
                &mut m,
                Reader::u64,
            );
            m.insert("renew_every_millis".into(), r.optional(Reader::u64));
        }
        ("record", "done") => {
            m.insert("decision".into(), r.text());
            let ends = [
                "executed",
                "operation_failed",
                "replay",
                "in_progress",
                "fingerprint_mismatch",
                "key_too_old",
                "operation_failed_unrecorded",
            ];
            let end = ends[usize::from(r.u8())];
            m.insert("finished".into(), json!(end));
            match end {
                "operation_failed" => {
                    m.insert("stored".into(), json!(r.flag()));
                }
                "replay" => {
                    let failed = r.flag();
                    m.insert(
                        "outcome".into(),
                        json!(if failed { "failed" } else { "succeeded" }),
                    );
                    m.insert("response".into(), r.optional(Reader::response));
                    m.insert("error".into(), r.optional(Reader::text));
                }
                "in_progress" => r.fields(&["retry_after_millis"], &mut m, Reader::u64),
                "operation_failed_unrecorded" => {
                    r.fields(&["store_code", "store_message"], &mut m, Reader::text);
                }
                _ => {}
            }
        }
        ("relay", "yield") => {
            m.insert("message_id".into(), r.u64());
            r.fields(&["message_kind", "business_key"], &mut m, Reader::text);
            m.insert("payload".into(), r.hex());
            r.fields(&["attempts", "created_millis"], &mut m, Reader::u64);
        }
        ("relay", "done") => r.fields(
            &[
                "sent",
                "retried",
                "dead",
                "given_up",
                "claim_lost",
                "released",
                "mark_failed",
            ],
            &mut m,
            Reader::u64,
        ),
        ("segment", "taken") => {
            r.fields(&["first", "count"], &mut m, Reader::u64);
            let actions = ["hand_out", "fetch_beside", "fetch_now", "wait"];
            m.insert("action".into(), json!(actions[usize::from(r.u8())]));
            r.fields(&["wait_millis"], &mut m, Reader::u64);
        }
        ("segment", "yield") => {}
        ("segment", "done") => r.fields(&["max_id", "step"], &mut m, Reader::u64),
        ("lease_acquire", "done") => r.fields(
            &[
                "worker_id",
                "fencing_token",
                "lease_deadline_millis",
                "start_after_millis",
                "ready_at_millis",
                "acquired_millis",
                "high_water_millis",
                "expected_token",
            ],
            &mut m,
            Reader::u64,
        ),
        ("lease_release", "done") => {
            m.insert("released".into(), json!(r.flag()));
        }
        ("record_renewal" | "heartbeat" | "lease_renew", "done") => {
            r.fields(&["lease_deadline_millis"], &mut m, Reader::u64);
        }
        ("migrations", "yield") => {
            m.insert("version".into(), json!(r.u32()));
            m.insert("sql".into(), r.text());
        }
        ("migrations", "done") => {
            m.insert("versions".into(), r.list(|r| json!(r.u32())));
        }
        ("record_cleanup" | "outbox_cleanup", "done") => {
            r.fields(&["deleted"], &mut m, Reader::u64);
        }
        ("record_load", "done") => {
            let record = r.optional(|r| {
                let mut s = Meaning::new();
                s.insert("status".into(), r.text());
                s.insert("fingerprint".into(), json!(to_hex(r.take(32))));
                r.fields(
                    &[
                        "token",
                        "lease_deadline_millis",
                        "created_millis",
                        "expires_millis",
                    ],
                    &mut s,
                    Reader::u64,
                );
                s.insert("response".into(), r.optional(Reader::response));
                s.insert("error".into(), r.optional(Reader::text));
                Json::Object(s)
            });
            m.insert("record".into(), record);
        }
        ("outbox_load", "done") => {
            let message = r.optional(|r| {
                let mut s = Meaning::new();
                s.insert("message_id".into(), r.u64());
                r.fields(&["message_kind", "business_key"], &mut s, Reader::text);
                s.insert("payload".into(), r.hex());
                s.insert("status".into(), r.text());
                r.fields(&["attempts", "next_attempt_millis"], &mut s, Reader::u64);
                s.insert("last_error".into(), r.optional(Reader::text));
                r.fields(&["created_millis", "updated_millis"], &mut s, Reader::u64);
                Json::Object(s)
            });
            m.insert("message".into(), message);
        }
        ("enqueue", "done") => {
            let enqueued = if r.flag() { "already_enqueued" } else { "new" };
            m.insert("enqueued".into(), json!(enqueued));
        }
        other => panic!("no step {other:?}"),
    }
    assert!(r.0.is_empty(), "bytes left over");
    m
}

struct Case<'a>(&'a Meaning);

impl fmt::Display for Case<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(text(self.0, "name"))
    }
}

/// The file's tag tables are the crate's.
fn assert_tags(file: &Json) {
    use mintid_wire::{input_tag, kind, tag};
    let tables: [(&str, &[(&str, u8)]); 3] = [
        (
            "kinds",
            &[
                ("record", kind::RECORD),
                ("relay", kind::RELAY),
                ("record_renewal", kind::RECORD_RENEWAL),
                ("record_cleanup", kind::RECORD_CLEANUP),
                ("outbox_cleanup", kind::OUTBOX_CLEANUP),
                ("record_load", kind::RECORD_LOAD),
                ("outbox_load", kind::OUTBOX_LOAD),
                ("enqueue", kind::ENQUEUE),
                ("migrations", kind::MIGRATIONS),
                ("heartbeat", kind::HEARTBEAT),
                ("segment", kind::SEGMENT),
                ("lease_acquire", kind::LEASE_ACQUIRE),
                ("lease_renew", kind::LEASE_RENEW),
                ("lease_release", kind::LEASE_RELEASE),
            ],
        ),
        (
            "inputs",
            &[
                ("start", input_tag::START),
                ("rows", input_tag::ROWS),
                ("affected", input_tag::AFFECTED),
                ("failed", input_tag::FAILED),
                ("resume", input_tag::RESUME),
                ("finish", input_tag::FINISH),
                ("sent", input_tag::SENT),
                ("send_failed", input_tag::SEND_FAILED),
                ("redis", input_tag::REDIS),
                ("report", input_tag::REPORT),
                ("stop", input_tag::STOP),
                ("take", input_tag::TAKE),
                ("fetch", input_tag::FETCH),
                ("abandon", input_tag::ABANDON),
                ("forked", input_tag::FORKED),
                ("mark", input_tag::MARK),
            ],
        ),
        (
            "steps",
            &[
                ("run", tag::RUN),
                ("pause", tag::PAUSE),
                ("yield", tag::YIELD),
                ("done", tag::DONE),
                ("fail", tag::FAIL),
                ("redis", tag::REDIS),
                ("begin", tag::BEGIN),
                ("commit", tag::COMMIT),
                ("rollback", tag::ROLLBACK),
                ("report", tag::REPORT),
                ("taken", tag::TAKEN),
            ],
        ),
    ];
    for (table, expected) in tables {
        let expected: Map<String, Json> = expected
            .iter()
            .map(|(name, value)| ((*name).into(), json!(value)))
            .collect();
        assert_eq!(object(&file[table]), &expected, "{table}");
    }
}

#[test]
fn wire_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/wire.json");
    let file: Json =
        serde_json::from_str(&std::fs::read_to_string(path).expect("wire.json")).expect("JSON");
    assert_eq!(file["version"], json!(mintid_wire::VERSION));
    assert_tags(&file);
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 70);
    for case in cases {
        let case = object(case);
        let name = Case(case);
        let bytes = hex(text(case, "hex"));
        let meaning = object(&case["meaning"]);
        let kind = text(case, "kind");
        match text(case, "op") {
            "spec" => {
                let expected = spec(meaning);
                assert_eq!(Spec::decode(&bytes).expect("a spec"), expected, "{name}");
                let mut packed = Vec::new();
                expected.encode(&mut packed);
                assert_eq!(to_hex(&packed), to_hex(&bytes), "{name}");
            }
            "input" => {
                let (now, expected) = input(meaning);
                assert_eq!(
                    Input::decode(&bytes).expect("an input"),
                    (now, expected.clone()),
                    "{name}"
                );
                let mut packed = Vec::new();
                expected.encode(now, &mut packed);
                assert_eq!(to_hex(&packed), to_hex(&bytes), "{name}");
            }
            "step" => {
                assert_eq!(to_hex(&pack_step(kind, meaning)), to_hex(&bytes), "{name}");
                let reader_kind = if kind == "any" { "record" } else { kind };
                assert_eq!(&read_step(reader_kind, &bytes), meaning, "{name}");
            }
            other => panic!("{name}: unknown op {other}"),
        }
    }
}
