//! The JSON canonicaliser and fingerprint: canonicalising is idempotent,
//! keeps the data (as serde_json reads it), and the fingerprint hashes
//! exactly the canonical text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::fingerprint::{self, FieldSelection, Fingerprint};
use mintid_fuzz::{check_error, same_json};
use sha2::{Digest, Sha256};

fuzz_target!(|data: &[u8]| {
    match fingerprint::canonicalize(data) {
        Ok(canonical) => {
            let again = fingerprint::canonicalize(canonical.as_bytes())
                .expect("canonical text is valid JSON");
            assert_eq!(again, canonical, "canonicalisation is idempotent");
            let print = fingerprint::fingerprint_json(data, &FieldSelection::all())
                .expect("what canonicalises fingerprints");
            assert_eq!(
                print.as_bytes()[..],
                Sha256::digest(canonical.as_bytes())[..]
            );
            let text = print.to_string();
            assert_eq!(text.len(), fingerprint::TEXT_LEN);
            assert_eq!(Fingerprint::parse(text.as_bytes()), Ok(print));
            // serde_json may refuse what mintid accepts (it nests less
            // deeply); where both read the input, they read the same data.
            if let Ok(original) = serde_json::from_slice::<serde_json::Value>(data) {
                let read_back: serde_json::Value = serde_json::from_str(&canonical)
                    .expect("serde_json reads canonical text it read the original of");
                assert!(same_json(&original, &read_back), "{canonical}");
            }
        }
        Err(error) => {
            check_error(error.code(), "fingerprint.", &error.to_string());
            assert!(fingerprint::fingerprint_json(data, &FieldSelection::all()).is_err());
        }
    }
});
