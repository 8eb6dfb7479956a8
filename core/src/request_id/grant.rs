//! Grants: what a server hands a client so it can mint request IDs offline.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

use super::error::Form;
use super::{
    BINARY_LEN, GRANT_FORMAT, Header, HmacSha256, RequestId, RequestIdError, TEXT_LEN,
    keyed_with_grant_key,
};
use crate::base64url;
use crate::uuid7::Uuid7;

/// A grant: the right to mint request IDs for one scope until an expiry.
///
/// It holds the grant key derived from the server secret, the scope and the
/// expiry, so it is a **bearer secret of that scope**: whoever holds it mints
/// IDs that verify as the scope's until it expires. Its `Debug` output hides
/// the key; its text ([`to_text`](Grant::to_text)) is what the server sends
/// the client. Issue grants with [`KeyRing::issue_grant`](super::KeyRing::issue_grant).
#[derive(Clone)]
pub struct Grant {
    header: Header,
    key: [u8; 32],
    /// HMAC-SHA256 keyed with `key`, computed once for every mint.
    mac: HmacSha256,
}

impl Grant {
    pub(super) fn new(header: Header, key: [u8; 32]) -> Self {
        Self {
            header,
            key,
            mac: keyed_with_grant_key(&key),
        }
    }

    /// Reads the 58-character text of a grant (`request_id.malformed_grant`
    /// otherwise).
    pub fn parse(text: &str) -> Result<Self, RequestIdError> {
        if text.len() != TEXT_LEN {
            return Err(RequestIdError::malformed_grant(Form::Length(text.len())));
        }
        let bytes = base64url::decode_array::<BINARY_LEN>(text.as_bytes())
            .map_err(|error| RequestIdError::malformed_grant(Form::Base64(error)))?;
        Self::from_bytes(&bytes)
    }

    /// Reads the 43 bytes of a grant (`request_id.malformed_grant` when the
    /// format byte is not `0x02`).
    pub fn from_bytes(bytes: &[u8; BINARY_LEN]) -> Result<Self, RequestIdError> {
        let (format, header, key) = split(bytes);
        if format != GRANT_FORMAT {
            return Err(RequestIdError::malformed_grant(Form::GrantFormat(format)));
        }
        Ok(Self::new(Header::from_bytes(&header), key))
    }

    /// The id of the server key the grant was derived from.
    pub const fn key_id(&self) -> u32 {
        self.header.key_id
    }

    /// When the grant expires, in Unix milliseconds.
    pub const fn expires_millis(&self) -> u64 {
        self.header.expires_millis
    }

    /// The derived grant key (secret).
    pub const fn grant_key(&self) -> &[u8; 32] {
        &self.key
    }

    /// The 43 bytes of the grant (secret).
    pub fn to_bytes(&self) -> [u8; BINARY_LEN] {
        let mut out = [0u8; BINARY_LEN];
        out[0] = GRANT_FORMAT;
        out[1..11].copy_from_slice(&self.header.to_bytes());
        out[11..].copy_from_slice(&self.key);
        out
    }

    /// The 58-character base64url text of the grant (secret).
    pub fn to_text(&self) -> String {
        base64url::encode(&self.to_bytes())
    }

    /// Mints the request ID of `uuid`, which the caller generates fresh for
    /// each new request (and reuses for its retries).
    pub fn mint(&self, uuid: &Uuid7) -> RequestId {
        RequestId::sign(self.header, *uuid, self.mac.clone())
    }
}

/// Splits a grant's bytes into format byte, header and grant key.
fn split(bytes: &[u8; BINARY_LEN]) -> (u8, [u8; 10], [u8; 32]) {
    let mut header = [0u8; 10];
    let mut key = [0u8; 32];
    header.copy_from_slice(&bytes[1..11]);
    key.copy_from_slice(&bytes[11..]);
    (bytes[0], header, key)
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("key_id", &self.header.key_id)
            .field("expires_millis", &self.header.expires_millis)
            .field("grant_key", &"<redacted>")
            .finish()
    }
}

impl FromStr for Grant {
    type Err = RequestIdError;

    fn from_str(text: &str) -> Result<Self, RequestIdError> {
        Self::parse(text)
    }
}
