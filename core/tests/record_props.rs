//! Property tests of the record state machine: random interleavings of
//! workers deciding, claiming, completing and failing, with time moving and
//! cleanup running, never break fencing.

use std::collections::{HashMap, HashSet};

use mintid::fingerprint::Fingerprint;
use mintid::record::{
    Claim, Decision, Failure, Fence, Incoming, Record, RecordErrorKind, RecordPolicy, Status,
    decide,
};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Event {
    Advance(u64),
    Decide {
        worker: usize,
        other_payload: bool,
        key_age: Option<u64>,
        waited: u64,
    },
    Claim(usize),
    Complete(usize),
    Fail(usize, bool),
    Cleanup,
}

const WORKERS: usize = 4;

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (0u64..1500).prop_map(Event::Advance),
        (
            0..WORKERS,
            prop::bool::weighted(0.1),
            prop::option::weighted(0.3, 0u64..12_000),
            0u64..400
        )
            .prop_map(|(worker, other_payload, key_age, waited)| Event::Decide {
                worker,
                other_payload,
                key_age,
                waited
            }),
        (0..WORKERS).prop_map(Event::Claim),
        (0..WORKERS).prop_map(Event::Complete),
        (0..WORKERS, any::<bool>()).prop_map(|(w, retryable)| Event::Fail(w, retryable)),
        Just(Event::Cleanup),
    ]
}

fn policy() -> impl Strategy<Value = RecordPolicy> {
    (
        1u64..2000,
        1u64..10_000,
        any::<bool>(),
        0u64..500,
        1u64..200,
    )
        .prop_map(|(lease, extra, store_errors, max_wait, poll)| {
            RecordPolicy::new(lease, lease + extra)
                .unwrap()
                .with_store_errors(store_errors)
                .with_wait(max_wait, poll)
                .unwrap()
        })
}

fn fingerprint(byte: u8) -> Fingerprint {
    Fingerprint::from_digest([byte; 32])
}

/// A store holding one key, and what each worker believes.
struct World {
    now: u64,
    store: Option<Record>,
    claims: HashMap<usize, Claim>,
    fences: HashMap<usize, Fence>,
    granted: HashSet<Fence>,
    last_granted: Option<Fence>,
    ended: HashSet<Fence>,
}

impl World {
    fn run(&mut self, event: &Event, policy: &RecordPolicy) -> Result<(), TestCaseError> {
        match *event {
            Event::Advance(millis) => self.now += millis,
            Event::Decide {
                worker,
                other_payload,
                key_age,
                waited,
            } => {
                let mut incoming = Incoming::new(fingerprint(if other_payload { 2 } else { 1 }))
                    .with_waited_millis(waited);
                if let Some(age) = key_age {
                    incoming = incoming.with_key_created_millis(self.now.saturating_sub(age));
                }
                let decision = decide(self.store.as_ref(), &incoming, self.now, policy).unwrap();
                self.check_decision(&decision, &incoming, policy)?;
                if let Decision::Execute(claim) = decision {
                    self.claims.insert(worker, claim);
                }
            }
            Event::Claim(worker) => {
                let Some(claim) = self.claims.remove(&worker) else {
                    return Ok(());
                };
                if let Ok(written) = claim.apply(self.store.as_ref(), self.now) {
                    let fence = claim.fence();
                    // Never two grants of the same claim.
                    prop_assert!(self.granted.insert(fence), "fence {fence:?} granted twice");
                    if let Some(old) = self.store {
                        prop_assert_eq!(old.created_millis, written.created_millis);
                        prop_assert!(written.token > old.token, "token did not grow");
                    } else {
                        prop_assert_eq!(written.token, 1);
                    }
                    self.store = Some(written);
                    self.fences.insert(worker, fence);
                    self.last_granted = Some(fence);
                }
            }
            Event::Complete(worker) | Event::Fail(worker, _) => {
                let (Some(fence), Some(current)) = (self.fences.get(&worker).copied(), self.store)
                else {
                    return Ok(());
                };
                let result = match *event {
                    Event::Fail(_, true) => current.fail(fence, Failure::Retryable, policy),
                    Event::Fail(_, false) => current.fail(fence, Failure::Final, policy),
                    _ => current.complete(fence),
                };
                match result {
                    Ok(ended) => {
                        // Only the latest claim can end, and only once.
                        prop_assert_eq!(Some(fence), self.last_granted);
                        prop_assert_eq!(current.status, Status::Pending);
                        prop_assert!(self.ended.insert(fence), "claim ended twice");
                        prop_assert_eq!(ended.fence(), fence);
                        self.store = Some(ended);
                    }
                    Err(error) if fence != current.fence() => {
                        prop_assert_eq!(error.kind(), RecordErrorKind::StaleToken);
                    }
                    Err(error) => {
                        prop_assert_eq!(error.kind(), RecordErrorKind::NotPending);
                        prop_assert_ne!(current.status, Status::Pending);
                    }
                }
            }
            Event::Cleanup => {
                if self.store.is_some_and(|r| r.is_removable(self.now)) {
                    self.store = None;
                }
            }
        }
        Ok(())
    }

