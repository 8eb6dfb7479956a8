//! The registry of the stores' metrics and spans: defined once here, exported
//! through the bindings (`metrics()` / `spans()` in uniffi, `metrics()` /
//! `spans()` in wasm) so that every host emits the same names, units and
//! attributes (`docs/spec.md`, "Metrics and traces").
//!
//! Names follow OpenTelemetry's conventions: dotted, lowercase, the unit in
//! [`Metric::unit`] and not in the name (Prometheus exporters add `_total`,
//! `_seconds` or `_bytes` themselves). An attribute's values are closed sets
//! named here too; no attribute ever carries a key's scope or id, a payload or
//! a response.

/// What a metric counts or measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A monotonic count.
    Counter,
    /// A distribution of measured values (latencies, sizes).
    Histogram,
}

impl MetricKind {
    /// The stable name: `counter` or `histogram`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MetricKind::Counter => "counter",
            MetricKind::Histogram => "histogram",
        }
    }
}

/// An attribute of a metric or span and the only values it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricAttribute {
    /// The attribute's name, e.g. `"decision"`.
    pub name: &'static str,
    /// Every value it may take, e.g. `["executed", "replayed", …]`.
    pub values: &'static [&'static str],
}

/// One metric of the registry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    /// The stable dotted name, e.g. `"mintid.record.decisions"`.
    pub name: &'static str,
    /// A counter or a histogram.
    pub kind: MetricKind,
    /// The UCUM unit: `{request}`-style annotations for counts, `s`, `By`.
    pub unit: &'static str,
    /// What the metric counts or measures, in one sentence.
    pub description: &'static str,
    /// The attributes every data point carries.
    pub attributes: &'static [MetricAttribute],
    /// A histogram's bucket bounds, ascending, in its unit; empty for a
    /// counter. Every host's recorder uses these and no others.
    pub buckets: &'static [f64],
}

/// The bucket bounds of every histogram in seconds (OpenTelemetry's HTTP
/// semantic conventions, `http.server.request.duration`).
pub const SECONDS_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// The bucket bounds of every histogram in bytes, up to the stored
/// response's limit (1 MiB,
/// [`RESPONSE_BODY_MAX_BYTES`](crate::store::limits::RESPONSE_BODY_MAX_BYTES)).
pub const BYTES_BUCKETS: &[f64] = &[
    0.0,
    256.0,
    1024.0,
    4096.0,
    16_384.0,
    65_536.0,
    262_144.0,
    1_048_576.0,
];

/// One span of the registry: a host opens it around a step of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The stable span name, e.g. `"mintid.claim"`.
    pub name: &'static str,
    /// What the span covers, in one sentence.
    pub description: &'static str,
    /// The attributes it carries (set when known, `decision` at the span's end).
    pub attributes: &'static [MetricAttribute],
}

/// The `decision` attribute: how a request's record ended, as
/// [`Finished::decision`](crate::store::Finished::decision) names it.
pub const DECISION: MetricAttribute = MetricAttribute {
    name: "decision",
    values: &[
        "execute",
        "replay",
        "in_progress",
        "fingerprint_mismatch",
        "key_too_old",
    ],
};

/// The `way` attribute: which way in the request took.
pub const WAY: MetricAttribute = MetricAttribute {
    name: "way",
    values: &["run_once", "same_transaction", "lease"],
};

/// The `class` attribute: a database error's class (`DbErrorClass::as_str`).
pub const CLASS: MetricAttribute = MetricAttribute {
    name: "class",
    values: &[
        "unique_violation",
        "serialization",
        "connection_lost",
        "constraint",
        "schema_missing",
        "other",
    ],
};

