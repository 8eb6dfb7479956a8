//! Idempotency keys: `kind:scope:id`.

use crate::error::{MintidError, fixed_bytes};

/// An idempotency key, its three parts and its canonical text (the core's
/// `IdempotencyKey`, checked).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct IdempotencyKey {
    /// The operation, e.g. `order.create`.
    pub kind: String,
    /// Whose key it is: a tenant, user or client.
    pub scope: String,
    /// Which attempt.
    pub id: String,
    /// The canonical text `kind:scope:id`.
    pub text: String,
}

impl From<mintid::key::IdempotencyKey> for IdempotencyKey {
    fn from(key: mintid::key::IdempotencyKey) -> Self {
        Self {
            kind: key.kind().into(),
            scope: key.scope().into(),
            id: key.id().into(),
            text: key.to_string(),
        }
    }
}

/// A key from its three parts, each checked against its rules.
///
/// Fails with `key.empty`, `key.too_long` or `key.invalid_character`.
#[uniffi::export]
pub fn idempotency_key_new(
    kind: String,
    scope: String,
    id: String,
) -> Result<IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::new(&kind, &scope, &id)?.into())
}

/// A key whose id is the value of an `Idempotency-Key` header.
///
/// Fails as [`idempotency_key_new`] does, or with `key.invalid_header`.
#[uniffi::export]
pub fn idempotency_key_from_header(
    kind: String,
    scope: String,
    header: Vec<u8>,
) -> Result<IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::from_header(&kind, &scope, &header)?.into())
}

/// A key whose id is built from business fields.
///
/// Fails as [`idempotency_key_new`] does.
#[uniffi::export]
pub fn idempotency_key_from_fields(
    kind: String,
    scope: String,
    fields: Vec<String>,
) -> Result<IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::from_fields(&kind, &scope, &fields)?.into())
}

/// A key whose id is derived from a payload fingerprint (32 digest bytes),
/// for requests that came without a key.
///
/// Fails with `argument.byte_length` or as [`idempotency_key_new`] does.
#[uniffi::export]
pub fn idempotency_key_derived(
    kind: String,
    scope: String,
    fingerprint: Vec<u8>,
) -> Result<IdempotencyKey, MintidError> {
    let digest = fixed_bytes::<32>("a fingerprint", &fingerprint)?;
    let fingerprint = mintid::fingerprint::Fingerprint::from_digest(digest);
    Ok(mintid::key::IdempotencyKey::derived(&kind, &scope, &fingerprint)?.into())
}

/// Reads the canonical text `kind:scope:id`.
///
/// Fails with `key.invalid_text` or as [`idempotency_key_new`] does.
#[uniffi::export]
pub fn idempotency_key_parse(text: Vec<u8>) -> Result<IdempotencyKey, MintidError> {
    Ok(mintid::key::IdempotencyKey::parse(&text)?.into())
}

/// The id carried by an `Idempotency-Key` header value (a Structured Field
/// String, or a bare token as some clients send).
///
/// Fails with `key.empty`, `key.too_long`, `key.invalid_character` or
/// `key.invalid_header`.
#[uniffi::export]
pub fn idempotency_key_parse_header(value: Vec<u8>) -> Result<String, MintidError> {
    Ok(mintid::key::parse_header(&value)?)
}

/// An id built from business fields.
///
/// Fails as [`idempotency_key_new`] does for the id.
#[uniffi::export]
pub fn idempotency_key_id_from_fields(fields: Vec<String>) -> Result<String, MintidError> {
    Ok(mintid::key::id_from_fields(&fields)?)
}
