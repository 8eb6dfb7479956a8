//! The default key kind of a request: its method and a digest of its path
//! as the application sees it, so that a key reused on another route (or
//! under another mount) is another key.

use alloc::string::String;
use alloc::vec::Vec;

use sha2::{Digest, Sha256};

use super::HttpError;

/// The longest method [`default_kind`] accepts: `http.` + method + `.` + 10
/// hex digits must fit the 32 bytes of a key kind.
pub const MAX_METHOD_LEN: usize = 16;

/// How many hex digits of the path's SHA-256 the kind keeps.
const PATH_DIGEST_HEX: usize = 10;

/// The default key kind of a request: `http.<method in lower case>.<the
/// first 10 lower-case hex digits of SHA-256 of the normalised path>`, e.g.
/// `POST /orders` → `http.post.fc7d055239`.
///
/// `path` is the path as the application sees it, **mount prefix
/// included** (ASGI `root_path` + `path`, WSGI `SCRIPT_NAME` +
/// `PATH_INFO`, Express `baseUrl` + `path`, Fastify's and Ktor's raw
/// path), so that the same route reached through another stack gives the
/// same kind and two mounts of one sub-application give two. It is
/// normalised ([`normalise_path`]): anything from the first `?` or `#` is
/// cut off (a host may pass the request target with its query), and
/// percent-encoded octets are decoded (frameworks that decode the path and
/// frameworks that do not agree).
///
/// # Errors
///
/// `http.invalid_method` when `method` is not 1 to [`MAX_METHOD_LEN`] ASCII
/// letters, digits, `-`, `_` or `.` (a kind allows no other character).
pub fn default_kind(method: &str, path: &str) -> Result<String, HttpError> {
    let valid = (1..=MAX_METHOD_LEN).contains(&method.len())
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !valid {
        return Err(HttpError::invalid_method(method));
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(normalise_path(path));
    let mut kind = String::with_capacity(6 + method.len() + PATH_DIGEST_HEX);
    kind.push_str("http.");
    kind.extend(method.chars().map(|c| c.to_ascii_lowercase()));
    kind.push('.');
    for byte in digest.iter().take(PATH_DIGEST_HEX / 2) {
        kind.push(char::from(HEX[usize::from(byte >> 4)]));
        kind.push(char::from(HEX[usize::from(byte & 0xF)]));
    }
    Ok(kind)
}

/// The bytes of `path` that [`default_kind`] hashes: `path` up to its first
/// `?` or `#`, with each `%` followed by two hex digits (either case)
/// replaced by the octet they name; every other byte as it is.
pub fn normalise_path(path: &str) -> Vec<u8> {
    let path = path.split(['?', '#']).next().unwrap_or_default().as_bytes();
    let mut out = Vec::with_capacity(path.len());
    let mut at = 0;
    while let Some(&byte) = path.get(at) {
        let escaped = match (byte, path.get(at + 1), path.get(at + 2)) {
            (b'%', Some(&high), Some(&low)) => hex_value(high).zip(hex_value(low)),
            _ => None,
        };
        if let Some((high, low)) = escaped {
            out.push(high << 4 | low);
            at += 3;
        } else {
            out.push(byte);
            at += 1;
        }
    }
    out
}

const fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::IdempotencyKey;

    #[test]
    fn method_lower_case_and_path_digest() {
        // SHA-256("/orders") = fc7d055239…, by `printf /orders | sha256sum`.
        let kind = default_kind("POST", "/orders").unwrap();
        assert_eq!(kind, "http.post.fc7d055239");
        assert_eq!(default_kind("post", "/orders").unwrap(), kind);
        assert_ne!(default_kind("PATCH", "/orders").unwrap(), kind);
        assert_ne!(default_kind("POST", "/orders/").unwrap(), kind);
    }

    #[test]
    fn the_query_is_cut_and_escapes_decoded() {
        let kind = default_kind("POST", "/orders").unwrap();
        assert_eq!(default_kind("POST", "/orders?amount=1").unwrap(), kind);
        assert_eq!(default_kind("POST", "/orders#top").unwrap(), kind);
        assert_eq!(default_kind("POST", "/%6Frders").unwrap(), kind);
        assert_eq!(default_kind("POST", "/%6frders").unwrap(), kind);
        assert_ne!(default_kind("POST", "/api/orders").unwrap(), kind);
        assert_eq!(
            default_kind("PUT", "/caf%C3%A9").unwrap(),
            default_kind("PUT", "/caf\u{e9}").unwrap()
        );
        assert_eq!(normalise_path("/100%"), b"/100%");
        assert_eq!(normalise_path("/a%2"), b"/a%2");
        assert_eq!(normalise_path("/a%zz%41"), b"/a%zzA");
        assert_eq!(normalise_path("/a%ff"), b"/a\xff");
        assert_eq!(normalise_path("?x"), b"");
    }

    #[test]
    fn refuses_methods_no_kind_can_hold() {
        for method in [
            "",
            "GET POST",
            "M\u{e9}THOD",
            "A".repeat(17).as_str(),
            "PO/ST",
        ] {
            assert_eq!(
                default_kind(method, "/").unwrap_err().code(),
                "http.invalid_method",
                "{method:?}"
            );
        }
        assert!(default_kind(&"A".repeat(16), "/").is_ok());
    }

    proptest::proptest! {
        #[test]
        fn every_default_kind_is_a_valid_key_kind(
            method in "[A-Za-z0-9._-]{1,16}",
            path in ".*",
        ) {
            let kind = default_kind(&method, &path).unwrap();
            proptest::prop_assert!(IdempotencyKey::new(&kind, "s", "i").is_ok(), "{}", kind);
        }

        #[test]
        fn never_panics(method in ".*", path in ".*") {
            let _ = default_kind(&method, &path);
        }

        #[test]
        fn decoding_an_encoded_path_gives_its_bytes(path in "[^?#%]*") {
            let encoded: String = path.bytes().map(|b| alloc::format!("%{b:02X}")).collect();
            proptest::prop_assert_eq!(normalise_path(&encoded), path.as_bytes());
            proptest::prop_assert_eq!(normalise_path(&path), path.as_bytes());
        }
    }
}