/// The `code` attribute of a rejected request ID: its error code, `key.*` when
/// the header is not a key at all, else `request_id.*`.
pub const CODE: MetricAttribute = MetricAttribute {
    name: "code",
    values: &[
        "key.empty",
        "key.invalid_character",
        "key.invalid_header",
        "key.too_long",
        "request_id.bad_tag",
        "request_id.grant_expired",
        "request_id.in_future",
        "request_id.malformed",
        "request_id.too_old",
        "request_id.unknown_key",
        "request_id.unsupported_version",
    ],
};

/// The `result` attribute of an outbox delivery attempt.
pub const RESULT: MetricAttribute = MetricAttribute {
    name: "result",
    values: &["sent", "retried", "dead"],
};

/// The `verdict` attribute of a fast-path lookup
/// ([`FastVerdict::as_str`](crate::store::FastVerdict::as_str)): answered from
/// Redis, sent on to the database, or sent on because Redis failed.
pub const VERDICT: MetricAttribute = MetricAttribute {
    name: "verdict",
    values: &["hit", "miss", "fallback"],
};

const fn metric(
    name: &'static str,
    kind: MetricKind,
    unit: &'static str,
    description: &'static str,
    attributes: &'static [MetricAttribute],
) -> Metric {
    let buckets: &'static [f64] = match (kind, unit.as_bytes()) {
        (MetricKind::Counter, _) => &[],
        (MetricKind::Histogram, b"s") => SECONDS_BUCKETS,
        (MetricKind::Histogram, _) => BYTES_BUCKETS,
    };
    Metric {
        name,
        kind,
        unit,
        description,
        attributes,
        buckets,
    }
}

/// Every metric, sorted by name.
pub const METRICS: &[Metric] = &[
    metric(
        "mintid.fast_path.lookups",
        MetricKind::Counter,
        "{request}",
        "Requests the Redis fast path looked up before the database, by verdict: answered from Redis (hit), sent on to the database (miss), or sent on because Redis failed (fallback).",
        &[VERDICT],
    ),
    metric(
        "mintid.fast_path.write_failures",
        MetricKind::Counter,
        "{write}",
        "Writes to Redis after the database path (claimed, settle, forget) that failed; the database still holds the truth.",
        &[],
    ),
    metric(
        "mintid.outbox.deliveries",
        MetricKind::Counter,
        "{message}",
        "Outbox messages a relay handled: sent, put back for a retry, or given up on (dead).",
        &[RESULT],
    ),
    metric(
        "mintid.record.claim.duration",
        MetricKind::Histogram,
        "s",
        "The time from a request's first store step to its decision (execute, replay or refusal), waits included.",
        &[WAY],
    ),
    metric(
        "mintid.record.complete.duration",
        MetricKind::Histogram,
        "s",
        "The time to store an executed request's outcome, from the operation's end to the driver's.",
        &[WAY],
    ),
    metric(
        "mintid.record.decisions",
        MetricKind::Counter,
        "{request}",
        "Requests the record store decided, by how their record ended (a replay or in-progress answer of the Redis fast path included).",
        &[DECISION, WAY],
    ),
    metric(
        "mintid.record.lost",
        MetricKind::Counter,
        "{renewal}",
        "Lease renewals of a running operation's record that found the key taken over or completed.",
        &[],
    ),
    metric(
        "mintid.record.response.size",
        MetricKind::Histogram,
        "By",
        "The body size of each response the store was given to keep.",
        &[WAY],
    ),
    metric(
        "mintid.request_id.rejected",
        MetricKind::Counter,
        "{request}",
        "Requests refused because their request ID did not verify, by error code.",
        &[CODE],
    ),
    metric(
        "mintid.store.errors",
        MetricKind::Counter,
        "{error}",
        "Database errors a store executor met and classified, by class.",
        &[CLASS],
    ),
];

/// Every span, sorted by name.
pub const SPANS: &[Span] = &[
    Span {
        name: "mintid.claim",
        description: "A request's claim: from the first store step to the decision.",
        attributes: &[WAY, DECISION],
    },
    Span {
        name: "mintid.complete",
        description: "Storing an executed request's outcome.",
        attributes: &[WAY, DECISION],
    },
    Span {
        name: "mintid.operation",
        description: "The application's operation, run once for the key.",
        attributes: &[WAY],
    },
];

