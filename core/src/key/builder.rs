//! Ids built from business fields, e.g. a user id and an order number.

use alloc::string::String;

use sha2::{Digest, Sha256};

use super::{ID_MAX_LEN, IdempotencyKey, KeyError, KeyPart};
use crate::base64url;

/// The first character of a hashed id (never found in a direct one).
pub const HASHED_ID_PREFIX: char = '~';

/// Builds an id from business fields, so that two different lists of fields
/// never give the same id.
///
/// Each field's UTF-8 bytes are kept when they are `A-Z a-z 0-9 . _ -` and
/// written `%XX` (upper-case hex) otherwise; the encoded fields are joined
/// with `:`. Since neither `:` nor `%` survives unencoded inside a field,
/// the list can be read back from the joined text: the encoding is
/// injective. `["user 1", "2023:10"]` gives `user%201:2023%3A10`.
///
/// When the joined text is longer than [`ID_MAX_LEN`] (64) bytes, the id is
/// [`HASHED_ID_PREFIX`] (`~`) followed by the unpadded base64url SHA-256 of
/// the joined text: 44 characters. A direct id never contains `~` (it is
/// encoded as `%7E`), so a hashed id never equals a direct one, and two
/// hashed ids are equal only if the joined texts are (barring a SHA-256
/// collision).
///
/// Errors: `key.empty` for an empty list or an empty field (a blank field
/// usually means a missing value, which would merge keys that should differ).
pub fn id_from_fields<S: AsRef<str>>(fields: &[S]) -> Result<String, KeyError> {
    if fields.is_empty() {
        return Err(KeyError::no_fields());
    }
    let mut joined = String::new();
    for (index, field) in fields.iter().enumerate() {
        let field = field.as_ref();
        if field.is_empty() {
            return Err(KeyError::empty_field(index));
        }
        if index > 0 {
            joined.push(':');
        }
        encode_field(field, &mut joined);
    }
    if joined.len() <= ID_MAX_LEN {
        return Ok(joined);
    }
    let mut hashed = String::with_capacity(1 + base64url::encoded_len(32));
    hashed.push(HASHED_ID_PREFIX);
    base64url::encode_into(&Sha256::digest(joined.as_bytes()), &mut hashed);
    Ok(hashed)
}

fn encode_field(field: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for byte in field.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
        }
    }
}

impl IdempotencyKey {
    /// A key whose id is built from business fields by [`id_from_fields`],
    /// e.g. `from_fields("order.create", "tenant-7", &["user", "123",
    /// "20231001_001"])` gives the id `user:123:20231001_001`.
    pub fn from_fields<S: AsRef<str>>(
        kind: &str,
        scope: &str,
        fields: &[S],
    ) -> Result<Self, KeyError> {
        KeyPart::Kind.validate(kind)?;
        KeyPart::Scope.validate(scope)?;
        let id = id_from_fields(fields)?;
        Self::new(kind, scope, &id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn encoding() {
        assert_eq!(
            id_from_fields(&["user", "123", "20231001_001"]).unwrap(),
            "user:123:20231001_001"
        );
        assert_eq!(
            id_from_fields(&["user 1", "2023:10"]).unwrap(),
            "user%201:2023%3A10"
        );
        assert_eq!(
            id_from_fields(&["a%b~", "Zo\u{eb}"]).unwrap(),
            "a%25b%7E:Zo%C3%AB"
        );
        let long = id_from_fields(&["x".repeat(65)]).unwrap();
        assert_eq!(long.len(), 44);
        assert!(long.starts_with('~'));
        assert_eq!(id_from_fields(&["x".repeat(64)]).unwrap(), "x".repeat(64));
    }

    #[test]
    fn errors() {
        let none: [&str; 0] = [];
        assert_eq!(id_from_fields(&none).unwrap_err().code(), "key.empty");
        let err = id_from_fields(&["a", ""]).unwrap_err();
        assert_eq!(err.code(), "key.empty");
        assert_eq!(
            err.to_string(),
            "business field 1 of an idempotency key id is empty"
        );
        assert_eq!(
            IdempotencyKey::from_fields("Order", "s", &["a"])
                .unwrap_err()
                .code(),
            "key.invalid_character"
        );
    }

    /// Reads a direct id back into its fields (the inverse of the encoding).
    fn decode(id: &str) -> Vec<Vec<u8>> {
        id.split(':')
            .map(|field| {
                let bytes = field.as_bytes();
                let mut out = Vec::new();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        out.push(u8::from_str_radix(&field[i + 1..i + 3], 16).unwrap());
                        i += 3;
                    } else {
                        out.push(bytes[i]);
                        i += 1;
                    }
                }
                out
            })
            .collect()
    }

    proptest! {
        #[test]
        fn injective(a in proptest::collection::vec(".{1,6}", 1..5),
                     b in proptest::collection::vec(".{1,6}", 1..5)) {
            let (x, y) = (id_from_fields(&a).unwrap(), id_from_fields(&b).unwrap());
            prop_assert_eq!(a == b, x == y);
            prop_assert!(KeyPart::Id.validate(&x).is_ok());
        }

        #[test]
        fn injective_on_separator_heavy_fields(a in proptest::collection::vec("[:%~a]{1,3}", 1..4),
                                               b in proptest::collection::vec("[:%~a]{1,3}", 1..4)) {
            let (x, y) = (id_from_fields(&a).unwrap(), id_from_fields(&b).unwrap());
            prop_assert_eq!(a == b, x == y);
        }

        #[test]
        fn direct_ids_decode_to_their_fields(fields in proptest::collection::vec(".{1,4}", 1..4)) {
            let id = id_from_fields(&fields).unwrap();
            if !id.starts_with(HASHED_ID_PREFIX) {
                let expected: Vec<Vec<u8>> = fields.iter().map(|f| f.as_bytes().to_vec()).collect();
                prop_assert_eq!(decode(&id), expected);
            }
        }
    }
}
