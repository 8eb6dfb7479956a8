//! Replays `tests/vectors/db_error.json` against the database error classes.

mod common;

use common::text;
use mintid::store::{DbErrorClass, Dialect, classify_db_error};

#[test]
fn db_error_vectors() {
    let file = common::vectors("db_error.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 50);
    for case in cases {
        let name = text(case, "name");
        assert_eq!(text(case, "op"), "classify", "{name}: unknown op");
        let dialect = Dialect::parse(text(case, "dialect")).expect("a dialect");
        let class = classify_db_error(
            dialect,
            case["code"].as_str(),
            case["sqlstate"].as_str(),
            case["message"].as_str(),
        );
        let expected = DbErrorClass::parse(text(case, "class")).expect("a class name");
        assert_eq!(class, expected, "{name}");
    }
}
