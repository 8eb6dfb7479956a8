//! Keys from business fields: the id follows the spec's encoding, and the
//! encoding can be read back (two field lists never share an id).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mintid::IdempotencyKey;
use mintid::base64url;
use mintid::key::{self, HASHED_ID_PREFIX, ID_MAX_LEN, KeyPart};
use mintid_fuzz::{check_error, joined_fields, split_fields};
use sha2::{Digest, Sha256};

#[derive(Debug, Arbitrary)]
struct Input {
    kind: String,
    scope: String,
    fields: Vec<String>,
}

fuzz_target!(|input: Input| {
    let Input {
        kind,
        scope,
        fields,
    } = input;
    match key::id_from_fields(&fields) {
        Ok(id) => {
            assert!(!fields.is_empty() && fields.iter().all(|f| !f.is_empty()));
            KeyPart::Id.validate(&id).expect("a built id is a valid id");
            let joined = joined_fields(&fields);
            if joined.len() <= ID_MAX_LEN {
                assert_eq!(id, joined);
                assert_eq!(split_fields(&id).as_deref(), Some(fields.as_slice()));
            } else {
                let digest = Sha256::digest(joined.as_bytes());
                let expected = format!("{HASHED_ID_PREFIX}{}", base64url::encode(&digest));
                assert_eq!(id, expected);
            }
            match IdempotencyKey::from_fields(&kind, &scope, &fields) {
                Ok(key) => {
                    assert_eq!(key.id(), id);
                    let text = key.to_string();
                    assert_eq!(IdempotencyKey::parse(text.as_bytes()).as_ref(), Ok(&key));
                }
                Err(error) => {
                    check_error(error.code(), "key.", &error.to_string());
                    assert!(
                        KeyPart::Kind.validate(&kind).is_err()
                            || KeyPart::Scope.validate(&scope).is_err()
                    );
                }
            }
        }
        Err(error) => {
            check_error(error.code(), "key.", &error.to_string());
            assert!(fields.is_empty() || fields.iter().any(String::is_empty));
        }
    }
    // A key from parts: valid parts always give a key that reads back.
    if let Ok(key) = IdempotencyKey::new(&kind, &scope, fields.first().map_or("", String::as_str)) {
        assert_eq!(
            IdempotencyKey::parse(key.to_string().as_bytes()).as_ref(),
            Ok(&key)
        );
    }
});
