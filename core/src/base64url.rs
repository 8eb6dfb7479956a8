//! Base64url without padding (RFC 4648 §5), decoded strictly.
//!
//! The alphabet is `A–Z a–z 0–9 - _`; no `=` padding is written or accepted.
//! Decoding accepts exactly one text per byte string: a text whose length is
//! `1 (mod 4)`, a character outside the alphabet (including `=`, `+`, `/`,
//! whitespace) or a last character with non-zero unused low bits is rejected,
//! so `encode(decode(t)) == t` for every accepted `t`.
//!
//! `n` bytes encode to `ceil(4n / 3)` characters: 16 bytes to 22, 32 bytes
//! to 43.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::quote::QuotedChar;

/// The base64url alphabet, in digit order.
pub const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The kinds of [`Base64UrlError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Base64UrlErrorKind {
    /// The text length is `1 (mod 4)`, which no byte string encodes to.
    InvalidLength,
    /// A character outside the base64url alphabet.
    InvalidCharacter,
    /// The last character carries non-zero bits beyond the encoded bytes.
    NonCanonical,
    /// The text decodes to a different number of bytes than required.
    WrongLength,
}

impl Base64UrlErrorKind {
    /// The stable dotted code of this kind, e.g. `"base64url.invalid_character"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::InvalidLength => "base64url.invalid_length",
            Self::InvalidCharacter => "base64url.invalid_character",
            Self::NonCanonical => "base64url.non_canonical",
            Self::WrongLength => "base64url.wrong_length",
        }
    }
}

/// Why a base64url text was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Base64UrlError {
    kind: Base64UrlErrorKind,
    /// Text length, character position, or decoded length, by kind.
    at: usize,
    /// The offending byte, or the required decoded length.
    detail: usize,
}

impl Base64UrlError {
    /// What kind of error this is.
    pub const fn kind(&self) -> Base64UrlErrorKind {
        self.kind
    }

    /// The stable dotted code, e.g. `"base64url.invalid_character"`.
    pub const fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for Base64UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Base64UrlErrorKind::InvalidLength => write!(
                f,
                "base64url text of {} characters is impossible (length is 1 mod 4)",
                self.at
            ),
            Base64UrlErrorKind::InvalidCharacter => {
                let byte = self.detail;
                match u8::try_from(byte) {
                    Ok(b) if b.is_ascii_graphic() => write!(
                        f,
                        "invalid base64url character {} at position {}",
                        QuotedChar(char::from(b)),
                        self.at
                    ),
                    _ => write!(
                        f,
                        "invalid base64url byte 0x{byte:02x} at position {}",
                        self.at
                    ),
                }
            }
            Base64UrlErrorKind::NonCanonical => write!(
                f,
                "base64url character at position {} has non-zero unused bits",
                self.at
            ),
            Base64UrlErrorKind::WrongLength => write!(
                f,
                "base64url text decodes to {} bytes, expected {}",
                self.at, self.detail
            ),
        }
    }
}

impl core::error::Error for Base64UrlError {}

/// The number of characters `byte_len` bytes encode to: `ceil(4n / 3)`.
pub const fn encoded_len(byte_len: usize) -> usize {
    byte_len / 3 * 4 + [0, 2, 3][byte_len % 3]
}

/// The number of bytes a text of `text_len` characters decodes to, or `None`
/// when no byte string encodes to that length (`text_len ≡ 1 mod 4`).
pub const fn decoded_len(text_len: usize) -> Option<usize> {
    match text_len % 4 {
        1 => None,
        rem => Some(text_len / 4 * 3 + [0, 0, 1, 2][rem]),
    }
}

/// Encodes `bytes` as unpadded base64url.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(encoded_len(bytes.len()));
    encode_into(bytes, &mut out);
    out
}

/// Appends the unpadded base64url text of `bytes` to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    out.reserve(encoded_len(bytes.len()));
    let digit = |value: u32| char::from(ALPHABET[(value & 63) as usize]);
    let mut chunks = bytes.chunks_exact(3);
    for chunk in &mut chunks {
        let n = u32::from(chunk[0]) << 16 | u32::from(chunk[1]) << 8 | u32::from(chunk[2]);
        out.extend([digit(n >> 18), digit(n >> 12), digit(n >> 6), digit(n)]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend([digit(n >> 18), digit(n >> 12)]);
        }
        [a, b] => {
            let n = u32::from(a) << 16 | u32::from(b) << 8;
            out.extend([digit(n >> 18), digit(n >> 12), digit(n >> 6)]);
        }
        _ => {}
    }
}

const INVALID: u8 = 0xFF;

