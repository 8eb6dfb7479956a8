//! The Redis fast path in front of the record driver: which script a host
//! runs with which keys and arguments, and what Redis's answer means.
//!
//! The database stays the truth. Redis only ever answers a request without
//! the database by replaying a result the database committed (the entry is
//! written after the commit, with a time to live below the record's
//! retention) or by saying that a duplicate is in flight; anything else, a
//! failure or a timeout included, sends the request down the database path
//! ([`FastVerdict::Miss`], [`FastVerdict::Fallback`]). The full rules are in
//! `docs/spec.md`, "The fast path".

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::limits::{self, RECORD_ERROR_MAX_BYTES};
use super::{Finished, Held, StoredResponse};
use crate::fingerprint::Fingerprint;
use crate::key::IdempotencyKey;
use crate::record::{Fence, Outcome, RecordPolicy};

/// The prefix of every entry's name: `mintid:{<key text>}`, the key's text
/// as the hash tag, so that everything of one record is on one slot.
pub const ENTRY_PREFIX: &str = "mintid:";
/// How much earlier than the record's retention an entry expires, in
/// milliseconds: room for the clocks of the hosts and of Redis to differ.
pub const TTL_MARGIN_MILLIS: u64 = 1_000;

/// One of the fast path's scripts (`schema/redis/*.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Script {
    /// Its name: `check`, `settle` or `forget`.
    pub name: &'static str,
    /// Its Lua source, sent by `EVAL` when a node does not have it yet.
    pub source: &'static str,
    /// The SHA-1 of the source, in lowercase hex: what `EVALSHA` names it by.
    pub sha1: &'static str,
}

/// The `check` script: a request's look before the database.
pub const CHECK: Script = Script {
    name: "check",
    source: include_str!("../../schema/redis/check.lua"),
    sha1: "b0a3f27b889e7e8a624f981b3bd24508c0fc8994",
};
/// The `settle` script: the committed result, after the database.
pub const SETTLE: Script = Script {
    name: "settle",
    source: include_str!("../../schema/redis/settle.lua"),
    sha1: "1aff64b82c0f602766bf358e4a9857c463c0cd6f",
};
/// The `forget` script: drop a claiming marker or an older fence's entry.
pub const FORGET: Script = Script {
    name: "forget",
    source: include_str!("../../schema/redis/forget.lua"),
    sha1: "4980089b2141f327fcc31e12f9b220feb88e5b08",
};

/// One script to run on the cluster, with its keys (one entry, so one
/// slot) and its arguments. The host sends `EVALSHA` with
/// [`sha1`](Self::sha1), or `EVAL` with [`source`](Self::source) when
/// [`eval`](Self::eval) says so (after a node answered `NOSCRIPT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisCall {
    /// The script's name: `check`, `settle` or `forget`.
    pub script: &'static str,
    /// The SHA-1 of the script's source, for `EVALSHA`.
    pub sha1: &'static str,
    /// The script's source, for `EVAL`.
    pub source: &'static str,
    /// Send `EVAL` with the source, not `EVALSHA`: the node answered
    /// `NOSCRIPT` to the same call by `EVALSHA`.
    pub eval: bool,
    /// The keys (`KEYS`): the record's entry.
    pub keys: Vec<String>,
    /// The arguments (`ARGV`), as bytes.
    pub args: Vec<Vec<u8>>,
}

impl RedisCall {
    fn new(script: Script, entry: &str, args: Vec<Vec<u8>>) -> Self {
        Self {
            script: script.name,
            sha1: script.sha1,
            source: script.source,
            eval: false,
            keys: vec![String::from(entry)],
            args,
        }
    }

    /// The same call by `EVAL`, after `NOSCRIPT`; `None` when it already was.
    pub(crate) fn by_eval(&self) -> Option<Self> {
        (!self.eval).then(|| Self {
            eval: true,
            ..self.clone()
        })
    }
}

