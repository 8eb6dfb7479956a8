//! `IdempotencyKey::parse`: it reads exactly the texts `Display` writes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::IdempotencyKey;
use mintid_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    match IdempotencyKey::parse(data) {
        Ok(key) => {
            // One text per key: writing the key gives the input back.
            assert_eq!(key.to_string().as_bytes(), data);
            // Its parts are valid keys parts on their own.
            let rebuilt = IdempotencyKey::new(key.kind(), key.scope(), key.id())
                .expect("the parts of a parsed key are valid");
            assert_eq!(rebuilt, key);
        }
        Err(error) => check_error(error.code(), "key.", &error.to_string()),
    }
});
