//! The driver behind a wire: one of the core's, made from a [`Spec`], and
//! how each input reaches it.

use alloc::boxed::Box;
use alloc::format;
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;

use mintid::fingerprint::Fingerprint;
use mintid::key::IdempotencyKey;
use mintid::lease::LeaseGuard;
use mintid::record::Incoming;
use mintid::store::{
    Answer, DriverError, FastPath, LeaseAcquisition, LeaseRelease, LeaseRenewal, Migrator,
    OutboxCleanup, OutboxEnqueue, OutboxRelay, Query, RecordCleanup, RecordDriver, RecordHeartbeat,
    RecordRenewal, SegmentDriver, Step, limits, load_query, outbox_load_query, read_load,
    read_outbox_load,
};

use crate::input::{Input, db_error};
use crate::read::malformed;
use crate::spec::{KeyParts, Spec};
use crate::write::pack_error;
use crate::{Refusal, guards, step};

/// An input as a driver takes it: a database's answer, or another input.
enum Pushed {
    Answer(Answer),
    Other(Input),
}

/// `store.unexpected_row`: `input` is not one a `kind` wire takes.
fn unexpected(input: &Input, kind: &str) -> DriverError {
    malformed(&format!(
        "input ({}: not one a {kind} wire takes)",
        input.name()
    ))
}

/// A driver of any kind the wire carries.
#[derive(Debug)]
pub(crate) enum Driver {
    Record(Box<RecordDriver>),
    Relay(Box<OutboxRelay>),
    RecordRenewal(Box<RecordRenewal>),
    RecordCleanup(RecordCleanup),
    OutboxCleanup(OutboxCleanup),
    /// A record load: its one query.
    RecordLoad(Query),
    /// An outbox load: its one query.
    OutboxLoad(Query),
    Enqueue(Box<OutboxEnqueue>),
    Migrations(Box<Migrator>),
    Heartbeat(Box<RecordHeartbeat>),
    Segment(Box<SegmentDriver>),
    LeaseAcquire(Box<LeaseAcquisition>),
    LeaseRenew(LeaseRenewal, Named),
    LeaseRelease(LeaseRelease, Named),
}

/// The guard a renew or release wire names: its serial, and the guard
/// while its owner lives (the wire never keeps it alive).
#[derive(Debug)]
pub(crate) struct Named {
    wire_id: u64,
    guard: Weak<LeaseGuard>,
}

impl Named {
    /// The guard registered under `wire_id`, or `argument.out_of_range`.
    fn find<E: Refusal>(wire_id: u64) -> Result<(Self, Arc<LeaseGuard>), E> {
        let guard = guards::find(wire_id).ok_or_else(|| gone::<E>(wire_id))?;
        let held = Self {
            wire_id,
            guard: Arc::downgrade(&guard),
        };
        Ok((held, guard))
    }

    /// The guard, or `argument.out_of_range` once its owner dropped it.
    fn guard<E: Refusal>(&self) -> Result<Arc<LeaseGuard>, E> {
        self.guard.upgrade().ok_or_else(|| gone::<E>(self.wire_id))
    }
}

/// `argument.out_of_range`: no live guard is registered under `wire_id`.
fn gone<E: Refusal>(wire_id: u64) -> E {
    E::out_of_range(&format!(
        "guard must be the wire_id of a live lease guard, got {wire_id}"
    ))
}

fn key<E: Refusal>(parts: &KeyParts) -> Result<IdempotencyKey, E> {
    Ok(IdempotencyKey::new(&parts.kind, &parts.scope, &parts.id)?)
}

