//! Runs every case of every scenario file of tests/conformance
//! (idempotency.json here; leases.json, segments.json and outbox.json in the
//! modules beside it) through `mintid-store` on SQLite, PostgreSQL and
//! MariaDB (the servers of
//! `scripts/db/with-db.sh`: `MINTID_PG_URL`, `MINTID_MYSQL_URL`; under
//! `CI=true` their absence fails instead of skipping).
//!
//! sqlx's MySQL driver always sets `CLIENT_FOUND_ROWS`, so every MariaDB
//! worker here reports found rows (the scenarios' `found_rows` workers and
//! the others alike). Rust has no `fork()` that keeps a tokio runtime: an
//! `in_forked_child` step runs in this process, which has nothing to inherit.
//! A Rust operation returns a `StoredResponse` by its type, so it cannot
//! return something that is not a response: the one case built on that
//! (`not_a_response`) cannot be written here and is the only one left out,
//! by name.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mintid::record::RecordPolicy;
use mintid::{Fingerprint, IdempotencyKey, ManualClock};
use mintid_store::{
    Claimed, Error, IdempotencyStore, OperationError, RecordLease, RunResult, StatementFault,
    Store, StoreClock, StoreRequest, StoredResponse,
};
use serde_json::{Value, json};
use sqlx::{Executor, Pool};

use databases::{Server, url};

#[path = "support/databases.rs"]
mod databases;
#[path = "conformance/leases.rs"]
mod leases;
#[path = "conformance/outbox.rs"]
mod outbox;
#[path = "conformance/segments.rs"]
mod segments;

const SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/conformance");

/// The scenario files this runner runs: every one in tests/conformance.
const FILES: [&str; 4] = [
    "idempotency.json",
    "leases.json",
    "segments.json",
    "outbox.json",
];

fn cases_of(file: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(format!("{SCENARIOS}/{file}")).expect("the conformance file");
    let file: Value = serde_json::from_str(&text).expect("JSON");
    file["cases"].as_array().expect("cases").clone()
}

fn cases() -> Vec<Value> {
    cases_of("idempotency.json")
}

#[test]
fn every_scenario_file_is_run() {
    let mut found: Vec<String> = std::fs::read_dir(SCENARIOS)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".json"))
        .collect();
    found.sort();
    let mut run = FILES.map(String::from).to_vec();
    run.sort();
    assert_eq!(found, run, "a scenario file this runner does not run");
}

/// Checks that `step` has only `fields`, and sets a manual clock to its `now`.
fn begin_step(step: &Value, fields: &[&str], clock: &StoreClock, at: &str) {
    for field in step.as_object().unwrap().keys() {
        assert!(
            fields.contains(&field.as_str()),
            "{at}: unknown field {field}"
        );
    }
    if let (Some(now), StoreClock::Manual(manual)) = (step.get("now"), clock) {
        manual.set_millis(num(now));
    }
}

/// Checks a step's outcome against its `expect`.
fn end_step<DB: Server>(got: &Value, step: &Value, at: &str) {
    assert_eq!(
        got,
        &step["expect"],
        "{}: {at} ({})",
        DB::DIALECT.as_str(),
        step["do"]
    );
}

fn num(value: &Value) -> u64 {
    value
        .as_str()
        .expect("a decimal string")
        .parse()
        .expect("a decimal")
}

