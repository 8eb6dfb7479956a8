//! Every kind of this wave driven through a [`Wire`] from its packed spec:
//! each takes its inputs, answers with its steps, refuses what it does not
//! take, and a spec the core refuses fails every step.

use mintid::outbox::RelayPolicy;
use mintid::record::RecordPolicy;
use mintid::store::{DbErrorClass, Dialect, DriverError, Held, Manifest, Placeholder, Value, Way};
use mintid_wire::{Fields, Input, KeyParts, Outcome, Refusal, Spec, Wire, tag};

/// A failure packed with its code and message.
struct Packed {
    code: &'static str,
    detail: String,
}

impl From<DriverError> for Packed {
    fn from(error: DriverError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::key::KeyError> for Packed {
    fn from(error: mintid::key::KeyError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl From<mintid::SnowflakeError> for Packed {
    fn from(error: mintid::SnowflakeError) -> Self {
        Self {
            code: error.code(),
            detail: error.to_string(),
        }
    }
}

impl Refusal for Packed {
    fn fields(&self) -> Fields<'_> {
        Fields {
            code: self.code,
            detail: &self.detail,
            part: None,
            position: None,
            problem: None,
            concern: "store",
        }
    }

    fn out_of_range(detail: &str) -> Self {
        Self {
            code: "argument.out_of_range",
            detail: detail.into(),
        }
    }
}

const SQLITE: Manifest = Manifest::new(Dialect::Sqlite, Placeholder::Question);

fn wire(spec: &Spec) -> Wire<Packed> {
    let mut packed = Vec::new();
    spec.encode(&mut packed);
    Wire::new(&packed)
}

fn call(wire: &mut Wire<Packed>, input: Input) -> Vec<u8> {
    let mut packed = Vec::new();
    input.encode(1_000, &mut packed);
    wire.call(&packed).to_vec()
}

/// A `u32`-length text at `at`.
fn text_at(step: &[u8], at: usize) -> &str {
    let length = u32::from_le_bytes(step[at..at + 4].try_into().unwrap()) as usize;
    std::str::from_utf8(&step[at + 4..at + 4 + length]).unwrap()
}

fn run_name(step: &[u8]) -> &str {
    assert_eq!(step[0], tag::RUN, "not a run: {step:?}");
    text_at(step, 1)
}

fn code(step: &[u8]) -> &str {
    assert_eq!(step[0], tag::FAIL, "not a failure: {step:?}");
    text_at(step, 1)
}

fn done_u64(step: &[u8]) -> u64 {
    assert_eq!(step[0], tag::DONE, "not done: {step:?}");
    u64::from_le_bytes(step[1..9].try_into().unwrap())
}

fn key() -> KeyParts {
    KeyParts {
        kind: "order".into(),
        scope: "t".into(),
        id: "1".into(),
    }
}

#[test]
fn an_enqueue_inserts_or_finds_the_message_already_there() {
    let spec = Spec::Enqueue {
        manifest: SQLITE,
        message_id: 7,
        kind: "order.created".into(),
        business_key: "o-7".into(),
        payload: b"{}".to_vec(),
    };
    let mut fresh = wire(&spec);
    assert_eq!(run_name(&call(&mut fresh, Input::Start)), "outbox_enqueue");
    assert_eq!(call(&mut fresh, Input::Affected(1)), [tag::DONE, 0]);
    let mut again = wire(&spec);
    call(&mut again, Input::Start);
    let violation = Input::Failed {
        class: DbErrorClass::UniqueViolation,
        message: b"duplicate".to_vec(),
    };
    assert_eq!(run_name(&call(&mut again, violation)), "outbox_load");
    let row = vec![Value::Int(7)];
    assert_eq!(call(&mut again, Input::Rows(vec![row])), [tag::DONE, 1]);
}

#[test]
fn cleanups_run_batches_until_one_comes_back_short() {
    let mut records = wire(&Spec::RecordCleanup {
        manifest: SQLITE,
        batch_size: 2,
    });
    assert_eq!(run_name(&call(&mut records, Input::Start)), "cleanup");
    assert_eq!(run_name(&call(&mut records, Input::Affected(2))), "cleanup");
    assert_eq!(done_u64(&call(&mut records, Input::Affected(1))), 3);
    let mut outbox = wire(&Spec::OutboxCleanup {
        manifest: SQLITE,
        sent_before_millis: 5,
        batch_size: 10,
    });
    assert_eq!(run_name(&call(&mut outbox, Input::Start)), "outbox_cleanup");
    assert_eq!(done_u64(&call(&mut outbox, Input::Affected(0))), 0);
}

#[test]
fn loads_answer_with_what_they_found() {
    let mut record = wire(&Spec::RecordLoad {
        manifest: SQLITE,
        key: key(),
    });
    assert_eq!(run_name(&call(&mut record, Input::Start)), "load");
    assert_eq!(call(&mut record, Input::Rows(vec![])), [tag::DONE, 0]);
    let mut message = wire(&Spec::OutboxLoad {
        manifest: SQLITE,
        kind: "k".into(),
        business_key: "b".into(),
    });
    assert_eq!(run_name(&call(&mut message, Input::Start)), "outbox_load");
    let broken = call(&mut message, Input::Rows(vec![vec![Value::Null]]));
    assert_eq!(code(&broken), "store.unexpected_row");
}

#[test]
fn a_renewal_moves_the_deadline_and_starts_again_at_the_next_beat() {
    let held = Held {
        token: 1,
        created_millis: 500,
        lease_deadline_millis: 1_500,
        renew_every_millis: None,
    };
    let mut renewal = wire(&Spec::RecordRenewal {
        manifest: SQLITE,
        policy: RecordPolicy::default(),
        key: key(),
        held,
    });
    assert_eq!(run_name(&call(&mut renewal, Input::Start)), "renew");
    assert_eq!(done_u64(&call(&mut renewal, Input::Affected(1))), 61_000);
    assert_eq!(run_name(&call(&mut renewal, Input::Start)), "renew");
}

#[test]
fn an_input_a_kind_does_not_take_is_a_typed_failure() {
    let mut relay = wire(&Spec::Relay {
        manifest: SQLITE,
        policy: RelayPolicy::default(),
        seed: 1,
    });
    assert_eq!(run_name(&call(&mut relay, Input::Start)), "outbox_claim");
    let report = call(&mut relay, Input::Report);
    assert_eq!(code(&report), "store.unexpected_row");
    assert!(text_at(&report, 1 + 4 + code(&report).len()).contains("report"));
}

#[test]
fn a_refused_policy_fails_every_step() {
    // A record renewal whose lease is 0: the core refuses the policy.
    let mut renewal = vec![3, 2, 0];
    renewal.extend_from_slice(&0u64.to_le_bytes());
    renewal.extend_from_slice(&[0; 8 * 4 + 1]);
    let mut refused = Wire::<Packed>::new(&renewal);
    assert_eq!(
        code(&call(&mut refused, Input::Start)),
        "record.invalid_policy"
    );
    assert_eq!(
        code(&call(&mut refused, Input::Resume)),
        "record.invalid_policy"
    );
}

#[test]
fn a_raised_failure_is_released_with_the_text_the_core_composes() {
    let mut record = wire(&Spec::Record {
        manifest: SQLITE,
        policy: RecordPolicy::default(),
        way: Way::RunOnce,
        fast: None,
        key: key(),
        digest: [7; 32],
        key_created_millis: None,
    });
    assert_eq!(run_name(&call(&mut record, Input::Start)), "claim");
    let execute = call(&mut record, Input::Rows(vec![vec![Value::Int(1)]]));
    assert_eq!((execute[0], text_at(&execute, 1)), (tag::YIELD, "execute"));
    let raised = Outcome::Raised {
        type_name: b"ValueError".to_vec(),
        message: Vec::new(),
    };
    let release = call(&mut record, Input::Finish(raised));
    assert_eq!(run_name(&release), "release");
    let text = b"\x02\x0a\x00\x00\x00ValueError";
    assert!(
        release.windows(text.len()).any(|window| window == text),
        "the release stores the composed text: {release:?}"
    );
}
