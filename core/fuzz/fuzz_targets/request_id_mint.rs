//! Grants and signed request IDs end to end: whatever the secret, scope,
//! expiry, UUIDv7 and clock, a minted ID verifies exactly when its grant is
//! unexpired and its time is fresh, only for its own scope, and yields its
//! UUIDv7.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mintid::Uuid7;
use mintid::request_id::{
    EXPIRY_LIMIT, Freshness, Grant, KeyRing, RequestId, SCOPE_MAX_LEN, SecretKey,
};
use mintid_fuzz::check_error;

/// Times are drawn relative to the UUIDv7's, so that every outcome (fresh,
/// too old, in the future, expired) comes up often.
#[derive(Debug, Arbitrary)]
struct Input {
    key_id: u32,
    secret: [u8; 32],
    scope: String,
    other_scope: String,
    /// The UUIDv7's time, taken modulo 2^48.
    unix_millis: u64,
    /// Masked to 12 bits.
    rand_a: u16,
    /// Shifted to 62 bits.
    rand_b: u64,
    /// The server's clock relative to the UUIDv7's time.
    now_offset: i32,
    /// The grant's expiry relative to the server's clock; `raw_expiry`
    /// instead when set (mostly out of range).
    expires_offset: i32,
    raw_expiry: Option<u64>,
    max_age_millis: u32,
    max_skew_millis: u32,
}

fuzz_target!(|input: Input| {
    let unix_millis = input.unix_millis % (1 << 48);
    let now = unix_millis.saturating_add_signed(input.now_offset.into());
    let expires_millis = input
        .raw_expiry
        .unwrap_or_else(|| now.saturating_add_signed(input.expires_offset.into()));
    let ring = KeyRing::new(SecretKey::new(input.key_id, &input.secret).expect("a 32-byte secret"));
    let grant = match ring.issue_grant(&input.scope, expires_millis) {
        Ok(grant) => grant,
        Err(error) => {
            check_error(error.code(), "request_id.", &error.to_string());
            let scope_ok = (1..=SCOPE_MAX_LEN).contains(&input.scope.len());
            assert!(!scope_ok || expires_millis >= EXPIRY_LIMIT);
            return;
        }
    };
    assert_eq!(grant.key_id(), input.key_id);
    assert_eq!(grant.expires_millis(), expires_millis);
    let Ok(uuid) = Uuid7::from_fields(unix_millis, input.rand_a & 0xFFF, input.rand_b >> 2) else {
        panic!("a UUIDv7 from any fields in range");
    };
    // The client holds the grant as text.
    let grant = Grant::parse(&grant.to_text()).expect("a written grant reads back");
    let text = grant.mint(&uuid).to_text();
    let id = RequestId::parse(&text).expect("a minted request ID reads back");
    assert_eq!(id.unverified_uuid(), uuid);
    assert_eq!(id.key_id(), input.key_id);
    assert_eq!(id.expires_millis(), expires_millis);

    let freshness = Freshness {
        max_age_millis: input.max_age_millis.into(),
        max_skew_millis: input.max_skew_millis.into(),
    };
    let expected_code = if now >= expires_millis {
        Some("request_id.grant_expired")
    } else if freshness.check(&uuid, now).is_err() {
        freshness.check(&uuid, now).err().map(|error| error.code())
    } else {
        None
    };
    match ring.verify(&text, &input.scope, now, &freshness) {
        Ok(verified) => {
            assert_eq!(expected_code, None);
            assert_eq!(verified, uuid);
        }
        Err(error) => assert_eq!(Some(error.code()), expected_code, "{error}"),
    }
    // Another scope never verifies it, and says no more than "bad tag".
    if input.other_scope != input.scope && (1..=SCOPE_MAX_LEN).contains(&input.other_scope.len()) {
        let error = ring
            .verify(&text, &input.other_scope, now, &freshness)
            .expect_err("an ID verified for another scope");
        assert_eq!(error.code(), "request_id.bad_tag");
    }
});
