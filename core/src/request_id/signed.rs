//! Signed request IDs: a UUIDv7 with an HMAC tag from a grant.

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

use hmac::Mac;

use super::error::Form;
use super::{BINARY_LEN, Header, HmacSha256, REQUEST_ID_FORMAT, RequestIdError, TAG_LEN, TEXT_LEN};
use crate::base64url;
use crate::uuid7::Uuid7;

/// Bytes covered by the tag: format byte, header and UUID.
const BODY_LEN: usize = 27;

/// A signed request ID, read but not yet verified.
///
/// Verify it with [`KeyRing::verify`](super::KeyRing::verify), which returns
/// its UUIDv7 only when the tag matches the caller's scope. Its text
/// (`Display`) is 58 base64url characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId {
    header: Header,
    uuid: Uuid7,
    tag: [u8; TAG_LEN],
}

impl RequestId {
    /// Signs `uuid` under `header` with a MAC keyed with the grant key.
    pub(super) fn sign(header: Header, uuid: Uuid7, mac: HmacSha256) -> Self {
        Self {
            header,
            uuid,
            tag: tag(mac, &body(header, &uuid)),
        }
    }

    /// Reads the 58-character text of a signed request ID: its form only, no
    /// verification. `request_id.malformed` or `request_id.unsupported_version`.
    pub fn parse(text: &str) -> Result<Self, RequestIdError> {
        if text.len() != TEXT_LEN {
            return Err(RequestIdError::malformed(Form::Length(text.len())));
        }
        let bytes = base64url::decode_array::<BINARY_LEN>(text.as_bytes())
            .map_err(|error| RequestIdError::malformed(Form::Base64(error)))?;
        Self::from_bytes(&bytes)
    }

    /// Reads the 43 bytes of a signed request ID (form only, as
    /// [`parse`](RequestId::parse)).
    pub fn from_bytes(bytes: &[u8; BINARY_LEN]) -> Result<Self, RequestIdError> {
        let (format, header, uuid, tag) = split(bytes);
        if format != REQUEST_ID_FORMAT {
            return Err(RequestIdError::unsupported_version(format));
        }
        let uuid = Uuid7::from_bytes(uuid)
            .map_err(|error| RequestIdError::malformed(Form::Uuid(error)))?;
        Ok(Self {
            header: Header::from_bytes(&header),
            uuid,
            tag,
        })
    }

    /// The id of the server key its grant was derived from.
    pub const fn key_id(&self) -> u32 {
        self.header.key_id
    }

    /// When its grant expires, in Unix milliseconds.
    pub const fn expires_millis(&self) -> u64 {
        self.header.expires_millis
    }

    /// The UUIDv7 it carries, **not verified**: use it for display only.
    pub const fn unverified_uuid(&self) -> Uuid7 {
        self.uuid
    }

    /// The 16-byte tag.
    pub const fn tag(&self) -> &[u8; TAG_LEN] {
        &self.tag
    }

    /// The 43 bytes of the request ID.
    pub fn to_bytes(&self) -> [u8; BINARY_LEN] {
        let mut out = [0u8; BINARY_LEN];
        out[..BODY_LEN].copy_from_slice(&body(self.header, &self.uuid));
        out[BODY_LEN..].copy_from_slice(&self.tag);
        out
    }

    /// The 58-character base64url text.
    pub fn to_text(&self) -> String {
        base64url::encode(&self.to_bytes())
    }

    pub(super) const fn header(&self) -> Header {
        self.header
    }

    /// Whether the tag is the one `mac` (keyed with the grant key derived for
    /// the caller's scope) gives, compared in constant time.
    pub(super) fn tag_matches(&self, mac: HmacSha256) -> bool {
        use subtle::ConstantTimeEq;
        let expected = tag(mac, &body(self.header, &self.uuid));
        bool::from(expected.ct_eq(&self.tag))
    }

    pub(super) const fn uuid(&self) -> Uuid7 {
        self.uuid
    }
}

/// The bytes the tag covers.
fn body(header: Header, uuid: &Uuid7) -> [u8; BODY_LEN] {
    let mut out = [0u8; BODY_LEN];
    out[0] = REQUEST_ID_FORMAT;
    out[1..11].copy_from_slice(&header.to_bytes());
    out[11..].copy_from_slice(uuid.as_bytes());
    out
}

/// The first [`TAG_LEN`] bytes of the MAC of `body`.
fn tag(mut mac: HmacSha256, body: &[u8; BODY_LEN]) -> [u8; TAG_LEN] {
    mac.update(body);
    let full = mac.finalize().into_bytes();
    let mut out = [0u8; TAG_LEN];
    out.copy_from_slice(&full[..TAG_LEN]);
    out
}

/// Splits the bytes into format byte, header, UUID and tag.
fn split(bytes: &[u8; BINARY_LEN]) -> (u8, [u8; 10], [u8; 16], [u8; TAG_LEN]) {
    let mut header = [0u8; 10];
    let mut uuid = [0u8; 16];
    let mut tag = [0u8; TAG_LEN];
    header.copy_from_slice(&bytes[1..11]);
    uuid.copy_from_slice(&bytes[11..BODY_LEN]);
    tag.copy_from_slice(&bytes[BODY_LEN..]);
    (bytes[0], header, uuid, tag)
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl FromStr for RequestId {
    type Err = RequestIdError;

    fn from_str(text: &str) -> Result<Self, RequestIdError> {
        Self::parse(text)
    }
}
