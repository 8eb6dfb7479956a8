//! Segments and worker leases (kinds 11 to 14) driven through a [`Wire`]
//! from their packed specs, answered by a scripted database: the steps come
//! packed as `docs/spec.md` ("The wire") says, from the core's drivers, and
//! a renew or release wire reaches its guard through the registry only.

use mintid::lease::{Acquisition, LeaseGuard, LeasePolicy, WorkerLease};
use mintid::segment::SegmentPolicy;
use mintid::store::{Dialect, DriverError, Manifest, Placeholder, Value};
use mintid_wire::guards::Registered;
use mintid_wire::{Fields, Input, LeasePolicyParts, Refusal, Spec, Wire, tag};

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
            concern: self.code.split('.').next().unwrap_or(self.code),
        }
    }

    fn out_of_range(detail: &str) -> Self {
        Self {
            code: "argument.out_of_range",
            detail: detail.into(),
        }
    }
}

const PG: Manifest = Manifest::new(Dialect::Postgres, Placeholder::Numbered);

fn wire(spec: &Spec) -> Wire<Packed> {
    let mut packed = Vec::new();
    spec.encode(&mut packed);
    Wire::new(&packed)
}

fn call(wire: &mut Wire<Packed>, now: u64, input: Input) -> Vec<u8> {
    let mut packed = Vec::new();
    input.encode(now, &mut packed);
    wire.call(&packed).to_vec()
}

fn u64_at(step: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(step[at..at + 8].try_into().unwrap())
}

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

/// A `TAKEN` step: first, count, action, wait.
fn taken(step: &[u8]) -> (u64, u64, u8, u64) {
    assert_eq!(step[0], tag::TAKEN, "not taken: {step:?}");
    assert_eq!(step.len(), 26);
    (u64_at(step, 1), u64_at(step, 9), step[17], u64_at(step, 18))
}

fn segment_spec() -> Spec {
    Spec::Segment {
        manifest: PG,
        tag: "orders".into(),
        policy: SegmentPolicy::new(100, 10, 1_000)
            .and_then(|policy| policy.with_fetch_at_percent(50))
            .unwrap(),
    }
}

#[test]
fn a_segment_take_asks_for_a_fetch_and_a_take_during_it_waits() {
    let mut segment = wire(&segment_spec());
    // Nothing in memory: fetch now.
    assert_eq!(taken(&call(&mut segment, 1_000, Input::Take)), (0, 0, 2, 0));
    assert_eq!(call(&mut segment, 1_000, Input::Fetch), [tag::BEGIN, 1]);
    // Another caller takes between the fetch's steps: nothing to hand out,
    // a fetch in flight, so it waits.
    assert_eq!(
        taken(&call(&mut segment, 1_000, Input::Take)),
        (0, 0, 3, mintid::store::SEGMENT_WAIT_MILLIS)
    );
    // The fetch goes on undisturbed.
    let fetch = call(&mut segment, 1_000, Input::Affected(0));
    assert_eq!(run_name(&fetch), "segment_fetch");
    assert_eq!(
        run_name(&call(&mut segment, 1_000, Input::Affected(1))),
        "segment_load"
    );
    let row = vec![Value::Int(100), Value::Int(100)];
    assert_eq!(
        call(&mut segment, 1_000, Input::Rows(vec![row])),
        [tag::COMMIT]
    );
    let done = call(&mut segment, 1_000, Input::Affected(0));
    assert_eq!(done[0], tag::DONE);
    assert_eq!((u64_at(&done, 1), u64_at(&done, 9)), (100, 100));
    assert_eq!(done.len(), 17);
    // IDs 1..=100 are in memory now: the take hands them out, past the
    // policy's 50 %, so the next fetch is due beside.
    let (first, count, action, wait) = taken(&call(&mut segment, 1_001, Input::Take));
    assert_eq!((first, action, wait), (1, 1, 0));
    assert!((1..=100).contains(&count));
}

