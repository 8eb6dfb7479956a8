//! Request IDs that a client mints and a server verifies.
//!
//! * Unsigned: a UUIDv7 checked for form and [`Freshness`]
//!   ([`verify_unsigned`]).
//! * Signed: a server [`KeyRing`] issues a [`Grant`] for a scope and an
//!   expiry; the client mints [`RequestId`]s from it offline
//!   ([`Grant::mint`]), each a UUIDv7 with an HMAC-SHA256 tag; the server
//!   verifies them against the caller's scope ([`KeyRing::verify`]).
//!
//! Formats, derivations and the security rationale are in `docs/spec.md`,
//! section "Request IDs and grants". Nothing here reads a clock: minting takes
//! the caller's UUIDv7 and verification takes `now_millis`.

mod error;
mod freshness;
mod grant;
mod key_ring;
mod signed;

pub use error::{RequestIdError, RequestIdErrorKind};
pub use freshness::{Freshness, verify_unsigned};
pub use grant::Grant;
pub use key_ring::{KeyRing, SecretKey};
pub use signed::RequestId;

/// Bytes in a grant and in a signed request ID.
pub const BINARY_LEN: usize = 43;
/// Characters in the base64url text of a grant and of a signed request ID.
pub const TEXT_LEN: usize = 58;
/// The first byte of a version-1 signed request ID.
pub const REQUEST_ID_FORMAT: u8 = 0x01;
/// The first byte of a version-1 grant.
pub const GRANT_FORMAT: u8 = 0x02;
/// The fewest bytes a server secret may have.
pub const SECRET_MIN_LEN: usize = 32;
/// The most bytes a scope may have (the fewest is 1): the most an
/// idempotency key's scope may have, so that the scope of every grant can
/// scope the keys of its requests.
pub const SCOPE_MAX_LEN: usize = crate::key::SCOPE_MAX_LEN;
/// Expiries must be below this (2^48 ms: they are stored in 6 bytes).
pub const EXPIRY_LIMIT: u64 = 1 << 48;
/// Bytes of HMAC-SHA256 output kept as a request ID's tag.
pub const TAG_LEN: usize = 16;

/// The key id and expiry shared by a grant and the IDs minted from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Header {
    key_id: u32,
    expires_millis: u64,
}

impl Header {
    /// Bytes 1..11 of both layouts.
    fn to_bytes(self) -> [u8; 10] {
        let mut out = [0u8; 10];
        out[..4].copy_from_slice(&self.key_id.to_be_bytes());
        out[4..].copy_from_slice(&self.expires_millis.to_be_bytes()[2..]);
        out
    }

    fn from_bytes(bytes: &[u8; 10]) -> Self {
        let [k0, k1, k2, k3, e0, e1, e2, e3, e4, e5] = *bytes;
        Self {
            key_id: u32::from_be_bytes([k0, k1, k2, k3]),
            expires_millis: u64::from_be_bytes([0, 0, e0, e1, e2, e3, e4, e5]),
        }
    }
}

/// HMAC-SHA256, the one MAC of this module.
type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// HMAC-SHA256 keyed with a 32-byte key (a grant key).
fn keyed_with_grant_key(key: &[u8; 32]) -> HmacSha256 {
    use hmac::KeyInit;
    // HMAC pads a key shorter than the 64-byte block with zeros (RFC 2104
    // §2), so this is HMAC keyed with `key` itself, through the constructor
    // that takes a whole block and cannot fail.
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(key);
    HmacSha256::new(&block.into())
}

/// Checks a scope's length: 1 to [`SCOPE_MAX_LEN`] bytes.
fn check_scope(scope: &str) -> Result<(), RequestIdError> {
    if (1..=SCOPE_MAX_LEN).contains(&scope.len()) {
        Ok(())
    } else {
        Err(RequestIdError::invalid_scope(scope.len()))
    }
}
