//! Payload fingerprints: the same bytes in every language.
//!
//! A JSON payload is parsed strictly ([`MAX_DEPTH`], no duplicate member
//! names, no lone surrogates, no integer beyond ±(2^53−1)), optionally
//! narrowed by a [`FieldSelection`], written in the RFC 8785 canonical form
//! (JCS) and hashed with SHA-256. Hosts serialise their own values (Python
//! dicts, JS objects) to JSON text first, so the core's input is always JSON
//! text and every language hashes the same bytes.
//!
//! Every host offers the same three calls, with one input rule each:
//! `fingerprint(value)` takes a value the host parsed (a dict, an object, a
//! map) and writes it as JSON text for [`fingerprint_value`];
//! `fingerprint_json(text)` takes JSON text, as a string or UTF-8 bytes
//! ([`fingerprint_json`]); `fingerprint_bytes(raw)` takes a raw body
//! ([`fingerprint_bytes`]). No call guesses from the type of its argument:
//! a value that is one string is refused (`fingerprint.string_value`), since
//! it could be meant as JSON text.
//!
//! A non-JSON body is fingerprinted with [`fingerprint_bytes`], which hashes
//! a zero byte before the body. Canonical JSON text never starts with a zero
//! byte, so a raw body and a JSON payload never have the same hash input.
//!
//! The text form of a [`Fingerprint`] is `sha256:` followed by the unpadded
//! base64url digest (50 characters in all).
//!
//! ```
//! use mintid::fingerprint::{fingerprint_json, FieldSelection};
//!
//! let selection = FieldSelection::all().exclude("/sent_at")?;
//! let a = fingerprint_json(br#"{"b":[1.50,2],"a":"x","sent_at":1}"#, &selection)?;
//! let b = fingerprint_json(br#"{ "a": "x", "b": [1.5, 2.0], "sent_at": 2 }"#, &selection)?;
//! assert_eq!(a, b);
//! assert_eq!(a.to_string().len(), 50);
//! # Ok::<(), mintid::fingerprint::FingerprintError>(())
//! ```

mod error;
pub(crate) mod jcs;
pub(crate) mod json;
mod pointer;

use alloc::string::String;
use core::fmt;
use core::str::FromStr;

use sha2::{Digest, Sha256};

use crate::base64url;

pub use error::{FingerprintError, FingerprintErrorKind};
pub use json::{MAX_DEPTH, MAX_SAFE_INTEGER};
pub use pointer::{FieldSelection, JsonPointer};

/// The prefix of a fingerprint's text form.
pub const TEXT_PREFIX: &str = "sha256:";

/// The length of a fingerprint's text form: `sha256:` and 43 base64url
/// characters.
pub const TEXT_LEN: usize = TEXT_PREFIX.len() + base64url::encoded_len(32);

/// The byte hashed before a raw body in [`fingerprint_bytes`].
pub const BYTES_DOMAIN_TAG: u8 = 0x00;

/// The SHA-256 fingerprint of a request payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// Wraps a SHA-256 digest.
    pub const fn from_digest(digest: [u8; 32]) -> Self {
        Self(digest)
    }

    /// The 32 digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Reads the text form `sha256:<43 base64url characters>`.
    pub fn parse(text: &[u8]) -> Result<Self, FingerprintError> {
        let digest = text
            .strip_prefix(TEXT_PREFIX.as_bytes())
            .and_then(|rest| base64url::decode_array::<32>(rest).ok())
            .ok_or_else(|| {
                FingerprintError::about(
                    FingerprintErrorKind::InvalidText,
                    "a fingerprint must be 'sha256:' and 43 base64url characters, found",
                    &String::from_utf8_lossy(text),
                )
            })?;
        Ok(Self(digest))
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::with_capacity(TEXT_LEN);
        text.push_str(TEXT_PREFIX);
        base64url::encode_into(&self.0, &mut text);
        f.write_str(&text)
    }
}

impl FromStr for Fingerprint {
    type Err = FingerprintError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text.as_bytes())
    }
}

/// The RFC 8785 canonical form of a UTF-8 JSON text.
pub fn canonicalize(text: &[u8]) -> Result<String, FingerprintError> {
    canonicalize_selection(text, &FieldSelection::all())
}

/// The RFC 8785 canonical form of the part of a UTF-8 JSON text that
/// `selection` selects: exactly the bytes [`fingerprint_json`] hashes.
pub fn canonicalize_selection(
    text: &[u8],
    selection: &FieldSelection,
) -> Result<String, FingerprintError> {
    let document = json::parse(text)?;
    let mut out = String::with_capacity(text.len());
    selection.write_selected(document, &mut out);
    Ok(out)
}

/// The fingerprint of a JSON payload: SHA-256 of
/// [`canonicalize_selection`]'s output.
pub fn fingerprint_json(
    text: &[u8],
    selection: &FieldSelection,
) -> Result<Fingerprint, FingerprintError> {
    let canonical = canonicalize_selection(text, selection)?;
    Ok(Fingerprint(Sha256::digest(canonical.as_bytes()).into()))
}

