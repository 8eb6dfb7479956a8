//! A spec: which driver a wire makes, and everything it needs
//! (`docs/spec.md`, "The wire", the spec table).

use alloc::string::String;
use alloc::vec::Vec;

use mintid::lease::LeasePolicy;
use mintid::outbox::RelayPolicy;
use mintid::record::RecordPolicy;
use mintid::segment::SegmentPolicy;
use mintid::snowflake::SnowflakeLayout;
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

/// A worker-lease policy as the host gave it: its layout's fields, then its
/// durations (the core checks them when the driver is made:
/// `snowflake.invalid_layout`, `lease.invalid_policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeasePolicyParts {
    /// The layout's time bits.
    pub time_bits: u8,
    /// The layout's worker bits (datacenter bits included).
    pub worker_bits: u8,
    /// The layout's sequence bits.
    pub sequence_bits: u8,
    /// The top worker bits read as a datacenter id.
    pub datacenter_bits: u8,
    /// The layout's epoch, Unix ms.
    pub epoch_millis: u64,
    /// The layout's tick, ms.
    pub tick_millis: u64,
    /// How long a lease runs after the acquisition or renewal that set it.
    pub lease_millis: u64,
    /// How long after a successful renewal the next one is due.
    pub renew_interval_millis: u64,
    /// How long before the deadline a holder stops issuing.
    pub safety_margin_millis: u64,
    /// How long after a failed renewal the next one is due.
    pub renew_retry_millis: u64,
    /// The bound on the clock skew between hosts.
    pub max_skew_millis: u64,
    /// The longest wait a new holder accepts before it may issue.
    pub max_start_wait_millis: u64,
}

impl LeasePolicyParts {
    /// The parts of `policy`.
    pub fn of(policy: &LeasePolicy) -> Self {
        let layout = policy.layout();
        Self {
            time_bits: layout.time_bits(),
            worker_bits: layout.worker_bits(),
            sequence_bits: layout.sequence_bits(),
            datacenter_bits: layout.datacenter_bits(),
            epoch_millis: layout.epoch_millis(),
            tick_millis: layout.tick_millis(),
            lease_millis: policy.lease_millis(),
            renew_interval_millis: policy.renew_interval_millis(),
            safety_margin_millis: policy.safety_margin_millis(),
            renew_retry_millis: policy.renew_retry_millis(),
            max_skew_millis: policy.max_skew_millis(),
            max_start_wait_millis: policy.max_start_wait_millis(),
        }
    }

