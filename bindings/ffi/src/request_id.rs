//! Request IDs a client mints and a server verifies, and the grants and key
//! rings behind them.

use crate::error::{MintidError, fixed_bytes};
use mintid::Uuid7;
use mintid::request_id::{self, Freshness, SecretKey};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A grant: the right to mint request IDs for one scope until an expiry.
/// `grant_key` is a bearer secret of that scope.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Grant {
    /// The 58-character text the server sends the client.
    pub text: String,
    /// The id of the server key the grant was derived from.
    pub key_id: u32,
    /// When the grant expires, in Unix milliseconds.
    pub expires_millis: u64,
    /// The 32-byte key the grant's request IDs are tagged with.
    pub grant_key: Vec<u8>,
}

impl From<request_id::Grant> for Grant {
    fn from(grant: request_id::Grant) -> Self {
        Self {
            text: grant.to_text(),
            key_id: grant.key_id(),
            expires_millis: grant.expires_millis(),
            grant_key: grant.grant_key().to_vec(),
        }
    }
}

/// A signed request ID, as read (its tag not yet verified).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SignedRequestId {
    /// The 58-character text.
    pub text: String,
    /// The id of the server key of its grant.
    pub key_id: u32,
    /// When its grant expires, in Unix milliseconds.
    pub expires_millis: u64,
    /// The UUIDv7 it carries (16 bytes), unverified.
    pub uuid: Vec<u8>,
    /// The 16-byte tag.
    pub tag: Vec<u8>,
}

impl From<request_id::RequestId> for SignedRequestId {
    fn from(id: request_id::RequestId) -> Self {
        Self {
            text: id.to_text(),
            key_id: id.key_id(),
            expires_millis: id.expires_millis(),
            uuid: id.unverified_uuid().as_bytes().to_vec(),
            tag: id.tag().to_vec(),
        }
    }
}

fn freshness(max_age_millis: Option<u64>, max_skew_millis: Option<u64>) -> Freshness {
    Freshness {
        max_age_millis: max_age_millis.unwrap_or(Freshness::DEFAULT.max_age_millis),
        max_skew_millis: max_skew_millis.unwrap_or(Freshness::DEFAULT.max_skew_millis),
    }
}

fn uuid7(bytes: &[u8]) -> Result<Uuid7, MintidError> {
    Ok(Uuid7::from_bytes(fixed_bytes::<16>("a UUIDv7", bytes)?)?)
}

/// The freshness bounds used when none are given: a day of age, five
/// minutes of clock skew.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct FreshnessDefaults {
    /// How old an ID may be, in milliseconds.
    pub max_age_millis: u64,
    /// How far ahead of the server's clock an ID may be, in milliseconds.
    pub max_skew_millis: u64,
}

/// The core's default freshness bounds.
#[uniffi::export]
pub fn request_id_freshness_defaults() -> FreshnessDefaults {
    FreshnessDefaults {
        max_age_millis: Freshness::DEFAULT.max_age_millis,
        max_skew_millis: Freshness::DEFAULT.max_skew_millis,
    }
}

/// Reads the text of a grant.
///
/// Fails with `request_id.malformed_grant`.
#[uniffi::export]
pub fn grant_parse(text: String) -> Result<Grant, MintidError> {
    Ok(request_id::Grant::parse(&text)?.into())
}

/// Mints a signed request ID from a grant's text and a UUIDv7 (16 bytes).
///
/// Fails with `request_id.malformed_grant`, `argument.byte_length` or a
/// `uuid7.*` code for bytes that are not a UUIDv7.
#[uniffi::export]
pub fn grant_mint(grant: String, uuid: Vec<u8>) -> Result<SignedRequestId, MintidError> {
    let grant = request_id::Grant::parse(&grant)?;
    Ok(grant.mint(&uuid7(&uuid)?).into())
}

/// Reads the text of a signed request ID without verifying it.
///
/// Fails with `request_id.malformed` or `request_id.unsupported_version`.
#[uniffi::export]
pub fn request_id_parse(text: String) -> Result<SignedRequestId, MintidError> {
    Ok(request_id::RequestId::parse(&text)?.into())
}