/// What Redis said to a `check`, as the host pushes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FastAnswer {
    /// A nil reply.
    Nil,
    /// An array reply: each element's bytes (an integer as its decimal
    /// text), or `None` for a nil element.
    Fields(Vec<Option<Vec<u8>>>),
    /// Redis failed: an error reply, a lost connection, a timeout, a cluster
    /// without a primary for the slot, or a reply of another shape.
    Failed(String),
    /// The node does not have the script (`NOSCRIPT`: after a restart, a
    /// failover or `SCRIPT FLUSH`): the driver sends the call again by
    /// `EVAL`, which loads it.
    NoScript,
}

/// What a request does after the `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FastVerdict {
    /// A hit: answer with this without the database (a replay, or in
    /// progress).
    Answer(Finished),
    /// A miss: nothing usable in Redis; go to the database.
    Miss,
    /// Redis failed or answered something unreadable: go to the database
    /// (counted apart from misses).
    Fallback,
}

impl FastVerdict {
    /// The `verdict` attribute of `mintid.fast_path.lookups`
    /// ([`crate::metrics::VERDICT`]): `hit`, `miss` or `fallback`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            FastVerdict::Answer(_) => "hit",
            FastVerdict::Miss => "miss",
            FastVerdict::Fallback => "fallback",
        }
    }
}

/// What the database path of a request came to, for `settle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The operation ran under `held` and its response is committed.
    Executed {
        /// The claim it ran under.
        held: Held,
        /// The response stored.
        response: StoredResponse,
    },
    /// The operation ran under `held` and its final failure is committed
    /// (the driver said `OperationFailed { stored: true }`).
    FailedStored {
        /// The claim it ran under.
        held: Held,
        /// The failure's error text (the core cuts it as it was stored).
        message: String,
        /// The failure's optional response.
        response: Option<StoredResponse>,
    },
    /// Anything else: not run (replayed or refused by the database), a key
    /// released, a store error; `held` when this request held a claim.
    Other {
        /// The claim this request held, if any.
        held: Option<Held>,
    },
}

/// The fast path of one store: its policy's lease and retention bound the
/// entries' lifetimes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastPath {
    policy: RecordPolicy,
    ttl_millis: u64,
}

impl FastPath {
    /// The fast path of a store under `policy`, entries living at most until
    /// [`TTL_MARGIN_MILLIS`] before the record's retention ends.
    pub const fn new(policy: RecordPolicy) -> Self {
        Self {
            policy,
            ttl_millis: u64::MAX,
        }
    }

    /// The same, entries living at most `ttl_millis` (at least 1) too.
    pub const fn with_ttl_millis(self, ttl_millis: u64) -> Self {
        Self {
            policy: self.policy,
            ttl_millis: if ttl_millis == 0 { 1 } else { ttl_millis },
        }
    }

    /// The name of `key`'s entry: `mintid:{<key text>}`.
    pub fn entry(key: &IdempotencyKey) -> String {
        format!("{ENTRY_PREFIX}{{{key}}}")
    }

    /// The `check` of the entry named `entry` to run before the database, or `None` when the request
    /// goes straight to the database: a key too old by its own creation
    /// time (the record driver refuses it without a query).
    pub(crate) fn check_entry(
        &self,
        entry: &str,
        fingerprint: &Fingerprint,
        key_created_millis: Option<u64>,
        now_millis: u64,
    ) -> Option<RedisCall> {
        if let Some(created) = key_created_millis {
            if now_millis >= created.saturating_add(self.policy.retention_millis()) {
                return None;
            }
        }
        let args = vec![
            fingerprint.as_bytes().to_vec(),
            number(self.policy.lease_millis()),
        ];
        Some(RedisCall::new(CHECK, entry, args))
    }

    /// What the `check`'s answer means for a request with `fingerprint`:
    /// a stored result of the same payload replays; a claiming marker of
    /// the same payload is in progress when duplicates do not wait
    /// (`max_wait_millis` 0; a waiting duplicate waits on the database);
    /// a nil (this request set the marker), another payload's entry (the
    /// database says `fingerprint_mismatch`) or an expired one is a miss;
    /// a failure or an unreadable answer a fallback.
    pub(crate) fn read_check(&self, fingerprint: &Fingerprint, answer: &FastAnswer) -> FastVerdict {
        let fields = match answer {
            FastAnswer::Nil => return FastVerdict::Miss,
            FastAnswer::Fields(fields) => fields,
            FastAnswer::Failed(_) | FastAnswer::NoScript => return FastVerdict::Fallback,
        };
        read_entry(fields, fingerprint, &self.policy).unwrap_or(FastVerdict::Fallback)
    }

