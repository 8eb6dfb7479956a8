//! `mintid-store` beside raw sqlx running the same two statements, in one run
//! (a plain timed loop, as the other languages' store benchmarks; run it with
//! `make bench-rust-store`, which starts the throwaway servers).
//!
//! One operation is a fresh key run once: `run_once` claims (one round
//! trip), runs a trivial operation and stores its response (one round trip).
//! The floor binds the same two statements from the core's manifest on raw
//! sqlx, no decisions. 1 and 8 concurrent tasks share one pool; each row is
//! the median of `--rounds` rounds of `--seconds` seconds, the store and the
//! floor interleaved in each round. Run it with `make bench-rust-store` (a
//! smoke run: `make bench-rust-store RUST_STORE_BENCH_FLAGS="--seconds 0.2 --rounds 2"`).
//!
//! With `MINTID_REDIS_CLUSTER` (the cluster of `scripts/db/with-db.sh`), a
//! second table on PostgreSQL: a replay answered by the Redis fast path
//! beside a replay from the database, and a fresh key with the fast path
//! beside one without.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[path = "support/timing.rs"]
mod timing;

use mintid::record::RecordPolicy;
use mintid::store::{Manifest, Statement};
use mintid::{Fingerprint, IdempotencyKey};
use mintid_store::{
    Backend, IdempotencyStore, RedisFastPath, RunResult, Store, StoreRequest, StoredResponse,
};
use sqlx::{Executor, Pool};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn fresh_key() -> IdempotencyKey {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    IdempotencyKey::new(
        "bench.run",
        "tenant-1",
        &format!("k-{n}-{}", std::process::id()),
    )
    .unwrap()
}

fn response() -> StoredResponse {
    StoredResponse {
        content_type: "application/json".into(),
        body: br#"{"ok":true}"#.to_vec(),
    }
}

async fn store_op<DB: Backend>(records: &IdempotencyStore<DB>) {
    let request = StoreRequest::new(Fingerprint::from_digest([7; 32]));
    records
        .run_once(&fresh_key(), request, async |_lease| Ok(response()))
        .await
        .expect("runs");
}

/// The floor: the claim and the completion, bound by hand on raw sqlx.
async fn raw_op<DB>(pool: &Pool<DB>, claim: &Statement, complete: &Statement)
where
    DB: Backend,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    let key = fresh_key();
    let now = mintid::Clock::now_millis(&mintid::SystemClock) as i64;
    let value = |name: &str| -> Param {
        match name {
            "scope" => Param::Text(key.scope().into()),
            "kind" => Param::Text(key.kind().into()),
            "key_id" => Param::Text(key.id().into()),
            "fingerprint" | "response_body" => Param::Bytes(vec![7; 32]),
            "response_content_type" => Param::Text("application/json".into()),
            "fencing_token" => Param::Int(1),
            "lease_deadline_millis" => Param::Int(now + 30_000),
            "expires_millis" => Param::Int(now + 86_400_000),
            _ => Param::Int(now),
        }
    };
    for statement in [claim, complete] {
        let mut query = sqlx::query::<DB>(sqlx::AssertSqlSafe(statement.sql.as_str()));
        for name in &statement.params {
            query = match value(name) {
                Param::Int(v) => query.bind(v),
                Param::Text(v) => query.bind(v),
                Param::Bytes(v) => query.bind(v),
            };
        }
        query
            .execute(pool)
            .await
            .expect("the floor's statement runs");
    }
}

enum Param {
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

async fn bench<DB>(name: &str, pool: Pool<DB>, seconds: f64, rounds: usize)
where
    DB: Backend,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Vec<u8>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    let store = Store::new(pool.clone());
    store.migrate().await.expect("migrations");
    let records = Arc::new(IdempotencyStore::new(
        store,
        RecordPolicy::new(30_000, 86_400_000).unwrap(),
    ));
    let manifest = Manifest::new(DB::DIALECT, DB::PLACEHOLDER);
    let claim = Arc::new(manifest.statement("claim").unwrap());
    let complete = Arc::new(manifest.statement("complete").unwrap());
    for tasks in [1, 8] {
        let mut ours = Vec::new();
        let mut floor = Vec::new();
        for _ in 0..rounds {
            let records = Arc::clone(&records);
            ours.push(
                timing::measure(tasks, seconds, move || {
                    let records = Arc::clone(&records);
                    async move { store_op(&records).await }
                })
                .await,
            );
            let (pool, claim, complete) = (pool.clone(), Arc::clone(&claim), Arc::clone(&complete));
            floor.push(
                timing::measure(tasks, seconds, move || {
                    let (pool, claim, complete) =
                        (pool.clone(), Arc::clone(&claim), Arc::clone(&complete));
                    async move { raw_op(&pool, &claim, &complete).await }
                })
                .await,
            );
        }
        let (ours, floor) = (timing::median(ours), timing::median(floor));
        println!(
            "| {name} | {tasks} | {ours:.0} | {floor:.0} | {:.2} |",
            ours / floor
        );
    }
}

