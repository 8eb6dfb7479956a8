//! A strict JSON parser (RFC 8259) into the value tree that JCS writes.
//!
//! Beyond the grammar it rejects what would make a canonical form ambiguous:
//! duplicate member names (compared after unescaping), `\u` escapes that
//! leave half a surrogate pair, integers beyond ±(2^53−1), numbers too large
//! for a double, and nesting deeper than [`MAX_DEPTH`]. Object members are
//! kept sorted in JCS order (by UTF-16 code units).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::error::{FingerprintError, FingerprintErrorKind as Kind};
use super::jcs::cmp_utf16;

/// The deepest nesting of objects and arrays accepted: a value inside 128
/// containers is fine, a 129th level is `fingerprint.too_deep`.
pub const MAX_DEPTH: usize = 128;

/// The largest integer magnitude accepted from an integer token: 2^53 − 1,
/// the limit of exact integers in an IEEE-754 double (I-JSON, RFC 7493).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    Number(f64),
    String(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    /// Members sorted by [`cmp_utf16`] of their names, names unique.
    Object(Vec<Member<'a>>),
}

/// One member of an object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Member<'a> {
    pub(crate) name: Cow<'a, str>,
    pub(crate) value: Value<'a>,
    /// Byte offset of the name's opening quote in the input.
    pub(crate) name_at: usize,
}

/// Parses one JSON text (a value with optional surrounding whitespace).
pub(crate) fn parse(input: &[u8]) -> Result<Value<'_>, FingerprintError> {
    let text = core::str::from_utf8(input).map_err(|e| {
        FingerprintError::at(Kind::InvalidUtf8, e.valid_up_to(), "invalid UTF-8", "")
    })?;
    let mut parser = Parser { text, pos: 0 };
    parser.skip_whitespace();
    let value = parser.value(0)?;
    parser.skip_whitespace();
    match parser.peek() {
        None => Ok(value),
        Some(_) => Err(parser.unexpected("invalid JSON: unexpected data after the value")),
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// An `invalid_json` error at the current position, naming the character
    /// found there (or the end of input).
    fn unexpected(&self, reason: &'static str) -> FingerprintError {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            Some(c) => {
                let mut buf = [0u8; 4];
                FingerprintError::at(Kind::InvalidJson, self.pos, reason, c.encode_utf8(&mut buf))
            }
            None => FingerprintError::at(
                Kind::InvalidJson,
                self.pos,
                "invalid JSON: unexpected end of input",
                "",
            ),
        }
    }

    fn expect(&mut self, byte: u8, reason: &'static str) -> Result<(), FingerprintError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected(reason))
        }
    }

    /// Parses a value inside `depth` enclosing containers.
    fn value(&mut self, depth: usize) -> Result<Value<'a>, FingerprintError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            _ => Err(self.unexpected("invalid JSON: expected a value, found")),
        }
    }

    fn literal(&mut self, word: &str, value: Value<'a>) -> Result<Value<'a>, FingerprintError> {
        if self.text.as_bytes()[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("invalid JSON: expected a value, found"))
        }
    }

    fn enter(&self, level: usize) -> Result<(), FingerprintError> {
        if level > MAX_DEPTH {
            Err(FingerprintError::at(
                Kind::TooDeep,
                self.pos,
                "objects and arrays nested deeper than 128 levels",
                "",
            ))
        } else {
            Ok(())
        }
    }

    fn array(&mut self, level: usize) -> Result<Value<'a>, FingerprintError> {
        self.enter(level)?;
        self.pos += 1;
        let mut elements = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(elements));
        }
        loop {
            self.skip_whitespace();
            elements.push(self.value(level)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(elements));
                }
                _ => return Err(self.unexpected("invalid JSON: expected ',' or ']', found")),
            }
        }
    }

    fn object(&mut self, level: usize) -> Result<Value<'a>, FingerprintError> {
        self.enter(level)?;
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.unexpected("invalid JSON: expected a member name, found"));
            }
            let name_at = self.pos;
            let name = self.string()?;
            self.skip_whitespace();
            self.expect(
                b':',
                "invalid JSON: expected ':' after a member name, found",
            )?;
            self.skip_whitespace();
            let value = self.value(level)?;
            members.push(Member {
                name,
                value,
                name_at,
            });
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(self.unexpected("invalid JSON: expected ',' or '}', found")),
            }
        }
        members.sort_unstable_by(|a, b| cmp_utf16(&a.name, &b.name));
        if let Some(pair) = members.windows(2).find(|w| w[0].name == w[1].name) {
            let later = if pair[0].name_at > pair[1].name_at {
                &pair[0]
            } else {
                &pair[1]
            };
            return Err(FingerprintError::at(
                Kind::DuplicateMember,
                later.name_at,
                "duplicate member name",
                &later.name,
            ));
        }
        Ok(Value::Object(members))
    }

    /// Parses a string at its opening quote; borrows when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, FingerprintError> {
        self.pos += 1;
        let start = self.pos;
        let mut owned: Option<String> = None;
        let mut run = start;
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.unexpected("invalid JSON: unterminated string"));
            };
            match byte {
                b'"' => {
                    let tail = &self.text[run..self.pos];
                    self.pos += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&self.text[run..self.pos]);
                    let c = self.escape()?;
                    s.push(c);
                    run = self.pos;
                }
                0x00..=0x1F => {
                    return Err(FingerprintError::at_code_unit(
                        Kind::InvalidJson,
                        self.pos,
                        "invalid JSON: unescaped control character",
                        u16::from(byte),
                    ));
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Decodes the escape at the current backslash.
    fn escape(&mut self) -> Result<char, FingerprintError> {
        let at = self.pos;
        self.pos += 1;
        let decoded = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                return self.unicode_escape(at);
            }
            _ => return Err(self.unexpected("invalid JSON: invalid escape character")),
        };
        self.pos += 1;
        Ok(decoded)
    }

    /// Decodes `XXXX` after `\u` (and the low half of a surrogate pair).
    fn unicode_escape(&mut self, at: usize) -> Result<char, FingerprintError> {
        let unit = self.hex4()?;
        let lone = || {
            FingerprintError::at_code_unit(Kind::LoneSurrogate, at, "lone surrogate escape", unit)
        };
        match unit {
            0xD800..=0xDBFF => {
                if !self.text.as_bytes()[self.pos..].starts_with(b"\\u") {
                    return Err(lone());
                }
                self.pos += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(lone());
                }
                let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                char::from_u32(code).ok_or_else(lone)
            }
            0xDC00..=0xDFFF => Err(lone()),
            _ => char::from_u32(u32::from(unit)).ok_or_else(lone),
        }
    }

    fn hex4(&mut self) -> Result<u16, FingerprintError> {
        let mut unit: u16 = 0;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => {
                    return Err(
                        self.unexpected("invalid JSON: expected 4 hex digits after \\u, found")
                    );
                }
            };
            unit = unit << 4 | u16::from(digit);
            self.pos += 1;
        }
        Ok(unit)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value<'a>, FingerprintError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let int_digits = self.digits();
        if int_digits == 0 {
            return Err(self.unexpected("invalid JSON: expected a digit, found"));
        }
        if int_digits > 1 && self.text.as_bytes()[int_start] == b'0' {
            return Err(FingerprintError::at(
                Kind::InvalidJson,
                int_start,
                "invalid JSON: leading zero in number",
                &self.text[start..self.pos],
            ));
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.unexpected("invalid JSON: expected a digit after '.', found"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(
                    self.unexpected("invalid JSON: expected a digit in the exponent, found")
                );
            }
        }
        let token = &self.text[start..self.pos];
        let out_of_range =
            |reason| FingerprintError::at(Kind::NumberOutOfRange, start, reason, token);
        let n = match token.parse::<f64>() {
            Ok(n) if n.is_finite() => n,
            _ => return Err(out_of_range("number too large for a double:")),
        };
        if integer && !is_safe_integer(&self.text[int_start..self.pos]) && !is_canonical(token, n) {
            return Err(out_of_range(
                "integer beyond ±(2^53−1) that a double cannot hold exactly, send it as a string:",
            ));
        }
        Ok(Value::Number(n))
    }
}

