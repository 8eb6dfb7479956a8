//! A spec: which driver a wire makes, and everything it needs
//! (`docs/spec.md`, "The wire", the spec table).

use alloc::string::String;
use alloc::vec::Vec;

use mintid::outbox::RelayPolicy;
use mintid::record::RecordPolicy;
use mintid::store::{Dialect, DriverError, Held, Manifest, Placeholder, Way};

use crate::kind;
use crate::read::Reader;
use crate::write::{put_bytes, put_optional, put_u64};

/// A key's three parts as the host gave them (the core checks them when
/// the driver is made: a part that was not UTF-8 reads with U+FFFD, which
/// the core refuses, naming the part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParts {
    /// The operation kind, e.g. `order.create`.
    pub kind: String,
    /// The scope (a tenant, a user), possibly empty.
    pub scope: String,
    /// The caller's id.
    pub id: String,
}

/// What a wire drives, decoded from its packed spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// The record driver of one request.
    Record {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The store's policy.
        policy: RecordPolicy,
        /// How the request comes in.
        way: Way,
        /// The Redis fast path in front of the database, if any, with its
        /// optional TTL cap.
        fast: Option<Option<u64>>,
        /// The idempotency key.
        key: KeyParts,
        /// The payload's fingerprint (its SHA-256 digest).
        digest: [u8; 32],
        /// When the key was made, if it says.
        key_created_millis: Option<u64>,
    },
    /// One outbox relay run.
    Relay {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The relay's policy.
        policy: RelayPolicy,
        /// A random `u64`: the run's claim tokens and jitter.
        seed: u64,
    },
    /// One renewal of a held record's lease.
    RecordRenewal {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The store's policy.
        policy: RecordPolicy,
        /// The key whose claim is held.
        key: KeyParts,
        /// The held claim (its `renew_every_millis` is not on the wire).
        held: Held,
    },
    /// The cleanup of expired records.
    RecordCleanup {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Records per statement (at least 1).
        batch_size: u64,
    },
    /// The cleanup of sent outbox messages.
    OutboxCleanup {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Messages sent at or before this Unix millisecond go.
        sent_before_millis: u64,
        /// Messages per statement (at least 1).
        batch_size: u64,
    },
    /// The load of one record.
    RecordLoad {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Its key.
        key: KeyParts,
    },
    /// The load of one outbox message.
    OutboxLoad {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Its kind.
        kind: String,
        /// Its business key.
        business_key: String,
    },
    /// The numbered migrations applied (`pending`: false) or the pending
    /// ones listed (`pending`: true).
    Migrations {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Only list the pending versions.
        pending: bool,
    },
    /// The heartbeat of a held record claim.
    Heartbeat {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The store's policy.
        policy: RecordPolicy,
        /// The key whose claim is held.
        key: KeyParts,
        /// The held claim, with its `renew_every_millis` (none: no heartbeat).
        held: Held,
    },
    /// The enqueue of one outbox message.
    Enqueue {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// Its id.
        message_id: u64,
        /// Its kind.
        kind: String,
        /// Its business key.
        business_key: String,
        /// Its payload.
        payload: Vec<u8>,
    },
}

const DIALECTS: [Dialect; 3] = [Dialect::Postgres, Dialect::Mysql, Dialect::Sqlite];
const PLACEHOLDERS: [Placeholder; 3] = [
    Placeholder::Question,
    Placeholder::Numbered,
    Placeholder::Format,
];
const WAYS: [Way; 3] = [Way::RunOnce, Way::SameTransaction, Way::Lease];