/// Operations per second of `op` on `records` for one round.
async fn rate<DB: Backend, F, Fut>(
    records: &IdempotencyStore<DB>,
    tasks: usize,
    seconds: f64,
    op: F,
) -> f64
where
    F: Fn(IdempotencyStore<DB>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let records = records.clone();
    timing::measure(tasks, seconds, move || op(records.clone())).await
}

/// The fast path's table: replays and fresh keys with and without Redis.
async fn bench_fast_path(pool: sqlx::PgPool, nodes: &str, seconds: f64, rounds: usize) {
    let redis = redis::cluster::ClusterClient::builder(
        nodes.split(',').map(|node| format!("redis://{node}")),
    )
    .connection_timeout(std::time::Duration::from_millis(100))
    .response_timeout(std::time::Duration::from_millis(100))
    .retries(0)
    .build()
    .expect("the cluster's nodes")
    .get_async_connection()
    .await
    .expect("the cluster");
    let policy = RecordPolicy::new(30_000, 86_400_000).unwrap();
    let plain = IdempotencyStore::new(Store::new(pool), policy);
    let fast = plain.clone().with_fast_path(RedisFastPath::new(redis));
    let key = fresh_key();
    let request = StoreRequest::new(Fingerprint::from_digest([7; 32]));
    fast.run_once(&key, request, async |_lease| Ok(response()))
        .await
        .expect("runs");
    let replay = move |records: IdempotencyStore<sqlx::Postgres>| {
        let key = key.clone();
        async move {
            let result = records
                .run_once(&key, request, async |_lease| Ok(response()))
                .await
                .expect("replays");
            assert!(matches!(result, RunResult::Replayed { .. }));
        }
    };
    let fresh = |records: IdempotencyStore<sqlx::Postgres>| async move { store_op(&records).await };
    println!();
    println!(
        "| database | tasks | replay via Redis ops/s | replay from the database ops/s | ratio | fresh key with Redis ops/s | fresh key without ops/s | ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for tasks in [1, 8] {
        // The four interleaved in each round.
        let mut runs: [Vec<f64>; 4] = Default::default();
        for _ in 0..rounds {
            runs[0].push(rate(&fast, tasks, seconds, replay.clone()).await);
            runs[1].push(rate(&plain, tasks, seconds, replay.clone()).await);
            runs[2].push(rate(&fast, tasks, seconds, fresh).await);
            runs[3].push(rate(&plain, tasks, seconds, fresh).await);
        }
        let [redis_replay, db_replay, redis_fresh, db_fresh] = runs.map(timing::median);
        println!(
            "| PostgreSQL | {tasks} | {redis_replay:.0} | {db_replay:.0} | {:.2} | {redis_fresh:.0} | {db_fresh:.0} | {:.2} |",
            redis_replay / db_replay,
            redis_fresh / db_fresh
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (seconds, rounds) = timing::arguments();
    println!("| database | tasks | mintid-store ops/s | raw sqlx ops/s | ratio |");
    println!("|---|---:|---:|---:|---:|");
    if let Some(pool) = timing::postgres().await {
        bench::<sqlx::Postgres>("PostgreSQL", pool, seconds, rounds).await;
    }
    let (pool, dir) = timing::sqlite("mintid-store-bench").await;
    bench::<sqlx::Sqlite>("SQLite", pool, seconds, rounds).await;
    let _ = std::fs::remove_dir_all(dir);
    if let (Ok(nodes), Some(pool)) = (
        std::env::var("MINTID_REDIS_CLUSTER"),
        timing::postgres().await,
    ) {
        bench_fast_path(pool, &nodes, seconds, rounds).await;
    }
}