impl Driver {
    /// The driver `spec` describes, or the core's refusal of its key.
    pub(crate) fn make<E: Refusal>(spec: Spec) -> Result<Self, E> {
        Ok(match spec {
            Spec::Record {
                manifest,
                policy,
                way,
                fast,
                key: parts,
                digest,
                key_created_millis,
            } => {
                let key = key::<E>(&parts)?;
                let mut incoming = Incoming::new(Fingerprint::from_digest(digest));
                if let Some(created) = key_created_millis {
                    incoming = incoming.with_key_created_millis(created);
                }
                Driver::Record(Box::new(match fast {
                    None => RecordDriver::new(manifest, policy, way, &key, incoming),
                    Some(ttl) => {
                        let fast = FastPath::new(policy);
                        let fast = ttl.map_or(fast, |ttl| fast.with_ttl_millis(ttl));
                        RecordDriver::with_fast_path(manifest, policy, way, &key, incoming, fast)
                    }
                }))
            }
            Spec::Relay {
                manifest,
                policy,
                seed,
            } => Driver::Relay(Box::new(OutboxRelay::new(manifest, policy, seed))),
            Spec::RecordRenewal {
                manifest,
                policy,
                key: parts,
                held,
            } => Driver::RecordRenewal(Box::new(RecordRenewal::new(
                manifest,
                policy,
                &key::<E>(&parts)?,
                &held,
            ))),
            Spec::RecordCleanup {
                manifest,
                batch_size,
            } => Driver::RecordCleanup(RecordCleanup::new(manifest, batch_size)),
            Spec::OutboxCleanup {
                manifest,
                sent_before_millis,
                batch_size,
            } => {
                Driver::OutboxCleanup(OutboxCleanup::new(manifest, sent_before_millis, batch_size))
            }
            Spec::RecordLoad {
                manifest,
                key: parts,
            } => Driver::RecordLoad(load_query(manifest, &key::<E>(&parts)?)),
            Spec::OutboxLoad {
                manifest,
                kind,
                business_key,
            } => Driver::OutboxLoad(outbox_load_query(manifest, &kind, &business_key)),
            Spec::Enqueue {
                manifest,
                message_id,
                kind,
                business_key,
                payload,
            } => Driver::Enqueue(Box::new(OutboxEnqueue::new(
                manifest,
                message_id,
                &kind,
                &business_key,
                payload,
            ))),
            Spec::Migrations { manifest, pending } => Driver::Migrations(Box::new(if pending {
                Migrator::pending(manifest)
            } else {
                Migrator::migrate(manifest)
            })),
            Spec::Heartbeat {
                manifest,
                policy,
                key: parts,
                held,
            } => Driver::Heartbeat(Box::new(RecordHeartbeat::new(
                manifest,
                policy,
                &key::<E>(&parts)?,
                &held,
            ))),
            Spec::Segment {
                manifest,
                tag,
                policy,
            } => Driver::Segment(Box::new(
                SegmentDriver::new(manifest, &tag, policy).map_err(DriverError::from)?,
            )),
            Spec::LeaseAcquire {
                manifest,
                policy,
                owner,
                timeout_millis,
            } => Driver::LeaseAcquire(Box::new(LeaseAcquisition::new(
                manifest,
                policy.policy::<E>()?,
                &owner,
                timeout_millis,
            ))),
            Spec::LeaseRenew { manifest, guard } => {
                Driver::LeaseRenew(LeaseRenewal::new(manifest), Named::find::<E>(guard)?.0)
            }
            Spec::LeaseRelease { manifest, guard } => {
                let (held, guard) = Named::find::<E>(guard)?;
                Driver::LeaseRelease(LeaseRelease::new(manifest, &guard), held)
            }
        })
    }

