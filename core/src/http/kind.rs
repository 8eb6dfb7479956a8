//! The default key kind of a request: its method and a digest of its path,
//! so that a key reused on another route is another key.

use alloc::string::String;

use sha2::{Digest, Sha256};

use super::HttpError;

/// The longest method [`default_kind`] accepts: `http.` + method + `.` + 10
/// hex digits must fit the 32 bytes of a key kind.
pub const MAX_METHOD_LEN: usize = 16;

/// How many hex digits of the path's SHA-256 the kind keeps.
const PATH_DIGEST_HEX: usize = 10;

/// The default key kind of a request: `http.<method in lower case>.<the
/// first 10 lower-case hex digits of SHA-256 of the path's UTF-8 bytes>`,
/// e.g. `POST /orders` → `http.post.<10 hex>`.
///
/// The path is the request's path without the query, exactly as the host
/// received it.
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
    let digest = Sha256::digest(path.as_bytes());
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
    }
}