/// Whether a run of decimal digits (no sign, no leading zero) is at most
/// [`MAX_SAFE_INTEGER`], which has 16 digits.
fn is_safe_integer(digits: &str) -> bool {
    match digits.len() {
        0..=15 => true,
        16 => digits.parse::<u64>().is_ok_and(|n| n <= MAX_SAFE_INTEGER),
        _ => false,
    }
}

/// Whether `token` is exactly the RFC 8785 form of `n`, the double nearest
/// to it, so that canonicalization writes it back unchanged.
fn is_canonical(token: &str, n: f64) -> bool {
    ryu_js::Buffer::new().format_finite(n) == token
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn code(text: &str) -> &'static str {
        parse(text.as_bytes()).unwrap_err().code()
    }

    #[test]
    fn scalars_and_containers() {
        assert_eq!(parse(b" null "), Ok(Value::Null));
        assert_eq!(parse(b"true"), Ok(Value::Bool(true)));
        assert_eq!(parse(b"-0"), Ok(Value::Number(-0.0)));
        assert_eq!(parse(b"1.5e3"), Ok(Value::Number(1500.0)));
        assert_eq!(
            parse(br#"["a\n\u00e9\ud83d\ude02"]"#),
            Ok(Value::Array(vec![Value::String(Cow::Borrowed(
                "a\n\u{e9}\u{1F602}"
            ))]))
        );
        let Ok(Value::Object(members)) = parse(br#"{"b":1,"a":2,"\u20ac":3,"\ud83d\ude02":4}"#)
        else {
            panic!("not an object")
        };
        let names: Vec<&str> = members.iter().map(|m| &*m.name).collect();
        assert_eq!(names, ["a", "b", "\u{20AC}", "\u{1F602}"]);
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        assert!(matches!(
            parse(br#""plain""#),
            Ok(Value::String(Cow::Borrowed("plain")))
        ));
    }

    #[test]
    fn safe_integer_boundary() {
        assert_eq!(
            parse(b"9007199254740991"),
            Ok(Value::Number(9007199254740991.0))
        );
        assert_eq!(
            parse(b"-9007199254740991"),
            Ok(Value::Number(-9007199254740991.0))
        );
        assert_eq!(
            parse(b"9007199254740992"),
            Ok(Value::Number(9007199254740992.0))
        );
        assert_eq!(
            parse(b"-9007199254740994"),
            Ok(Value::Number(-9007199254740994.0))
        );
        assert_eq!(
            parse(b"295147905179352830000"),
            Ok(Value::Number(2f64.powi(68)))
        );
        assert_eq!(code("9007199254740993"), "fingerprint.number_out_of_range");
        assert_eq!(code("-9007199254740995"), "fingerprint.number_out_of_range");
        assert_eq!(
            code("295147905179352825856"),
            "fingerprint.number_out_of_range"
        );
        assert_eq!(
            code("1000000000000000000000"),
            "fingerprint.number_out_of_range"
        );
        assert_eq!(
            code("12345678901234567890"),
            "fingerprint.number_out_of_range"
        );
        assert_eq!(
            parse(b"9007199254740993.0"),
            Ok(Value::Number(9007199254740992.0))
        );
        assert_eq!(
            parse(b"1e400").unwrap_err().code(),
            "fingerprint.number_out_of_range"
        );
        assert_eq!(parse(b"1e-400"), Ok(Value::Number(0.0)));
    }

    #[test]
    fn errors_have_codes_and_positions() {
        for (text, expected, position) in [
            ("", "fingerprint.invalid_json", 0),
            ("[1,]", "fingerprint.invalid_json", 3),
            ("{\"a\":1,}", "fingerprint.invalid_json", 7),
            ("01", "fingerprint.invalid_json", 0),
            ("1.", "fingerprint.invalid_json", 2),
            ("+1", "fingerprint.invalid_json", 0),
            ("[1] x", "fingerprint.invalid_json", 4),
            ("\"a\tb\"", "fingerprint.invalid_json", 2),
            ("\"\\x\"", "fingerprint.invalid_json", 2),
            ("\"abc", "fingerprint.invalid_json", 4),
            ("\u{feff}1", "fingerprint.invalid_json", 0),
            ("tru", "fingerprint.invalid_json", 0),
            (
                "{\"a\":1,\"b\":2,\"a\":3}",
                "fingerprint.duplicate_member",
                13,
            ),
            ("{\"a\":1,\"\\u0061\":3}", "fingerprint.duplicate_member", 7),
            ("\"\\ud800\"", "fingerprint.lone_surrogate", 1),
            ("\"\\udc00\"", "fingerprint.lone_surrogate", 1),
            ("\"\\ud800\\u0041\"", "fingerprint.lone_surrogate", 1),
            ("\"\\ud800\\ud800\"", "fingerprint.lone_surrogate", 1),
        ] {
            let err = parse(text.as_bytes()).unwrap_err();
            assert_eq!(
                (err.code(), err.position()),
                (expected, Some(position)),
                "{text:?}"
            );
        }
        let err = parse(b"[\xff]").unwrap_err();
        assert_eq!(
            (err.code(), err.position()),
            ("fingerprint.invalid_utf8", Some(1))
        );
    }

    #[test]
    fn messages_name_the_problem() {
        let message = |text: &str| parse(text.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            message("{\"a\":1,\"a\":2}"),
            "duplicate member name \"a\" at byte 7"
        );
        assert_eq!(
            message("\"\\uD800\""),
            "lone surrogate escape U+D800 at byte 1"
        );
        assert_eq!(
            message("[9007199254740993]"),
            "integer beyond ±(2^53−1) that a double cannot hold exactly, send it as a string: \
             \"9007199254740993\" at byte 1"
        );
        assert_eq!(
            message("[1,]"),
            "invalid JSON: expected a value, found \"]\" at byte 3"
        );
        assert_eq!(
            message("[1"),
            "invalid JSON: unexpected end of input at byte 2"
        );
    }

    #[test]
    fn depth_limit() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        assert!(parse(deep(MAX_DEPTH).as_bytes()).is_ok());
        let err = parse(deep(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert_eq!(
            (err.code(), err.position()),
            ("fingerprint.too_deep", Some(MAX_DEPTH))
        );
        let objects = "{\"a\":".repeat(MAX_DEPTH + 1) + "1" + &"}".repeat(MAX_DEPTH + 1);
        assert_eq!(code(&objects), "fingerprint.too_deep");
    }
}
