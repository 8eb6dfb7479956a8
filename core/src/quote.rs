//! Caller input quoted in error messages, without `{:?}`.
//!
//! `Debug` for `str` and `char` decides what to escape by Unicode's
//! printable tables, which every wasm module showing an error message would
//! then carry (several KB). These write printable ASCII as it is and every
//! other character as an escape, which also keeps control and invisible
//! characters out of logs.

use core::fmt::{self, Write};

/// A text in double quotes: printable ASCII as it is (`"` and `\` escaped
/// with a backslash), any other character as `\u{…}` (hex code point).
pub(crate) struct QuotedStr<'a>(pub(crate) &'a str);

impl fmt::Display for QuotedStr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' | '\\' => write!(f, "\\{c}")?,
                ' '..='~' => f.write_char(c)?,
                _ => write!(f, "\\u{{{:x}}}", u32::from(c))?,
            }
        }
        f.write_char('"')
    }
}

/// A character in single quotes when it is visible ASCII (`'` and `\`
/// escaped with a backslash), else its code point as `U+XXXX`.
pub(crate) struct QuotedChar(pub(crate) char);

impl fmt::Display for QuotedChar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            c @ ('\'' | '\\') => write!(f, "'\\{c}'"),
            c if c.is_ascii_graphic() => write!(f, "'{c}'"),
            c => write!(f, "U+{:04X}", u32::from(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn quotes_printable_ascii_and_escapes_the_rest() {
        assert_eq!(QuotedStr("snow flake").to_string(), "\"snow flake\"");
        assert_eq!(QuotedStr("a\"b\\c").to_string(), "\"a\\\"b\\\\c\"");
        assert_eq!(
            QuotedStr("é\n\u{202e}").to_string(),
            "\"\\u{e9}\\u{a}\\u{202e}\""
        );
        assert_eq!(QuotedStr("").to_string(), "\"\"");
    }

    #[test]
    fn quotes_visible_ascii_characters_and_names_the_rest() {
        assert_eq!(QuotedChar('x').to_string(), "'x'");
        assert_eq!(QuotedChar('\'').to_string(), "'\\''");
        assert_eq!(QuotedChar('\\').to_string(), "'\\\\'");
        assert_eq!(QuotedChar(' ').to_string(), "U+0020");
        assert_eq!(QuotedChar('é').to_string(), "U+00E9");
        assert_eq!(QuotedChar('\u{1f600}').to_string(), "U+1F600");
    }
}