#[test]
fn a_segment_abandons_its_fetch_and_forgets_after_a_fork() {
    let mut segment = wire(&segment_spec());
    assert_eq!(taken(&call(&mut segment, 1_000, Input::Take)).2, 2);
    assert_eq!(call(&mut segment, 1_000, Input::Fetch), [tag::BEGIN, 1]);
    assert_eq!(call(&mut segment, 1_000, Input::Abandon), [tag::YIELD]);
    // Nothing lost: the next take asks for the fetch again.
    assert_eq!(taken(&call(&mut segment, 1_000, Input::Take)).2, 2);
    assert_eq!(call(&mut segment, 1_000, Input::Forked), [tag::YIELD]);
    assert_eq!(taken(&call(&mut segment, 1_000, Input::Take)).2, 2);
    // No fetch is due after a fetch input without a take.
    call(&mut segment, 1_000, Input::Abandon);
    assert_eq!(
        code(&call(&mut segment, 1_000, Input::Fetch)),
        "segment.no_fetch"
    );
    // A lease's input is not a segment's.
    assert_eq!(
        code(&call(&mut segment, 1_000, Input::Mark(5))),
        "store.unexpected_row"
    );
}

#[test]
fn a_segment_spec_with_a_bad_tag_fails_every_step() {
    let mut segment = wire(&Spec::Segment {
        manifest: PG,
        tag: String::new(),
        policy: SegmentPolicy::DEFAULT,
    });
    assert_eq!(
        code(&call(&mut segment, 1, Input::Take)),
        "segment.invalid_tag"
    );
    assert_eq!(
        code(&call(&mut segment, 1, Input::Fetch)),
        "segment.invalid_tag"
    );
}

fn acquire_spec(policy: LeasePolicyParts) -> Spec {
    Spec::LeaseAcquire {
        manifest: PG,
        policy,
        owner: "host-1".into(),
        timeout_millis: Some(5_000),
    }
}

#[test]
fn an_acquisition_pauses_until_its_holder_may_issue() {
    let mut acquire = wire(&acquire_spec(LeasePolicyParts::of(&LeasePolicy::DEFAULT)));
    assert_eq!(call(&mut acquire, 1_000, Input::Start), [tag::BEGIN, 1]);
    assert_eq!(
        run_name(&call(&mut acquire, 1_000, Input::Affected(0))),
        "lease_find"
    );
    // A released row whose high-water mark is 50 ms ahead of this clock.
    let row = vec![
        Value::Int(3),
        Value::Null,
        Value::Int(4),
        Value::Int(900),
        Value::Int(1_050),
    ];
    assert_eq!(
        run_name(&call(&mut acquire, 1_000, Input::Rows(vec![row]))),
        "lease_take"
    );
    assert_eq!(call(&mut acquire, 1_000, Input::Affected(1)), [tag::COMMIT]);
    let pause = call(&mut acquire, 1_000, Input::Affected(0));
    assert_eq!(pause[0], tag::PAUSE);
    assert_eq!(u64_at(&pause, 1), 51);
    let done = call(&mut acquire, 1_051, Input::Resume);
    assert_eq!(done[0], tag::DONE);
    assert_eq!(done.len(), 1 + 8 * 8);
    let fields: Vec<u64> = (0..8).map(|at| u64_at(&done, 1 + 8 * at)).collect();
    // worker_id, fencing_token, lease_deadline, start_after, ready_at,
    // acquired, high_water, expected_token.
    assert_eq!(fields, [3, 5, 31_000, 1_050, 1_051, 1_000, 1_050, 4]);
}

