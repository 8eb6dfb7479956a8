//! The layer's own cost per request: axum with the `IdempotencyLayer` beside
//! the same axum app without it, and beside the store's `run_once` alone, in
//! one run (a plain timed loop; `make bench-rust-layer` starts the throwaway
//! servers). Each request is a fresh `Idempotency-Key` `POST /orders` with a
//! small JSON body, driven through the whole service stack
//! (`tower::ServiceExt::oneshot`, no sockets: the network is not the
//! layer's). The layer's own cost is the layered request less the bare one
//! and less `run_once` (its two round trips), taken in each round and the
//! median of the rounds; the other columns are the medians of `--rounds`
//! rounds of `--seconds` seconds on one task, the three interleaved in each
//! round. Run it with `make bench-rust-layer` (a smoke run:
//! `make bench-rust-layer RUST_STORE_BENCH_FLAGS="--seconds 0.2 --rounds 2"`).

#[path = "support/timing.rs"]
mod timing;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use http_body_util::BodyExt;
use mintid::record::RecordPolicy;
use mintid::{Fingerprint, IdempotencyKey};
use mintid_store::{
    Backend, IdempotencyLayer, IdempotencyStore, Store, StoreRequest, StoredResponse,
};
use sqlx::Pool;
use tower::{Layer, ServiceExt};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn fresh_id() -> String {
    format!(
        "k-{}-{}",
        NEXT.fetch_add(1, Ordering::Relaxed),
        std::process::id()
    )
}

const BODY: &str = r#"{"sku":"tea","qty":2}"#;

fn shop() -> Router {
    Router::new().route(
        "/orders",
        post(async || (StatusCode::CREATED, r#"{"order":1}"#)),
    )
}

async fn request(app: &Router) {
    let request = Request::post("/orders")
        .header("x-user", "alice")
        .header("idempotency-key", fresh_id())
        .header("content-type", "application/json")
        .body(Body::from(BODY))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.into_body().collect().await.unwrap();
}

async fn run_once<DB: Backend>(records: &IdempotencyStore<DB>) {
    let key = IdempotencyKey::new("bench.layer", "user:alice", &fresh_id()).unwrap();
    let response = StoredResponse {
        content_type: "application/json".into(),
        body: br#"{"order":1}"#.to_vec(),
    };
    records
        .run_once(
            &key,
            StoreRequest::new(Fingerprint::from_digest([7; 32])),
            async |_lease| Ok(response),
        )
        .await
        .unwrap();
}

fn micros(ops_per_second: f64) -> f64 {
    1e6 / ops_per_second
}

async fn bench<DB: Backend>(name: &str, pool: Pool<DB>, seconds: f64, rounds: usize) {
    let store = Store::new(pool);
    store.migrate().await.expect("migrations");
    let records = IdempotencyStore::new(store, RecordPolicy::new(30_000, 86_400_000).unwrap());
    let layer = IdempotencyLayer::new(records.clone(), |parts: &axum::http::request::Parts| {
        Some(format!(
            "user:{}",
            parts.headers.get("x-user")?.to_str().ok()?
        ))
    });
    let bare = Arc::new(shop());
    let layered = Arc::new(Router::new().fallback_service(layer.layer(shop())));
    let records = Arc::new(records);
    let (mut without, mut with, mut store_only) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let app = Arc::clone(&bare);
        without.push(
            timing::measure(1, seconds, move || {
                let app = Arc::clone(&app);
                async move { request(&app).await }
            })
            .await,
        );
        let app = Arc::clone(&layered);
        with.push(
            timing::measure(1, seconds, move || {
                let app = Arc::clone(&app);
                async move { request(&app).await }
            })
            .await,
        );
        let records = Arc::clone(&records);
        store_only.push(
            timing::measure(1, seconds, move || {
                let records = Arc::clone(&records);
                async move { run_once(&records).await }
            })
            .await,
        );
    }
    // The layer's own cost from each round's three adjacent measurements, then the
    // median: a change of load between rounds does not land in the difference.
    let own = (0..rounds)
        .map(|round| micros(with[round]) - micros(without[round]) - micros(store_only[round]))
        .collect();
    let (without, with, store_only, own) = (
        micros(timing::median(without)),
        micros(timing::median(with)),
        micros(timing::median(store_only)),
        timing::median(own),
    );
    println!("| {name} | {without:.1} | {with:.1} | {store_only:.1} | {own:.1} |");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (seconds, rounds) = timing::arguments();
    println!(
        "| database | axum µs/request | axum + layer µs/request | run_once µs | the layer's own µs |"
    );
    println!("|---|---:|---:|---:|---:|");
    if let Some(pool) = timing::postgres().await {
        bench::<sqlx::Postgres>("PostgreSQL", pool, seconds, rounds).await;
    }
    let (pool, dir) = timing::sqlite("mintid-layer-bench").await;
    bench::<sqlx::Sqlite>("SQLite", pool, seconds, rounds).await;
    let _ = std::fs::remove_dir_all(dir);
}
