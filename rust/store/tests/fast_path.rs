//! The Redis fast path (`RedisFastPath`, feature `redis`) on the real Redis
//! Cluster of `scripts/db/with-db.sh` (`MINTID_REDIS_CLUSTER`) in front of
//! SQLite, PostgreSQL and MariaDB: the cases of tests/redis/fast_path.json,
//! the fault tests (a primary asleep, a primary killed and started again,
//! while 32 workers race on rounds of 100 keys: every operation runs once),
//! and a replay answered from Redis through the tower layer. Without `MINTID_REDIS_CLUSTER` they skip (under
//! `CI=true` they fail). They take turns on the one cluster: a fault must
//! not strike another test's counters.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mintid::fingerprint::fingerprint_bytes;
use mintid::{IdempotencyKey, RecordPolicy};
use mintid_store::{
    Claimed, Error, FastPathMetrics, IdempotencyStore, OperationError, RedisFastPath, RunResult,
    Store, StoreRequest, StoredResponse,
};
use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use serde_json::Value;
use sqlx::Pool;

use databases::{Server, url};

#[path = "support/databases.rs"]
#[allow(dead_code)]
mod databases;

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/redis/fast_path.json"
);
/// The fault tests' timeout: well under a request's, so a paused or killed primary falls
/// back to the database at once.
const TIMEOUT: Duration = Duration::from_millis(100);
/// The shared cases' timeout: they count hits, misses and fallbacks exactly, so a Redis that
/// is only slow on a loaded machine must not turn a miss into a fallback.
const CASE_TIMEOUT: Duration = Duration::from_secs(2);

/// One test at a time on the cluster.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The cluster's seed nodes, or `None` outside with-db.sh.
fn nodes() -> Option<Vec<String>> {
    Some(
        url("MINTID_REDIS_CLUSTER")?
            .split(',')
            .map(|node| format!("redis://{node}"))
            .collect(),
    )
}

async fn cluster(nodes: &[String], timeout: Duration) -> ClusterConnection {
    ClusterClient::builder(nodes.iter().map(String::as_str))
        .retries(0)
        .connection_timeout(timeout)
        .response_timeout(timeout)
        .build()
        .unwrap()
        .get_async_connection()
        .await
        .unwrap()
}

/// A connection to a port where no Redis listens (made lazily, no retries).
fn unreachable() -> ConnectionManager {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let config = ConnectionManagerConfig::new()
        .set_number_of_retries(0)
        .set_connection_timeout(Some(TIMEOUT))
        .set_response_timeout(Some(TIMEOUT));
    ConnectionManager::new_lazy_with_config(client, config).unwrap()
}

/// One node, with a timeout of `timeout`.
async fn node(address: &str, timeout: Duration) -> redis::RedisResult<MultiplexedConnection> {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout));
    redis::Client::open(address)?
        .get_multiplexed_async_connection_with_config(&config)
        .await
}

async fn info(node: &mut MultiplexedConnection, section: &str) -> redis::RedisResult<String> {
    redis::cmd("INFO").arg(section).query_async(node).await
}

/// The primaries as they are now (a fault may have moved them).
async fn primaries(nodes: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for address in nodes {
        let Ok(mut node) = node(address, Duration::from_secs(1)).await else {
            continue;
        };
        if info(&mut node, "replication")
            .await
            .is_ok_and(|text| text.contains("role:master"))
        {
            found.push(address.clone());
        }
    }
    found
}

/// `expected` nodes up and saying the cluster is ok, three of them
/// primaries, every replica in sync with its primary (only a synced replica
/// can take over).
async fn wait_healthy(nodes: &[String], expected: usize, within: Duration) {
    let end = Instant::now() + within;
    while Instant::now() < end {
        let mut healthy = 0;
        let mut masters = 0;
        for address in nodes {
            let Ok(mut node) = node(address, Duration::from_secs(1)).await else {
                continue;
            };
            let state = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async::<String>(&mut node)
                .await;
            let Ok(replication) = info(&mut node, "replication").await else {
                continue;
            };
            let synced = !replication.contains("master_link_status:down");
            if state.is_ok_and(|text| text.contains("cluster_state:ok")) && synced {
                healthy += 1;
            }
            masters += usize::from(replication.contains("role:master"));
        }
        if healthy == expected && masters == 3 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Redis Cluster did not come back");
}

fn request(payload: &str) -> StoreRequest {
    StoreRequest::new(fingerprint_bytes(payload.as_bytes()))
}

fn text(body: &str) -> StoredResponse {
    StoredResponse {
        content_type: "text/plain".into(),
        body: body.as_bytes().to_vec(),
    }
}

/// A scope no earlier run used, so that the cases share one cluster.
fn fresh_scope(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}{}x{nanos}", std::process::id())
}

