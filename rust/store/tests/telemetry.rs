//! The store reports the core's registry (`docs/spec.md`, "Metrics and
//! traces") on SQLite: its metrics read back from a Prometheus recorder made
//! with the registry's bucket bounds (as the README shows), its spans from a
//! `tracing` subscriber. Every name and attribute read back is the
//! registry's. The tower layer's refusal of a signed request ID is counted
//! too.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
use mintid::metrics::{METRICS, SPANS};
use mintid::request_id::SecretKey;
use mintid::{Fingerprint, IdempotencyKey, KeyRing, ManualClock, RecordPolicy, RelayPolicy};
use mintid_store::{
    Claimed, IdempotencyLayer, IdempotencyStore, Outbox, OutboxMessage, RunResult, Store,
    StoreClock, StoreRequest, StoredResponse,
};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// A span seen: its id, name and fields.
type Seen = (Id, &'static str, HashMap<String, String>);

/// The spans seen, in the order they opened.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = HashMap::new();
        attrs.record(&mut Fields(&mut fields));
        let name = attrs.metadata().name();
        self.0.lock().unwrap().push((id.clone(), name, fields));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(seen, ..)| seen == id) {
            values.record(&mut Fields(fields));
        }
    }
}

fn sqlite_file(name: &str) -> SqliteConnectOptions {
    let dir = std::env::temp_dir().join(format!("mintid-telemetry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
}

fn ok(body: &str) -> StoredResponse {
    StoredResponse {
        content_type: "text/plain".into(),
        body: body.as_bytes().to_vec(),
    }
}

/// The value of the Prometheus sample `name` whose labels include `labels`.
fn sample(rendered: &str, name: &str, labels: &[&str]) -> f64 {
    rendered
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find(|line| {
            line.split(['{', ' ']).next() == Some(name)
                && labels.iter().all(|label| line.contains(label))
        })
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {name} {labels:?} in\n{rendered}"))
}

// One thread: the completion and heartbeat tasks run where the local
// recorder and subscriber are installed.
#[tokio::test(flavor = "current_thread")]
async fn the_store_reports_the_registrys_metrics_and_spans() {
    let mut builder = PrometheusBuilder::new();
    for metric in METRICS.iter().filter(|metric| !metric.buckets.is_empty()) {
        let matcher = Matcher::Full(metric.name.into());
        builder = builder
            .set_buckets_for_metric(matcher, metric.buckets)
            .unwrap();
    }
    let recorder = builder.build_recorder();
    let prometheus = recorder.handle();
    let _metrics = metrics::set_default_local_recorder(&recorder);
    let spans = Spans::default();
    let _spans =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));

    let clock = Arc::new(ManualClock::new(1_000_000));
    let pool = SqlitePool::connect_with(sqlite_file("telemetry.sqlite3"))
        .await
        .unwrap();
    let store = Store::new(pool.clone()).with_clock(StoreClock::Manual(Arc::clone(&clock)));
    store.migrate().await.unwrap();
    let orders = IdempotencyStore::new(
        store.clone(),
        RecordPolicy::new(30_000, 86_400_000).unwrap(),
    );
    let key = |id: &str| IdempotencyKey::new("order.create", "tenant-1", id).unwrap();
    let request = StoreRequest::new(Fingerprint::from_digest([7; 32]));

    // run once: executed, then replayed; another payload is refused.
    for _ in 0..2 {
        let result = orders
            .run_once(&key("a"), request, async |_| Ok(ok("a-body")))
            .await;
        assert!(matches!(
            result,
            Ok(RunResult::Executed(_) | RunResult::Replayed { .. })
        ));
    }
    let other = StoreRequest::new(Fingerprint::from_digest([8; 32]));
    let refused = orders
        .run_once(&key("a"), other, async |_| unreachable!())
        .await;
    assert!(
        matches!(refused, Ok(RunResult::FingerprintMismatch)),
        "{refused:?}"
    );
    // In the caller's transaction.
    let mut tx = pool.begin().await.unwrap();
    let b = key("b");
    let run = orders.in_transaction(&mut tx, &b, request, async |_| Ok(ok("b")));
    assert!(matches!(run.await, Ok(RunResult::Executed(_))));
    tx.commit().await.unwrap();
    // A lease taken over once it passed: its holder's renewal finds it lost.
    let Ok(Claimed::Held(first)) = orders.claim_lease(&key("c"), request).await else {
        panic!("the first claim holds the key");
    };
    clock.advance_millis(31_000);
    let Ok(Claimed::Held(second)) = orders.claim_lease(&key("c"), request).await else {
        panic!("the key is taken over");
    };
    assert!(first.renew().await.is_err() && first.is_lost());
    second.complete(ok("c")).await.unwrap();
    // A relay run sending one message.
    let outbox = Outbox::new(store.clone(), RelayPolicy::default());
    let mut tx = pool.begin().await.unwrap();
    let message = OutboxMessage {
        message_id: 1,
        kind: "order.created".into(),
        business_key: "a".into(),
        payload: b"{}".to_vec(),
    };
    outbox.enqueue(&mut tx, &message).await.unwrap();
    tx.commit().await.unwrap();
    let report = outbox.relay(async |_| Ok::<(), String>(())).await.unwrap();
    assert_eq!(report.sent, 1);
    // A database never migrated: a classified store error.
    let bare = SqlitePool::connect_with(sqlite_file("bare.sqlite3"))
        .await
        .unwrap();
    let unmigrated = IdempotencyStore::new(Store::new(bare), RecordPolicy::default());
    assert!(unmigrated.load(&key("a")).await.is_err());
    // The tower layer refuses a signed request ID that is not one.
    let ring = KeyRing::new(SecretKey::new(7, &[9; 32]).unwrap());
    let layer =
        IdempotencyLayer::new(orders.clone(), |_| Some("user:1".into())).with_key_ring(ring);
    let app = axum::Router::new()
        .route("/orders", axum::routing::post(async || "placed"))
        .layer(layer);
    let refused = axum::http::Request::post("/orders")
        .header("Mintid-Request-Id", "not-a-request-id")
        .body(axum::body::Body::empty())
        .unwrap();
    let answered = tower::ServiceExt::oneshot(app, refused).await.unwrap();
    assert_eq!(answered.status(), 400);

    let rendered = prometheus.render();
    let decisions = "mintid_record_decisions";
    for (decision, way, count) in [
        ("execute", "run_once", 1.0),
        ("replay", "run_once", 1.0),
        ("fingerprint_mismatch", "run_once", 1.0),
        ("execute", "same_transaction", 1.0),
        ("execute", "lease", 2.0),
    ] {
        let labels = [
            &*format!("decision=\"{decision}\""),
            &format!("way=\"{way}\""),
        ];
        assert_eq!(
            sample(&rendered, decisions, &labels),
            count,
            "{decision} {way}"
        );
    }
    for way in ["run_once", "same_transaction", "lease"] {
        let way = format!("way=\"{way}\"");
        for name in ["claim_duration", "complete_duration", "response_size"] {
            let count = format!("mintid_record_{name}_count");
            assert!(sample(&rendered, &count, &[&way]) >= 1.0, "{count} {way}");
        }
    }
    // The histograms carry the registry's bounds and no others.
    for metric in METRICS.iter().filter(|metric| !metric.buckets.is_empty()) {
        let bucket = format!("{}_bucket", metric.name.replace('.', "_"));
        let bounds: Vec<f64> = rendered
            .lines()
            .filter(|line| line.starts_with(&bucket) && line.contains("way=\"run_once\""))
            .filter_map(|line| line.split("le=\"").nth(1)?.split('"').next()?.parse().ok())
            .filter(|bound: &f64| bound.is_finite())
            .collect();
        assert_eq!(bounds, metric.buckets, "{bucket}");
    }
    assert_eq!(sample(&rendered, "mintid_record_lost", &[]), 1.0);
    assert_eq!(
        sample(&rendered, "mintid_outbox_deliveries", &["result=\"sent\""]),
        1.0
    );
    let schema_missing = ["class=\"schema_missing\""];
    assert_eq!(
        sample(&rendered, "mintid_store_errors", &schema_missing),
        1.0
    );
    let malformed = ["code=\"request_id.malformed\""];
    assert_eq!(
        sample(&rendered, "mintid_request_id_rejected", &malformed),
        1.0
    );
    // Every metric reported is described with the registry's words.
    for metric in METRICS
        .iter()
        .filter(|metric| !metric.name.contains("fast_path"))
    {
        let help = format!(
            "# HELP {} {}",
            metric.name.replace('.', "_"),
            metric.description
        );
        assert!(rendered.contains(&help), "{help}");
    }

    let spans = spans.0.lock().unwrap();
    let seen = |name: &str, way: &str, decision: Option<&str>| {
        spans.iter().any(|(_, span, fields)| {
            *span == name
                && fields.get("way").map(String::as_str) == Some(way)
                && fields.get("decision").map(String::as_str) == decision
        })
    };
    for (way, decision) in [("run_once", "execute"), ("same_transaction", "execute")] {
        assert!(seen("mintid.claim", way, Some(decision)), "claim {way}");
        assert!(seen("mintid.operation", way, None), "operation {way}");
        assert!(
            seen("mintid.complete", way, Some(decision)),
            "complete {way}"
        );
    }
    assert!(seen("mintid.claim", "run_once", Some("replay")));
    assert!(seen("mintid.claim", "lease", Some("execute")));
    assert!(seen("mintid.complete", "lease", Some("execute")));
    for (_, name, fields) in spans.iter() {
        let span = SPANS
            .iter()
            .find(|span| span.name == *name)
            .expect("a registry span");
        for field in fields.keys() {
            assert!(
                span.attributes
                    .iter()
                    .any(|attribute| attribute.name == field)
            );
        }
    }
}
