//! Fingerprint text forms, JSON Pointers, and field selection.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mintid::fingerprint::{self, FieldSelection, Fingerprint, JsonPointer};
use mintid_fuzz::check_error;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 3 {
        0 => match Fingerprint::parse(rest) {
            Ok(print) => assert_eq!(print.to_string().as_bytes(), rest),
            Err(error) => check_error(error.code(), "fingerprint.", &error.to_string()),
        },
        1 => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            match JsonPointer::parse(text) {
                Ok(pointer) => {
                    assert_eq!(pointer.as_str(), text);
                    // The text is unique for the tokens: escaping them again
                    // gives it back.
                    let rebuilt: String = pointer
                        .tokens()
                        .map(|token| format!("/{}", token.replace('~', "~0").replace('/', "~1")))
                        .collect();
                    assert_eq!(rebuilt, text);
                }
                Err(error) => check_error(error.code(), "fingerprint.", &error.to_string()),
            }
        }
        _ => {
            // A pointer, a zero byte, then a JSON document.
            let Some(split) = rest.iter().position(|&b| b == 0) else {
                return;
            };
            let (pointer, document) = (&rest[..split], &rest[split + 1..]);
            let Ok(pointer) = std::str::from_utf8(pointer) else {
                return;
            };
            for selection in [
                FieldSelection::all().exclude(pointer),
                FieldSelection::all().include(pointer),
            ] {
                let Ok(selection) = selection else {
                    return;
                };
                match fingerprint::canonicalize_selection(document, &selection) {
                    Ok(selected) => {
                        // The selected part is canonical JSON already.
                        let again = fingerprint::canonicalize(selected.as_bytes())
                            .expect("a selection is valid JSON");
                        assert_eq!(again, selected);
                        assert!(fingerprint::fingerprint_json(document, &selection).is_ok());
                    }
                    Err(error) => {
                        check_error(error.code(), "fingerprint.", &error.to_string());
                    }
                }
            }
        }
    }
});