    /// The core's policy, or its refusal of the layout or a duration.
    pub fn policy<E: From<mintid::SnowflakeError> + From<DriverError>>(
        &self,
    ) -> Result<LeasePolicy, E> {
        let layout = SnowflakeLayout::new(
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            self.epoch_millis,
            self.tick_millis,
        )?
        .with_datacenter_bits(self.datacenter_bits)?;
        let policy = LeasePolicy::new(layout)
            .and_then(|policy| {
                policy.with_lease(
                    self.lease_millis,
                    self.renew_interval_millis,
                    self.safety_margin_millis,
                )
            })
            .and_then(|policy| policy.with_renew_retry_millis(self.renew_retry_millis))
            .map_err(DriverError::from)?;
        Ok(policy
            .with_max_skew_millis(self.max_skew_millis)
            .with_max_start_wait_millis(self.max_start_wait_millis))
    }
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
    /// The segment IDs of one tag.
    Segment {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The tag (the core checks it: `segment.invalid_tag`).
        tag: String,
        /// The allocator's policy.
        policy: SegmentPolicy,
    },
    /// The acquisition of a worker-id lease.
    LeaseAcquire {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The lease policy.
        policy: LeasePolicyParts,
        /// The owner (made storable and cut by the core).
        owner: String,
        /// Give up this long after the start (`lease.acquire_timeout`).
        timeout_millis: Option<u64>,
    },
    /// One renewal of a held worker-id lease.
    LeaseRenew {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The guard's serial in the registry ([`crate::guards`]).
        guard: u64,
    },
    /// The release of a held worker-id lease: making the wire stops the
    /// guard issuing.
    LeaseRelease {
        /// The statements' dialect and placeholder style.
        manifest: Manifest,
        /// The guard's serial in the registry ([`crate::guards`]).
        guard: u64,
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
            kind::SEGMENT => Spec::Segment {
                manifest,
                tag: lossy(&mut reader)?,
                policy: segment_policy(&mut reader)?,
            },
            kind::LEASE_ACQUIRE => Spec::LeaseAcquire {
                manifest,
                policy: lease_policy(&mut reader)?,
                owner: lossy(&mut reader)?,
                timeout_millis: reader.optional(Reader::u64)?,
            },
            kind::LEASE_RENEW => Spec::LeaseRenew {
                manifest,
                guard: reader.u64()?,
            },
            kind::LEASE_RELEASE => Spec::LeaseRelease {
                manifest,
                guard: reader.u64()?,
            },
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
            Spec::Segment { manifest, .. } => (kind::SEGMENT, manifest),
            Spec::LeaseAcquire { manifest, .. } => (kind::LEASE_ACQUIRE, manifest),
            Spec::LeaseRenew { manifest, .. } => (kind::LEASE_RENEW, manifest),
            Spec::LeaseRelease { manifest, .. } => (kind::LEASE_RELEASE, manifest),
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
                put_bytes(out, kind);
                put_bytes(out, business_key);
            }
            Spec::Enqueue {
                message_id,
                kind,
                business_key,
                payload,
                ..
            } => {
                put_u64(out, *message_id);
                put_bytes(out, kind);
                put_bytes(out, business_key);
                put_bytes(out, payload);
            }
            Spec::Migrations { pending, .. } => out.push(u8::from(*pending)),
            Spec::Heartbeat {
                policy, key, held, ..
            } => {
                put_claim(out, policy, key, held);
                put_optional(out, held.renew_every_millis, put_u64);
            }
            Spec::Segment { tag, policy, .. } => {
                put_bytes(out, tag);
                put_segment_policy(out, policy);
            }
            Spec::LeaseAcquire {
                policy,
                owner,
                timeout_millis,
                ..
            } => {
                put_lease_policy(out, policy);
                put_bytes(out, owner);
                put_optional(out, *timeout_millis, put_u64);
            }
            Spec::LeaseRenew { guard, .. } | Spec::LeaseRelease { guard, .. } => {
                put_u64(out, *guard);
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

/// A text a host gave, read with U+FFFD where it is not UTF-8 (the core
/// refuses or makes storable what it must).
fn lossy(reader: &mut Reader<'_>) -> Result<String, DriverError> {
    Ok(String::from_utf8_lossy(reader.raw()?).into_owned())
}

fn key(reader: &mut Reader<'_>) -> Result<KeyParts, DriverError> {
    Ok(KeyParts {
        kind: lossy(reader)?,
        scope: lossy(reader)?,
        id: lossy(reader)?,
    })
}

fn put_key(out: &mut Vec<u8>, key: &KeyParts) {
    for part in [&key.kind, &key.scope, &key.id] {
        put_bytes(out, part);
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

/// A segment policy: `initial_step`, `min_step`, `max_step`,
/// `fetch_at_percent u8`, `grow_below_millis`, `shrink_above_millis`.
fn segment_policy(reader: &mut Reader<'_>) -> Result<SegmentPolicy, DriverError> {
    let (initial, min, max) = (reader.u64()?, reader.u64()?, reader.u64()?);
    let percent = reader.u8()?;
    let (grow_below, shrink_above) = (reader.u64()?, reader.u64()?);
    Ok(SegmentPolicy::new(initial, min, max)?
        .with_fetch_at_percent(percent)?
        .with_adaptation(grow_below, shrink_above)?)
}

fn put_segment_policy(out: &mut Vec<u8>, policy: &SegmentPolicy) {
    for number in [policy.initial_step(), policy.min_step(), policy.max_step()] {
        put_u64(out, number);
    }
    out.push(policy.fetch_at_percent());
    put_u64(out, policy.grow_below_millis());
    put_u64(out, policy.shrink_above_millis());
}

/// A lease policy: the layout's `time_bits`, `worker_bits`,
/// `sequence_bits`, `datacenter_bits` (`u8` each), `epoch_millis`,
/// `tick_millis`, then `lease_millis`, `renew_interval_millis`,
/// `safety_margin_millis`, `renew_retry_millis`, `max_skew_millis`,
/// `max_start_wait_millis`.
fn lease_policy(reader: &mut Reader<'_>) -> Result<LeasePolicyParts, DriverError> {
    Ok(LeasePolicyParts {
        time_bits: reader.u8()?,
        worker_bits: reader.u8()?,
        sequence_bits: reader.u8()?,
        datacenter_bits: reader.u8()?,
        epoch_millis: reader.u64()?,
        tick_millis: reader.u64()?,
        lease_millis: reader.u64()?,
        renew_interval_millis: reader.u64()?,
        safety_margin_millis: reader.u64()?,
        renew_retry_millis: reader.u64()?,
        max_skew_millis: reader.u64()?,
        max_start_wait_millis: reader.u64()?,
    })
}

fn put_lease_policy(out: &mut Vec<u8>, policy: &LeasePolicyParts) {
    out.extend_from_slice(&[
        policy.time_bits,
        policy.worker_bits,
        policy.sequence_bits,
        policy.datacenter_bits,
    ]);
    for number in [
        policy.epoch_millis,
        policy.tick_millis,
        policy.lease_millis,
        policy.renew_interval_millis,
        policy.safety_margin_millis,
        policy.renew_retry_millis,
        policy.max_skew_millis,
        policy.max_start_wait_millis,
    ] {
        put_u64(out, number);
    }
}
