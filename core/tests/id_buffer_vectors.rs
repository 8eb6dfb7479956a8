//! Replays `tests/vectors/id_buffer.json` against the ID buffer rule.

mod common;

use common::{int, number, text};
use mintid::id_buffer::{batch_cap, fresh_until_millis, is_fresh, next_batch_size};

#[test]
fn id_buffer_vectors() {
    let file = common::vectors("id_buffer.json");
    let cases = file["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20);
    for case in cases {
        let name = text(case, "name");
        match text(case, "op") {
            "fresh_until" => assert_eq!(
                fresh_until_millis(
                    int(case, "first_tick_start_millis"),
                    int(case, "tick_millis")
                ),
                int(case, "fresh_until_millis"),
                "{name}"
            ),
            "next_batch_size" => assert_eq!(
                u64::from(next_batch_size(
                    int(case, "handed_out"),
                    number(case, "cap")
                )),
                int(case, "size"),
                "{name}"
            ),
            "batch_cap" => assert_eq!(
                u64::from(batch_cap(int(case, "ids_per_tick"))),
                int(case, "cap"),
                "{name}"
            ),
            "hand_out" => {
                let bound = fresh_until_millis(
                    int(case, "first_tick_start_millis"),
                    int(case, "tick_millis"),
                );
                let reads = case["now_millis"].as_array().expect("now_millis");
                let out = reads
                    .iter()
                    .map(|read| {
                        read.as_str()
                            .expect("a decimal")
                            .parse::<u64>()
                            .expect("u64")
                    })
                    .take_while(|now| is_fresh(bound, *now))
                    .count();
                assert_eq!(out as u64, int(case, "handed_out"), "{name}");
            }
            op => panic!("{name}: unknown op {op}"),
        }
    }
}