impl Spec {
    /// Reads a packed spec: `store.unexpected_row` when it is not in the
    /// layout, the core's refusal of a policy (`record.invalid_policy`,
    /// `outbox.invalid_policy`).
    pub fn decode(packed: &[u8]) -> Result<Self, DriverError> {
        let mut reader = Reader::new(packed, "spec");
        let kind = reader.u8()?;
        let manifest = Manifest::new(
            pick(&mut reader, &DIALECTS)?,
            pick(&mut reader, &PLACEHOLDERS)?,
        );
        let spec = match kind {
            kind::RECORD => Spec::Record {
                manifest,
                policy: record_policy(&mut reader)?,
                way: pick(&mut reader, &WAYS)?,
                fast: reader.optional(|reader| reader.optional(Reader::u64))?,
                key: key(&mut reader)?,
                digest: reader.array()?,
                key_created_millis: reader.optional(Reader::u64)?,
            },
            kind::RELAY => Spec::Relay {
                manifest,
                policy: relay_policy(&mut reader)?,
                seed: reader.u64()?,
            },
            kind::RECORD_RENEWAL => {
                let (policy, key, held) = claim(&mut reader)?;
                Spec::RecordRenewal {
                    manifest,
                    policy,
                    key,
                    held,
                }
            }
            kind::RECORD_CLEANUP => Spec::RecordCleanup {
                manifest,
                batch_size: reader.u64()?,
            },
            kind::OUTBOX_CLEANUP => Spec::OutboxCleanup {
                manifest,
                sent_before_millis: reader.u64()?,
                batch_size: reader.u64()?,
            },
            kind::RECORD_LOAD => Spec::RecordLoad {
                manifest,
                key: key(&mut reader)?,
            },
            kind::OUTBOX_LOAD => Spec::OutboxLoad {
                manifest,
                kind: reader.text()?,
                business_key: reader.text()?,
            },
            kind::ENQUEUE => Spec::Enqueue {
                manifest,
                message_id: reader.u64()?,
                kind: reader.text()?,
                business_key: reader.text()?,
                payload: reader.bytes()?,
            },
            kind::MIGRATIONS => Spec::Migrations {
                manifest,
                pending: reader.flag()?,
            },
            kind::HEARTBEAT => {
                let (policy, key, mut held) = claim(&mut reader)?;
                held.renew_every_millis = reader.optional(Reader::u64)?;
                Spec::Heartbeat {
                    manifest,
                    policy,
                    key,
                    held,
                }
            }
            _ => return Err(reader.malformed()),
        };
        reader.end(spec)
    }

    /// Packs this spec (what a host's codec writes), appended to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let (kind, manifest) = match self {
            Spec::Record { manifest, .. } => (kind::RECORD, manifest),
            Spec::Relay { manifest, .. } => (kind::RELAY, manifest),
            Spec::RecordRenewal { manifest, .. } => (kind::RECORD_RENEWAL, manifest),
            Spec::RecordCleanup { manifest, .. } => (kind::RECORD_CLEANUP, manifest),
            Spec::OutboxCleanup { manifest, .. } => (kind::OUTBOX_CLEANUP, manifest),
            Spec::RecordLoad { manifest, .. } => (kind::RECORD_LOAD, manifest),
            Spec::OutboxLoad { manifest, .. } => (kind::OUTBOX_LOAD, manifest),
            Spec::Enqueue { manifest, .. } => (kind::ENQUEUE, manifest),
            Spec::Migrations { manifest, .. } => (kind::MIGRATIONS, manifest),
            Spec::Heartbeat { manifest, .. } => (kind::HEARTBEAT, manifest),
        };
        out.push(kind);
        out.push(index(&DIALECTS, manifest.dialect));
        out.push(index(&PLACEHOLDERS, manifest.placeholder));
        match self {
            Spec::Record {
                policy,
                way,
                fast,
                key,
                digest,
                key_created_millis,
                ..
            } => {
                put_record_policy(out, policy);
                out.push(index(&WAYS, *way));
                put_optional(out, *fast, |out, ttl| put_optional(out, ttl, put_u64));
                put_key(out, key);
                out.extend_from_slice(digest);
                put_optional(out, *key_created_millis, put_u64);
            }
            Spec::Relay { policy, seed, .. } => {
                for number in [
                    policy.batch_size(),
                    policy.claim_millis(),
                    policy.base_backoff_millis(),
                    policy.max_backoff_millis(),
                ] {
                    put_u64(out, number);
                }
                out.push(policy.jitter_percent());
                put_u64(out, policy.max_attempts());
                put_u64(out, *seed);
            }
            Spec::RecordRenewal {
                policy, key, held, ..
            } => put_claim(out, policy, key, held),
            Spec::RecordCleanup { batch_size, .. } => put_u64(out, *batch_size),
            Spec::OutboxCleanup {
                sent_before_millis,
                batch_size,
                ..
            } => {
                put_u64(out, *sent_before_millis);
                put_u64(out, *batch_size);
            }
            Spec::RecordLoad { key, .. } => put_key(out, key),
            Spec::OutboxLoad {
                kind, business_key, ..
            } => {
                put_bytes(out, kind.as_bytes());
                put_bytes(out, business_key.as_bytes());
            }
            Spec::Enqueue {
                message_id,
                kind,
                business_key,
                payload,
                ..
            } => {
                put_u64(out, *message_id);
                put_bytes(out, kind.as_bytes());
                put_bytes(out, business_key.as_bytes());
                put_bytes(out, payload);
            }
            Spec::Migrations { pending, .. } => out.push(u8::from(*pending)),
            Spec::Heartbeat {
                policy, key, held, ..
            } => {
                put_claim(out, policy, key, held);
                put_optional(out, held.renew_every_millis, put_u64);
            }
        }
    }
}

