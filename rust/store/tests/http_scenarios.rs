//! The HTTP conformance scenarios (tests/http/scenarios.json) through the
//! `IdempotencyLayer` on an axum app, driven through the whole service stack
//! (`tower::ServiceExt::oneshot`: the router, the layer and the handlers, as
//! a server would), on SQLite, PostgreSQL and MariaDB, each scenario on a
//! fresh database. An unknown config key, step, header value or expectation
//! fails.
//!
//! The test app is the one of tests/http/README.md. A handler that "throws"
//! is, in axum, a handler whose `Result` is an error: axum answers its 500.
//! Its `write` directive runs through the crate's executor (`Backend::run`),
//! on the record's `Transaction` under `sameTransaction`.

#[path = "support/databases.rs"]
#[allow(dead_code)]
mod databases;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Extension, State};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use databases::{Server, switchable, url};
use http_body_util::BodyExt;
use mintid::Clock;
use mintid::record::{Problem, RecordPolicy};
use mintid::request_id::SecretKey;
use mintid::store::{Answer, ResultKind, Statement, Value as SqlValue};
use mintid::{Entropy, KeyRing, SystemClock, ThreadEntropy, Uuid7};
use mintid_store::{Backend, GrantRoute, IdempotencyLayer, IdempotencyStore, Store, Transaction};
use serde_json::{Value, json};
use sqlx::Pool;
use tokio::sync::watch;
use tower::{Layer, ServiceExt};

const CONFIG_KEYS: [&str; 7] = [
    "signed",
    "storeErrors",
    "maxWaitMillis",
    "bodyLimit",
    "mounts",
    "grant",
    "sameTransaction",
];

/// The test table of the handler's `write` directive (tests/http/README.md).
const TEST_TABLE: &str = "CREATE TABLE mintid_test_orders (n integer)";

/// A statement of the runner's own (no parameters) for the crate's executor.
fn statement(sql: String, kind: ResultKind) -> Statement {
    Statement {
        name: "test",
        kind,
        sql,
        params: Vec::new(),
        param_types: Vec::new(),
    }
}

/// Runs `sql` on `conn`; its rows, or a panic on a failure.
async fn run_sql<DB: Backend>(
    conn: &mut DB::Connection,
    sql: String,
    kind: ResultKind,
) -> Vec<Vec<SqlValue>> {
    match DB::run(conn, &statement(sql, kind), Vec::new()).await {
        Answer::Rows(rows) => rows,
        Answer::Affected(_) => Vec::new(),
        Answer::Failed(error) => panic!("the runner's statement failed: {error:?}"),
    }
}

/// The `write` directive's row, on `conn`.
async fn write_row<DB: Backend>(conn: &mut DB::Connection) {
    let insert = "INSERT INTO mintid_test_orders (n) VALUES (1)".to_owned();
    run_sql::<DB>(conn, insert, ResultKind::Exec).await;
}

/// Where the `write` directive writes: the record's transaction (`same`),
/// else a connection of `pool` in autocommit.
struct Writes<DB: Backend> {
    pool: Pool<DB>,
    same: bool,
}

impl<DB: Backend> Writes<DB> {
    async fn write(&self, transaction: Option<Extension<Transaction<DB>>>) {
        if self.same {
            let Extension(transaction) = transaction.expect("the record's transaction");
            transaction
                .run(|conn| Box::pin(write_row::<DB>(conn)))
                .await
                .expect("the transaction is live while the handler runs");
        } else {
            let mut conn = self.pool.acquire().await.expect("a connection");
            write_row::<DB>(&mut conn).await;
        }
    }

    async fn count(&self) -> u64 {
        let mut conn = self.pool.acquire().await.expect("a connection");
        let sql = "SELECT COUNT(*) FROM mintid_test_orders".to_owned();
        match run_sql::<DB>(&mut conn, sql, ResultKind::One)
            .await
            .as_slice()
        {
            [row] => match row.as_slice() {
                [SqlValue::Int(count)] => u64::try_from(*count).unwrap(),
                other => panic!("a count, not {other:?}"),
            },
            other => panic!("one row, not {other:?}"),
        }
    }
}

fn only(object: &Value, allowed: &[&str], what: &str) {
    for key in object.as_object().expect("an object").keys() {
        assert!(allowed.contains(&key.as_str()), "unknown {what} {key:?}");
    }
}

