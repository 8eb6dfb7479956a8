//! Oracles shared by the fuzz targets: small, independent restatements of
//! the rules in `docs/spec.md`, written without mintid's code so that a
//! target compares two routes to the same answer.

use serde_json::Value;

/// Checks what every mintid error must offer whatever the input: a stable
/// code under the concern's prefix, and a message that formats (without
/// panicking) to one non-empty line.
pub fn check_error(code: &str, prefix: &str, message: &str) {
    assert!(code.starts_with(prefix), "code {code:?} outside {prefix:?}");
    assert!(!message.is_empty(), "empty message for {code}");
    assert!(
        !message.contains('\n'),
        "multi-line message for {code}: {message:?}"
    );
}

/// The text a Crockford base32 decoder reads `text` as, in canonical
/// spelling: upper case, `I` and `L` as `1`, `O` as `0`.
pub fn crockford_canonical(text: &str) -> String {
    text.chars()
        .map(|c| match c.to_ascii_uppercase() {
            'I' | 'L' => '1',
            'O' => '0',
            upper => upper,
        })
        .collect()
}

/// Whether two JSON values are the same data: objects compared as sets of
/// members, numbers compared as IEEE doubles (JSON numbers are doubles in
/// RFC 8785), everything else structurally.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(key, x)| ys.get(key).is_some_and(|y| same_json(x, y)))
        }
        _ => a == b,
    }
}

/// The id that `id_from_fields` must build, by the spec: each field's
/// bytes kept when `A-Z a-z 0-9 . _ -` and written `%XX` otherwise, joined
/// by `:`. Returns the joined text (hashing long texts is the caller's).
pub fn joined_fields<S: AsRef<str>>(fields: &[S]) -> String {
    let encoded: Vec<String> = fields
        .iter()
        .map(|field| {
            field
                .as_ref()
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                        char::from(b).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect()
        })
        .collect();
    encoded.join(":")
}

/// Reads a joined id back into its fields (the inverse of
/// [`joined_fields`]): splits at `:` and decodes `%XX`. `None` when the text
/// is not such an encoding.
pub fn split_fields(id: &str) -> Option<Vec<String>> {
    id.split(':')
        .map(|field| {
            let mut bytes = Vec::new();
            let mut rest = field.as_bytes();
            while let Some((&first, tail)) = rest.split_first() {
                if first == b'%' {
                    let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
                    bytes.push(u8::from_str_radix(hex, 16).ok()?);
                    rest = &tail[2..];
                } else {
                    bytes.push(first);
                    rest = tail;
                }
            }
            String::from_utf8(bytes).ok()
        })
        .collect()
}

/// `value` as a Structured Field String (RFC 8941 §3.3.3): quoted, with
/// `"` and `\` escaped.
pub fn sf_string(value: &str) -> String {
    let mut quoted = String::from("\"");
    for c in value.chars() {
        if c == '"' || c == '\\' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}