fn response_of(spec: &Value) -> StoredResponse {
    let body = if let Some(text) = spec.get("text") {
        text.as_str().unwrap().as_bytes().to_vec()
    } else if let Some(hex) = spec.get("hex") {
        let hex = hex.as_str().unwrap();
        (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect()
    } else {
        let fill = &spec["fill"];
        let byte = u8::from_str_radix(fill["byte"].as_str().unwrap(), 16).unwrap();
        vec![byte; num(&fill["length"]) as usize]
    };
    StoredResponse {
        content_type: spec["content_type"].as_str().unwrap().into(),
        body,
    }
}

/// A response as the file writes it, for comparing.
fn shown_response(response: &StoredResponse) -> Value {
    match std::str::from_utf8(&response.body) {
        Ok(text) if !response.body.is_empty() || response.content_type.is_empty() => {
            json!({"content_type": response.content_type, "text": text})
        }
        _ => json!({"content_type": response.content_type, "hex": hex(&response.body)}),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The expectation with every response in the form `shown_response` writes.
fn expected(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(name, item)| {
                    let item = if name == "response" && !item.is_null() {
                        shown_response(&response_of(item))
                    } else {
                        expected(item)
                    };
                    (name.clone(), item)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn policy_of(spec: &Value) -> RecordPolicy {
    RecordPolicy::new(num(&spec["lease_millis"]), num(&spec["retention_millis"]))
        .unwrap()
        .with_store_errors(spec["store_errors"].as_bool().unwrap())
        .with_retry_after_millis(num(&spec["retry_after_millis"]))
        .unwrap()
        .with_wait(num(&spec["max_wait_millis"]), num(&spec["poll_millis"]))
        .unwrap()
}

fn shown(result: &RunResult) -> Value {
    match result {
        RunResult::Executed(response) => {
            json!({"decision": "execute", "response": shown_response(response)})
        }
        RunResult::Replayed {
            outcome,
            response,
            error,
        } => match outcome {
            mintid::record::Outcome::Succeeded => json!({
                "decision": "replay", "outcome": "succeeded",
                "response": shown_response(response.as_ref().unwrap()),
            }),
            mintid::record::Outcome::Failed => {
                json!({"decision": "replay", "outcome": "failed", "error": error})
            }
        },
        RunResult::InProgress { retry_after_millis } => json!({
            "decision": "in_progress", "problem": "in_progress",
            "retry_after_millis": retry_after_millis.to_string(),
        }),
        other => json!({"decision": other.decision(), "problem": other.problem().unwrap().name()}),
    }
}

/// What a request came to, in the file's terms.
fn outcome_of(result: Result<Value, Error>, ran: bool) -> Value {
    match result {
        Ok(value) => value,
        Err(Error::Operation(error)) => json!({"decision": "execute", "error": error.message}),
        Err(Error::OperationNotRecorded { operation, store }) => {
            let code = store.code();
            assert!(
                code.starts_with("store.") || code.starts_with("record."),
                "{code}"
            );
            json!({"decision": "execute", "error": operation.message, "not_recorded": true})
        }
        Err(Error::Snowflake(error)) => json!({"error": error.code()}),
        Err(Error::Driver(error)) => match error.problem() {
            Some(problem) => json!({"error": error.code(), "problem": problem.name()}),
            None if ran => json!({"decision": "execute", "error": error.code()}),
            None => json!({"error": error.code()}),
        },
    }
}

/// The case a typed Rust operation cannot express.
const NOT_A_RESPONSE: &str = "an operation that returns something that is not a response";

/// One case's run: its pool, clock, policy and the workers' leases.
struct Run<DB: Server> {
    case: Value,
    pool: Pool<DB>,
    clock: StoreClock,
    manual: Option<Arc<ManualClock>>,
    policy: RecordPolicy,
    leases: HashMap<String, RecordLease<DB>>,
    /// The statement whose reply the current step loses (`lose_reply`).
    lose_reply: Arc<std::sync::Mutex<Option<String>>>,
    /// Whether the completing writes and renewals answer `connection_lost`
    /// (`unavailable_after_operation`, from the operation's end).
    unavailable: Arc<std::sync::atomic::AtomicBool>,
}

impl<DB: Server> Run<DB>
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    for<'r> i64: sqlx::Decode<'r, DB> + sqlx::Type<DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    fn store(&self) -> IdempotencyStore<DB> {
        IdempotencyStore::new(self.faulty(Store::new(self.pool.clone())), self.policy)
    }

    /// `store` on the case's clock, losing the reply of the statement a step's
    /// `lose_reply` names (the first one of that name).
    fn faulty(&self, store: Store<DB>) -> Store<DB> {
        let lose = Arc::clone(&self.lose_reply);
        let unavailable = Arc::clone(&self.unavailable);
        store
            .with_clock(self.clock.clone())
            .with_faults(move |name| {
                let away = ["complete", "fail", "release", "renew"].contains(&name);
                if away && unavailable.load(std::sync::atomic::Ordering::SeqCst) {
                    return Some(StatementFault::Fail(
                        mintid::store::DbErrorClass::ConnectionLost,
                    ));
                }
                let mut lose = lose.lock().unwrap();
                (lose.as_deref() == Some(name)).then(|| {
                    *lose = None;
                    StatementFault::LoseReply
                })
            })
    }

    fn key(&self, step: &Value) -> IdempotencyKey {
        self.try_key(step).expect("a valid key")
    }

    /// The step's key, or the outcome of a key the core refuses.
    fn try_key(&self, step: &Value) -> Result<IdempotencyKey, Value> {
        let spec = step.get("key").unwrap_or(&self.case["key"]);
        IdempotencyKey::new(
            spec["kind"].as_str().unwrap(),
            spec["scope"].as_str().unwrap(),
            spec["id"].as_str().unwrap(),
        )
        .map_err(|error| json!({"error": error.code()}))
    }

    fn request_of(step: &Value) -> StoreRequest {
        let digest: Vec<u8> = {
            let hex = step["fingerprint"].as_str().unwrap();
            (0..64)
                .step_by(2)
                .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
                .collect()
        };
        let request = StoreRequest::new(Fingerprint::from_digest(digest.try_into().unwrap()));
        match step.get("key_created") {
            Some(created) => request.with_key_created_millis(num(created)),
            None => request,
        }
    }

    async fn side_effect(conn: &mut DB::Connection, key: &IdempotencyKey, worker: &str) {
        let [a, b, c, d] = DB::placeholders();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO conformance_side_effect (scope, kind, key_id, worker) VALUES ({a}, {b}, {c}, {d})"
        )))
        .bind(key.scope().to_owned())
        .bind(key.kind().to_owned())
        .bind(key.id().to_owned())
        .bind(worker.to_owned())
        .execute(conn)
        .await
        .expect("the side effect is written");
    }

    /// The operation of a step, on `conn`.
    async fn operate(
        &self,
        conn: &mut DB::Connection,
        step: &Value,
        key: &IdempotencyKey,
    ) -> Result<StoredResponse, OperationError> {
        let operation = &step["operation"];
        Self::side_effect(conn, key, step["worker"].as_str().unwrap()).await;
        if step.get("unavailable_after_operation") == Some(&Value::Bool(true)) {
            self.unavailable
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        match operation["outcome"].as_str().unwrap() {
            "succeed" => {
                if operation.get("kill_connections").is_some() {
                    DB::kill_connections(&self.pool).await;
                }
                if let Some(millis) = operation.get("outage_millis") {
                    DB::outage(&self.pool, num(millis)).await;
                }
                if let Some(sleep) = operation.get("sleep_millis") {
                    tokio::time::sleep(Duration::from_millis(num(sleep))).await;
                }
                Ok(response_of(&operation["response"]))
            }
            "fail" => {
                let message = operation["error"].as_str().unwrap();
                Err(match operation["failure"].as_str().unwrap() {
                    "final" => OperationError::new(message),
                    "retryable" => OperationError::retryable(message),
                    other => panic!("unknown failure {other}"),
                })
            }
            // A Rust operation cannot return something that is not a response.
            other => panic!("unknown operation outcome {other}"),
        }
    }

    async fn request(&self, step: &Value, pool: Option<Pool<DB>>) -> Value {
        let key = match self.try_key(step) {
            Ok(key) => key,
            Err(refused) => return refused,
        };
        let request = Self::request_of(step);
        let pool = pool.unwrap_or_else(|| self.pool.clone());
        let store = IdempotencyStore::new(self.faulty(Store::new(pool.clone())), self.policy);
        let unavailable = step.get("store").and_then(Value::as_str) == Some("unavailable");
        let store = if unavailable {
            IdempotencyStore::new(
                Store::new(DB::unavailable().await).with_clock(self.clock.clone()),
                self.policy,
            )
        } else {
            store
        };
        let ran = std::sync::atomic::AtomicBool::new(false);
        let result = match step["way"].as_str().unwrap() {
            "run_once" => {
                store
                    .run_once(&key, request, async |_lease| {
                        ran.store(true, std::sync::atomic::Ordering::SeqCst);
                        let mut conn = pool.acquire().await.expect("a connection");
                        self.operate(&mut conn, step, &key).await
                    })
                    .await
            }
            "same_transaction" => {
                let mut conn = match store.store().pool().acquire().await {
                    Ok(conn) => conn,
                    Err(error) => {
                        let failed = mintid_store::classify(&error);
                        return outcome_of(
                            Err(Error::Driver(mintid::store::database_failure(
                                &mintid::store::DbError {
                                    class: mintid::store::DbErrorClass::ConnectionLost,
                                    message: failed.message,
                                },
                            ))),
                            false,
                        );
                    }
                };
                conn.execute(DB::begin(true)).await.expect("BEGIN");
                let result = store
                    .in_transaction(&mut conn, &key, request, async |conn| {
                        ran.store(true, std::sync::atomic::Ordering::SeqCst);
                        self.operate(conn, step, &key).await
                    })
                    .await;
                let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
                conn.execute(end).await.expect("COMMIT or ROLLBACK");
                result
            }
            other => panic!("unknown way {other}"),
        };
        outcome_of(
            result.map(|r| shown(&r)),
            ran.load(std::sync::atomic::Ordering::SeqCst),
        )
    }

    async fn count(&self, sql: String, key: Option<&IdempotencyKey>) -> String {
        let mut query = sqlx::query_as::<DB, (i64,)>(sqlx::AssertSqlSafe(sql));
        if let Some(key) = key {
            query = query
                .bind(key.scope().to_owned())
                .bind(key.kind().to_owned())
                .bind(key.id().to_owned());
        }
        query.fetch_one(&self.pool).await.unwrap().0.to_string()
    }

    async fn step(&mut self, step: &Value) -> Value {
        let lose = step
            .get("lose_reply")
            .map(|name| name.as_str().unwrap().to_owned());
        *self.lose_reply.lock().unwrap() = lose.clone();
        let got = self.step_itself(step).await;
        self.unavailable
            .store(false, std::sync::atomic::Ordering::SeqCst);
        if let Some(name) = lose {
            assert!(
                self.lose_reply.lock().unwrap().is_none(),
                "no {name} ran: its reply was never lost"
            );
        }
        got
    }

    async fn step_itself(&mut self, step: &Value) -> Value {
        if let (Some(now), Some(clock)) = (step.get("now"), &self.manual) {
            clock.set_millis(num(now));
        }
        match step["do"].as_str().unwrap() {
            "migrate" => {
                Store::new(self.pool.clone()).migrate().await.unwrap();
                json!("ok")
            }
            "migrations" => {
                let sql = format!(
                    "SELECT CAST(version AS {}) FROM mintid_schema_migrations ORDER BY version",
                    DB::bigint()
                );
                let rows: Vec<(i64,)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .fetch_all(&self.pool)
                    .await
                    .unwrap();
                json!(rows.iter().map(|(v,)| v.to_string()).collect::<Vec<_>>())
            }
            "run" if step["operation"].get("outage_millis").is_some() => {
                // The worker's store reaches the database through a way the
                // outage cuts (the fault proxy; SQLite: the same file, locked).
                let through = DB::cuttable(&self.pool).await;
                self.request(step, Some(through)).await
            }
            "run" => self.request(step, None).await,
            "claim" => {
                let key = self.key(step);
                match self.store().claim_lease(&key, Self::request_of(step)).await {
                    Ok(Claimed::Held(lease)) => {
                        let shown = json!({
                            "decision": "execute",
                            "token": lease.token().to_string(),
                            "lease_deadline": lease.lease_deadline_millis().to_string(),
                        });
                        self.leases.insert(step["worker"].as_str().unwrap().into(), lease);
                        shown
                    }
                    Ok(Claimed::NotRun(result)) => shown(&result),
                    Err(error) => outcome_of(Err(error), false),
                }
            }
            "renew" => {
                let lease = &self.leases[step["worker"].as_str().unwrap()];
                outcome_of(lease.renew().await.map(|deadline| json!({"lease_deadline": deadline.to_string()})), false)
            }
            "complete" => {
                let lease = &self.leases[step["worker"].as_str().unwrap()];
                let response = response_of(&step["response"]);
                outcome_of(lease.complete(response).await.map(|()| json!("ok")), false)
            }
            "fail" => {
                let lease = &self.leases[step["worker"].as_str().unwrap()];
                let message = step["error"].as_str().unwrap();
                let error = match step["failure"].as_str().unwrap() {
                    "final" => OperationError::new(message),
                    _ => OperationError::retryable(message),
                };
                outcome_of(lease.fail(error).await.map(|()| json!("ok")), false)
            }
            "check" => {
                let stored = self.store().load(&self.key(step)).await.unwrap();
                match stored {
                    None => Value::Null,
                    Some(stored) => {
                        let record = stored.record;
                        json!({
                            "status": record.status.as_str(),
                            "fingerprint": hex(record.fingerprint.as_bytes()),
                            "token": record.token.to_string(),
                            "lease_deadline": record.lease_deadline_millis.to_string(),
                            "created": record.created_millis.to_string(),
                            "expires": record.expires_millis.to_string(),
                            "response": stored.response.as_ref().map(shown_response),
                            "error": stored.error,
                        })
                    }
                }
            }
            "side_effects" => {
                let [a, b, c, _] = DB::placeholders();
                let key = self.key(step);
                self.count(
                    format!("SELECT COUNT(*) FROM conformance_side_effect WHERE scope = {a} AND kind = {b} AND key_id = {c}"),
                    Some(&key),
                )
                .await
            }
            .into(),
            "records" => self.count("SELECT COUNT(*) FROM idempotency_record".into(), None).await.into(),
            "cleanup" => {
                let deleted = self.store().cleanup(num(&step["batch_size"])).await.unwrap();
                json!({"deleted": deleted.to_string()})
            }
            "concurrent" => self.concurrent(step).await,
            "overlap" => {
                let first = self.request(&step["first"], None);
                let second = async {
                    tokio::time::sleep(Duration::from_millis(num(&step["second_after_millis"]))).await;
                    self.request(&step["second"], None).await
                };
                let (mut first, mut second) = tokio::join!(first, second);
                for (name, got) in [("first", &mut first), ("second", &mut second)] {
                    if step["expect"][name].get("retry_after_millis").is_none() {
                        got.as_object_mut().unwrap().remove("retry_after_millis");
                    }
                }
                json!({"first": first, "second": second})
            }
            other => panic!("unknown step {other}"),
        }
    }

    async fn concurrent(&self, step: &Value) -> Value {
        let workers = num(&step["workers"]) as usize;
        let keys = num(&step["keys"]) as usize;
        let base = self.case["key"].clone();
        let barrier = Arc::new(tokio::sync::Barrier::new(workers));
        let mut tasks = Vec::new();
        for worker in 0..workers {
            let barrier = Arc::clone(&barrier);
            let base = base.clone();
            let step = step.clone();
            tasks.push(async move {
                barrier.wait().await;
                let mut got = Vec::new();
                for k in 0..keys {
                    let mut one = step.clone();
                    let mut key = base.clone();
                    key["id"] = json!(format!("{}-{k}", base["id"].as_str().unwrap()));
                    one["key"] = key;
                    one["worker"] = json!(format!("w{worker}"));
                    got.push(self.request(&one, None).await);
                }
                got
            });
        }
        let results: Vec<Value> = futures_join(tasks).await.into_iter().flatten().collect();
        let executed = results
            .iter()
            .filter(|r| r["decision"] == "execute" && r.get("response").is_some())
            .count();
        let mut others: Vec<String> = results
            .iter()
            .filter(|r| !(r["decision"] == "execute" && r.get("response").is_some()))
            .map(|r| {
                r["decision"]
                    .as_str()
                    .map_or_else(|| r.to_string(), String::from)
            })
            .collect();
        others.sort();
        others.dedup();
        let allowed: Vec<String> = step["expect"]["others"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().into())
            .collect();
        assert!(
            others.iter().all(|o| allowed.contains(o)),
            "decisions {others:?}, allowed {allowed:?}"
        );
        let per_key: Vec<(i64,)> = sqlx::query_as(
            "SELECT COUNT(*) FROM conformance_side_effect GROUP BY scope, kind, key_id",
        )
        .fetch_all(&self.pool)
        .await
        .unwrap();
        let mut counts: Vec<i64> = per_key.iter().map(|(n,)| *n).collect();
        counts.sort_unstable();
        counts.dedup();
        json!({
            "executed": executed.to_string(),
            "side_effects_per_key": counts.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
            "others": allowed,
        })
    }
}

/// Runs the futures together on this task (a worker per future).
async fn futures_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut pending: Vec<Option<_>> = pinned.into_iter().map(Some).collect();
    let mut outputs: Vec<Option<F::Output>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all = true;
        for (at, slot) in pending.iter_mut().enumerate() {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => {
                        outputs[at] = Some(output);
                        *slot = None;
                    }
                    std::task::Poll::Pending => all = false,
                }
            }
        }
        if all {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs.into_iter().map(Option::unwrap).collect()
}