const DECODE_TABLE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Decodes unpadded base64url text strictly (see the module docs).
pub fn decode(text: &[u8]) -> Result<Vec<u8>, Base64UrlError> {
    let len = decoded_len(text.len()).ok_or(Base64UrlError {
        kind: Base64UrlErrorKind::InvalidLength,
        at: text.len(),
        detail: 0,
    })?;
    let mut out = alloc::vec![0u8; len];
    decode_to_slice(text, &mut out)?;
    Ok(out)
}

/// Decodes unpadded base64url text into exactly `N` bytes.
pub fn decode_array<const N: usize>(text: &[u8]) -> Result<[u8; N], Base64UrlError> {
    let mut out = [0u8; N];
    decode_to_slice(text, &mut out)?;
    Ok(out)
}

/// Decodes unpadded base64url text into `out`, which must be exactly as long
/// as the decoded bytes (else `base64url.wrong_length`).
pub fn decode_to_slice(text: &[u8], out: &mut [u8]) -> Result<(), Base64UrlError> {
    let len = decoded_len(text.len()).ok_or(Base64UrlError {
        kind: Base64UrlErrorKind::InvalidLength,
        at: text.len(),
        detail: 0,
    })?;
    if len != out.len() {
        return Err(Base64UrlError {
            kind: Base64UrlErrorKind::WrongLength,
            at: len,
            detail: out.len(),
        });
    }
    let sextet = |position: usize, byte: u8| match DECODE_TABLE[usize::from(byte)] {
        INVALID => Err(Base64UrlError {
            kind: Base64UrlErrorKind::InvalidCharacter,
            at: position,
            detail: usize::from(byte),
        }),
        value => Ok(u32::from(value)),
    };
    for (group, (chars, bytes)) in text.chunks(4).zip(out.chunks_mut(3)).enumerate() {
        let base = group * 4;
        let mut n = 0u32;
        for (i, &c) in chars.iter().enumerate() {
            n |= sextet(base + i, c)? << (18 - 6 * i);
        }
        let unused = match chars.len() {
            2 => n & 0xFFFF,
            3 => n & 0xFF,
            _ => 0,
        };
        if unused != 0 {
            return Err(Base64UrlError {
                kind: Base64UrlErrorKind::NonCanonical,
                at: base + chars.len() - 1,
                detail: 0,
            });
        }
        for (i, slot) in bytes.iter_mut().enumerate() {
            *slot = (n >> (16 - 8 * i)) as u8;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use proptest::prelude::*;

    #[test]
    fn rfc4648_vectors_without_padding() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg"),
            (b"fo", "Zm8"),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg"),
            (b"fooba", "Zm9vYmE"),
            (b"foobar", "Zm9vYmFy"),
        ];
        for (bytes, text) in cases {
            assert_eq!(encode(bytes), text);
            assert_eq!(decode(text.as_bytes()).as_deref(), Ok(bytes));
        }
        assert_eq!(encode(&[0xFB, 0xFF, 0xBF]), "-_-_");
    }

    #[test]
    fn lengths() {
        assert_eq!(encoded_len(16), 22);
        assert_eq!(encoded_len(32), 43);
        assert_eq!(decoded_len(43), Some(32));
        assert_eq!(decoded_len(5), None);
    }

    #[test]
    fn strict_errors() {
        let code = |t: &str| decode(t.as_bytes()).unwrap_err().code();
        assert_eq!(code("Zm9vY"), "base64url.invalid_length");
        assert_eq!(code("Zg=="), "base64url.invalid_character");
        assert_eq!(code("Zm+v"), "base64url.invalid_character");
        assert_eq!(code("Zm/v"), "base64url.invalid_character");
        assert_eq!(code("Zh"), "base64url.non_canonical");
        assert_eq!(code("Zm9"), "base64url.non_canonical");
        let err = decode(b"Zm9v Yg").unwrap_err();
        assert_eq!(err.to_string(), "invalid base64url byte 0x20 at position 4");
        assert_eq!(
            decode_array::<4>(b"Zm9v").unwrap_err().to_string(),
            "base64url text decodes to 3 bytes, expected 4"
        );
        assert_eq!(decode_array::<3>(b"Zm9v"), Ok(*b"foo"));
    }

    proptest! {
        #[test]
        fn round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let text = encode(&bytes);
            prop_assert_eq!(text.len(), encoded_len(bytes.len()));
            prop_assert_eq!(decode(text.as_bytes()), Ok(bytes));
        }

        #[test]
        fn accepted_text_is_canonical(text in "[A-Za-z0-9_-]{0,20}") {
            if let Ok(bytes) = decode(text.as_bytes()) {
                prop_assert_eq!(encode(&bytes), text);
            }
        }
    }
}