/// Checks an unsigned request ID (a UUIDv7 in any text form) for freshness
/// at `now_millis`; returns its 16 bytes. Bounds default to the core's.
///
/// Fails with `request_id.malformed`, `request_id.too_old` or `request_id.in_future`.
#[uniffi::export(default(max_age_millis = None, max_skew_millis = None))]
pub fn request_id_verify_unsigned(
    text: String,
    now_millis: u64,
    max_age_millis: Option<u64>,
    max_skew_millis: Option<u64>,
) -> Result<Vec<u8>, MintidError> {
    let freshness = freshness(max_age_millis, max_skew_millis);
    let uuid = request_id::verify_unsigned(&text, now_millis, &freshness)?;
    Ok(uuid.as_bytes().to_vec())
}

/// A server's keys (the core's `KeyRing`): one current key issues grants,
/// every key verifies the IDs minted from its grants. Shared between threads.
#[derive(uniffi::Object)]
pub struct KeyRing(Mutex<request_id::KeyRing>);

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("KeyRing").field(&*self.ring()).finish()
    }
}

impl KeyRing {
    /// The ring; a panic elsewhere cannot leave it half-changed (every change
    /// is one call that either fails before changing or completes).
    fn ring(&self) -> MutexGuard<'_, request_id::KeyRing> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[uniffi::export]
impl KeyRing {
    /// A ring whose current key is `secret` (at least 32 random bytes) with id `key_id`.
    ///
    /// Fails with `request_id.weak_secret`.
    #[uniffi::constructor]
    pub fn new(key_id: u32, secret: Vec<u8>) -> Result<Arc<Self>, MintidError> {
        let key = SecretKey::new(key_id, &secret)?;
        Ok(Arc::new(Self(Mutex::new(request_id::KeyRing::new(key)))))
    }

    /// Adds a key that verifies but does not issue.
    ///
    /// Fails with `request_id.weak_secret` or `request_id.duplicate_key_id`.
    pub fn add(&self, key_id: u32, secret: Vec<u8>) -> Result<(), MintidError> {
        let key = SecretKey::new(key_id, &secret)?;
        Ok(self.ring().add(key)?)
    }

    /// Makes a new key current; the previous one keeps verifying until retired.
    ///
    /// Fails with `request_id.weak_secret` or `request_id.duplicate_key_id`.
    pub fn rotate(&self, key_id: u32, secret: Vec<u8>) -> Result<(), MintidError> {
        let key = SecretKey::new(key_id, &secret)?;
        Ok(self.ring().rotate(key)?)
    }

    /// Removes a key that is not current.
    ///
    /// Fails with `request_id.current_key` or `request_id.unknown_key`.
    pub fn retire(&self, key_id: u32) -> Result<(), MintidError> {
        Ok(self.ring().retire(key_id)?)
    }

    /// The id of the current key.
    pub fn current_id(&self) -> u32 {
        self.ring().current_id()
    }

    /// The ids of every key, the current one first.
    pub fn key_ids(&self) -> Vec<u32> {
        self.ring().key_ids().collect()
    }

    /// Issues a grant with the current key for `scope` until `expires_millis`.
    ///
    /// Fails with `request_id.invalid_scope` or `request_id.expiry_out_of_range`.
    pub fn issue_grant(&self, scope: String, expires_millis: u64) -> Result<Grant, MintidError> {
        Ok(self.ring().issue_grant(&scope, expires_millis)?.into())
    }

    /// Verifies a signed request ID for the caller's `scope` at `now_millis`
    /// and returns its UUIDv7 (16 bytes). Bounds default to the core's.
    ///
    /// Fails with a `request_id.*` code naming the first check that failed.
    #[uniffi::method(default(max_age_millis = None, max_skew_millis = None))]
    pub fn verify(
        &self,
        text: String,
        scope: String,
        now_millis: u64,
        max_age_millis: Option<u64>,
        max_skew_millis: Option<u64>,
    ) -> Result<Vec<u8>, MintidError> {
        let freshness = freshness(max_age_millis, max_skew_millis);
        let uuid = self.ring().verify(&text, &scope, now_millis, &freshness)?;
        Ok(uuid.as_bytes().to_vec())
    }
}
