//! Signed request ID and grant texts, unsigned request IDs, and verifying
//! arbitrary text against a key ring: parsing reads exactly what writing
//! writes, and no input verifies without the server's secret.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::Uuid7;
use mintid::request_id::{self, BINARY_LEN, Freshness, Grant, KeyRing, RequestId, SecretKey};
use mintid_fuzz::check_error;

/// Mid-2025, in Unix milliseconds.
const NOW: u64 = 1_750_000_000_000;

fn check_request_id(id: &RequestId) {
    let text = id.to_text();
    assert_eq!(text.len(), request_id::TEXT_LEN);
    let again = RequestId::parse(&text).expect("a written request ID reads back");
    assert_eq!(again.to_bytes(), id.to_bytes());
    assert_eq!(
        RequestId::from_bytes(&id.to_bytes()).map(|r| r.to_bytes()),
        Ok(id.to_bytes())
    );
}

fn check_grant(grant: &Grant) {
    let text = grant.to_text();
    assert_eq!(text.len(), request_id::TEXT_LEN);
    let again = Grant::parse(&text).expect("a written grant reads back");
    assert_eq!(again.to_bytes(), grant.to_bytes());
}

fuzz_target!(|data: &[u8]| {
    if let Ok(bytes) = <[u8; BINARY_LEN]>::try_from(data) {
        match RequestId::from_bytes(&bytes) {
            Ok(id) => {
                assert_eq!(id.to_bytes(), bytes);
                check_request_id(&id);
            }
            Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
        }
        match Grant::from_bytes(&bytes) {
            Ok(grant) => {
                assert_eq!(grant.to_bytes(), bytes);
                check_grant(&grant);
            }
            Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match RequestId::parse(text) {
        Ok(id) => {
            assert_eq!(id.to_text(), text);
            check_request_id(&id);
        }
        Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
    }
    match Grant::parse(text) {
        Ok(grant) => {
            assert_eq!(grant.to_text(), text);
            check_grant(&grant);
        }
        Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
    }
    // Without the secret, nothing verifies (a forged tag has 2^-128 odds).
    let ring = KeyRing::new(SecretKey::new(1, &[0x42; 32]).expect("a 32-byte secret"));
    let freshness = Freshness {
        max_age_millis: u64::MAX,
        max_skew_millis: u64::MAX,
    };
    match ring.verify(text, "scope", NOW, &freshness) {
        Ok(uuid) => panic!("{text:?} verified without the secret as {uuid}"),
        Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
    }
    match request_id::verify_unsigned(text, NOW, &Freshness::DEFAULT) {
        Ok(uuid) => {
            assert_eq!(Uuid7::parse(text), Ok(uuid));
            assert!(Freshness::DEFAULT.check(&uuid, NOW).is_ok());
        }
        Err(error) => check_error(error.code(), "request_id.", &error.to_string()),
    }
});
