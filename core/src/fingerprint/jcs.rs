//! RFC 8785 (JSON Canonicalization Scheme) serialization of a parsed value.
//!
//! No whitespace; object members sorted by the UTF-16 code units of their
//! names (§3.2.3); strings escaped as ECMAScript `JSON.stringify` does
//! (§3.2.2.2); numbers in ECMAScript's shortest round-trip form
//! (§3.2.2.3), written by `ryu_js`.

use alloc::string::String;
use core::cmp::Ordering;

use super::json::{Member, Value};

/// Appends the canonical form of `value` to `out`.
pub(crate) fn write_value(value: &Value<'_>, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(elements) => {
            out.push('[');
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(element, out);
            }
            out.push(']');
        }
        Value::Object(members) => write_members(members.iter().map(|m| (&*m.name, &m.value)), out),
    }
}

/// Appends an object of `members`, which must come in JCS order.
pub(crate) fn write_members<'v, 'a: 'v>(
    members: impl Iterator<Item = (&'v str, &'v Value<'a>)>,
    out: &mut String,
) {
    out.push('{');
    for (i, (name, value)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(name, out);
        out.push(':');
        write_value(value, out);
    }
    out.push('}');
}

/// Appends a finite number in ECMAScript `Number.prototype.toString` form.
fn write_number(n: f64, out: &mut String) {
    let mut buffer = ryu_js::Buffer::new();
    out.push_str(buffer.format_finite(n));
}

/// Appends a quoted string, escaped as RFC 8785 §3.2.2.2 requires: `"` and
/// `\` with a backslash, U+0008/9/A/C/D as `\b \t \n \f \r`, other controls
/// below U+0020 as `\u00xx` (lower-case hex), everything else literally.
pub(crate) fn write_string(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut run = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escaped: &str = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0A => "\\n",
            0x0C => "\\f",
            0x0D => "\\r",
            0x00..=0x1F => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if escaped.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
        } else {
            out.push_str(escaped);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Orders strings by their UTF-16 code units, as RFC 8785 §3.2.3 sorts
/// member names.
///
/// UTF-8 byte order is code point order, which agrees with UTF-16 order
/// except between a supplementary character (≥ U+10000, a surrogate pair
/// starting at 0xD800–0xDBFF) and U+E000–U+FFFF; so the strings are compared
/// by bytes up to their first difference and the two differing characters
/// by their first UTF-16 code unit, then by code point.
pub(crate) fn cmp_utf16(a: &str, b: &str) -> Ordering {
    let Some(diff) = a.bytes().zip(b.bytes()).position(|(x, y)| x != y) else {
        return a.len().cmp(&b.len());
    };
    let start = (0..=diff)
        .rev()
        .find(|&i| a.is_char_boundary(i))
        .unwrap_or(0);
    let key = |s: &str| {
        s.get(start..)
            .and_then(|rest| rest.chars().next())
            .map(|c| {
                let mut units = [0u16; 2];
                (c.encode_utf16(&mut units)[0], c)
            })
    };
    key(a).cmp(&key(b))
}

/// Finds a member by name in members sorted by [`cmp_utf16`].
pub(crate) fn find_member<'v, 'a>(members: &'v [Member<'a>], name: &str) -> Option<&'v Value<'a>> {
    members
        .binary_search_by(|m| cmp_utf16(&m.name, name))
        .ok()
        .and_then(|i| members.get(i))
        .map(|m| &m.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn number(bits: u64) -> String {
        let mut out = String::new();
        write_number(f64::from_bits(bits), &mut out);
        out
    }

    /// RFC 8785 Appendix B (the finite rows).
    #[test]
    fn rfc8785_appendix_b_numbers() {
        for (bits, text) in [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ] {
            assert_eq!(number(bits), text, "{bits:016x}");
        }
    }

    #[test]
    fn string_escapes() {
        let mut out = String::new();
        write_string(
            "\u{20ac}$\u{f}\nA'B\"\\\\\"/\u{7f}\u{80}\u{1}\u{8}\t\u{c}\r",
            &mut out,
        );
        assert_eq!(
            out,
            "\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\u{7f}\u{80}\\u0001\\b\\t\\f\\r\""
        );
    }

    #[test]
    fn utf16_order_differs_from_code_point_order() {
        assert_eq!(cmp_utf16("\u{1F602}", "\u{FB33}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{E000}", "\u{FFFF}"), Ordering::Less);
        assert_eq!(cmp_utf16("a", "ab"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{10000}", "\u{10400}"), Ordering::Less);
    }

    proptest! {
        #[test]
        fn utf16_order_matches_encode_utf16(a: String, b: String) {
            let expected = a.encode_utf16().cmp(b.encode_utf16());
            prop_assert_eq!(cmp_utf16(&a, &b), expected);
        }

        #[test]
        fn numbers_round_trip(bits: u64) {
            let n = f64::from_bits(bits);
            prop_assume!(n.is_finite());
            let text = number(bits);
            let back: f64 = text.parse().unwrap();
            prop_assert!(back == n);
        }

        #[test]
        fn utf16_order_on_close_strings(a in "[a\u{E000}\u{FFFF}\u{10000}\u{10FFFF}]{0,4}",
                                        b in "[a\u{E000}\u{FFFF}\u{10000}\u{10FFFF}]{0,4}") {
            let expected = a.encode_utf16().collect::<Vec<_>>().cmp(&b.encode_utf16().collect());
            prop_assert_eq!(cmp_utf16(&a, &b), expected);
        }
    }
}
