//! UUID and UUIDv7 text forms: every form written reads back, the reference
//! `uuid` crate agrees on the hyphenated and simple forms, and a UUIDv7 is
//! exactly a UUID of version 7 and the RFC 9562 variant.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::uuid::{TextForm, Variant};
use mintid::{Uuid, Uuid7};
use mintid_fuzz::{check_error, crockford_canonical};

const FORMS: [TextForm; 4] = [
    TextForm::Hyphenated,
    TextForm::Simple,
    TextForm::Urn,
    TextForm::Base32,
];

fn is_v7(uuid: &Uuid) -> bool {
    uuid.version() == 7 && uuid.variant() == Variant::Rfc9562
}

/// Every form of `uuid` reads back as `uuid`, and as a UUIDv7 iff it is one.
fn check_forms(uuid: Uuid) {
    for form in FORMS {
        let text = uuid.format(form);
        assert_eq!(text.as_str().len(), form.text_len());
        assert_eq!(Uuid::parse(text.as_str()), Ok(uuid));
        assert_eq!(Uuid7::parse(text.as_str()).is_ok(), is_v7(&uuid));
    }
    match Uuid7::from_bytes(*uuid.as_bytes()) {
        Ok(v7) => {
            assert!(is_v7(&uuid));
            let fields = Uuid7::from_fields(v7.timestamp_millis(), v7.rand_a(), v7.rand_b());
            assert_eq!(fields, Ok(v7));
            assert_eq!(Uuid7::parse(&v7.to_string()), Ok(v7));
        }
        Err(error) => {
            assert!(!is_v7(&uuid));
            check_error(error.code(), "uuid7.", &error.to_string());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(bytes) = <[u8; 16]>::try_from(data) {
        check_forms(Uuid::from_bytes(bytes));
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let reference = matches!(text.len(), 32 | 36).then(|| uuid::Uuid::try_parse(text).ok());
    match Uuid::parse(text) {
        Ok(parsed) => {
            check_forms(parsed);
            if let Some(reference) = reference {
                assert_eq!(reference.map(|u| *u.as_bytes()), Some(*parsed.as_bytes()));
            }
            // The input is one of the forms, up to case (and Crockford's
            // aliases in base32).
            let matched = FORMS.iter().any(|&form| {
                let written = parsed.format(form);
                match form {
                    TextForm::Base32 => crockford_canonical(text) == written.as_str(),
                    _ => text.eq_ignore_ascii_case(written.as_str()),
                }
            });
            assert!(matched, "{text:?} is none of the forms of {parsed}");
        }
        Err(error) => {
            check_error(error.code(), "uuid.", &error.to_string());
            if let Some(reference) = reference {
                assert_eq!(reference, None, "uuid reads {text:?}");
            }
            let v7 = Uuid7::parse(text).expect_err("no UUIDv7 where no UUID");
            check_error(v7.code(), "uuid", &v7.to_string());
        }
    }
});