async fn run_all<DB: Server>()
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    for<'r> i64: sqlx::Decode<'r, DB> + sqlx::Type<DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    for (index, case) in cases().into_iter().enumerate() {
        let name = case["name"].as_str().unwrap().to_owned();
        if name.starts_with(NOT_A_RESPONSE) {
            continue;
        }
        let pool = DB::fresh(index).await;
        let (clock, manual) = match case["clock"].as_str().unwrap() {
            "manual" => {
                let clock = Arc::new(ManualClock::new(0).advancing_on_pause());
                (StoreClock::Manual(Arc::clone(&clock)), Some(clock))
            }
            _ => (StoreClock::System, None),
        };
        let policy = policy_of(&case["policy"]);
        let mut run = Run {
            case: case.clone(),
            pool: pool.clone(),
            clock,
            manual,
            policy,
            leases: HashMap::new(),
            lose_reply: Arc::default(),
            unavailable: Arc::default(),
        };
        for (at, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let got = run.step(step).await;
            if at == 0 {
                pool.execute(sqlx::AssertSqlSafe(format!(
                    "CREATE TABLE conformance_side_effect (scope {c} NOT NULL, kind {c} NOT NULL, key_id {c} NOT NULL, worker {c} NOT NULL)",
                    c = DB::business_column()
                )))
                .await
                .unwrap();
            }
            assert_eq!(
                got,
                expected(&step["expect"]),
                "{}: {name}: step {at} ({})",
                DB::DIALECT.as_str(),
                step["do"]
            );
        }
        pool.close().await;
    }
}

/// Every scenario file on one database, one file after the other (the
/// cases share its database).
async fn run_every_file<DB: Server>()
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    for<'r> i64: sqlx::Decode<'r, DB> + sqlx::Type<DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
    (i64, i64): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    run_all::<DB>().await;
    leases::run_all::<DB>().await;
    segments::run_all::<DB>().await;
    outbox::run_all::<DB>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_on_sqlite() {
    run_every_file::<sqlx::Sqlite>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_on_postgres() {
    if url("MINTID_PG_URL").is_some() {
        run_every_file::<sqlx::Postgres>().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_on_mariadb() {
    if url("MINTID_MYSQL_URL").is_some() {
        run_every_file::<sqlx::MySql>().await;
    }
}