/// The item a `u8` index names.
fn pick<T: Copy>(reader: &mut Reader<'_>, items: &[T]) -> Result<T, DriverError> {
    let at = usize::from(reader.u8()?);
    items.get(at).copied().ok_or_else(|| reader.malformed())
}

/// The `u8` index of `item`.
fn index<T: PartialEq>(items: &[T], item: T) -> u8 {
    let at = items.iter().position(|each| *each == item).unwrap_or(0);
    u8::try_from(at).unwrap_or(0)
}

fn key(reader: &mut Reader<'_>) -> Result<KeyParts, DriverError> {
    let mut part = || -> Result<String, DriverError> {
        Ok(String::from_utf8_lossy(reader.raw()?).into_owned())
    };
    Ok(KeyParts {
        kind: part()?,
        scope: part()?,
        id: part()?,
    })
}

fn put_key(out: &mut Vec<u8>, key: &KeyParts) {
    for part in [&key.kind, &key.scope, &key.id] {
        put_bytes(out, part.as_bytes());
    }
}

/// A held claim (record renewal, heartbeat): the record policy, the key,
/// `token`, `created_millis`, `lease_deadline_millis` (no
/// `renew_every_millis`: the heartbeat reads it after).
fn claim(reader: &mut Reader<'_>) -> Result<(RecordPolicy, KeyParts, Held), DriverError> {
    let policy = record_policy(reader)?;
    let key = key(reader)?;
    let held = Held {
        token: reader.u64()?,
        created_millis: reader.u64()?,
        lease_deadline_millis: reader.u64()?,
        renew_every_millis: None,
    };
    Ok((policy, key, held))
}

fn put_claim(out: &mut Vec<u8>, policy: &RecordPolicy, key: &KeyParts, held: &Held) {
    put_record_policy(out, policy);
    put_key(out, key);
    put_u64(out, held.token);
    put_u64(out, held.created_millis);
    put_u64(out, held.lease_deadline_millis);
}

fn record_policy(reader: &mut Reader<'_>) -> Result<RecordPolicy, DriverError> {
    let (lease, retention) = (reader.u64()?, reader.u64()?);
    let store_errors = reader.flag()?;
    let retry_after = reader.u64()?;
    let (max_wait, poll) = (reader.u64()?, reader.u64()?);
    Ok(RecordPolicy::new(lease, retention)?
        .with_store_errors(store_errors)
        .with_retry_after_millis(retry_after)?
        .with_wait(max_wait, poll)?)
}

fn put_record_policy(out: &mut Vec<u8>, policy: &RecordPolicy) {
    put_u64(out, policy.lease_millis());
    put_u64(out, policy.retention_millis());
    out.push(u8::from(policy.store_errors()));
    put_u64(out, policy.retry_after_millis());
    put_u64(out, policy.max_wait_millis());
    put_u64(out, policy.poll_millis());
}

fn relay_policy(reader: &mut Reader<'_>) -> Result<RelayPolicy, DriverError> {
    let (batch_size, claim) = (reader.u64()?, reader.u64()?);
    let (base, max) = (reader.u64()?, reader.u64()?);
    let jitter = reader.u8()?;
    let attempts = reader.u64()?;
    Ok(RelayPolicy::new(batch_size, claim)?
        .with_backoff(base, max, jitter)?
        .with_max_attempts(attempts)?)
}
