//! An axum shop behind mintid's idempotency layer: `POST /orders` runs once
//! per key (a retry replays the stored response with `Idempotent-Replayed:
//! true`), `POST /grant` hands the logged-in user a grant to mint signed
//! request IDs with (the browser flow), and `GET /orders` is not covered.
//!
//! ```text
//! cargo run -p mintid-store --example axum        # listens on 127.0.0.1:3000
//! curl -si -X POST localhost:3000/orders -H 'x-user: alice' \
//!      -H 'Idempotency-Key: "order-1001"' -H 'content-type: application/json' -d '{"sku":"tea"}'
//! ```
//!
//! The user comes from an `x-user` header here; a real app takes it from its
//! authentication. `MINTID_EXAMPLE_ADDR` sets the address.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::routing::post;
use mintid::record::RecordPolicy;
use mintid::request_id::SecretKey;
use mintid::{Entropy, KeyRing, ThreadEntropy};
use mintid_store::{GrantRoute, IdempotencyLayer, IdempotencyStore, Store};
use tower::Layer;

/// Whose keys these are: the logged-in user, or nobody (401).
fn user(parts: &Parts) -> Option<String> {
    let user = parts.headers.get("x-user")?.to_str().ok()?;
    Some(format!("user:{user}"))
}

/// Places an order (a side effect that must happen once per key).
async fn place(State(orders): State<Arc<AtomicU64>>, body: String) -> (StatusCode, String) {
    let order = orders.fetch_add(1, Ordering::SeqCst) + 1;
    (
        StatusCode::CREATED,
        format!(r#"{{"order":{order},"received":{body}}}"#),
    )
}

async fn count(State(orders): State<Arc<AtomicU64>>) -> String {
    format!(r#"{{"orders":{}}}"#, orders.load(Ordering::SeqCst))
}

/// The shop: its routes inside the layer. Plain `Idempotency-Key`s are
/// accepted besides signed request IDs, so that curl can try it.
pub fn app<DB: mintid_store::Backend>(store: Store<DB>, key_ring: KeyRing) -> Router {
    let policy = RecordPolicy::new(30_000, 86_400_000).expect("a policy");
    let layer = IdempotencyLayer::new(IdempotencyStore::new(store, policy), user)
        .with_key_ring(key_ring)
        .accept_idempotency_key(true)
        .with_grant(GrantRoute::new("/grant"));
    let shop = Router::new()
        .route("/orders", post(place).get(count))
        .with_state(Arc::new(AtomicU64::new(0)));
    // Around the whole router (not `Router::layer`), so that the layer sees
    // every request, the grant endpoint's included.
    Router::new().fallback_service(layer.layer(shop))
}

/// A key ring with a fresh secret (a real app loads its secrets).
pub fn key_ring() -> KeyRing {
    let mut secret = [0; 32];
    ThreadEntropy.fill_bytes(&mut secret);
    KeyRing::new(SecretKey::new(1, &secret).expect("32 bytes"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await?;
    let store = Store::new(pool);
    store.migrate().await?;
    let address = std::env::var("MINTID_EXAMPLE_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&address).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app(store, key_ring())).await?;
    Ok(())
}
