//! Keys derived from the payload when the client sent none.

use sha2::{Digest, Sha256};

use super::{IdempotencyKey, KeyError, KeyPart};
use crate::fingerprint::Fingerprint;
use crate::uuid::{TextForm, Uuid};

/// The label that starts the hash input of a derived id.
pub const DERIVED_ID_LABEL: &[u8] = b"mintid:derived-key:v1";

impl IdempotencyKey {
    /// A key whose id is a name-based UUID version 8 (RFC 9562 §5.8) of the
    /// kind, the scope and the payload's fingerprint, for requests that
    /// carry no key: the same payload for the same operation in the same
    /// scope gets the same key.
    ///
    /// The UUID is the first 16 bytes of SHA-256 over
    /// `DERIVED_ID_LABEL ‖ 0x00 ‖ len(kind) ‖ kind ‖ len(scope) ‖ scope ‖
    /// fingerprint` (lengths as one byte each, the fingerprint's 32 digest
    /// bytes), with the version nibble (high half of byte 6) set to `8` and
    /// the variant bits (top two of byte 8) set to `10`. The id is its
    /// lower-case hyphenated text (36 characters).
    pub fn derived(kind: &str, scope: &str, fingerprint: &Fingerprint) -> Result<Self, KeyError> {
        KeyPart::Kind.validate(kind)?;
        KeyPart::Scope.validate(scope)?;
        let uuid = derived_uuid(kind, scope, fingerprint);
        Self::new(kind, scope, uuid.format(TextForm::Hyphenated).as_str())
    }
}

/// The UUIDv8 of a derived id; `kind` and `scope` are validated, so their
/// lengths fit one byte.
fn derived_uuid(kind: &str, scope: &str, fingerprint: &Fingerprint) -> Uuid {
    let length = |part: &str| [u8::try_from(part.len()).unwrap_or(u8::MAX)];
    let digest = Sha256::new()
        .chain_update(DERIVED_ID_LABEL)
        .chain_update([0u8])
        .chain_update(length(kind))
        .chain_update(kind)
        .chain_update(length(scope))
        .chain_update(scope)
        .chain_update(fingerprint.as_bytes())
        .finalize();
    let mut leading = [0u8; 16];
    leading.copy_from_slice(&digest[..16]);
    Uuid::new_v8(leading)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::fingerprint_bytes;
    use alloc::string::ToString;

    #[test]
    fn derived_id_is_a_v8_uuid() {
        let fp = fingerprint_bytes(b"body");
        let key = IdempotencyKey::derived("order.create", "user:1", &fp).unwrap();
        let parsed = uuid::Uuid::parse_str(key.id()).unwrap();
        assert_eq!(parsed.get_version_num(), 8);
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(
            parsed.into_bytes(),
            derived_uuid("order.create", "user:1", &fp).into_bytes()
        );
        assert_eq!(parsed.hyphenated().to_string(), key.id());
    }

    #[test]
    fn every_input_matters() {
        let (a, b) = (fingerprint_bytes(b"a"), fingerprint_bytes(b"b"));
        let id = |k, s, f| IdempotencyKey::derived(k, s, f).unwrap().id().to_string();
        assert_eq!(id("k", "s", &a), id("k", "s", &a));
        assert_ne!(id("k", "s", &a), id("k", "s", &b));
        assert_ne!(id("k", "s", &a), id("k", "t", &a));
        assert_ne!(id("k", "s", &a), id("j", "s", &a));
        assert_ne!(id("ks", "x", &a), id("k", "sx", &a));
    }
}
