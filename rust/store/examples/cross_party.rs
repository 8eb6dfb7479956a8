//! The Rust server party of the cross-language matrix (tests/cross/README.md):
//! the line protocol on stdin, answered by an axum app behind the
//! `IdempotencyLayer`. `issue` asks the layer's grant endpoint; `verify` is a
//! covered request carrying the ID in `Mintid-Request-Id`, which the layer
//! verifies under the scope before the handler answers the key's id (the
//! ID's UUIDv7); a refusal is the problem document's name (`err
//! invalid_request_id`), as a server answers it. `mint` is the core's, as a
//! browser's.
//!
//! For tests/cross/replay.test.mjs, two more commands: `store PATH` (the
//! records from now on live in the SQLite file PATH, which another host
//! writes too) and `post SCOPE KEY JSON` (a `POST /orders` with that
//! `Idempotency-Key`; reply `ok STATUS REPLAYED LOCATION BODY`).

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::extract::State;
use axum::http::Request;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::routing::post;
use axum::{Extension, Router};
use http_body_util::BodyExt;
use mintid::record::{Problem, RecordPolicy};
use mintid::request_id::SecretKey;
use mintid::{Grant, IdempotencyKey, KeyRing, Uuid7Generator};
use mintid_store::{GrantRoute, IdempotencyLayer, IdempotencyStore, Store};
use serde_json::Value;
use tower::{Layer, ServiceExt};

/// The scope the runner names, in a header.
fn scope(parts: &Parts) -> Option<String> {
    Some(parts.headers.get("x-scope")?.to_str().ok()?.to_owned())
}

fn app(store: Store<sqlx::Sqlite>, ring: KeyRing) -> Router {
    let policy = RecordPolicy::new(30_000, 86_400_000).expect("a policy");
    let layer = IdempotencyLayer::new(IdempotencyStore::new(store, policy), scope)
        .with_key_ring(ring)
        .accept_idempotency_key(true)
        .with_grant(GrantRoute::new("/grant"));
    let verified = async |Extension(key): Extension<IdempotencyKey>| key.id().to_owned();
    let routes = Router::new()
        .route("/verify", post(verified))
        .route("/orders", post(order))
        .with_state(Arc::new(AtomicU64::new(0)));
    Router::new().fallback_service(layer.layer(routes))
}

/// An order placed by this host.
async fn order(
    State(orders): State<Arc<AtomicU64>>,
) -> (StatusCode, [(&'static str, String); 2], String) {
    let order = orders.fetch_add(1, Ordering::SeqCst) + 1;
    let headers = [
        ("content-type", "application/json".to_owned()),
        ("location", format!("/orders/rust-{order}")),
    ];
    (
        StatusCode::CREATED,
        headers,
        format!(r#"{{"order":{order},"by":"rust"}}"#),
    )
}

/// The status and body of `request` through `app`.
async fn send(app: &Router, request: Request<Body>) -> (u16, Vec<u8>) {
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.expect("a body");
    (status, body.to_bytes().to_vec())
}

fn hex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// The party: its store, its key ring once given, and the app on both.
struct Party {
    store: Store<sqlx::Sqlite>,
    ring: Option<KeyRing>,
    app: Option<Router>,
}

impl Party {
    fn rebuild(&mut self) {
        self.app = self.ring.clone().map(|ring| app(self.store.clone(), ring));
    }
}

async fn answer(party: &mut Party, line: &str) -> Vec<String> {
    let fields: Vec<&str> = line.split('\t').collect();
    let unknown = || vec!["err".into(), format!("party.unknown_command:{}", fields[0])];
    match (fields.as_slice(), party.app.as_ref()) {
        (["key", id, secret], _) => {
            let key = hex(secret).and_then(|bytes| SecretKey::new(id.parse().ok()?, &bytes).ok());
            match key {
                Some(key) => {
                    party.ring = Some(KeyRing::new(key));
                    party.rebuild();
                    vec!["ok".into()]
                }
                None => unknown(),
            }
        }
        (["store", path], _) => {
            let options = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(path)
                .busy_timeout(std::time::Duration::from_secs(10));
            let Ok(pool) = sqlx::SqlitePool::connect_with(options).await else {
                return vec!["err".into(), "party.store".into()];
            };
            party.store = Store::new(pool);
            if let Err(error) = party.store.migrate().await {
                return vec!["err".into(), error.code().unwrap_or("party.store").into()];
            }
            party.rebuild();
            vec!["ok".into()]
        }
        (["post", scope, key, json], Some(app)) => {
            let request = Request::post("/orders")
                .header("x-scope", *scope)
                .header("idempotency-key", *key)
                .header("content-type", "application/json")
                .body(Body::from(json.to_string()));
            let response = app
                .clone()
                .oneshot(request.expect("a request"))
                .await
                .expect("infallible");
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or("")
                    .to_owned()
            };
            let (status, replayed, location) = (
                response.status().as_u16().to_string(),
                header("idempotent-replayed"),
                header("location"),
            );
            let body = response
                .into_body()
                .collect()
                .await
                .expect("a body")
                .to_bytes();
            let replayed = if replayed == "true" { "true" } else { "false" };
            vec![
                "ok".into(),
                status,
                replayed.into(),
                location,
                String::from_utf8_lossy(&body).into_owned(),
            ]
        }
        (["issue", scope, _expires], Some(app)) => {
            let request = Request::post("/grant")
                .header("x-scope", *scope)
                .body(Body::empty());
            let (status, body) = send(app, request.expect("a request")).await;
            let document: Value = serde_json::from_slice(&body).unwrap_or_default();
            match (status, document["grant"].as_str()) {
                (200, Some(grant)) => vec!["ok".into(), grant.into()],
                _ => vec!["err".into(), format!("http.{status}")],
            }
        }
        (["mint", grant, count], _) => match (Grant::parse(grant), count.parse::<usize>()) {
            (Ok(grant), Ok(count)) => {
                let mut uuids = Uuid7Generator::new();
                let mut reply = vec!["ok".to_owned()];
                for _ in 0..count {
                    reply.push(grant.mint(&uuids.generate().expect("a UUIDv7")).to_text());
                }
                reply
            }
            (Err(error), _) => vec!["err".into(), error.code().into()],
            _ => unknown(),
        },
        (["verify", scope, id], Some(app)) => {
            let request = Request::post("/verify")
                .header("x-scope", *scope)
                .header("mintid-request-id", *id)
                .header("content-type", "application/json")
                .body(Body::from("{}"));
            let (status, body) = send(app, request.expect("a request")).await;
            if status == 200 {
                return vec!["ok".into(), String::from_utf8_lossy(&body).into_owned()];
            }
            let document: Value = serde_json::from_slice(&body).unwrap_or_default();
            let problem = Problem::ALL
                .into_iter()
                .find(|problem| document["type"] == problem.type_uri());
            vec![
                "err".into(),
                problem.map_or(format!("http.{status}"), |p| p.name().into()),
            ]
        }
        _ => unknown(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    let store = Store::new(pool);
    store.migrate().await?;
    let mut party = Party {
        store,
        ring: None,
        app: None,
    };
    for line in std::io::stdin().lock().lines() {
        let reply = answer(&mut party, &line?).await;
        println!("{}", reply.join("\t"));
    }
    Ok(())
}
