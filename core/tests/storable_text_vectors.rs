//! Replays `tests/vectors/storable_text.json` against the core's storable-text
//! rule (`mintid::store::limits`).

mod common;

use common::text;
use mintid::store::limits::{
    raised_text, storable_text, storable_text_from_bytes, storable_text_utf16,
};

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&text[at..at + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn storable_text_vectors() {
    let file = common::vectors("storable_text.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 25);
    for case in cases {
        let name = text(case, "name");
        let op = text(case, "op");
        if op == "raised_text" {
            let got = raised_text(
                text(case, "type_name").as_bytes(),
                text(case, "message").as_bytes(),
            );
            assert_eq!(got, text(case, "expect"), "{name}");
            continue;
        }
        let max: usize = text(case, "max_bytes").parse().expect("a decimal");
        let got = match op {
            "storable_text" => storable_text(text(case, "text"), max),
            "storable_utf8" => storable_text_from_bytes(&hex(text(case, "hex")), max),
            "storable_utf16" => {
                let units: Vec<u16> = hex(text(case, "units"))
                    .chunks(2)
                    .map(|pair| u16::from_be_bytes([pair[0], pair[1]]))
                    .collect();
                storable_text_utf16(&units, max)
            }
            other => panic!("{name}: unknown op {other}"),
        };
        assert_eq!(got, text(case, "expect"), "{name}");
        assert!(got.len() <= max && !got.contains('\0'), "{name}");
    }
}
