//! The core's registry of metrics and spans, for the JS layer to name what it
//! emits.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use mintid::metrics::{METRICS, MetricAttribute, SPANS};
use wasm_bindgen::prelude::*;

/// Attributes as one text: `name=value|value;name=value…` (names and values
/// are lowercase words, so no separator occurs in them).
fn attributes(of: &[MetricAttribute]) -> String {
    of.iter()
        .map(|attribute| alloc::format!("{}={}", attribute.name, attribute.values.join("|")))
        .collect::<Vec<_>>()
        .join(";")
}

/// Every metric of the core's registry, sorted by name, five strings each:
/// the name, its kind (`counter` or `histogram`), its unit, its description
/// and its attributes (`name=value|value;…`, empty when none).
#[wasm_bindgen(js_name = metrics)]
pub fn metrics() -> Vec<String> {
    METRICS
        .iter()
        .flat_map(|metric| {
            [
                metric.name.to_string(),
                metric.kind.as_str().to_string(),
                metric.unit.to_string(),
                metric.description.to_string(),
                attributes(metric.attributes),
            ]
        })
        .collect()
}

/// The bucket bounds of the histogram `name` of the core's registry,
/// ascending, in its unit: the only ones a recorder uses (empty for a counter
/// or a name the registry does not hold).
#[wasm_bindgen(js_name = metricBuckets)]
pub fn metric_buckets(name: &str) -> Vec<f64> {
    mintid::metrics::metric_named(name).map_or_else(Vec::new, |metric| metric.buckets.to_vec())
}

/// Every span of the core's registry, sorted by name, three strings each:
/// the name, its description and its attributes (as in [`metrics`]).
#[wasm_bindgen(js_name = spans)]
pub fn spans() -> Vec<String> {
    SPANS
        .iter()
        .flat_map(|span| {
            [
                span.name.to_string(),
                span.description.to_string(),
                attributes(span.attributes),
            ]
        })
        .collect()
}
