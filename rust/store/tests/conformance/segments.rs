//! The runner of tests/conformance/segments.json: `SegmentIds` on one
//! database. Each process has a pool of its own that keeps no connection
//! between uses, so `disconnect` and `reconnect` repoint it (the database
//! is down for that process, its IDs in memory stay).

use std::collections::HashMap;
use std::sync::Arc;

use mintid::{ManualClock, SegmentPolicy};
use mintid_store::{Error, SegmentIds, Store, StoreClock};
use serde_json::{Value, json};
use sqlx::{Executor, Pool};

use super::databases::{Server, switchable};
use super::{begin_step, cases_of, end_step, num};

fn policy_of(spec: &Value) -> SegmentPolicy {
    SegmentPolicy::new(
        num(&spec["initial_step"]),
        num(&spec["min_step"]),
        num(&spec["max_step"]),
    )
    .unwrap()
    .with_fetch_at_percent(spec["fetch_at_percent"].as_u64().unwrap() as u8)
    .unwrap()
    .with_adaptation(
        num(&spec["grow_below_millis"]),
        num(&spec["shrink_above_millis"]),
    )
    .unwrap()
}

const FIELDS: [&str; 8] = [
    "do",
    "expect",
    "process",
    "now",
    "count",
    "tag",
    "processes",
    "ids_per_process",
];

async fn row<DB: Server>(pool: &Pool<DB>, tag: &str) -> Value
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    (i64, i64): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    let [p, ..] = DB::placeholders();
    let found: Option<(i64, i64)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT max_id, step FROM id_segment WHERE tag = {p}"
    )))
    .bind(tag.to_owned())
    .fetch_optional(pool)
    .await
    .unwrap();
    found.map_or(
        Value::Null,
        |(max_id, step)| json!({"max_id": max_id.to_string(), "step": step.to_string()}),
    )
}

async fn draw<DB: Server>(ids: &SegmentIds<DB>, count: u64, settle: bool) -> Value {
    let mut drawn = Vec::new();
    for _ in 0..count {
        match ids.next_id().await {
            Ok(id) => drawn.push(id.to_string()),
            Err(error) => return json!({"error": code(&error), "drawn": drawn}),
        }
        if settle {
            // A manual case: the background fetch completes before the next ID.
            ids.settled().await;
        }
    }
    json!(drawn)
}

fn code(error: &Error) -> &'static str {
    error.code().expect("a coded error")
}

pub(super) async fn run_all<DB: Server>()
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    (i64, i64): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    for (index, case) in cases_of("segments.json").into_iter().enumerate() {
        let name = case["name"].as_str().unwrap().to_owned();
        assert_eq!(case["op"], "scenario", "{name}");
        let tag = case["tag"].as_str().unwrap().to_owned();
        let pool = DB::fresh(2000 + index).await;
        let policy = policy_of(&case["policy"]);
        let manual = case["clock"] == "manual";
        let clock = if manual {
            StoreClock::Manual(Arc::new(ManualClock::new(0).advancing_on_pause()))
        } else {
            assert_eq!(case["clock"], "system", "{name}");
            StoreClock::System
        };
        // Each process's pool, and its IDs per tag.
        let mut pools: HashMap<String, Pool<DB>> = HashMap::new();
        let mut processes: HashMap<(String, String), SegmentIds<DB>> = HashMap::new();
        for (at, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            begin_step(step, &FIELDS, &clock, &format!("{name}: step {at}"));
            let process = || step["process"].as_str().unwrap().to_owned();
            let got = match step["do"].as_str().unwrap() {
                "migrate" => {
                    Store::new(pool.clone()).migrate().await.unwrap();
                    json!("ok")
                }
                "next" => {
                    let tag = step.get("tag").and_then(Value::as_str).unwrap_or(&tag);
                    let process_pool = pools
                        .entry(process())
                        .or_insert_with(|| switchable(&pool, false))
                        .clone();
                    let ids = processes
                        .entry((process(), tag.to_owned()))
                        .or_insert_with(|| {
                            let store = Store::new(process_pool).with_clock(clock.clone());
                            SegmentIds::new(store, tag, policy).unwrap()
                        });
                    draw(ids, num(&step["count"]), manual).await
                }
                "disconnect" | "reconnect" => {
                    let down = step["do"] == "disconnect";
                    let options = if down {
                        DB::nowhere()
                    } else {
                        (*pool.connect_options()).clone()
                    };
                    pools
                        .entry(process())
                        .or_insert_with(|| switchable(&pool, down))
                        .set_connect_options(options);
                    json!("ok")
                }
                "restart" => {
                    processes.retain(|(owner, _), _| *owner != process());
                    json!("ok")
                }
                "row" => row(&pool, &tag).await,
                "concurrent" => {
                    let per = num(&step["ids_per_process"]);
                    let draws = (0..num(&step["processes"])).map(|_| {
                        let ids = SegmentIds::new(Store::new(pool.clone()), &tag, policy).unwrap();
                        async move {
                            let mut mine = Vec::new();
                            for _ in 0..per {
                                mine.push(ids.next_id().await.unwrap());
                            }
                            ids.settled().await;
                            mine
                        }
                    });
                    let drawn = super::futures_join(draws.collect()).await;
                    let mut all: Vec<u64> = drawn.iter().flatten().copied().collect();
                    let total = all.len() as i64;
                    all.sort_unstable();
                    all.dedup();
                    let duplicates = total - all.len() as i64;
                    let decreasing: usize = drawn
                        .iter()
                        .map(|mine| mine.windows(2).filter(|pair| pair[1] <= pair[0]).count())
                        .sum();
                    let max_id: i64 = row(&pool, &tag).await["max_id"]
                        .as_str()
                        .unwrap()
                        .parse()
                        .unwrap();
                    let unused = max_id - total;
                    let allowed: i64 = num(&step["expect"]["max_unused"]) as i64;
                    assert!(unused <= allowed, "{name}: {unused} IDs unused > {allowed}");
                    json!({
                        "duplicates": duplicates.to_string(),
                        "decreasing": decreasing.to_string(),
                        "max_unused": step["expect"]["max_unused"],
                    })
                }
                other => panic!("{name}: step {at}: unknown step {other}"),
            };
            end_step::<DB>(&got, step, &format!("{name}: step {at}"));
        }
        processes.clear();
        for (_, process_pool) in pools {
            process_pool.close().await;
        }
        pool.close().await;
    }
}
