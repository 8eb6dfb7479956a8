//! What every vector runner shares: reading a file of `tests/vectors/` and the
//! field conventions of `tests/vectors/README.md` (integers as decimal strings,
//! bytes as lower-case hex).
// Each runner is its own crate and uses only some of these helpers.
#![allow(dead_code)]

use serde_json::Value;

/// The vector file `name` (e.g. `"lease.json"`) of `tests/vectors/`, parsed.
pub fn vectors(name: &str) -> Value {
    let path = format!("{}/../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"))
}

/// The string field `field` of `value`.
pub fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("field {field:?} is not a string in {value}"))
}

/// The integer field `field` of `value`, written as a decimal string.
pub fn int(value: &Value, field: &str) -> u64 {
    number(value, field)
}

/// The integer field `field` of `value` as a `T`, written as a decimal string.
pub fn number<T: std::str::FromStr>(value: &Value, field: &str) -> T {
    text(value, field)
        .parse()
        .unwrap_or_else(|_| panic!("field {field:?} is not a decimal integer in range in {value}"))
}

/// The bytes of a lower-case hex string.
pub fn hex(text: &str) -> Vec<u8> {
    assert!(text.len() % 2 == 0 && text.is_ascii(), "not hex: {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// The lower-case hex string of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
