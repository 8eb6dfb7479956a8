//! Crockford base32 (64- and 128-bit) and strict base64url decoding: an
//! accepted text is the canonical encoding of what it decodes to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::{base32, base64url};
use mintid_fuzz::{check_error, crockford_canonical};

fuzz_target!(|data: &[u8]| {
    match base64url::decode(data) {
        Ok(bytes) => {
            assert_eq!(base64url::encode(&bytes).as_bytes(), data);
            assert_eq!(base64url::decoded_len(data.len()), Some(bytes.len()));
        }
        Err(error) => check_error(error.code(), "base64url.", &error.to_string()),
    }
    // Every byte string encodes to text that decodes back to it.
    let text = base64url::encode(data);
    assert_eq!(text.len(), base64url::encoded_len(data.len()));
    assert_eq!(base64url::decode(text.as_bytes()).as_deref(), Ok(data));

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match base32::decode_u64(text) {
        Ok(value) => {
            assert_eq!(
                &base32::encode_u64(value)[..],
                crockford_canonical(text).as_bytes()
            );
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
    match base32::decode_u128(text) {
        Ok(value) => {
            assert_eq!(
                &base32::encode_u128(value)[..],
                crockford_canonical(text).as_bytes()
            );
        }
        Err(error) => assert!(!error.to_string().is_empty()),
    }
});
