//! `Idempotency-Key` header values: bare and Structured Field String forms.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::IdempotencyKey;
use mintid::key::{KeyPart, parse_header};
use mintid_fuzz::{check_error, sf_string};

fuzz_target!(|data: &[u8]| {
    let result = parse_header(data);
    // Oracle for bare values: without the spaces and tabs around it, a value
    // that does not start with a quote is the id itself, accepted iff it is
    // a valid id.
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = data.iter().position(|b| !is_ows(b)).unwrap_or(data.len());
    let end = data
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |last| last + 1);
    let trimmed = &data[start..end];
    if trimmed.first() != Some(&b'"') {
        let expected = std::str::from_utf8(trimmed)
            .ok()
            .filter(|id| KeyPart::Id.validate(id).is_ok());
        assert_eq!(result.as_deref().ok(), expected, "bare value {data:?}");
    }
    match result {
        Ok(id) => {
            KeyPart::Id
                .validate(&id)
                .expect("a header's id is a valid id");
            // Both forms of the id, with optional whitespace, read back the id.
            if !id.starts_with('"') {
                assert_eq!(parse_header(id.as_bytes()).as_deref(), Ok(id.as_str()));
            }
            let quoted = format!(" \t{} ", sf_string(&id));
            assert_eq!(parse_header(quoted.as_bytes()).as_deref(), Ok(id.as_str()));
            let key =
                IdempotencyKey::from_header("k", "s", data).expect("valid kind, scope and id");
            assert_eq!(key.id(), id);
        }
        Err(error) => check_error(error.code(), "key.", &error.to_string()),
    }
});
