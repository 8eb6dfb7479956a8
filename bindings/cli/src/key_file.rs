//! The server's key file: the secrets behind grants and signed request IDs.
//!
//! Text, one key a line: a key id (decimal, 0 to 2^32 − 1), whitespace,
//! and the secret as hex (upper or lower case, at least 64 digits, i.e.
//! 32 bytes). Blank lines and lines starting with `#` are skipped. Every key
//! verifies; the first (or the one `--key-id` names) issues grants.

use std::fs;
use std::path::Path;

use mintid::request_id::SecretKey;
use mintid::{KeyRing, RequestIdError};

use crate::error::CliError;

/// The keys of a key file, with the issuing one made current.
pub fn read(path: &Path, issuing: Option<u32>) -> Result<KeyRing, CliError> {
    let text = fs::read_to_string(path).map_err(|error| {
        CliError::invalid(
            "input.unreadable",
            format!("cannot read {}: {error}", path.display()),
        )
    })?;
    parse(&text, issuing).map_err(|problem| match problem {
        Problem::Core(error) => CliError::from(error),
        Problem::File(message) => {
            CliError::invalid("key_file.invalid", format!("{}: {message}", path.display()))
        }
    })
}

/// Why a key file was refused: its text, or a key the core refused.
#[derive(Debug)]
enum Problem {
    File(String),
    Core(RequestIdError),
}

impl From<RequestIdError> for Problem {
    fn from(error: RequestIdError) -> Self {
        Self::Core(error)
    }
}

fn parse(text: &str, issuing: Option<u32>) -> Result<KeyRing, Problem> {
    let mut keys = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let malformed = || {
            Problem::File(format!(
                "line {}: expected '<key id> <secret as hex>'",
                index + 1
            ))
        };
        let mut words = line.split_whitespace();
        let (Some(id), Some(secret), None) = (words.next(), words.next(), words.next()) else {
            return Err(malformed());
        };
        let id: u32 = id.parse().map_err(|_| malformed())?;
        let secret = decode_hex(secret).ok_or_else(malformed)?;
        keys.push(SecretKey::new(id, &secret)?);
    }
    if keys.is_empty() {
        return Err(Problem::File("no keys".to_owned()));
    }
    let current_at = match issuing {
        Some(wanted) => keys
            .iter()
            .position(|key| key.id() == wanted)
            .ok_or_else(|| Problem::File(format!("no key with id {wanted}")))?,
        None => 0,
    };
    let current = keys.remove(current_at);
    let mut ring = KeyRing::new(current);
    for key in keys {
        ring.add(key)?;
    }
    Ok(ring)
}

/// Hex digits (an even number of them) as bytes.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if digits.len() % 2 != 0 {
        return None;
    }
    digits
        .chunks_exact(2)
        .map(|pair| {
            let high = char::from(pair[0]).to_digit(16)?;
            let low = char::from(pair[1]).to_digit(16)?;
            u8::try_from(high * 16 + low).ok()
        })
        .collect()
}

/// `bytes` as lower-case hex.
pub fn encode_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn code(text: &str, issuing: Option<u32>) -> String {
        match parse(text, issuing).unwrap_err() {
            Problem::Core(error) => error.code().to_owned(),
            Problem::File(message) => message,
        }
    }

    #[test]
    fn keys_comments_and_the_issuing_key() {
        let text = format!("# keys\n\n1 {SECRET}\n  7\t{}  \n", SECRET.to_uppercase());
        let ring = parse(&text, None).unwrap();
        assert_eq!(ring.key_ids().collect::<Vec<_>>(), [1, 7]);
        let ring = parse(&text, Some(7)).unwrap();
        assert_eq!(ring.current_id(), 7);
        assert_eq!(ring.key_ids().collect::<Vec<_>>(), [7, 1]);
    }

    #[test]
    fn refusals() {
        assert_eq!(code("", None), "no keys");
        assert_eq!(code(&format!("1 {SECRET}"), Some(2)), "no key with id 2");
        for bad in [
            "1".to_owned(),
            format!("x {SECRET}"),
            format!("-1 {SECRET}"),
            format!("1 {SECRET} extra"),
            format!("1 {SECRET}0"),
            format!("1 {}zz", &SECRET[2..]),
        ] {
            assert!(code(&bad, None).starts_with("line 1: expected"), "{bad:?}");
        }
        assert_eq!(
            code(&format!("1 {}", &SECRET[2..]), None),
            "request_id.weak_secret"
        );
        assert_eq!(
            code(&format!("1 {SECRET}\n1 {SECRET}"), None),
            "request_id.duplicate_key_id"
        );
    }

    #[test]
    fn hex_round_trip() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(decode_hex(&encode_hex(&bytes)), Some(bytes));
        assert_eq!(decode_hex("+1"), None);
    }
}
