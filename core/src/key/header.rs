//! The value of an HTTP `Idempotency-Key` header.

use alloc::string::String;
use alloc::vec::Vec;

use super::{KeyError, KeyPart};

/// Reads the id from an `Idempotency-Key` header value.
///
/// Leading and trailing optional whitespace (spaces and tabs) is dropped.
/// A value starting with `"` is a Structured Field String (RFC 8941
/// §3.3.3, as the IETF draft specifies): it must end with the closing `"`,
/// and inside it `\"` and `\\` are the only escapes. Parameters after the
/// string (`;name=value`) are not accepted. Any other value is a bare key,
/// as Stripe and others send it, taken as it is. Either way the result must
/// be a valid id (1–64 bytes of printable ASCII without spaces).
///
/// Errors: `key.empty` (nothing but whitespace, or `""`),
/// `key.invalid_header` (unterminated string, bad escape, characters after
/// the closing quote; the position is within `value`), and the id's own
/// `key.too_long` and `key.invalid_character` (the position is within the
/// id).
pub fn parse_header(value: &[u8]) -> Result<String, KeyError> {
    let start = value
        .iter()
        .position(|&b| !is_ows(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|&b| !is_ows(b))
        .map_or(start, |last| last + 1);
    let trimmed = value.get(start..end).unwrap_or_default();
    let id = match trimmed.first() {
        Some(b'"') => unquote(trimmed, start)?,
        _ => trimmed.to_vec(),
    };
    KeyPart::Id.validate_bytes(&id)?;
    Ok(id.iter().map(|&b| char::from(b)).collect())
}

const fn is_ows(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t')
}

/// The content of a structured-field string; `offset` is where `quoted`
/// starts in the header value.
fn unquote(quoted: &[u8], offset: usize) -> Result<Vec<u8>, KeyError> {
    let mut content = Vec::with_capacity(quoted.len());
    let mut i = 1;
    loop {
        match quoted.get(i) {
            None => return Err(KeyError::header("unterminated string", offset + i)),
            Some(b'"') if i + 1 == quoted.len() => return Ok(content),
            Some(b'"') => {
                return Err(KeyError::header(
                    "unexpected characters after the closing quote",
                    offset + i + 1,
                ));
            }
            Some(b'\\') => match quoted.get(i + 1) {
                Some(&escaped @ (b'"' | b'\\')) => {
                    content.push(escaped);
                    i += 2;
                }
                _ => {
                    return Err(KeyError::header(
                        "only \\\" and \\\\ are escapes in a string",
                        offset + i,
                    ));
                }
            },
            Some(&byte) => {
                content.push(byte);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn quoted_and_bare() {
        for (value, id) in [
            (&b"\"abc\""[..], "abc"),
            (b" \t\"a\\\"b\\\\c\"\t ", "a\"b\\c"),
            (b"abc", "abc"),
            (b"  3f9a-uuid-like  ", "3f9a-uuid-like"),
            (b"a\"b", "a\"b"),
            (b"':;%", "':;%"),
        ] {
            assert_eq!(parse_header(value).as_deref(), Ok(id), "{value:?}");
        }
    }

    #[test]
    fn errors() {
        for (value, code, position) in [
            (&b""[..], "key.empty", None),
            (b" \t ", "key.empty", None),
            (b"\"\"", "key.empty", None),
            (b"\"abc", "key.invalid_header", Some(4)),
            (b" \"abc\\\"", "key.invalid_header", Some(7)),
            (b"\"a\\nb\"", "key.invalid_header", Some(2)),
            (b"\"abc\";p=1", "key.invalid_header", Some(5)),
            (b"\"a b\"", "key.invalid_character", Some(1)),
            (b"a b", "key.invalid_character", Some(1)),
            (b"\"caf\xc3\xa9\"", "key.invalid_character", Some(3)),
            (b"x\xff", "key.invalid_character", Some(1)),
        ] {
            let err = parse_header(value).unwrap_err();
            assert_eq!((err.code(), err.position()), (code, position), "{value:?}");
        }
        assert_eq!(
            parse_header(b"\"abc").unwrap_err().to_string(),
            "invalid Idempotency-Key header: unterminated string at position 4"
        );
        assert_eq!(
            parse_header(b"x\xff").unwrap_err().to_string(),
            "byte 0xFF (not UTF-8) at position 1 of the id is not allowed (printable ASCII without spaces)"
        );
        assert_eq!(
            parse_header(&[b'k'; 65]).unwrap_err().code(),
            "key.too_long"
        );
    }
}
