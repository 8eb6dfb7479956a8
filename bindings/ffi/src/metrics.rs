//! The core's registry of metrics and spans, for hosts to name what they emit.

use mintid::metrics::{METRICS, MetricAttribute, SPANS};

/// An attribute of a metric or span and every value it takes.
#[derive(uniffi::Record)]
pub struct MetricAttributeInfo {
    /// The attribute's name, e.g. `decision`.
    pub name: String,
    /// Every value it may take.
    pub values: Vec<String>,
}

/// One metric of the core's registry.
#[derive(uniffi::Record)]
pub struct MetricInfo {
    /// The stable dotted name, e.g. `mintid.record.decisions`.
    pub name: String,
    /// `counter` or `histogram`.
    pub kind: String,
    /// The UCUM unit (`{request}`, `s`, `By`).
    pub unit: String,
    /// What it counts or measures, in one sentence.
    pub description: String,
    /// The attributes every data point carries.
    pub attributes: Vec<MetricAttributeInfo>,
    /// A histogram's bucket bounds, ascending, in its unit (empty for a
    /// counter): the only ones a host's recorder uses.
    pub buckets: Vec<f64>,
}

/// One span of the core's registry.
#[derive(uniffi::Record)]
pub struct SpanInfo {
    /// The stable span name, e.g. `mintid.claim`.
    pub name: String,
    /// What the span covers, in one sentence.
    pub description: String,
    /// The attributes it carries.
    pub attributes: Vec<MetricAttributeInfo>,
}

fn attributes(of: &[MetricAttribute]) -> Vec<MetricAttributeInfo> {
    of.iter()
        .map(|attribute| MetricAttributeInfo {
            name: attribute.name.to_owned(),
            values: attribute.values.iter().map(|v| (*v).to_owned()).collect(),
        })
        .collect()
}

/// Every metric of the core's registry, sorted by name.
#[uniffi::export]
pub fn metrics() -> Vec<MetricInfo> {
    METRICS
        .iter()
        .map(|metric| MetricInfo {
            name: metric.name.to_owned(),
            kind: metric.kind.as_str().to_owned(),
            unit: metric.unit.to_owned(),
            description: metric.description.to_owned(),
            attributes: attributes(metric.attributes),
            buckets: metric.buckets.to_vec(),
        })
        .collect()
}

/// Every span of the core's registry, sorted by name.
#[uniffi::export]
pub fn spans() -> Vec<SpanInfo> {
    SPANS
        .iter()
        .map(|span| SpanInfo {
            name: span.name.to_owned(),
            description: span.description.to_owned(),
            attributes: attributes(span.attributes),
        })
        .collect()
}
