//! Replays `tests/vectors/limits.json` against the core's limits table
//! (`mintid::store::limits`) and its metrics registry (`mintid::metrics`).

mod common;

use std::collections::BTreeSet;

use common::text;
use mintid::metrics::metric_named;
use mintid::store::limits::{self, ARGUMENTS, SHUTDOWN_WAIT_MILLIS};
use mintid::store::{Dialect, Manifest, OutboxCleanup, OutboxEnqueue, RecordCleanup, Step, Value};

fn manifest() -> Manifest {
    Manifest::new(Dialect::Postgres, mintid::store::Placeholder::Numbered)
}

/// What the core makes of `value` for `argument`: the value it runs with,
/// or the refusal's code.
fn apply(argument: &str, value: &str) -> Result<String, String> {
    let number = || value.parse::<u64>().expect("a decimal");
    let ran_with = |query: mintid::store::Query| {
        let batch = query.params.iter().filter_map(Value::as_int).max();
        batch.expect("a batch size").to_string()
    };
    match argument {
        "lease.owner" => Ok(limits::lease_owner(value)),
        "outbox.message_id" => {
            let mut enqueue = OutboxEnqueue::new(manifest(), number(), "k", "b", b"{}".to_vec());
            match enqueue.start(1_000) {
                Step::Run(_) => Ok(value.to_owned()),
                Step::Fail(error) => Err(error.code().to_owned()),
                other => panic!("{argument}: {other:?}"),
            }
        }
        "record_cleanup.batch_size" => {
            Ok(ran_with(RecordCleanup::new(manifest(), number()).next(0)))
        }
        "outbox_cleanup.batch_size" => match OutboxCleanup::new(manifest(), 0, number()).start() {
            Step::Run(query) => Ok(ran_with(query)),
            other => panic!("{argument}: {other:?}"),
        },
        other => panic!("unknown argument {other}"),
    }
}

#[test]
fn limits_vectors() {
    let file = common::vectors("limits.json");
    let cases = file["cases"].as_array().expect("cases");
    let mut arguments = BTreeSet::new();
    let mut histograms = 0;
    for case in cases {
        let name = text(case, "name");
        match text(case, "op") {
            "argument" => {
                let argument = text(case, "argument");
                arguments.insert(argument.to_owned());
                let got = apply(argument, text(case, "value"));
                match case.get("error") {
                    Some(code) => assert_eq!(got, Err(code.as_str().unwrap().to_owned()), "{name}"),
                    None => assert_eq!(got, Ok(text(case, "expect").to_owned()), "{name}"),
                }
            }
            "bound" => {
                assert_eq!(text(case, "bound"), "shutdown_wait_millis", "{name}");
                assert_eq!(
                    SHUTDOWN_WAIT_MILLIS.to_string(),
                    text(case, "value"),
                    "{name}"
                );
            }
            "histogram" => {
                let metric = metric_named(text(case, "metric")).expect("a registered metric");
                let buckets: Vec<f64> = case["buckets"]
                    .as_array()
                    .expect("buckets")
                    .iter()
                    .map(|bound| bound.as_f64().expect("a number"))
                    .collect();
                assert_eq!(metric.buckets, buckets.as_slice(), "{name}");
                histograms += 1;
            }
            other => panic!("{name}: unknown op {other}"),
        }
    }
    let table: BTreeSet<String> = ARGUMENTS
        .iter()
        .map(|limit| limit.name.to_owned())
        .collect();
    assert_eq!(arguments, table, "every row of the table has its cases");
    let registered = mintid::metrics::METRICS
        .iter()
        .filter(|metric| !metric.buckets.is_empty())
        .count();
    assert_eq!(histograms, registered, "every histogram has its case");
}
