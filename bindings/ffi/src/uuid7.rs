//! UUIDv7 values and generators.
//!
//! Generators hand out IDs in bulk (bytes or text) so a host pays one
//! boundary crossing per batch, not per ID.

use crate::batch::{IdBytes, batch_len};
use crate::error::{MintidError, fixed_bytes};
use crate::rollback::RollbackPolicy;
use crate::sources::{HostClock, HostEntropy, ManualClock};
use crate::uuid::UuidTextForm;
use mintid::uuid::TextForm;
use mintid::{SharedUuid7Generator, Uuid, Uuid7};
use std::sync::Arc;

/// The fields of a UUIDv7.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Uuid7Fields {
    /// The 16 bytes, most significant first.
    pub bytes: Vec<u8>,
    /// Milliseconds since the Unix epoch (48 bits).
    pub unix_millis: u64,
    /// The 12 bits after the version field.
    pub rand_a: u16,
    /// The 62 bits after the variant field.
    pub rand_b: u64,
    /// mintid's 16-bit counter: `rand_a` and the top 4 bits of `rand_b`.
    pub counter: u16,
}

impl From<Uuid7> for Uuid7Fields {
    fn from(id: Uuid7) -> Self {
        Self {
            bytes: id.as_bytes().to_vec(),
            unix_millis: id.timestamp_millis(),
            rand_a: id.rand_a(),
            rand_b: id.rand_b(),
            counter: id.counter(),
        }
    }
}

/// A UUIDv7 from its fields.
///
/// Fails with `uuid7.timestamp_out_of_range`, `uuid7.rand_a_out_of_range` or
/// `uuid7.rand_b_out_of_range`.
#[uniffi::export]
pub fn uuid7_from_fields(
    unix_millis: u64,
    rand_a: u16,
    rand_b: u64,
) -> Result<Uuid7Fields, MintidError> {
    Ok(Uuid7::from_fields(unix_millis, rand_a, rand_b)?.into())
}

/// Reads 16 bytes as a UUIDv7.
///
/// Fails with `argument.byte_length`, `uuid7.wrong_version` or `uuid7.wrong_variant`.
#[uniffi::export]
pub fn uuid7_from_bytes(bytes: Vec<u8>) -> Result<Uuid7Fields, MintidError> {
    let bytes = fixed_bytes::<16>("a UUIDv7", &bytes)?;
    Ok(Uuid7::from_bytes(bytes)?.into())
}

/// Reads a UUIDv7 in any of the four text forms.
///
/// Fails with `uuid7.invalid_text`, `uuid7.wrong_version` or `uuid7.wrong_variant`.
#[uniffi::export]
pub fn uuid7_parse(text: String) -> Result<Uuid7Fields, MintidError> {
    Ok(Uuid7::parse(&text)?.into())
}

/// A UUIDv7 generator that many threads may share (the core's
/// `SharedUuid7Generator`): every ID is unique and greater than every ID it
/// issued before.
#[derive(Debug, uniffi::Object)]
pub struct Uuid7Generator(SharedUuid7Generator<HostClock, HostEntropy>);

#[uniffi::export]
impl Uuid7Generator {
    /// A generator reading the system clock and the per-thread random
    /// generator, unless a test `clock` or fixed `entropy` bytes are given;
    /// `policy` defaults to the core's UUIDv7 default.
    #[uniffi::constructor(default(policy = None, clock = None, entropy = None))]
    pub fn new(
        policy: Option<RollbackPolicy>,
        clock: Option<Arc<ManualClock>>,
        entropy: Option<Vec<u8>>,
    ) -> Arc<Self> {
        let generator = SharedUuid7Generator::with_sources(
            HostClock::from_option(clock),
            HostEntropy::from_option(entropy),
        );
        Arc::new(Self(match policy {
            Some(policy) => generator.with_policy(policy.into()),
            None => generator,
        }))
    }

    /// The rollback policy in force.
    pub fn policy(&self) -> RollbackPolicy {
        self.0.policy().into()
    }