    /// Pushes `input` at `now` and packs the step the driver answers into
    /// `out`; an input this kind does not take is `store.unexpected_row`.
    pub(crate) fn push<E: Refusal>(&mut self, now: u64, input: Input, out: &mut Vec<u8>) {
        let name = self.name();
        let pushed = match input {
            Input::Rows(rows) => Pushed::Answer(Answer::Rows(rows)),
            Input::Affected(count) => Pushed::Answer(Answer::Affected(count)),
            Input::Failed { class, message } => {
                Pushed::Answer(Answer::Failed(db_error(class, &message)))
            }
            other => Pushed::Other(other),
        };
        match self {
            Driver::Record(driver) => {
                let step = match pushed {
                    Pushed::Answer(answer) => driver.push(answer, now),
                    Pushed::Other(Input::Start) => driver.start(now),
                    Pushed::Other(Input::Resume) => driver.resume(),
                    Pushed::Other(Input::Finish(outcome)) => {
                        driver.finish(outcome.into_core(), now)
                    }
                    Pushed::Other(Input::Redis(answer)) => driver.push_redis(answer, now),
                    Pushed::Other(Input::Report) => {
                        return step::report(out, driver.take_fast_report());
                    }
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::record::<E>(out, step);
            }
            Driver::Relay(relay) => {
                let step = match pushed {
                    Pushed::Answer(answer) => relay.push(answer, now),
                    Pushed::Other(Input::Start) => relay.start(now),
                    Pushed::Other(Input::Resume) => relay.resume(),
                    Pushed::Other(Input::Sent) => relay.sent(now),
                    Pushed::Other(Input::SendFailed(error)) => {
                        // The bytes may not be UTF-8 (a host string with a lone
                        // surrogate): the core makes them storable.
                        let error = limits::storable_text_from_bytes(
                            &error,
                            limits::OUTBOX_ERROR_MAX_BYTES,
                        );
                        relay.failed(&error, now)
                    }
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::relay::<E>(out, step);
            }
            Driver::RecordRenewal(renewal) => {
                let step = match pushed {
                    Pushed::Answer(answer) => renewal.push(answer),
                    Pushed::Other(Input::Start) => Step::Run(renewal.start(now)),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::number::<E>(out, step);
            }
            Driver::RecordCleanup(cleanup) => {
                let step = match pushed {
                    Pushed::Answer(answer) => cleanup.push(answer, now),
                    Pushed::Other(Input::Start) => Step::Run(cleanup.next(now)),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::number::<E>(out, step);
            }
            Driver::OutboxCleanup(cleanup) => {
                let step = match pushed {
                    Pushed::Answer(answer) => cleanup.push(answer),
                    Pushed::Other(Input::Start) => cleanup.start(),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::number::<E>(out, step);
            }
            Driver::RecordLoad(query) => {
                let step = match pushed {
                    Pushed::Answer(answer) => {
                        read_load(&answer).map_or_else(Step::Fail, Step::Yield)
                    }
                    Pushed::Other(Input::Start) => Step::Run(query.clone()),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::record_load::<E>(out, step);
            }
            Driver::OutboxLoad(query) => {
                let step = match pushed {
                    Pushed::Answer(answer) => {
                        read_outbox_load(&answer).map_or_else(Step::Fail, Step::Yield)
                    }
                    Pushed::Other(Input::Start) => Step::Run(query.clone()),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::outbox_load::<E>(out, step);
            }
            Driver::Enqueue(enqueue) => {
                let step = match pushed {
                    Pushed::Answer(answer) => enqueue.push(answer),
                    Pushed::Other(Input::Start) => enqueue.start(now),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::enqueue::<E>(out, step);
            }
            Driver::Migrations(migrator) => {
                let step = match pushed {
                    Pushed::Answer(answer) => migrator.push(answer, now),
                    Pushed::Other(Input::Start) => migrator.start(now),
                    Pushed::Other(Input::Resume) => migrator.resume(),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::migration::<E>(out, step);
            }
            Driver::Heartbeat(heartbeat) => {
                let step = match pushed {
                    Pushed::Answer(answer) => heartbeat.push(answer, now),
                    Pushed::Other(Input::Start) => heartbeat.start(now),
                    Pushed::Other(Input::Resume) => heartbeat.resume(now),
                    Pushed::Other(Input::Stop) => heartbeat.stop(),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::heartbeat::<E>(out, step, heartbeat.lease_deadline_millis());
            }
            Driver::Segment(segment) => {
                let step = match pushed {
                    Pushed::Answer(answer) => segment.push(answer, now),
                    Pushed::Other(Input::Take) => return step::taken(out, segment.take(now)),
                    Pushed::Other(Input::Fetch) => segment.fetch(),
                    Pushed::Other(Input::Resume) => segment.resume(),
                    Pushed::Other(Input::Abandon) => {
                        segment.abandon();
                        return step::idle(out);
                    }
                    Pushed::Other(Input::Forked) => {
                        segment.forget_after_fork();
                        return step::idle(out);
                    }
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::segment::<E>(out, step);
            }
            Driver::LeaseAcquire(acquisition) => {
                let step = match pushed {
                    Pushed::Answer(answer) => acquisition.push(answer, now),
                    Pushed::Other(Input::Start) => acquisition.start(now),
                    Pushed::Other(Input::Resume) => acquisition.resume(now),
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::acquisition::<E>(out, step);
            }
            Driver::LeaseRenew(renewal, held) => {
                let guard = match held.guard::<E>() {
                    Ok(guard) => guard,
                    Err(error) => return pack_error(out, &error),
                };
                let step = match pushed {
                    Pushed::Answer(answer) => renewal.push(&guard, answer, now),
                    Pushed::Other(Input::Mark(high_water)) => {
                        renewal.start(&guard, now, high_water)
                    }
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::number::<E>(out, step);
            }
            Driver::LeaseRelease(release, held) => {
                let step = match pushed {
                    Pushed::Answer(answer) => release.push(answer),
                    Pushed::Other(Input::Mark(high_water)) => match held.guard::<E>() {
                        Ok(guard) => release.start(&guard, now, high_water),
                        Err(error) => return pack_error(out, &error),
                    },
                    Pushed::Other(other) => Step::Fail(unexpected(&other, name)),
                };
                step::released::<E>(out, step);
            }
        }
    }

    /// The kind's name, for errors.
    fn name(&self) -> &'static str {
        match self {
            Driver::Record(_) => "record",
            Driver::Relay(_) => "relay",
            Driver::RecordRenewal(_) => "record renewal",
            Driver::RecordCleanup(_) => "record cleanup",
            Driver::OutboxCleanup(_) => "outbox cleanup",
            Driver::RecordLoad(_) => "record load",
            Driver::OutboxLoad(_) => "outbox load",
            Driver::Enqueue(_) => "enqueue",
            Driver::Migrations(_) => "migrations",
            Driver::Heartbeat(_) => "heartbeat",
            Driver::Segment(_) => "segment",
            Driver::LeaseAcquire(_) => "lease acquire",
            Driver::LeaseRenew(..) => "lease renew",
            Driver::LeaseRelease(..) => "lease release",
        }
    }
}