    /// The script that follows the database path on the entry named `entry`: `settle` writes the
    /// committed result (after the commit, so Redis never replays what the
    /// database does not hold), with a time to live below the record's
    /// retention; everything else `forget`s (drops this request's claiming
    /// marker, and an older fence's entry).
    pub(crate) fn settle_entry(
        &self,
        entry: &str,
        fingerprint: &Fingerprint,
        settled: &Settled,
        now_millis: u64,
    ) -> RedisCall {
        let (held, outcome, response, error) = match settled {
            Settled::Executed { held, response } => {
                (*held, Outcome::Succeeded, Some(response), None)
            }
            Settled::FailedStored {
                held,
                message,
                response,
            } => (
                *held,
                Outcome::Failed,
                response.as_ref(),
                Some(limits::storable_text(message, RECORD_ERROR_MAX_BYTES)),
            ),
            Settled::Other { held } => return self.forget(entry, held.map(|h| h.fence())),
        };
        let Some(ttl) = self.entry_ttl(&held, now_millis) else {
            return self.forget(entry, Some(held.fence()));
        };
        let flag = |present: bool| vec![if present { b'1' } else { b'0' }];
        RedisCall::new(
            SETTLE,
            entry,
            vec![
                fingerprint.as_bytes().to_vec(),
                number(held.token),
                number(held.created_millis),
                outcome_text(outcome).as_bytes().to_vec(),
                flag(response.is_some()),
                response.map_or_else(Vec::new, |r| r.content_type.as_bytes().to_vec()),
                response.map_or_else(Vec::new, |r| r.body.clone()),
                flag(error.is_some()),
                error.map_or_else(Vec::new, String::into_bytes),
                number(ttl),
            ],
        )
    }

    /// After a claim on the entry named `entry` is written: a fenced takeover (a reclaim, whose token
    /// is above one) invalidates the entry (`forget` up to the new fence);
    /// a first claim needs nothing.
    pub(crate) fn claimed_entry(&self, entry: &str, held: &Held) -> Option<RedisCall> {
        (held.token > 1).then(|| self.forget(entry, Some(held.fence())))
    }

    /// `forget` of the entry named `entry`, up to `fence` (a claiming marker
    /// only, without one).
    pub(crate) fn forget(&self, entry: &str, fence: Option<Fence>) -> RedisCall {
        let (token, created) = match fence {
            Some(fence) => (number(fence.token), number(fence.created_millis)),
            None => (Vec::new(), Vec::new()),
        };
        RedisCall::new(FORGET, entry, vec![token, created])
    }

    /// How long an entry for a record made at `held.created_millis` may
    /// live from `now`: until [`TTL_MARGIN_MILLIS`] before its retention
    /// ends (the record expires no sooner), at most `ttl_millis`; `None`
    /// when that is already past. A creation time after `now` (the claimer's
    /// clock ahead of this host's) counts as `now`, so that a clock running
    /// fast never makes an entry outlive its record.
    fn entry_ttl(&self, held: &Held, now_millis: u64) -> Option<u64> {
        let end = held
            .created_millis
            .min(now_millis)
            .saturating_add(self.policy.retention_millis())
            .saturating_sub(TTL_MARGIN_MILLIS);
        let ttl = end.checked_sub(now_millis)?.min(self.ttl_millis);
        (ttl >= 1).then_some(ttl)
    }
}

const fn outcome_text(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded => "succeeded",
        Outcome::Failed => "failed",
    }
}

fn number(value: u64) -> Vec<u8> {
    format!("{value}").into_bytes()
}

fn parse_number(field: Option<&Option<Vec<u8>>>) -> Option<i64> {
    core::str::from_utf8(field?.as_deref()?).ok()?.parse().ok()
}