    /// `count` (at most [`MAX_BATCH`](crate::MAX_BATCH)) new IDs, 16 bytes each (most
    /// significant first), from one clock reading.
    ///
    /// Fails with `argument.batch_too_large`, `uuid7.clock_rollback` or
    /// `uuid7.timestamp_overflow`; a failed call issues nothing.
    pub fn next_bytes(&self, count: u32) -> Result<IdBytes, MintidError> {
        IdBytes::new(self.fill(count)?)
    }

    /// `count` (at most [`MAX_BATCH`](crate::MAX_BATCH)) new IDs in `form`, separated by single
    /// spaces, from one clock reading.
    ///
    /// Fails as [`next_bytes`](Self::next_bytes) does.
    pub fn next_text(&self, count: u32, form: UuidTextForm) -> Result<String, MintidError> {
        text_of(&self.fill(count)?, form.into())
    }
}

#[uniffi::export]
impl Uuid7Generator {
    /// A batch for a host's ID buffer (the core's rule, `mintid::id_buffer`):
    /// after a batch that handed out `handed_out` IDs, the next one, sized by
    /// the rule, as an 8-byte little-endian header (the last Unix millisecond at which its
    /// IDs may be handed out) and then the IDs, 16 bytes each.
    ///
    /// Fails as [`next_bytes`](Self::next_bytes) does.
    pub fn next_batch(&self, handed_out: u32) -> Result<IdBytes, MintidError> {
        let (fresh, bytes) = self.batch(handed_out)?;
        let mut out = Vec::with_capacity(8 + bytes.len());
        out.extend_from_slice(&fresh.to_le_bytes());
        out.extend_from_slice(&bytes);
        IdBytes::new(out)
    }

    /// [`next_batch`](Self::next_batch) in `form`: the last Unix millisecond
    /// at which the IDs may be handed out in decimal, then the IDs, each
    /// after a single space.
    ///
    /// Fails as [`next_bytes`](Self::next_bytes) does.
    pub fn next_text_batch(
        &self,
        handed_out: u32,
        form: UuidTextForm,
    ) -> Result<String, MintidError> {
        let (fresh, bytes) = self.batch(handed_out)?;
        let mut text = fresh.to_string();
        text.push(' ');
        text.push_str(&text_of(&bytes, form.into())?);
        Ok(text)
    }
}

impl Uuid7Generator {
    /// A batch sized by the ID buffer rule, and until when it is fresh.
    pub(crate) fn batch(&self, handed_out: u32) -> Result<(u64, Vec<u8>), MintidError> {
        let cap = mintid::id_buffer::MAX_BATCH;
        let size = mintid::id_buffer::next_batch_size(handed_out.into(), cap);
        let bytes = self.fill(size)?;
        let first = Uuid7::from_bytes(fixed_bytes::<16>("a UUIDv7", &bytes[..16])?)?;
        Ok((
            mintid::id_buffer::fresh_until_millis(first.timestamp_millis(), 1),
            bytes,
        ))
    }

    /// `count` new IDs, 16 bytes each, as [`next_bytes`](Self::next_bytes) makes them.
    pub(crate) fn fill(&self, count: u32) -> Result<Vec<u8>, MintidError> {
        let mut bytes = vec![0u8; batch_len(count)? * 16];
        self.0.fill_bytes(&mut bytes)?;
        Ok(bytes)
    }
}

/// IDs of 16 bytes each in `form`, separated by single spaces.
pub(crate) fn text_of(bytes: &[u8], form: TextForm) -> Result<String, MintidError> {
    let mut text = Vec::with_capacity((bytes.len() / 16) * (form.text_len() + 1));
    for chunk in bytes.chunks_exact(16) {
        if !text.is_empty() {
            text.push(b' ');
        }
        let id = Uuid::from_bytes(fixed_bytes::<16>("a UUIDv7", chunk)?);
        text.extend_from_slice(id.format(form).as_bytes());
    }
    // Every form is ASCII, so this never fails; checked once for the whole batch.
    Ok(String::from_utf8(text).unwrap_or_default())
}