fn only(step: &Value, fields: &[&str]) {
    for field in step.as_object().unwrap().keys() {
        assert!(
            fields.contains(&field.as_str()) || field == "do" || field == "expect",
            "unknown field {field}"
        );
    }
}

async fn store_on<DB: Server>(pool: &Pool<DB>, policy: RecordPolicy) -> IdempotencyStore<DB> {
    let store = Store::new(pool.clone());
    store.migrate().await.unwrap();
    IdempotencyStore::new(store, policy)
}

async fn run_case<DB: Server>(case: &Value, index: usize, nodes: &[String]) {
    let name = case["name"].as_str().unwrap();
    let pool = DB::fresh(index).await;
    let fast = match case.get("redis").and_then(Value::as_str) {
        Some("down") => RedisFastPath::new(unreachable()),
        None => RedisFastPath::new(cluster(nodes, CASE_TIMEOUT).await),
        Some(other) => panic!("{name}: unknown redis {other}"),
    };
    let records = store_on(&pool, RecordPolicy::DEFAULT)
        .await
        .with_fast_path(fast.clone());
    let scope = fresh_scope("s");
    let mut lease = None;
    for step in case["steps"].as_array().unwrap() {
        let at = format!("{name}: {step}");
        let key = |step: &Value| {
            IdempotencyKey::new("order", &scope, step["key"].as_str().unwrap()).unwrap()
        };
        match step["do"].as_str().unwrap() {
            "run" => {
                only(
                    step,
                    &[
                        "key",
                        "payload",
                        "respond",
                        "fail",
                        "retryable",
                        "text",
                        "error",
                        "ran",
                    ],
                );
                let ran = Arc::new(AtomicBool::new(false));
                let flag = Arc::clone(&ran);
                let operation = async move |_lease| {
                    flag.store(true, Ordering::SeqCst);
                    match step["fail"].as_str() {
                        Some(fail) if step["retryable"] == true => {
                            Err(OperationError::retryable(fail))
                        }
                        Some(fail) => Err(OperationError::new(fail)),
                        None => Ok(text(step["respond"].as_str().unwrap())),
                    }
                };
                let payload = step["payload"].as_str().unwrap();
                let result = match records
                    .run_once(&key(step), request(payload), operation)
                    .await
                {
                    Ok(result) => Some(result),
                    Err(Error::Operation(_)) => None,
                    Err(error) => panic!("{at}: {error}"),
                };
                let decision = result
                    .as_ref()
                    .map_or("operation_failed", RunResult::decision);
                assert_eq!(decision, step["expect"], "{at}");
                assert_eq!(ran.load(Ordering::SeqCst), step["ran"], "{at}");
                if let Some(body) = step["text"].as_str() {
                    let response = match &result {
                        Some(RunResult::Executed(response)) => Some(response),
                        Some(RunResult::Replayed { response, .. }) => response.as_ref(),
                        _ => None,
                    };
                    assert_eq!(response.map(|r| &r.body[..]), Some(body.as_bytes()), "{at}");
                }
                if let Some(error) = step["error"].as_str() {
                    let Some(RunResult::Replayed { error: stored, .. }) = &result else {
                        panic!("{at}: not a replay");
                    };
                    assert_eq!(stored.as_deref(), Some(error), "{at}");
                }
            }
            "lease" => {
                only(step, &["key", "payload"]);
                let payload = step["payload"].as_str().unwrap();
                match records.claim_lease(&key(step), request(payload)).await {
                    Ok(Claimed::Held(held)) => {
                        assert_eq!(step["expect"], "lease", "{at}");
                        lease = Some(held);
                    }
                    Ok(Claimed::NotRun(result)) => {
                        assert_eq!(result.decision(), step["expect"], "{at}");
                    }
                    Err(error) => panic!("{at}: {error}"),
                }
            }
            "complete" => {
                only(step, &["text"]);
                let held = lease.as_ref().expect("a lease");
                held.complete(text(step["text"].as_str().unwrap()))
                    .await
                    .unwrap();
            }
            "flush" => {
                only(step, &[]);
                on_every_primary(nodes, &["FLUSHALL"]).await;
            }
            "flush_scripts" => {
                only(step, &[]);
                on_every_primary(nodes, &["SCRIPT", "FLUSH"]).await;
            }
            "metrics" => {
                only(step, &[]);
                let metrics = fast.metrics();
                let counts = serde_json::json!({
                    "hits": metrics.hits,
                    "misses": metrics.misses,
                    "fallbacks": metrics.fallbacks,
                });
                assert_eq!(counts, step["expect"], "{at}");
            }
            other => panic!("{at}: unknown step {other}"),
        }
    }
    pool.close().await;
}

