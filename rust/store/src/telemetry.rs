//! What the store reports besides its results (`docs/spec.md`, "Metrics and
//! traces"): the core's registry of metrics ([`mintid::metrics::METRICS`])
//! through the `metrics` facade (feature `metrics`), its spans and the log
//! through `tracing`. Every name, unit and attribute value is the core's, and
//! each is reported where a driver already decided: nothing here decides.

use std::future::Future;
use std::time::Instant;

use mintid::store::{DbErrorClass, DriverError, Finished, RecordYield, RelayReport, Way};
use tracing::{Instrument, Span, field::Empty};

use crate::error::Error;

/// Describes the registry's metrics (unit and description) to the recorder
/// installed now; the histograms' bucket bounds are the exporter's to set
/// from [`mintid::metrics::METRICS`] (the crate's README shows Prometheus).
#[cfg(feature = "metrics")]
pub(crate) fn describe() {
    use metrics::Unit;
    use mintid::metrics::{METRICS, MetricKind};
    for metric in METRICS {
        let unit = match metric.unit {
            "s" => Unit::Seconds,
            "By" => Unit::Bytes,
            _ => Unit::Count,
        };
        match metric.kind {
            MetricKind::Counter => {
                metrics::describe_counter!(metric.name, unit, metric.description)
            }
            MetricKind::Histogram => {
                metrics::describe_histogram!(metric.name, unit, metric.description);
            }
        }
    }
}

#[cfg(not(feature = "metrics"))]
pub(crate) fn describe() {}

/// The attributes of a data point: the registry's names and values.
type Labels<'a> = &'a [(&'static str, &'static str)];

/// Adds `by` to a counter (nothing for 0: a relay run's empty results).
fn count(name: &'static str, labels: Labels<'_>, by: u64) {
    #[cfg(feature = "metrics")]
    if by > 0 {
        metrics::counter!(name, labels).increment(by);
    }
    let _ = (name, labels, by);
}

/// Records `value` in a histogram.
fn measure(name: &'static str, labels: Labels<'_>, value: f64) {
    #[cfg(feature = "metrics")]
    metrics::histogram!(name, labels).record(value);
    let _ = (name, labels, value);
}

/// Runs a claim on `way` (the record driver's steps up to its decision) in
/// the span `mintid.claim`, then counts its decision
/// (`mintid.record.decisions`) and times it (`mintid.record.claim.duration`).
pub(crate) fn claim(
    way: Way,
    steps: impl Future<Output = Result<RecordYield, Error>>,
) -> impl Future<Output = Result<RecordYield, Error>> {
    let span = tracing::info_span!("mintid.claim", way = way.as_str(), decision = Empty);
    timed(span, steps, move |decision, seconds| {
        let way = ("way", way.as_str());
        count("mintid.record.decisions", &[("decision", decision), way], 1);
        measure("mintid.record.claim.duration", &[way], seconds);
    })
}

/// Runs the application's operation on `way` in the span `mintid.operation`.
pub(crate) fn operation<T>(
    way: Way,
    operation: impl Future<Output = T>,
) -> impl Future<Output = T> {
    operation.instrument(tracing::info_span!("mintid.operation", way = way.as_str()))
}

/// Runs the completion on `way` of an operation that gave the store
/// `response_bytes` to keep (its response body's size, if any) in the span
/// `mintid.complete`, then times it (`mintid.record.complete.duration`) and
/// measures the response (`mintid.record.response.size`).
pub(crate) fn complete(
    way: Way,
    response_bytes: Option<usize>,
    steps: impl Future<Output = Result<RecordYield, Error>>,
) -> impl Future<Output = Result<RecordYield, Error>> {
    let span = tracing::info_span!("mintid.complete", way = way.as_str(), decision = Empty);
    timed(span, steps, move |_, seconds| {
        let way = [("way", way.as_str())];
        measure("mintid.record.complete.duration", &way, seconds);
        if let Some(bytes) = response_bytes {
            measure("mintid.record.response.size", &way, bytes as f64);
        }
    })
}

/// Runs a record driver's `steps` in `span` (made by the caller: under its
/// span, also when the steps run as a task of their own); the decision they
/// hand over (`execute` for the operation to run, else the core's
/// [`Finished::decision`]) goes to the span and, with the seconds they took,
/// to `report`.
fn timed(
    span: Span,
    steps: impl Future<Output = Result<RecordYield, Error>>,
    report: impl FnOnce(&'static str, f64),
) -> impl Future<Output = Result<RecordYield, Error>> {
    let started = Instant::now();
    async move {
        let yielded = steps.instrument(span.clone()).await?;
        let decision = match &yielded {
            RecordYield::Done(finished) => finished.decision(),
            _ => Finished::Executed.decision(),
        };
        span.record("decision", decision);
        report(decision, started.elapsed().as_secs_f64());
        Ok(yielded)
    }
}

/// A statement failed with a database error of `class` (`mintid.store.errors`).
pub(crate) fn store_error(class: DbErrorClass) {
    count("mintid.store.errors", &[("class", class.as_str())], 1);
}

/// A renewal found a running operation's record taken over or completed
/// (`mintid.record.lost`).
pub(crate) fn record_lost() {
    count("mintid.record.lost", &[], 1);
}

/// A relay run ended (`mintid.outbox.deliveries`, by result).
pub(crate) fn relayed(report: &RelayReport) {
    let name = "mintid.outbox.deliveries";
    count(name, &[("result", "sent")], report.sent);
    count(name, &[("result", "retried")], report.retried);
    count(name, &[("result", "dead")], report.dead);
}

/// The tower layer refused a signed request ID the client sent, with the
/// error `code` (`mintid.request_id.rejected`).
#[cfg(feature = "tower")]
pub(crate) fn request_id_rejected(code: &'static str) {
    count("mintid.request_id.rejected", &[("code", code)], 1);
}

/// What a request's fast path came to: its lookup's verdict, if it looked up
/// (`mintid.fast_path.lookups`), and its failed writes
/// (`mintid.fast_path.write_failures`).
#[cfg(feature = "redis")]
pub(crate) fn fast_path(lookup: Option<&'static str>, write_failures: u32) {
    if let Some(verdict) = lookup {
        count("mintid.fast_path.lookups", &[("verdict", verdict)], 1);
    }
    count(
        "mintid.fast_path.write_failures",
        &[],
        u64::from(write_failures),
    );
}

/// Logs the store error that kept an operation's failure from being
/// recorded (`docs/spec.md`, "Which error the caller sees"): the caller gets
/// the operation's own error, the operator this line.
pub(crate) fn not_recorded(store_error: &DriverError) {
    tracing::warn!(
        code = store_error.code(),
        "an operation's failure was not recorded: {store_error}"
    );
}