#[test]
fn an_acquisition_spec_with_a_bad_layout_or_policy_fails_every_step() {
    let mut parts = LeasePolicyParts::of(&LeasePolicy::DEFAULT);
    parts.sequence_bits = 0;
    let mut acquire = wire(&acquire_spec(parts));
    assert_eq!(
        code(&call(&mut acquire, 1, Input::Start)),
        "snowflake.invalid_layout"
    );
    let mut parts = LeasePolicyParts::of(&LeasePolicy::DEFAULT);
    parts.renew_interval_millis = parts.lease_millis;
    let mut acquire = wire(&acquire_spec(parts));
    assert_eq!(
        code(&call(&mut acquire, 1, Input::Start)),
        "lease.invalid_policy"
    );
}

/// A registered guard of worker 3, acquired at 1 000 ms (ready at 1 ms,
/// deadline 31 000 ms).
fn guard() -> Registered {
    let acquisition = Acquisition {
        lease: WorkerLease {
            worker_id: 3,
            fencing_token: 1,
            lease_deadline_millis: 31_000,
            high_water_millis: 0,
            held: true,
        },
        expected_token: 0,
        acquired_millis: 1_000,
        start_after_millis: 0,
        ready_at_millis: 1,
    };
    Registered::new(LeaseGuard::new(&acquisition, &LeasePolicy::DEFAULT))
}

#[test]
fn a_renewal_reaches_its_guard_by_serial() {
    let guard = guard();
    let mut renew = wire(&Spec::LeaseRenew {
        manifest: PG,
        guard: guard.wire_id(),
    });
    assert_eq!(
        run_name(&call(&mut renew, 11_000, Input::Mark(10_500))),
        "lease_renew"
    );
    let done = call(&mut renew, 11_000, Input::Affected(1));
    assert_eq!(done[0], tag::DONE);
    assert_eq!(u64_at(&done, 1), 41_000);
    assert_eq!(guard.lease_deadline_millis(), 41_000);
}

#[test]
fn a_renewal_of_a_dropped_guard_fails_typed() {
    let guard = guard();
    let wire_id = guard.wire_id();
    let spec = Spec::LeaseRenew {
        manifest: PG,
        guard: wire_id,
    };
    let mut renew = wire(&spec);
    drop(guard);
    let failed = call(&mut renew, 11_000, Input::Mark(10_500));
    assert_eq!(code(&failed), "argument.out_of_range");
    assert!(
        text_at(&failed, 5 + "argument.out_of_range".len()).ends_with(&format!("got {wire_id}"))
    );
    // A wire made after the drop is refused from the start; serials are
    // never reused.
    let mut late = wire(&spec);
    assert_eq!(
        code(&call(&mut late, 11_000, Input::Mark(1))),
        "argument.out_of_range"
    );
    assert!(guard_serial_is_fresh(wire_id));
    let mut forged = wire(&Spec::LeaseRelease {
        manifest: PG,
        guard: u64::MAX,
    });
    assert_eq!(
        code(&call(&mut forged, 1, Input::Mark(1))),
        "argument.out_of_range"
    );
}

/// A new guard gets a serial past `old`.
fn guard_serial_is_fresh(old: u64) -> bool {
    guard().wire_id() > old
}

#[test]
fn a_release_stops_the_guard_before_its_mark() {
    let guard = guard();
    assert!(guard.check(2_000).is_ok());
    let mut release = wire(&Spec::LeaseRelease {
        manifest: PG,
        guard: guard.wire_id(),
    });
    // Making the wire stopped the guard: nothing is issued from here on,
    // before the host reads the high-water time for its mark.
    assert!(!guard.is_live());
    assert_eq!(guard.check(2_000).unwrap_err().code(), "lease.released");
    assert_eq!(
        run_name(&call(&mut release, 2_000, Input::Mark(1_999))),
        "lease_release"
    );
    assert_eq!(
        call(&mut release, 2_000, Input::Affected(1)),
        [tag::DONE, 1]
    );
    // A second release finds the guard already stopped: no query.
    let mut again = wire(&Spec::LeaseRelease {
        manifest: PG,
        guard: guard.wire_id(),
    });
    assert_eq!(call(&mut again, 2_001, Input::Mark(1_999)), [tag::DONE, 0]);
}