/// The registry entry of the metric `name`, if it is one.
pub fn metric_named(name: &str) -> Option<&'static Metric> {
    METRICS
        .binary_search_by(|entry| entry.name.cmp(name))
        .ok()
        .map(|index| &METRICS[index])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_codes::error_code;
    use crate::store::DbErrorClass;

    fn well_formed(name: &str) -> bool {
        name.starts_with("mintid.")
            && name.split('.').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            })
    }

    #[test]
    fn sorted_unique_and_well_formed() {
        assert!(METRICS.windows(2).all(|pair| pair[0].name < pair[1].name));
        assert!(SPANS.windows(2).all(|pair| pair[0].name < pair[1].name));
        for metric in METRICS {
            assert!(well_formed(metric.name), "{}", metric.name);
            assert!(!metric.description.is_empty() && !metric.unit.is_empty());
            assert_eq!(metric_named(metric.name), Some(metric));
            match metric.kind {
                MetricKind::Counter => {
                    assert!(metric.unit.starts_with('{'), "{}", metric.name);
                    assert!(metric.buckets.is_empty(), "{}", metric.name);
                }
                MetricKind::Histogram => {
                    assert!(["s", "By"].contains(&metric.unit));
                    assert!(metric.buckets.windows(2).all(|pair| pair[0] < pair[1]));
                    assert!(!metric.buckets.is_empty(), "{}", metric.name);
                }
            }
        }
        for span in SPANS {
            assert!(well_formed(span.name), "{}", span.name);
        }
        assert_eq!(metric_named("mintid.nope"), None);
    }

    #[test]
    fn attribute_values_are_the_cores_own() {
        use crate::record::Outcome;
        use crate::store::{Finished, Way};
        let ends = [
            Finished::Executed,
            Finished::OperationFailed { stored: true },
            Finished::OperationFailedUnrecorded {
                store_error: crate::store::DriverError::Store(crate::store::StoreError::new(
                    crate::store::StoreErrorKind::Unavailable,
                    "down",
                )),
            },
            Finished::Replay {
                outcome: Outcome::Succeeded,
                response: None,
                error: None,
            },
            Finished::InProgress {
                retry_after_millis: 1,
            },
            Finished::FingerprintMismatch,
            Finished::KeyTooOld,
        ];
        for end in &ends {
            assert!(DECISION.values.contains(&end.decision()), "{end:?}");
        }
        let ways = [Way::RunOnce, Way::SameTransaction, Way::Lease].map(Way::as_str);
        assert_eq!(ways.as_slice(), WAY.values);
        for name in CLASS.values {
            assert_eq!(
                DbErrorClass::parse(name).map(DbErrorClass::as_str),
                Some(*name)
            );
        }
        for code in CODE.values {
            let entry = error_code(code).expect("a registered code");
            match entry.concern() {
                "key" => {}
                "request_id" => assert!(entry.problem.is_some(), "{code} is a client's fault"),
                other => panic!("{code}: {other}"),
            }
        }
        for attribute in [DECISION, WAY, CLASS, CODE, RESULT, VERDICT] {
            assert!(attribute.values.iter().all(|value| !value.is_empty()));
            assert!(well_formed(&alloc::format!("mintid.{}", attribute.name)));
        }
    }

    #[test]
    fn no_attribute_carries_a_key_or_payload() {
        let forbidden = [
            "scope",
            "id",
            "key",
            "payload",
            "body",
            "response",
            "fingerprint",
        ];
        let every = METRICS
            .iter()
            .flat_map(|metric| metric.attributes)
            .chain(SPANS.iter().flat_map(|span| span.attributes));
        for attribute in every {
            assert!(!forbidden.contains(&attribute.name), "{}", attribute.name);
        }
    }
}
