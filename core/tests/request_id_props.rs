//! Property tests of grants and signed request IDs: every genuine ID
//! verifies for its own scope only, no altered byte ever verifies, and no
//! input makes a parser panic.

use mintid::record::Problem;
use mintid::request_id::{
    Freshness, Grant, KeyRing, RequestId, RequestIdErrorKind, SecretKey, TEXT_LEN, verify_unsigned,
};
use mintid::uuid7::Uuid7;
use proptest::prelude::*;

const NOW: u64 = 1_700_000_000_000;

fn uuid7() -> impl Strategy<Value = Uuid7> {
    (NOW - 60_000..NOW + 1_000, any::<[u8; 10]>()).prop_map(|(millis, random)| {
        let mut bytes = [0u8; 16];
        bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
        bytes[6..].copy_from_slice(&random);
        bytes[6] = 0x70 | (bytes[6] & 0x0F);
        bytes[8] = 0x80 | (bytes[8] & 0x3F);
        Uuid7::from_bytes(bytes).expect("a UUIDv7")
    })
}

fn scope() -> impl Strategy<Value = String> {
    "[a-z0-9:/_.-]{1,40}|\\PC{1,20}".prop_filter("1 to 255 bytes", |s| (1..=255).contains(&s.len()))
}

fn ring() -> impl Strategy<Value = (KeyRing, u32)> {
    (any::<u32>(), prop::collection::vec(any::<u8>(), 32..80)).prop_map(|(id, secret)| {
        let key = SecretKey::new(id, &secret).expect("a strong secret");
        (KeyRing::new(key), id)
    })
}

const FRESH: Freshness = Freshness {
    max_age_millis: 120_000,
    max_skew_millis: 5_000,
};

proptest! {
    #[test]
    fn a_minted_id_verifies_for_its_scope_only(
        (ring, key_id) in ring(),
        scope in scope(),
        other in scope(),
        uuid in uuid7(),
        ttl in 1u64..86_400_000,
    ) {
        let grant = ring.issue_grant(&scope, NOW + ttl).unwrap();
        prop_assert_eq!(grant.key_id(), key_id);
        let id = grant.mint(&uuid);
        let text = id.to_string();
        prop_assert_eq!(text.len(), TEXT_LEN);
        prop_assert!(text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        prop_assert_eq!(ring.verify(&text, &scope, NOW, &FRESH), Ok(uuid));
        prop_assert_eq!(ring.verify_parsed(&id, &scope, NOW, &FRESH), Ok(uuid));
        if other != scope {
            let error = ring.verify(&text, &other, NOW, &FRESH).unwrap_err();
            prop_assert_eq!(error.kind(), RequestIdErrorKind::BadTag);
            prop_assert_eq!(error.problem(), Some(Problem::InvalidRequestId));
        }
        // The grant's text carries everything minting needs.
        let again = Grant::parse(&grant.to_text()).unwrap();
        prop_assert_eq!(again.mint(&uuid), id);
    }

    #[test]
    fn no_altered_bit_verifies(
        (ring, _) in ring(),
        scope in scope(),
        uuid in uuid7(),
        bit in 0usize..43 * 8,
    ) {
        let id = ring.issue_grant(&scope, NOW + 1).unwrap().mint(&uuid);
        let mut bytes = id.to_bytes();
        bytes[bit / 8] ^= 1 << (bit % 8);
        if let Ok(altered) = RequestId::from_bytes(&bytes) {
            prop_assert!(ring.verify_parsed(&altered, &scope, NOW, &FRESH).is_err());
        }
    }

    #[test]
    fn parsers_never_panic(text in "\\PC{0,70}", ascii in "[A-Za-z0-9_=+/-]{56,60}") {
        let ring = KeyRing::new(SecretKey::new(1, &[7; 32]).unwrap());
        for input in [&text, &ascii] {
            let _ = RequestId::parse(input);
            let _ = Grant::parse(input);
            let _ = verify_unsigned(input, NOW, &FRESH);
            let _ = ring.verify(input, "scope", NOW, &FRESH);
        }
    }

    #[test]
    fn freshness_window_is_inclusive(uuid in uuid7(), age in 0u64..10_000, skew in 0u64..10_000) {
        let t = uuid.timestamp_millis();
        let window = Freshness { max_age_millis: age, max_skew_millis: skew };
        prop_assert!(window.check(&uuid, t + age).is_ok());
        prop_assert!(window.check(&uuid, t - skew).is_ok());
        prop_assert_eq!(
            window.check(&uuid, t + age + 1).unwrap_err().kind(),
            RequestIdErrorKind::TooOld
        );
        prop_assert_eq!(
            window.check(&uuid, t - skew - 1).unwrap_err().kind(),
            RequestIdErrorKind::InFuture
        );
    }
}

#[test]
fn secrets_stay_out_of_debug_output() {
    let key = SecretKey::new(5, &[0xAB; 32]).unwrap();
    let ring = KeyRing::new(key.clone());
    let grant = ring.issue_grant("user:1", NOW).unwrap();
    let key_hex: String = grant
        .grant_key()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for debug in [
        format!("{key:?}"),
        format!("{ring:?}"),
        format!("{grant:?}"),
    ] {
        assert!(debug.contains("<redacted>"), "{debug}");
        assert!(
            !debug.contains("171") && !debug.contains("ab, ab"),
            "{debug}"
        );
        assert!(!debug.contains(&key_hex), "{debug}");
    }
}

#[test]
fn verification_failures_map_to_problems() {
    let ring = KeyRing::new(SecretKey::new(1, &[1; 32]).unwrap());
    let uuid = Uuid7::from_bytes([
        0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x70, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0,
    ])
    .unwrap();
    let t = uuid.timestamp_millis();
    let id = ring
        .issue_grant("s", t + 10)
        .unwrap()
        .mint(&uuid)
        .to_string();
    let wide = Freshness {
        max_age_millis: 5,
        max_skew_millis: 5,
    };
    let problem = |now: u64| ring.verify(&id, "s", now, &wide).unwrap_err().problem();
    assert_eq!(problem(t + 10), Some(Problem::GrantExpired));
    assert_eq!(problem(t + 6), Some(Problem::KeyTooOld));
    assert_eq!(problem(t - 6), Some(Problem::InvalidRequestId));
    let scope_error = ring.verify(&id, "", t, &wide).unwrap_err();
    assert_eq!(scope_error.problem(), None);
    assert_eq!(
        ring.issue_grant("s", 1 << 48).unwrap_err().kind(),
        RequestIdErrorKind::ExpiryOutOfRange
    );
}
