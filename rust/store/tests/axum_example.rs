//! The axum example (examples/axum.rs) exercised through its router: an
//! order runs once and its retry replays it; a grant mints a request ID the
//! layer accepts; a read is not covered.

#[path = "../examples/axum.rs"]
#[allow(dead_code)]
mod example;

use axum::body::Body;
use axum::http::{Request, Response};
use http_body_util::BodyExt;
use mintid::{Clock, Grant};
use mintid::{SystemClock, Uuid7};
use mintid_store::Store;
use serde_json::Value;
use tower::ServiceExt;

async fn send(app: &axum::Router, request: Request<Body>) -> (Response<()>, Value) {
    let (parts, body) = app.clone().oneshot(request).await.unwrap().into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        Response::from_parts(parts, ()),
        serde_json::from_slice(&bytes).unwrap(),
    )
}

fn order(header: (&str, &str)) -> Request<Body> {
    Request::post("/orders")
        .header("x-user", "alice")
        .header(header.0, header.1)
        .header("content-type", "application/json")
        .body(Body::from(r#"{"sku":"tea"}"#))
        .unwrap()
}

#[tokio::test]
async fn the_example_runs_an_order_once() {
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    let store = Store::new(pool);
    store.migrate().await.unwrap();
    let app = example::app(store, example::key_ring());

    let (first, body) = send(&app, order(("idempotency-key", "\"order-1001\""))).await;
    assert_eq!(
        (first.status().as_u16(), &body["order"]),
        (201, &Value::from(1))
    );
    let (retry, again) = send(&app, order(("idempotency-key", "\"order-1001\""))).await;
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    assert_eq!(again, body);

    let grant = Request::post("/grant")
        .header("x-user", "alice")
        .body(Body::empty())
        .unwrap();
    let (granted, document) = send(&app, grant).await;
    assert_eq!(granted.headers()["cache-control"], "no-store");
    let grant = Grant::parse(document["grant"].as_str().unwrap()).unwrap();
    let uuid = Uuid7::from_fields(SystemClock.now_millis(), 0, 7).unwrap();
    let signed = grant.mint(&uuid).to_text();
    let (placed, body) = send(&app, order(("mintid-request-id", &signed))).await;
    assert_eq!(
        (placed.status().as_u16(), &body["order"]),
        (201, &Value::from(2))
    );

    let read = Request::get("/orders").body(Body::empty()).unwrap();
    let (_, count) = send(&app, read).await;
    assert_eq!(count["orders"], 2);
}