/// Reads `check`'s fields (`s f t c o ct b e pttl`); `None` when they are
/// not in that layout.
fn read_entry(
    fields: &[Option<Vec<u8>>],
    fingerprint: &Fingerprint,
    policy: &RecordPolicy,
) -> Option<FastVerdict> {
    if fields.len() != 9 {
        return None;
    }
    let field = |at: usize| fields[at].as_deref();
    let pttl = parse_number(fields.get(8))?;
    if pttl == -2 {
        return Some(FastVerdict::Miss);
    }
    if field(1)? != fingerprint.as_bytes() {
        return Some(FastVerdict::Miss);
    }
    match field(0)? {
        b"claiming" => {
            if policy.max_wait_millis() > 0 {
                return Some(FastVerdict::Miss);
            }
            let left = u64::try_from(pttl).ok().filter(|left| *left >= 1);
            let retry_after_millis = left.map_or(policy.retry_after_millis(), |left| {
                left.min(policy.retry_after_millis())
            });
            Some(FastVerdict::Answer(Finished::InProgress {
                retry_after_millis,
            }))
        }
        b"done" => {
            let response = match (field(5), field(6)) {
                (Some(content_type), Some(body)) => Some(StoredResponse {
                    content_type: String::from(core::str::from_utf8(content_type).ok()?),
                    body: body.to_vec(),
                }),
                (None, None) => None,
                _ => return None,
            };
            let error = match field(7) {
                Some(text) => Some(String::from(core::str::from_utf8(text).ok()?)),
                None => None,
            };
            let (outcome, response, error) = match field(4)? {
                b"succeeded" => (
                    Outcome::Succeeded,
                    Some(response.unwrap_or(StoredResponse {
                        content_type: String::new(),
                        body: Vec::new(),
                    })),
                    None,
                ),
                b"failed" => (Outcome::Failed, response, Some(error.unwrap_or_default())),
                _ => return None,
            };
            Some(FastVerdict::Answer(Finished::Replay {
                outcome,
                response,
                error,
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    const NOW: u64 = 1_800_000_000_000;

    fn key() -> IdempotencyKey {
        IdempotencyKey::new("order", "shop", "k-1").unwrap()
    }

    fn entry() -> String {
        FastPath::entry(&key())
    }

    fn policy() -> RecordPolicy {
        RecordPolicy::new(60_000, 86_400_000).unwrap()
    }

    fn print(byte: u8) -> Fingerprint {
        Fingerprint::from_digest([byte; 32])
    }

    fn held(token: u64, created_millis: u64) -> Held {
        Held {
            token,
            created_millis,
            lease_deadline_millis: created_millis + 60_000,
            renew_every_millis: Some(20_000),
        }
    }

    fn bytes(text: &str) -> Option<Vec<u8>> {
        Some(text.as_bytes().to_vec())
    }

    fn done(outcome: &str, print_byte: u8) -> Vec<Option<Vec<u8>>> {
        vec![
            bytes("done"),
            Some(vec![print_byte; 32]),
            bytes("1"),
            bytes("1800000000000"),
            bytes(outcome),
            bytes("application/json"),
            bytes("{}"),
            (outcome == "failed").then(|| b"boom".to_vec()),
            bytes("86000000"),
        ]
    }

    fn claiming(print_byte: u8, pttl: &str) -> Vec<Option<Vec<u8>>> {
        let mut fields = vec![bytes("claiming"), Some(vec![print_byte; 32])];
        fields.extend([None, None, None, None, None, None, bytes(pttl)]);
        fields
    }

    #[test]
    fn entry_names_use_the_key_text_as_hash_tag() {
        assert_eq!(FastPath::entry(&key()), "mintid:{order:shop:k-1}");
    }

    #[test]
    fn check_sets_the_marker_for_a_lease() {
        let call = FastPath::new(policy())
            .check_entry(&entry(), &print(1), None, NOW)
            .unwrap();
        assert_eq!(call.script, "check");
        assert_eq!(call.keys, vec![String::from("mintid:{order:shop:k-1}")]);
        assert_eq!(call.args, vec![vec![1; 32], b"60000".to_vec()]);
    }

    #[test]
    fn a_key_too_old_by_its_own_time_skips_redis() {
        let fast = FastPath::new(policy());
        assert!(
            fast.check_entry(&entry(), &print(1), Some(NOW - 86_400_000), NOW)
                .is_none()
        );
        assert!(
            fast.check_entry(&entry(), &print(1), Some(NOW - 1), NOW)
                .is_some()
        );
    }

    #[test]
    fn answers_map_to_verdicts() {
        let fast = FastPath::new(policy());
        let read = |answer: FastAnswer| fast.read_check(&print(1), &answer);
        assert_eq!(read(FastAnswer::Nil), FastVerdict::Miss);
        assert_eq!(
            read(FastAnswer::Failed("timeout".into())),
            FastVerdict::Fallback
        );
        assert_eq!(
            read(FastAnswer::Fields(done("succeeded", 1))),
            FastVerdict::Answer(Finished::Replay {
                outcome: Outcome::Succeeded,
                response: Some(StoredResponse {
                    content_type: "application/json".into(),
                    body: b"{}".to_vec()
                }),
                error: None,
            })
        );
        assert_eq!(
            read(FastAnswer::Fields(done("failed", 1))),
            FastVerdict::Answer(Finished::Replay {
                outcome: Outcome::Failed,
                response: Some(StoredResponse {
                    content_type: "application/json".into(),
                    body: b"{}".to_vec()
                }),
                error: Some("boom".into()),
            })
        );
        assert_eq!(
            read(FastAnswer::Fields(done("succeeded", 2))),
            FastVerdict::Miss
        );
        assert_eq!(
            read(FastAnswer::Fields(claiming(1, "400"))),
            FastVerdict::Answer(Finished::InProgress {
                retry_after_millis: 400
            })
        );
        assert_eq!(
            read(FastAnswer::Fields(claiming(1, "59000"))),
            FastVerdict::Answer(Finished::InProgress {
                retry_after_millis: 1_000
            })
        );
        assert_eq!(
            read(FastAnswer::Fields(claiming(2, "400"))),
            FastVerdict::Miss
        );
        assert_eq!(
            read(FastAnswer::Fields(claiming(1, "-2"))),
            FastVerdict::Miss
        );
    }

    #[test]
    fn unreadable_answers_fall_back() {
        let fast = FastPath::new(policy());
        let read =
            |fields: Vec<Option<Vec<u8>>>| fast.read_check(&print(1), &FastAnswer::Fields(fields));
        assert_eq!(read(vec![bytes("done")]), FastVerdict::Fallback);
        let mut odd = done("succeeded", 1);
        odd[0] = bytes("pending");
        assert_eq!(read(odd), FastVerdict::Fallback);
        let mut half = done("succeeded", 1);
        half[6] = None;
        assert_eq!(read(half), FastVerdict::Fallback);
        let mut no_ttl = done("succeeded", 1);
        no_ttl[8] = bytes("soon");
        assert_eq!(read(no_ttl), FastVerdict::Fallback);
    }

    #[test]
    fn waiting_duplicates_wait_on_the_database() {
        let waiting = policy().with_wait(2_000, 50).unwrap();
        let fast = FastPath::new(waiting);
        let answer = FastAnswer::Fields(claiming(1, "400"));
        assert_eq!(fast.read_check(&print(1), &answer), FastVerdict::Miss);
    }

    #[test]
    fn settle_writes_the_committed_result_below_retention() {
        let fast = FastPath::new(policy());
        let response = StoredResponse {
            content_type: "text/plain".into(),
            body: b"ok".to_vec(),
        };
        let settled = Settled::Executed {
            held: held(1, NOW),
            response,
        };
        let call = fast.settle_entry(&entry(), &print(1), &settled, NOW + 5);
        assert_eq!(call.script, "settle");
        let ttl = (86_400_000 - TTL_MARGIN_MILLIS - 5).to_string();
        assert_eq!(
            call.args,
            vec![
                vec![1; 32],
                b"1".to_vec(),
                NOW.to_string().into_bytes(),
                b"succeeded".to_vec(),
                b"1".to_vec(),
                b"text/plain".to_vec(),
                b"ok".to_vec(),
                b"0".to_vec(),
                Vec::new(),
                ttl.into_bytes(),
            ]
        );
        let capped = fast
            .with_ttl_millis(10_000)
            .settle_entry(&entry(), &print(1), &settled, NOW);
        assert_eq!(capped.args[9], b"10000".to_vec());
    }

    #[test]
    fn a_claimer_clock_ahead_never_makes_an_entry_outlive_its_record() {
        let fast = FastPath::new(policy());
        let settled = Settled::Executed {
            held: held(1, NOW + 5_000),
            response: StoredResponse {
                content_type: String::new(),
                body: Vec::new(),
            },
        };
        let call = fast.settle_entry(&entry(), &print(1), &settled, NOW);
        let ttl = (86_400_000 - TTL_MARGIN_MILLIS).to_string();
        assert_eq!(call.args[9], ttl.into_bytes());
    }

    #[test]
    fn settle_cuts_a_stored_error_as_the_database_does() {
        let fast = FastPath::new(policy());
        let settled = Settled::FailedStored {
            held: held(3, NOW),
            message: "x".repeat(2_000),
            response: None,
        };
        let call = fast.settle_entry(&entry(), &print(1), &settled, NOW);
        assert_eq!(call.args[3], b"failed".to_vec());
        assert_eq!(call.args[4], b"0".to_vec());
        assert_eq!(call.args[7], b"1".to_vec());
        let stored = limits::truncate_error(&"x".repeat(2_000), RECORD_ERROR_MAX_BYTES);
        assert_eq!(call.args[8], stored.into_bytes());
    }

    #[test]
    fn late_results_and_everything_else_forget() {
        let fast = FastPath::new(policy());
        let old = Settled::Executed {
            held: held(1, NOW - 86_400_000 + 500),
            response: StoredResponse {
                content_type: String::new(),
                body: Vec::new(),
            },
        };
        let call = fast.settle_entry(&entry(), &print(1), &old, NOW);
        assert_eq!(call.script, "forget");
        assert_eq!(call.args[0], b"1".to_vec());
        let other = fast.settle_entry(&entry(), &print(1), &Settled::Other { held: None }, NOW);
        assert_eq!(other.script, "forget");
        assert_eq!(other.args, vec![Vec::<u8>::new(), Vec::new()]);
    }

    #[test]
    fn a_takeover_invalidates_the_entry() {
        let fast = FastPath::new(policy());
        assert!(fast.claimed_entry(&entry(), &held(1, NOW)).is_none());
        let call = fast.claimed_entry(&entry(), &held(2, NOW)).unwrap();
        assert_eq!(call.script, "forget");
        assert_eq!(call.args, vec![b"2".to_vec(), NOW.to_string().into_bytes()]);
    }

    #[test]
    fn verdicts_are_the_registrys_attribute_values() {
        let hit = FastVerdict::Answer(Finished::KeyTooOld);
        let names = [
            hit.as_str(),
            FastVerdict::Miss.as_str(),
            FastVerdict::Fallback.as_str(),
        ];
        assert_eq!(names, ["hit", "miss", "fallback"]);
        assert_eq!(names.as_slice(), crate::metrics::VERDICT.values);
    }

    #[test]
    fn every_script_is_named_by_the_sha1_of_its_source() {
        use sha1::Digest;
        for script in [CHECK, SETTLE, FORGET] {
            let digest = sha1::Sha1::digest(script.source.as_bytes());
            let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
            assert_eq!(script.sha1, hex, "{}", script.name);
        }
    }

    #[test]
    fn a_call_goes_by_eval_once() {
        let call = FastPath::new(policy())
            .check_entry(&entry(), &print(1), None, NOW)
            .unwrap();
        assert!(!call.eval);
        assert_eq!(call.sha1, CHECK.sha1);
        let again = call.by_eval().unwrap();
        assert!(again.eval);
        assert_eq!(again.source, CHECK.source);
        assert!(again.by_eval().is_none());
    }

    #[test]
    fn every_script_takes_the_entry_as_its_one_key() {
        let names = [CHECK.name, SETTLE.name, FORGET.name];
        assert_eq!(names, ["check", "settle", "forget"]);
        for script in [CHECK, SETTLE, FORGET] {
            assert!(script.source.contains("KEYS[1]"), "{}", script.name);
            assert!(!script.source.contains("KEYS[2]"), "{}", script.name);
        }
    }
}
