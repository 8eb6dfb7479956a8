//! Property tests of worker-id leases end to end: one worker id, a
//! simulated `worker_lease` row, and hosts whose clocks are off by up to
//! ±5 s (far beyond the skew bound) taking it over when it expires or is
//! released, renewing or failing to, pausing, and issuing IDs from real
//! Snowflake generators checked by their guard. No ID is ever admitted
//! twice, and every holder's IDs are above every earlier holder's, also
//! with a skew bound of 0 (so the start-point rule alone is tested).

use std::collections::HashSet;

use mintid::lease::{LeaseGuard, LeasePolicy, WorkerLease, acquire};
use mintid::{ManualClock, RollbackPolicy, Snowflake, SnowflakeLayout};
use proptest::prelude::*;

const WORKER: u64 = 0;

#[derive(Debug, Clone)]
enum Event {
    /// Real time passes.
    Advance(u64),
    /// A new host (with this clock offset) tries to acquire the worker id.
    Acquire(i64),
    /// The latest host issues this many IDs (each checked by its guard).
    Issue(usize),
    /// The latest host's heartbeat renews; the database answers or not.
    Renew { answered: bool },
    /// The latest host releases on shutdown.
    Release,
    /// An earlier (paused, then resumed) host tries to issue.
    Zombie(usize),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        // Few distinct offsets and steps, so that two hosts' clocks often
        // read the same millisecond.
        prop::sample::select(vec![0u64, 100, 400, 500, 1_000, 2_500, 20_000])
            .prop_map(Event::Advance),
        prop::sample::select(vec![-5_000i64, -500, -100, 0, 100, 500, 5_000])
            .prop_map(Event::Acquire),
        (1usize..50).prop_map(Event::Issue),
        any::<bool>().prop_map(|answered| Event::Renew { answered }),
        Just(Event::Release),
        (0usize..4).prop_map(Event::Zombie),
    ]
}

struct Host {
    offset: i64,
    guard: LeaseGuard,
    generator: Snowflake<ManualClock>,
    highest: u64,
}

impl Host {
    fn now(&self, real: u64) -> u64 {
        real.saturating_add_signed(self.offset)
    }

    /// Issues up to `count` IDs at real time `real`; returns the admitted ones.
    /// With `checked`, the clock is checked first; without, only each ID is
    /// (a thread that checked the clock before it was paused).
    fn issue(&mut self, real: u64, count: usize, checked: bool) -> Vec<u64> {
        let now = self.now(real);
        self.generator.clock().set_millis(now);
        let mut admitted = Vec::new();
        for _ in 0..count {
            if checked && self.guard.check(now).is_err() {
                break;
            }
            let Ok(id) = self.generator.next_id() else {
                break;
            };
            if self.guard.admit(id).is_ok() {
                admitted.push(id.get());
                self.highest = self.highest.max(id.get());
            }
        }
        admitted
    }

    fn high_water(&self) -> u64 {
        self.generator
            .high_water_unix_millis()
            .unwrap_or(self.guard.start_after_millis())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn ids_never_repeat_and_holders_follow_each_other(
        max_skew in prop_oneof![Just(0u64), Just(1_000u64)],
        events in prop::collection::vec(event(), 1..160),
    ) {
        let layout = SnowflakeLayout::new(41, 0, 12, 0, 1).unwrap();
        let policy = LeasePolicy::new(layout).unwrap()
            .with_lease(3_000, 1_000, 500).unwrap()
            .with_max_skew_millis(max_skew);
        let mut real = 10_000_000u64;
        let mut row = WorkerLease {
            worker_id: WORKER,
            fencing_token: 0,
            lease_deadline_millis: 0,
            high_water_millis: 0,
            held: false,
        };
        let mut hosts: Vec<Host> = Vec::new();
        let mut seen = HashSet::new();
        // The highest ID admitted to any holder before the latest one.
        let mut earlier_highest = 0u64;
        for event in events {
            match event {
                Event::Advance(ms) => real += ms,
                Event::Acquire(offset) => {
                    let now = real.saturating_add_signed(offset);
                    // lease_find's condition, then lease_take's compare-and-set.
                    if row.held && row.lease_deadline_millis > now {
                        continue;
                    }
                    let Ok(acquisition) = acquire(&row, now, &policy) else { continue };
                    row = acquisition.lease;
                    let clock = ManualClock::new(now);
                    let generator = Snowflake::builder(layout, WORKER, clock)
                        .rollback(RollbackPolicy::Fail)
                        .starting_after_unix_millis(acquisition.start_after_millis)
                        .build()
                        .unwrap();
                    if let Some(last) = hosts.last() {
                        earlier_highest = earlier_highest.max(last.highest);
                    }
                    hosts.push(Host {
                        offset,
                        guard: LeaseGuard::new(&acquisition, &policy),
                        generator,
                        highest: 0,
                    });
                }
                Event::Issue(count) => {
                    if let Some(host) = hosts.last_mut() {
                        for id in host.issue(real, count, true) {
                            prop_assert!(seen.insert(id), "ID {} admitted twice", id);
                            prop_assert!(id > earlier_highest, "a holder went below an earlier one");
                        }
                    }
                }
                Event::Zombie(back) => {
                    let Some(index) = hosts.len().checked_sub(1 + back) else { continue };
                    for id in hosts[index].issue(real, 5, false) {
                        prop_assert!(seen.insert(id), "a paused holder's ID {} was issued again", id);
                    }
                }
                Event::Renew { answered } => {
                    let Some(host) = hosts.last() else { continue };
                    let now = host.now(real);
                    let Ok(renewal) = host.guard.renewal(now, host.high_water()) else { continue };
                    // lease_renew's guard.
                    let written = row.held
                        && row.fencing_token == renewal.fencing_token
                        && row.lease_deadline_millis > now
                        && row.lease_deadline_millis < renewal.lease_deadline_millis;
                    if written {
                        row.lease_deadline_millis = renewal.lease_deadline_millis;
                        row.high_water_millis = renewal.high_water_millis;
                    }
                    if answered {
                        let result = host.guard.renewed(&renewal, u64::from(written));
                        prop_assert_eq!(result.is_ok(), written);
                    } else {
                        host.guard.renewal_failed(now);
                    }
                }
                Event::Release => {
                    let Some(host) = hosts.last() else { continue };
                    let now = host.now(real);
                    let release = host.guard.release(now, host.high_water());
                    if row.held && row.fencing_token == release.fencing_token {
                        row.held = false;
                        row.lease_deadline_millis = now;
                        row.high_water_millis = release.high_water_millis;
                    }
                }
            }
        }
    }
}