/// What the app's handlers share with the runner: the call count and the gates.
#[derive(Default)]
struct Handlers {
    calls: AtomicU64,
    gates: std::sync::Mutex<HashMap<String, watch::Sender<bool>>>,
}

impl Handlers {
    fn gate(&self, name: &str) -> watch::Sender<bool> {
        let mut gates = self.gates.lock().unwrap();
        gates
            .entry(name.into())
            .or_insert_with(|| watch::Sender::new(false))
            .clone()
    }

    fn open_all(&self) {
        for gate in self.gates.lock().unwrap().values() {
            gate.send_replace(true);
        }
    }
}

/// One handler call of the test app.
async fn handle<DB: Backend>(
    State(state): State<Arc<Handlers>>,
    Extension(writes): Extension<Arc<Writes<DB>>>,
    transaction: Option<Extension<Transaction<DB>>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, StatusCode> {
    let order = state.calls.fetch_add(1, Ordering::SeqCst) + 1;
    let directive: Value = headers.get("x-test-handler").map_or(json!({}), |text| {
        serde_json::from_slice(text.as_bytes()).unwrap()
    });
    if directive.get("write").is_some() {
        writes.write(transaction).await;
    }
    if let Some(gate) = directive.get("gate").and_then(Value::as_str) {
        let mut opened = state.gate(gate).subscribe();
        let _ = opened.wait_for(|open| *open).await;
    }
    if directive.get("throw").is_some() {
        return Err(StatusCode::INTERNAL_SERVER_ERROR);
    }
    let received = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    let (status, json, location) = match (directive.get("status"), method) {
        (Some(status), _) => {
            let status = status.as_u64().unwrap() as u16;
            (status, json!({"error": format!("status {status}")}), None)
        }
        (None, Method::GET) => (200, json!({"orders": order}), None),
        (None, Method::PATCH) => (200, json!({"order": order, "received": received}), None),
        (None, _) => (
            201,
            json!({"order": order, "received": received}),
            Some(format!("/orders/{order}")),
        ),
    };
    let mut response = (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        json.to_string(),
    )
        .into_response();
    if let Some(location) = location {
        response
            .headers_mut()
            .insert("location", location.parse().unwrap());
    }
    if let Some(content_type) = directive.get("contentType").and_then(Value::as_str) {
        response
            .headers_mut()
            .insert("content-type", content_type.parse().unwrap());
    }
    Ok(response)
}

fn scope_of(parts: &axum::http::request::Parts) -> Option<String> {
    let user = parts.headers.get("x-test-user")?.to_str().ok()?;
    Some(format!("user:{user}"))
}

/// The test app with `layer` inside it, mounted at each of `mounts` (or at the root).
fn app<DB: Server>(
    state: &Arc<Handlers>,
    writes: &Arc<Writes<DB>>,
    layer: &IdempotencyLayer<DB>,
    mounts: &[String],
) -> Router {
    let orders = Router::new()
        .route(
            "/orders",
            get(handle::<DB>).post(handle::<DB>).patch(handle::<DB>),
        )
        .layer(Extension(Arc::clone(writes)))
        .with_state(Arc::clone(state));
    let covered = layer.layer(orders);
    if mounts.is_empty() {
        return Router::new().fallback_service(covered);
    }
    mounts.iter().fold(Router::new(), |router, prefix| {
        router.nest_service(prefix, covered.clone())
    })
}

fn random_u64() -> u64 {
    let mut bytes = [0; 8];
    ThreadEntropy.fill_bytes(&mut bytes);
    u64::from_le_bytes(bytes)
}

fn fresh_uuid(unix_millis: u64) -> Uuid7 {
    Uuid7::from_fields(
        unix_millis,
        (random_u64() & 0xfff) as u16,
        random_u64() >> 2,
    )
    .unwrap()
}

/// The header values of one run: keys and request IDs by name, minted once.
struct Minted {
    ring: Option<Arc<KeyRing>>,
    keys: HashMap<String, String>,
    ids: HashMap<String, String>,
}

impl Minted {
    fn value(&mut self, spec: &Value, user: Option<&str>) -> String {
        if let Some(text) = spec.as_str() {
            return text.into();
        }
        if let Some(name) = spec.get("key") {
            only(spec, &["key", "form"], "key field");
            let key = self
                .keys
                .entry(name.as_str().unwrap().into())
                .or_insert_with(|| fresh_uuid(SystemClock.now_millis()).to_string())
                .clone();
            return match spec.get("form") {
                None => key,
                Some(form) => {
                    assert_eq!(form, "sf-string", "unknown key form");
                    format!("\"{key}\"")
                }
            };
        }
        let name = spec
            .get("requestId")
            .expect("a key or a requestId")
            .as_str()
            .unwrap();
        only(
            spec,
            &["requestId", "grantFor", "grant", "tamper", "ageMillis"],
            "requestId field",
        );
        let ring = self
            .ring
            .as_ref()
            .expect("a requestId needs the signed config");
        let id = self
            .ids
            .entry(name.into())
            .or_insert_with(|| {
                let now = SystemClock.now_millis();
                let expires = match spec.get("grant") {
                    Some(grant) => {
                        assert_eq!(grant, "expired", "unknown grant");
                        now - 1000
                    }
                    None => now + 3_600_000,
                };
                let owner = spec
                    .get("grantFor")
                    .and_then(Value::as_str)
                    .or(user)
                    .expect("an anonymous step's requestId needs grantFor");
                let grant = ring.issue_grant(&format!("user:{owner}"), expires).unwrap();
                let age = spec.get("ageMillis").and_then(Value::as_u64);
                let uuid = match age {
                    Some(age) => Uuid7::from_fields(now - age, 0, 1).unwrap(),
                    None => fresh_uuid(now),
                };
                grant.mint(&uuid).to_text()
            })
            .clone();
        if spec.get("tamper").and_then(Value::as_bool) != Some(true) {
            return id;
        }
        let at = 40; // inside the tag
        let swapped = if id.as_bytes()[at] == b'A' { "B" } else { "A" };
        format!("{}{swapped}{}", &id[..at], &id[at + 1..])
    }
}

/// A response, read whole.
struct Got {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

fn request_of(spec: &Value, minted: &mut Minted) -> Request<Body> {
    only(
        spec,
        &["method", "path", "user", "headers", "body", "handler"],
        "request field",
    );
    // A step without a user has no authenticated caller: no test header.
    let user = spec.get("user").map(|user| user.as_str().unwrap());
    let mut request = Request::builder()
        .method(spec["method"].as_str().unwrap())
        .uri(spec["path"].as_str().unwrap());
    if let Some(user) = user {
        request = request.header("x-test-user", user);
    }
    for (name, value) in spec
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        request = request.header(name.as_str(), minted.value(value, user));
    }
    if let Some(handler) = spec.get("handler") {
        only(
            handler,
            &["status", "throw", "gate", "contentType", "write"],
            "handler directive",
        );
        request = request.header("x-test-handler", handler.to_string());
    }
    let body = spec.get("body").cloned().unwrap_or(json!({"none": true}));
    only(&body, &["json", "jsonText", "text", "none"], "body kind");
    let (content_type, bytes) = if let Some(value) = body.get("json") {
        (Some("application/json"), value.to_string().into_bytes())
    } else if let Some(text) = body.get("jsonText") {
        (
            Some("application/json"),
            text.as_str().unwrap().as_bytes().to_vec(),
        )
    } else if let Some(text) = body.get("text") {
        (
            Some("text/plain"),
            text.as_str().unwrap().as_bytes().to_vec(),
        )
    } else {
        (None, Vec::new())
    };
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    request.body(Body::from(bytes)).unwrap()
}

async fn send(app: Router, request: Request<Body>) -> Got {
    let response = app.oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    Got {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes().to_vec(),
    }
}

fn check(got: &Got, expect: &Value, named: &HashMap<String, Got>, at: &str) {
    only(
        expect,
        &[
            "status",
            "problem",
            "replayed",
            "retryAfter",
            "headers",
            "json",
            "sameBodyAs",
            "bare",
            "members",
            "detailContains",
        ],
        "expectation",
    );
    let text = String::from_utf8_lossy(&got.body);
    assert_eq!(
        u64::from(got.status),
        expect["status"].as_u64().unwrap(),
        "{at}: status (body {text})"
    );
    let header = |name: &str| {
        got.headers
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let json = || {
        serde_json::from_slice::<Value>(&got.body)
            .unwrap_or_else(|_| panic!("{at}: not JSON: {text}"))
    };
    if let Some(problem) = expect.get("problem").and_then(Value::as_str) {
        assert!(
            header("content-type")
                .unwrap_or_default()
                .starts_with("application/problem+json"),
            "{at}: problem content type"
        );
        let document = json();
        if problem == "about:blank" {
            assert_eq!(document["type"], "about:blank", "{at}: problem type");
        } else {
            let known = Problem::ALL
                .into_iter()
                .find(|known| known.name() == problem)
                .unwrap_or_else(|| panic!("unknown problem {problem}"));
            assert_eq!(
                (
                    document["type"].as_str(),
                    document["title"].as_str(),
                    document["status"].as_u64()
                ),
                (
                    Some(known.type_uri()),
                    Some(known.title()),
                    Some(u64::from(known.status()))
                ),
                "{at}: problem"
            );
        }
        assert_eq!(document["status"], expect["status"], "{at}: problem status");
    }
    for part in expect
        .get("detailContains")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let part = part.as_str().unwrap();
        let document = json();
        let detail = document["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains(part),
            "{at}: detail {detail:?} lacks {part:?}"
        );
    }
    if let Some(bare) = expect.get("bare") {
        assert_eq!(bare, true, "bare can only be true");
        let mut members: Vec<String> = json().as_object().unwrap().keys().cloned().collect();
        members.sort();
        assert_eq!(members, ["status", "title", "type"], "{at}: a bare problem");
    }
    for member in expect
        .get("members")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        assert!(
            json().get(member.as_str().unwrap()).is_some(),
            "{at}: body member {member} ({text})"
        );
    }
    if let Some(replayed) = expect.get("replayed").and_then(Value::as_bool) {
        let marker = header("idempotent-replayed");
        assert_eq!(
            marker.as_deref(),
            replayed.then_some("true"),
            "{at}: replay marker"
        );
    }
    if let Some(retry) = expect.get("retryAfter") {
        assert_eq!(retry, true, "retryAfter can only be true");
        let secs = header("retry-after").unwrap_or_default();
        assert!(
            secs.parse::<u64>().is_ok_and(|secs| secs > 0),
            "{at}: Retry-After {secs:?}"
        );
    }
    for (name, value) in expect
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        assert_eq!(
            header(&name.to_lowercase()).as_deref(),
            value.as_str(),
            "{at}: header {name}"
        );
    }
    for (name, value) in expect
        .get("json")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        assert_eq!(&json()[name], value, "{at}: body member {name}");
    }
    if let Some(name) = expect.get("sameBodyAs").and_then(Value::as_str) {
        let first = named
            .get(name)
            .unwrap_or_else(|| panic!("{at}: no response named {name}"));
        assert_eq!(got.status, first.status, "{at}: same status as {name}");
        assert_eq!(
            text,
            String::from_utf8_lossy(&first.body),
            "{at}: same body as {name}"
        );
    }
}

