//! The receiving side's vectors (`tests/vectors/receiving/receiving.json`):
//! transition tables, identifier quoting, keys from a JSON body, webhook
//! signatures. Fails on an op it does not know.

mod common;

use mintid::store::Dialect;
use mintid::transition::{Identifier, TransitionTable};
use mintid::webhook::{SignatureScheme, key_from_body, verify_signature};
use serde_json::Value;

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| item.as_str().expect("a string").to_owned())
        .collect()
}

fn moves(value: &Value) -> Vec<(String, String)> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|pair| {
            let pair = strings(pair);
            (pair[0].clone(), pair[1].clone())
        })
        .collect()
}

fn code<T, E: std::fmt::Debug>(
    result: Result<T, E>,
    code: impl Fn(&E) -> &'static str,
) -> Option<&'static str> {
    result.as_ref().err().map(code)
}

#[test]
fn receiving_vectors() {
    let document = common::vectors("receiving/receiving.json");
    let cases = document["cases"].as_array().expect("cases");
    assert!(cases.len() > 60);
    for case in cases {
        let expected_error = case["error"].as_str();
        match common::text(case, "op") {
            "transition_check" => {
                let table = TransitionTable::new(&strings(&case["states"]), &moves(&case["moves"]))
                    .expect("a valid table");
                let checked = table.check(common::text(case, "from"), common::text(case, "to"));
                assert_eq!(code(checked, |e| e.code()), expected_error, "{case}");
            }
            "transition_table" => {
                let made = TransitionTable::new(&strings(&case["states"]), &moves(&case["moves"]));
                assert_eq!(code(made, |e| e.code()), expected_error, "{case}");
            }
            "identifier" => {
                let text = common::text(case, "text");
                let parsed = match common::text(case, "kind") {
                    "table" => Identifier::table(text),
                    "column" => Identifier::column(text),
                    other => panic!("unknown kind {other}"),
                };
                match parsed {
                    Ok(identifier) => {
                        for (dialect, name) in [
                            (Dialect::Postgres, "postgres"),
                            (Dialect::Mysql, "mysql"),
                            (Dialect::Sqlite, "sqlite"),
                        ] {
                            assert_eq!(
                                identifier.quoted(dialect),
                                common::text(&case["quoted"], name),
                                "{case}"
                            );
                        }
                    }
                    Err(error) => assert_eq!(Some(error.code()), expected_error, "{case}"),
                }
            }
            "key_from_body" => {
                let got = key_from_body(
                    common::text(case, "body").as_bytes(),
                    common::text(case, "pointer"),
                );
                match got {
                    Ok(key) => assert_eq!(key, common::text(case, "key"), "{case}"),
                    Err(error) => assert_eq!(Some(error.code()), expected_error, "{case}"),
                }
            }
            "signature" => {
                let scheme = match common::text(case, "scheme") {
                    "sha256" => SignatureScheme::Sha256Prefixed,
                    "stripe" => SignatureScheme::Timestamped {
                        tolerance_millis: common::int(case, "tolerance_millis"),
                    },
                    other => panic!("unknown scheme {other}"),
                };
                let checked = verify_signature(
                    scheme,
                    common::text(case, "secret").as_bytes(),
                    common::text(case, "header"),
                    common::text(case, "body").as_bytes(),
                    common::int(case, "now_millis"),
                );
                assert_eq!(code(checked, |e| e.code()), expected_error, "{case}");
            }
            other => panic!("no runner for op {other:?}"),
        }
    }
}