async fn run_cases<DB: Server>() {
    let Some(nodes) = nodes() else { return };
    let _turn = CLUSTER.lock().await;
    let text = std::fs::read_to_string(CASES).expect("tests/redis/fast_path.json");
    let file: Value = serde_json::from_str(&text).expect("JSON");
    for (index, case) in file["cases"].as_array().unwrap().iter().enumerate() {
        run_case::<DB>(case, 100 + index, &nodes).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_path_cases_on_sqlite() {
    run_cases::<sqlx::Sqlite>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_path_cases_on_postgres() {
    if url("MINTID_PG_URL").is_some() {
        run_cases::<sqlx::Postgres>().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_path_cases_on_mariadb() {
    if url("MINTID_MYSQL_URL").is_some() {
        run_cases::<sqlx::MySql>().await;
    }
}

/// Twenty of `names`, in an order of the worker's own.
fn pick(names: &[String], worker: u64) -> Vec<String> {
    let mut state = worker.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut picked = names.to_vec();
    for at in (1..picked.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        picked.swap(at, (state % (at as u64 + 1)) as usize);
    }
    picked.truncate(20);
    picked
}

/// The fault test's lease: longer than a completion waits for the database
/// when every request of the first round reaches it at once (seconds on a
/// loaded 2-core machine: with a shorter one, a lease passes, the key is taken
/// over and the operation runs twice, as lease and fence says).
const LEASE_MILLIS: u64 = 10_000;

/// What strikes a primary during the first round (a sleep again in a later
/// one when no request met it).
#[derive(Clone, Copy)]
enum Fault {
    /// `DEBUG SLEEP`, longer than the cluster's node timeout: its replica
    /// may take over.
    Sleep,
    /// `SIGKILL`; its replica takes over, and the node is started again
    /// afterwards (`scripts/db/redis-node.sh`: it rejoins as a replica).
    Kill,
}

/// Strikes the primary `address`; for a kill, the node to start again (its
/// port and data directory).
/// Runs `command` on every primary of the cluster.
async fn on_every_primary(nodes: &[String], command: &[&str]) {
    for address in primaries(nodes).await {
        let mut node = node(&address, Duration::from_secs(5)).await.unwrap();
        let _: () = redis::cmd(command[0])
            .arg(&command[1..])
            .query_async(&mut node)
            .await
            .unwrap();
    }
}

async fn strike(fault: Fault, address: String) -> Option<(String, String)> {
    let mut node = node(&address, Duration::from_secs(5)).await.unwrap();
    match fault {
        Fault::Sleep => {
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg("1.2")
                .query_async(&mut node)
                .await
                .unwrap();
            None
        }
        Fault::Kill => {
            let server = info(&mut node, "server").await.unwrap();
            let field = |name: &str| {
                let line = server.lines().find(|line| line.starts_with(name)).unwrap();
                line[name.len()..].trim().to_owned()
            };
            let (pid, port) = (field("process_id:"), field("tcp_port:"));
            let (_, dir): (String, String) = redis::cmd("CONFIG")
                .arg("GET")
                .arg("dir")
                .query_async(&mut node)
                .await
                .unwrap();
            let killed = std::process::Command::new("kill")
                .args(["-KILL", &pid])
                .status()
                .unwrap();
            assert!(killed.success(), "kill {pid}");
            Some((port, dir))
        }
    }
}

/// The killed node's replica took over (or not: the node comes back
/// anyway), the node is started again, and the cluster is whole.
async fn recover(nodes: &[String], killed: Option<(String, String)>) {
    if let Some((port, dir)) = killed {
        wait_healthy(nodes, nodes.len() - 1, Duration::from_secs(30)).await;
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/db/redis-node.sh"
        );
        let started = std::process::Command::new(script)
            .args([&port, &dir])
            .status()
            .unwrap();
        assert!(started.success(), "{script} {port} {dir}");
    }
    wait_healthy(nodes, nodes.len(), Duration::from_secs(30)).await;
}

/// A primary asleep while 32 workers race on rounds of 100 fresh keys for
/// about two seconds: every key's operation runs exactly once, every
/// duplicate gets the stored response or in progress, and afterwards every
/// key replays its one response. On PostgreSQL only: what it tests is Redis's
/// failure, and the database's part is the same driver on every dialect (the
/// cases above run on all three).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_primary_asleep_mid_run() {
    race(Fault::Sleep).await;
}

/// The same with a primary killed (and started again afterwards).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_primary_killed_mid_run() {
    race(Fault::Kill).await;
}

async fn race(fault: Fault) {
    let (Some(nodes), Some(_)) = (nodes(), url("MINTID_PG_URL")) else {
        return;
    };
    let _turn = CLUSTER.lock().await;
    wait_healthy(&nodes, nodes.len(), Duration::from_secs(30)).await;
    let pool = sqlx::Postgres::fresh(0).await;
    let fast = RedisFastPath::new(cluster(&nodes, TIMEOUT).await);
    let policy = RecordPolicy::new(LEASE_MILLIS, RecordPolicy::DEFAULT.retention_millis()).unwrap();
    let records = store_on(&pool, policy).await.with_fast_path(fast.clone());
    let scope = fresh_scope("f");
    let effects = Arc::new(std::sync::Mutex::new(HashMap::<String, u32>::new()));
    let operation = |effects: Arc<std::sync::Mutex<HashMap<String, u32>>>, name: String| {
        async move |_lease| {
            *effects.lock().unwrap().entry(name.clone()).or_default() += 1;
            Ok(text(&format!("done {name}")))
        }
    };
    let mut every = Vec::new();
    let mut problems = Vec::new();
    let mut striker = None;
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut round = 0;
    // Rounds go on for two seconds, and on a slow machine until one round
    // has started after the strike ended, so that requests meet the fault.
    let mut after_strike = false;
    let mut strikes = 0;
    while Instant::now() < deadline || !after_strike {
        after_strike = striker
            .as_ref()
            .is_some_and(tokio::task::JoinHandle::is_finished);
        // A sleep that no request met (a loaded machine's rounds can pass it
        // by) strikes again, up to five times.
        let missed = matches!(fault, Fault::Sleep) && fast.metrics().fallbacks == 0;
        if after_strike && missed && strikes < 5 {
            striker = None;
            after_strike = false;
        }
        let names: Vec<String> = (0..100).map(|i| format!("r{round}-{i}")).collect();
        every.extend(names.iter().cloned());
        let barrier = Arc::new(tokio::sync::Barrier::new(32));
        let mut workers = Vec::new();
        for worker in 0..32 {
            let (records, barrier, effects) = (records.clone(), barrier.clone(), effects.clone());
            let (names, scope) = (pick(&names, round * 32 + worker + 1), scope.clone());
            workers.push(tokio::spawn(async move {
                barrier.wait().await;
                let mut problems = Vec::new();
                for name in names {
                    let key = IdempotencyKey::new("order", &scope, &name).unwrap();
                    let run = operation(effects.clone(), name.clone());
                    match records.run_once(&key, request(&name), run).await {
                        Ok(RunResult::Executed(_) | RunResult::InProgress { .. }) => {}
                        Ok(RunResult::Replayed {
                            response: Some(response),
                            ..
                        }) if response.body == format!("done {name}").as_bytes() => {}
                        other => problems.push(format!("{name}: {other:?}")),
                    }
                }
                problems
            }));
        }
        if striker.is_none() {
            strikes += 1;
            let primary = primaries(&nodes).await[0].clone();
            striker = Some(tokio::spawn(strike(fault, primary)));
        }
        for worker in workers {
            problems.extend(worker.await.unwrap());
        }
        round += 1;
    }
    let killed = striker.unwrap().await.unwrap();
    recover(&nodes, killed).await;
    assert_eq!(problems, Vec::<String>::new());
    let ran_twice: Vec<_> = (effects.lock().unwrap().iter())
        .filter(|(_, runs)| **runs > 1)
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(ran_twice, Vec::<String>::new(), "a side effect ran twice");
    // Nothing lost: a key nobody saw run had every request in progress; its
    // next request runs it, and every key replays its one response. A claiming
    // marker whose forget was lost to the fault answers in progress until its
    // lease-long life ends (docs/spec.md, "The fast path").
    let give_up = Instant::now() + Duration::from_millis(LEASE_MILLIS + 2_000);
    for name in &every {
        let key = IdempotencyKey::new("order", &scope, name).unwrap();
        let mut result = RunResult::KeyTooOld;
        for _ in 0.. {
            let run = operation(effects.clone(), name.clone());
            result = records.run_once(&key, request(name), run).await.unwrap();
            if !matches!(result, RunResult::InProgress { .. }) || Instant::now() > give_up {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let response = match result {
            RunResult::Executed(response) => response,
            RunResult::Replayed {
                response: Some(response),
                ..
            } => response,
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(response.body, format!("done {name}").as_bytes());
    }
    let effects = effects.lock().unwrap().clone();
    assert!(every.iter().all(|name| effects.get(name) == Some(&1)));
    // Redis answered some requests, and the asleep primary sent others to the database.
    let FastPathMetrics {
        hits, fallbacks, ..
    } = fast.metrics();
    assert!(hits > 0 && fallbacks > 0, "{:?}", fast.metrics());
    pool.close().await;
}

/// Through the tower layer: the retry of a request is replayed from Redis
/// (a hit, the handler not run again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_replays_from_redis() {
    use axum::{Router, routing::post};
    use mintid_store::IdempotencyLayer;
    use tower::{Layer, ServiceExt};

    let Some(nodes) = nodes() else { return };
    let _turn = CLUSTER.lock().await;
    let pool = sqlx::Sqlite::fresh(99).await;
    let fast = RedisFastPath::new(cluster(&nodes, CASE_TIMEOUT).await);
    let records = store_on(&pool, RecordPolicy::DEFAULT)
        .await
        .with_fast_path(fast.clone());
    let placed = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = Arc::clone(&placed);
    let shop = Router::new().route(
        "/orders",
        post(async move || {
            counter.fetch_add(1, Ordering::SeqCst);
            (axum::http::StatusCode::CREATED, "placed")
        }),
    );
    let scope = fresh_scope("u");
    let layer = IdempotencyLayer::new(records, move |_: &axum::http::request::Parts| {
        Some(scope.clone())
    });
    let app = Router::new().fallback_service(layer.layer(shop));
    let order = || {
        axum::http::Request::post("/orders")
            .header("idempotency-key", "\"order-1001\"")
            .body(axum::body::Body::empty())
            .unwrap()
    };
    assert_eq!(app.clone().oneshot(order()).await.unwrap().status(), 201);
    let retry = app.oneshot(order()).await.unwrap();
    assert_eq!(retry.status(), 201);
    assert_eq!(retry.headers()["idempotent-replayed"], "true");
    assert_eq!(placed.load(Ordering::SeqCst), 1);
    let metrics = fast.metrics();
    assert_eq!((metrics.hits, metrics.misses), (1, 1), "{metrics:?}");
    pool.close().await;
}