async fn run_scenario<DB: Server>(index: usize, scenario: &Value) {
    only(
        scenario,
        &["name", "doc", "config", "steps"],
        "scenario field",
    );
    let name = scenario["name"].as_str().unwrap();
    let config = scenario.get("config").cloned().unwrap_or(json!({}));
    only(&config, &CONFIG_KEYS, "config");
    let live = DB::fresh(4000 + index).await;
    Store::new(live.clone()).migrate().await.unwrap();
    let mut conn = live.acquire().await.unwrap();
    run_sql::<DB>(&mut conn, TEST_TABLE.to_owned(), ResultKind::Exec).await;
    drop(conn);
    let same = config
        .get("sameTransaction")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let writes = Arc::new(Writes {
        pool: live.clone(),
        same,
    });
    let pool = switchable(&live, false);
    let policy = RecordPolicy::new(30_000, 86_400_000)
        .unwrap()
        .with_store_errors(
            config
                .get("storeErrors")
                .and_then(Value::as_bool)
                .unwrap_or(true),
        )
        .with_wait(
            config
                .get("maxWaitMillis")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            20,
        )
        .unwrap();
    let mut layer = IdempotencyLayer::new(
        IdempotencyStore::new(Store::new(pool.clone()), policy),
        scope_of,
    );
    let ring = config
        .get("signed")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .then(|| {
            let mut secret = [0; 32];
            ThreadEntropy.fill_bytes(&mut secret);
            Arc::new(KeyRing::new(SecretKey::new(7, &secret).unwrap()))
        });
    if let Some(ring) = &ring {
        layer = layer.with_key_ring(KeyRing::clone(ring));
    }
    if let Some(limit) = config.get("bodyLimit").and_then(Value::as_u64) {
        layer = layer.with_body_limit(limit);
    }
    if let Some(path) = config.get("grant").and_then(Value::as_str) {
        layer = layer.with_grant(GrantRoute::new(path));
    }
    if same {
        layer = layer.same_transaction();
    }
    let mounts: Vec<String> = config
        .get("mounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|mount| mount.as_str().unwrap().to_owned())
        .collect();
    let state = Arc::new(Handlers::default());
    let app = app(&state, &writes, &layer, &mounts);
    let mut minted = Minted {
        ring,
        keys: HashMap::new(),
        ids: HashMap::new(),
    };
    let mut named: HashMap<String, Got> = HashMap::new();
    let mut background = HashMap::new();
    for (at, step) in scenario["steps"].as_array().unwrap().iter().enumerate() {
        let at = format!("{}: {name} step {at}", DB::DIALECT.as_str());
        if let Some(spec) = step.get("request") {
            only(
                step,
                &["name", "request", "expect", "background"],
                "step field",
            );
            let request = request_of(spec, &mut minted);
            let sent = tokio::spawn(send(app.clone(), request));
            let step_name = step.get("name").and_then(Value::as_str).map(String::from);
            if step.get("background").and_then(Value::as_bool) == Some(true) {
                background.insert(
                    step_name.expect("a background request has a name"),
                    (sent, step["expect"].clone(), at),
                );
            } else {
                let got = sent.await.unwrap();
                check(&got, &step["expect"], &named, &at);
                if let Some(step_name) = step_name {
                    named.insert(step_name, got);
                }
            }
        } else if let Some(waited) = step.get("await").and_then(Value::as_str) {
            let (sent, expect, at) = background
                .remove(waited)
                .unwrap_or_else(|| panic!("{at}: no background request {waited}"));
            let got = sent.await.unwrap();
            check(&got, &expect, &named, &at);
            named.insert(waited.into(), got);
        } else if let Some(gate) = step.get("open").and_then(Value::as_str) {
            state.gate(gate).send_replace(true);
        } else if let Some(calls) = step.get("untilHandlerCalls").and_then(Value::as_u64) {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            while state.calls.load(Ordering::SeqCst) < calls {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{at}: the handler was not called {calls} times"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } else if let Some(millis) = step.get("sleepMillis").and_then(Value::as_u64) {
            tokio::time::sleep(Duration::from_millis(millis)).await;
        } else if let Some(storage) = step.get("storage").and_then(Value::as_str) {
            let options = match storage {
                "down" => DB::nowhere(),
                "up" => (*live.connect_options()).clone(),
                other => panic!("{at}: storage must be up or down, not {other}"),
            };
            pool.set_connect_options(options);
        } else if let Some(expected) = step.get("check") {
            only(expected, &["handlerCalls", "writes"], "check");
            if let Some(calls) = expected.get("handlerCalls") {
                assert_eq!(
                    Some(state.calls.load(Ordering::SeqCst)),
                    calls.as_u64(),
                    "{at}: handler calls"
                );
            }
            if let Some(rows) = expected.get("writes") {
                assert_eq!(
                    Some(writes.count().await),
                    rows.as_u64(),
                    "{at}: committed rows"
                );
            }
        } else {
            panic!("{at}: unknown step {step}");
        }
    }
    assert!(
        background.is_empty(),
        "{name}: background requests never awaited"
    );
    state.open_all();
    pool.close().await;
    live.close().await;
}

async fn run_all<DB: Server>() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/http/scenarios.json"
    );
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let scenarios = file["scenarios"].as_array().unwrap();
    assert!(!scenarios.is_empty());
    for (index, scenario) in scenarios.iter().enumerate() {
        run_scenario::<DB>(index, scenario).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_scenarios_on_sqlite() {
    run_all::<sqlx::Sqlite>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_scenarios_on_postgres() {
    if url("MINTID_PG_URL").is_some() {
        run_all::<sqlx::Postgres>().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn http_scenarios_on_mariadb() {
    if url("MINTID_MYSQL_URL").is_some() {
        run_all::<sqlx::MySql>().await;
    }
}
