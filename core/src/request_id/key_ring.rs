//! Server secret keys: issuing grants and verifying signed request IDs.

use alloc::vec::Vec;
use core::fmt;

use hmac::{KeyInit, Mac};

use super::{
    EXPIRY_LIMIT, Freshness, Grant, Header, HmacSha256, RequestId, RequestIdError, SECRET_MIN_LEN,
    check_scope, keyed_with_grant_key,
};
use crate::uuid7::Uuid7;

/// The label that starts every grant-key derivation input.
const GRANT_LABEL: &[u8; 15] = b"mintid-grant-v1";

/// A server secret with its key id. Its `Debug` output hides the secret.
#[derive(Clone)]
pub struct SecretKey {
    id: u32,
    /// HMAC-SHA256 keyed with the secret, computed once for every derivation.
    mac: HmacSha256,
}

impl SecretKey {
    /// A key from `secret`, at least [`SECRET_MIN_LEN`] random bytes
    /// (`request_id.weak_secret` otherwise).
    pub fn new(id: u32, secret: &[u8]) -> Result<Self, RequestIdError> {
        let weak = || RequestIdError::weak_secret(secret.len());
        if secret.len() < SECRET_MIN_LEN {
            return Err(weak());
        }
        // HMAC takes keys of any length: this error never happens.
        let mac = HmacSha256::new_from_slice(secret).map_err(|_| weak())?;
        Ok(Self { id, mac })
    }

    /// The key id.
    pub const fn id(&self) -> u32 {
        self.id
    }

    /// The grant key of `header` and `scope`:
    /// HMAC-SHA256(secret, label ‖ key id ‖ expiry ‖ scope).
    fn grant_key(&self, header: Header, scope: &str) -> [u8; 32] {
        let mut mac = self.mac.clone();
        mac.update(GRANT_LABEL);
        mac.update(&header.to_bytes());
        mac.update(scope.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretKey")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// The server's secret keys: one current key that issues grants, and others
/// that still verify the IDs of grants they issued (rotation).
#[derive(Debug, Clone)]
pub struct KeyRing {
    current: SecretKey,
    others: Vec<SecretKey>,
}

impl KeyRing {
    /// A ring holding `current` only.
    pub const fn new(current: SecretKey) -> Self {
        Self {
            current,
            others: Vec::new(),
        }
    }

    /// The id of the key that issues grants.
    pub const fn current_id(&self) -> u32 {
        self.current.id
    }

    /// The ids of every key in the ring, the current one first.
    pub fn key_ids(&self) -> impl Iterator<Item = u32> + '_ {
        core::iter::once(&self.current)
            .chain(&self.others)
            .map(SecretKey::id)
    }

    /// The key with this id, if the ring holds it.
    fn key(&self, id: u32) -> Option<&SecretKey> {
        core::iter::once(&self.current)
            .chain(&self.others)
            .find(|key| key.id == id)
    }

    /// Adds a key that verifies but does not issue
    /// (`request_id.duplicate_key_id` if its id is taken).
    pub fn add(&mut self, key: SecretKey) -> Result<(), RequestIdError> {
        if self.key(key.id).is_some() {
            return Err(RequestIdError::duplicate_key_id(key.id));
        }
        self.others.push(key);
        Ok(())
    }

    /// Makes `key` the current key; the previous one keeps verifying until
    /// [`retire`](KeyRing::retire)d (`request_id.duplicate_key_id` if the
    /// id is taken).
    pub fn rotate(&mut self, key: SecretKey) -> Result<(), RequestIdError> {
        if self.key(key.id).is_some() {
            return Err(RequestIdError::duplicate_key_id(key.id));
        }
        let previous = core::mem::replace(&mut self.current, key);
        self.others.push(previous);
        Ok(())
    }

    /// Removes a key that is not current: IDs from its grants stop verifying.
    /// `request_id.current_key` for the current key, `request_id.unknown_key`
    /// for an id the ring does not hold.
    pub fn retire(&mut self, id: u32) -> Result<(), RequestIdError> {
        if id == self.current.id {
            return Err(RequestIdError::current_key(id));
        }
        let position = self
            .others
            .iter()
            .position(|key| key.id == id)
            .ok_or(RequestIdError::unknown_key(id))?;
        self.others.remove(position);
        Ok(())
    }

    /// Issues a grant with the current key for `scope` (1 to 64 bytes,
    /// `request_id.invalid_scope`) until `expires_millis` (below 2^48,
    /// `request_id.expiry_out_of_range`).
    pub fn issue_grant(&self, scope: &str, expires_millis: u64) -> Result<Grant, RequestIdError> {
        check_scope(scope)?;
        if expires_millis >= EXPIRY_LIMIT {
            return Err(RequestIdError::expiry_out_of_range(expires_millis));
        }
        let header = Header {
            key_id: self.current.id,
            expires_millis,
        };
        Ok(Grant::new(header, self.current.grant_key(header, scope)))
    }

    /// Verifies the text of a signed request ID for the caller's `scope` at
    /// `now_millis`, and returns its UUIDv7. The checks, in order:
    /// scope length, form, key id, tag (constant time; an ID minted for
    /// another scope fails here too), grant expiry, freshness. Each failure
    /// is its own error kind (see the module docs).
    pub fn verify(
        &self,
        text: &str,
        scope: &str,
        now_millis: u64,
        freshness: &Freshness,
    ) -> Result<Uuid7, RequestIdError> {
        check_scope(scope)?;
        self.verify_scoped(&RequestId::parse(text)?, scope, now_millis, freshness)
    }

    /// [`verify`](KeyRing::verify) for an ID already read with
    /// [`RequestId::parse`].
    pub fn verify_parsed(
        &self,
        id: &RequestId,
        scope: &str,
        now_millis: u64,
        freshness: &Freshness,
    ) -> Result<Uuid7, RequestIdError> {
        check_scope(scope)?;
        self.verify_scoped(id, scope, now_millis, freshness)
    }

    fn verify_scoped(
        &self,
        id: &RequestId,
        scope: &str,
        now_millis: u64,
        freshness: &Freshness,
    ) -> Result<Uuid7, RequestIdError> {
        let header = id.header();
        let key = self
            .key(header.key_id)
            .ok_or(RequestIdError::unknown_key(header.key_id))?;
        let grant_key = key.grant_key(header, scope);
        if !id.tag_matches(keyed_with_grant_key(&grant_key)) {
            return Err(RequestIdError::bad_tag());
        }
        if now_millis >= header.expires_millis {
            return Err(RequestIdError::grant_expired(
                header.expires_millis,
                now_millis,
            ));
        }
        let uuid = id.uuid();
        freshness.check(&uuid, now_millis)?;
        Ok(uuid)
    }
}