/// The fingerprint of a parsed value that a host wrote as JSON text (a
/// Python dict, a JS object, a Kotlin map): [`fingerprint_json`] of that
/// text, except that a document which is one JSON string is refused with
/// `fingerprint.string_value` (a string handed to `fingerprint(value)`
/// could be meant as JSON text: such text goes to `fingerprint_json`).
pub fn fingerprint_value(
    text: &[u8],
    selection: &FieldSelection,
) -> Result<Fingerprint, FingerprintError> {
    let document = json::parse(text)?;
    if matches!(document, json::Value::String(_)) {
        return Err(FingerprintError::about(
            FingerprintErrorKind::StringValue,
            "a value to fingerprint is one string, which could be meant as JSON text; \
             pass JSON text to fingerprint_json, found",
            &String::from_utf8_lossy(text),
        ));
    }
    let mut canonical = String::with_capacity(text.len());
    selection.write_selected(document, &mut canonical);
    Ok(Fingerprint(Sha256::digest(canonical.as_bytes()).into()))
}

/// The fingerprint of a raw (non-JSON) body: SHA-256 of the byte
/// [`BYTES_DOMAIN_TAG`] (0x00) followed by the body.
pub fn fingerprint_bytes(raw: &[u8]) -> Fingerprint {
    let digest = Sha256::new()
        .chain_update([BYTES_DOMAIN_TAG])
        .chain_update(raw)
        .finalize();
    Fingerprint(digest.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn text_form_round_trip() {
        let fp = fingerprint_bytes(b"");
        let text = fp.to_string();
        assert_eq!(text.len(), TEXT_LEN);
        assert!(text.starts_with("sha256:"));
        assert_eq!(text.parse::<Fingerprint>(), Ok(fp));
        for bad in [
            "",
            "sha256:",
            "sha1:AAAA",
            "SHA256:bjQLnP-zepicpUTmu3gKLHiQHT-zNzh2hRGjBhevoB0",
        ] {
            assert_eq!(
                bad.parse::<Fingerprint>().unwrap_err().code(),
                "fingerprint.invalid_text",
                "{bad}"
            );
        }
    }

    #[test]
    fn a_value_is_never_json_text() {
        let all = FieldSelection::all();
        for document in [&b"{\"a\":1}"[..], b"[1,2]", b"42", b"true", b"null"] {
            assert_eq!(
                fingerprint_value(document, &all),
                fingerprint_json(document, &all)
            );
        }
        for string in [&b"\"{}\""[..], b" \"text\" "] {
            let error = fingerprint_value(string, &all).unwrap_err();
            assert_eq!(error.code(), "fingerprint.string_value");
            assert!(fingerprint_json(string, &all).is_ok());
        }
        assert_eq!(
            fingerprint_value(b"{", &all).unwrap_err().code(),
            "fingerprint.invalid_json"
        );
    }

    #[test]
    fn spec_example() {
        let fp = fingerprint_json(b"{ }", &FieldSelection::all()).unwrap();
        assert_eq!(
            fp.to_string(),
            "sha256:RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
        );
    }

    #[test]
    fn bytes_and_json_are_domain_separated() {
        let canonical = canonicalize(b"{\"a\":1}").unwrap();
        let as_json = fingerprint_json(canonical.as_bytes(), &FieldSelection::all()).unwrap();
        assert_ne!(as_json, fingerprint_bytes(canonical.as_bytes()));
        assert_eq!(
            as_json.as_bytes().as_slice(),
            Sha256::digest(canonical.as_bytes()).as_slice()
        );
    }

    /// Arbitrary JSON values as text, with random whitespace.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            any::<bool>().prop_map(|b| b.to_string()),
            (-(1i64 << 53) + 1..(1i64 << 53)).prop_map(|n| n.to_string()),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| alloc::format!("{f:e}")),
            any::<String>().prop_map(|s| quote(&s)),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6)
                    .prop_map(|items| alloc::format!("[ {} ]", items.join(" ,\n"))),
                proptest::collection::btree_map(any::<String>(), inner, 0..6).prop_map(|m| {
                    let members: Vec<String> = m
                        .iter()
                        .map(|(k, v)| alloc::format!("{} : {v}", quote(k)))
                        .collect();
                    alloc::format!("{{\t{}\r}}", members.join(","))
                }),
            ]
        })
    }

    /// A JSON string literal with every non-ASCII character escaped as `\u`.
    fn quote(s: &str) -> String {
        let mut out = String::from("\"");
        for unit in s.encode_utf16() {
            match unit {
                0x22 => out.push_str("\\\""),
                0x5C => out.push_str("\\\\"),
                0x20..=0x7E => out.push(char::from(unit as u8)),
                _ => out.push_str(&alloc::format!("\\u{unit:04X}")),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        #[test]
        fn canonicalize_is_idempotent(text in json_text()) {
            let once = canonicalize(text.as_bytes()).unwrap();
            let twice = canonicalize(once.as_bytes()).unwrap();
            prop_assert_eq!(&once, &twice);
        }

        #[test]
        fn member_order_and_whitespace_do_not_matter(
            members in proptest::collection::btree_map("[a-z\u{e000}\u{10000}]{0,3}", json_text(), 0..6),
            seed: u64,
        ) {
            let mut list: Vec<_> = members.iter().collect();
            let forward: Vec<String> =
                list.iter().map(|(k, v)| alloc::format!("{}:{v}", quote(k))).collect();
            let shift = (seed as usize) % list.len().max(1);
            list.rotate_left(shift);
            list.reverse();
            let shuffled: Vec<String> =
                list.iter().map(|(k, v)| alloc::format!("\n {} \t: {v} ", quote(k))).collect();
            let a = alloc::format!("{{{}}}", forward.join(","));
            let b = alloc::format!(" {{ {} }}\n", shuffled.join(" , "));
            let none = FieldSelection::all();
            prop_assert_eq!(fingerprint_json(a.as_bytes(), &none), fingerprint_json(b.as_bytes(), &none));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = canonicalize(&bytes);
        }
    }
}