    fn check_decision(
        &self,
        decision: &Decision,
        incoming: &Incoming,
        policy: &RecordPolicy,
    ) -> Result<(), TestCaseError> {
        let live = self
            .store
            .filter(|r| !r.is_expired(self.now) && r.fingerprint == incoming.fingerprint);
        match *decision {
            Decision::Execute(claim) => {
                prop_assert_eq!(claim.record.status, Status::Pending);
                prop_assert_eq!(
                    claim.record.lease_deadline_millis,
                    self.now + policy.lease_millis()
                );
                if let Some(record) = self.store {
                    prop_assert!(
                        record.status == Status::FailedRetryable
                            || (record.status == Status::Pending
                                && self.now >= record.lease_deadline_millis)
                    );
                }
            }
            Decision::Replay(outcome) => {
                let record = live.expect("a replay needs a live record");
                prop_assert_eq!(outcome.as_str(), record.status.as_str());
            }
            Decision::InProgress { retry_after_millis } => {
                let record = live.expect("in progress needs a live record");
                prop_assert!(retry_after_millis >= 1);
                prop_assert!(self.now + retry_after_millis <= record.lease_deadline_millis);
                prop_assert!(incoming.waited_millis >= policy.max_wait_millis());
            }
            Decision::Wait { poll_millis } => {
                let record = live.expect("a wait needs a live record");
                prop_assert!(poll_millis >= 1);
                prop_assert!(self.now + poll_millis <= record.lease_deadline_millis);
                prop_assert!(incoming.waited_millis + poll_millis <= policy.max_wait_millis());
            }
            Decision::FingerprintMismatch => {
                let record = self.store.expect("a mismatch needs a record");
                prop_assert_ne!(record.fingerprint, incoming.fingerprint);
            }
            Decision::KeyTooOld => {
                let by_key = incoming
                    .key_created_millis
                    .is_some_and(|created| self.now >= created + policy.retention_millis());
                let by_record = self.store.is_some_and(|r| r.is_expired(self.now));
                prop_assert!(by_key || by_record);
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fencing_holds_under_any_interleaving(
        policy in policy(),
        events in prop::collection::vec(event(), 1..80),
    ) {
        let mut world = World {
            now: 1_000_000,
            store: None,
            claims: HashMap::new(),
            fences: HashMap::new(),
            granted: HashSet::new(),
            last_granted: None,
            ended: HashSet::new(),
        };
        for event in &events {
            world.run(event, &policy)?;
        }
    }

    #[test]
    fn decide_never_panics_on_any_record(
        status in prop::sample::select(Status::ALL.to_vec()),
        same_payload in any::<bool>(),
        token in any::<u64>(),
        lease_deadline in any::<u64>(),
        created in any::<u64>(),
        expires in any::<u64>(),
        key_created in any::<Option<u64>>(),
        waited in any::<u64>(),
        now in any::<u64>(),
        policy in policy(),
    ) {
        let record = Record {
            status,
            fingerprint: fingerprint(1),
            token,
            lease_deadline_millis: lease_deadline,
            created_millis: created,
            expires_millis: expires,
        };
        let mut incoming = Incoming::new(fingerprint(if same_payload { 1 } else { 2 }))
            .with_waited_millis(waited);
        if let Some(t) = key_created {
            incoming = incoming.with_key_created_millis(t);
        }
        for existing in [None, Some(&record)] {
            match decide(existing, &incoming, now, &policy) {
                Ok(Decision::Execute(claim)) => {
                    let expected_token = existing.map_or(1, |r| r.token + 1);
                    prop_assert_eq!(claim.record.token, expected_token);
                    prop_assert_eq!(claim.apply(existing, now), Ok(claim.record));
                }
                Ok(_) => {}
                Err(error) => prop_assert!(matches!(
                    error.kind(),
                    RecordErrorKind::TimeOverflow | RecordErrorKind::TokenExhausted
                )),
            }
        }
    }
}
