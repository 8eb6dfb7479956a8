//! The runner of tests/conformance/leases.json: `WorkerLeases` and
//! `LeasedSnowflake` on one database.

use std::collections::HashMap;
use std::sync::Arc;

use mintid::{LeaseGuard, LeasePolicy, ManualClock, Snowflake, SnowflakeLayout};
use mintid_store::{Error, LeasedSnowflake, Store, StoreClock, WorkerLeases};
use serde_json::{Value, json};

use super::databases::Server;
use super::{begin_step, cases_of, end_step, num};

fn layout_of(spec: &Value) -> SnowflakeLayout {
    match spec.as_str() {
        Some(name) => SnowflakeLayout::preset(name).unwrap(),
        None => SnowflakeLayout::new(
            spec["time_bits"].as_u64().unwrap() as u8,
            spec["worker_bits"].as_u64().unwrap() as u8,
            spec["sequence_bits"].as_u64().unwrap() as u8,
            num(&spec["epoch_millis"]),
            num(&spec["tick_millis"]),
        )
        .unwrap(),
    }
}

fn policy_of(spec: &Value) -> LeasePolicy {
    LeasePolicy::new(layout_of(&spec["layout"]))
        .unwrap()
        .with_lease(
            num(&spec["lease_millis"]),
            num(&spec["renew_interval_millis"]),
            num(&spec["safety_margin_millis"]),
        )
        .unwrap()
        .with_renew_retry_millis(num(&spec["renew_retry_millis"]))
        .unwrap()
        .with_max_skew_millis(num(&spec["max_skew_millis"]))
        .with_max_start_wait_millis(num(&spec["max_start_wait_millis"]))
}

/// `"ok"`, the value, or `{"error": code}`.
fn outcome(result: Result<Value, Error>) -> Value {
    result.unwrap_or_else(|error| json!({"error": error.code().expect("a coded error")}))
}

fn lease_error(error: mintid::LeaseError) -> Error {
    Error::Driver(error.into())
}

const FIELDS: [&str; 10] = [
    "do",
    "expect",
    "host",
    "owner",
    "now",
    "count",
    "high_water",
    "worker_id",
    "hosts",
    "timeout",
];

/// A host: its latest lease and a generator on it, on a clock of its own.
struct Host {
    guard: Arc<LeaseGuard>,
    snowflake: Snowflake<StoreClock>,
    clock: Arc<ManualClock>,
}

pub(super) async fn run_all<DB: Server>() {
    for (index, case) in cases_of("leases.json").into_iter().enumerate() {
        let name = case["name"].as_str().unwrap().to_owned();
        assert_eq!(case["op"], "scenario", "{name}");
        let pool = DB::fresh(1000 + index).await;
        let layout = layout_of(&case["policy"]["layout"]);
        let policy = policy_of(&case["policy"]);
        let manual = Arc::new(ManualClock::new(0).advancing_on_pause());
        let clock = match case["clock"].as_str().unwrap() {
            "manual" => StoreClock::Manual(Arc::clone(&manual)),
            "system" => StoreClock::System,
            other => panic!("unknown clock {other}"),
        };
        let now = || clock.now_millis();
        let leases = WorkerLeases::new(Store::new(pool.clone()).with_clock(clock.clone()), policy);
        let mut hosts: HashMap<String, Host> = HashMap::new();
        let mut leased: HashMap<String, LeasedSnowflake<DB>> = HashMap::new();
        let mut issued: Vec<u64> = Vec::new();
        for (at, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            begin_step(step, &FIELDS, &clock, &format!("{name}: step {at}"));
            let host = || step["host"].as_str().unwrap().to_owned();
            let timeout = step.get("timeout").map(num);
            let got = match step["do"].as_str().unwrap() {
                "migrate" => {
                    Store::new(pool.clone()).migrate().await.unwrap();
                    json!("ok")
                }
                "acquire" => outcome(
                    match leases
                        .acquire(step["owner"].as_str().unwrap(), timeout)
                        .await
                    {
                        Ok(guard) => {
                            let shown = json!({
                                "worker_id": guard.worker_id().to_string(),
                                "fencing_token": guard.fencing_token().to_string(),
                                "start_after": guard.start_after_millis().to_string(),
                                "ready_at": guard.ready_at_millis().to_string(),
                            });
                            let host_clock = Arc::new(ManualClock::new(now()));
                            let snowflake = Snowflake::builder(
                                layout,
                                guard.worker_id(),
                                StoreClock::Manual(Arc::clone(&host_clock)),
                            )
                            .starting_after_unix_millis(guard.start_after_millis())
                            .build()
                            .unwrap();
                            hosts.insert(
                                host(),
                                Host {
                                    guard: Arc::new(guard),
                                    snowflake,
                                    clock: host_clock,
                                },
                            );
                            Ok(shown)
                        }
                        Err(error) => Err(error),
                    },
                ),
                "check" => outcome(
                    hosts[&host()]
                        .guard
                        .check(now())
                        .map(|()| json!("ok"))
                        .map_err(lease_error),
                ),
                "generate" => {
                    let one = &hosts[&host()];
                    one.clock.set_millis(now());
                    let mut made = || -> Result<Value, Error> {
                        for _ in 0..num(&step["count"]) {
                            one.guard.check(now()).map_err(lease_error)?;
                            let id = one.snowflake.next_id().map_err(Error::Snowflake)?;
                            one.guard.admit(id).map_err(lease_error)?;
                            issued.push(id.get());
                        }
                        Ok(json!({"admitted": step["count"]}))
                    };
                    outcome(made())
                }
                "renew" => outcome(
                    leases
                        .renew(&hosts[&host()].guard, num(&step["high_water"]))
                        .await
                        .map(|()| json!("ok")),
                ),
                "renew_unreachable" => {
                    let guard = &hosts[&host()].guard;
                    guard.renewal_failed(now());
                    json!({"next_renewal_at": guard.next_renewal_at_millis().to_string()})
                }
                "release" => {
                    let released = leases
                        .release(&hosts[&host()].guard, num(&step["high_water"]))
                        .await
                        .unwrap();
                    json!({ "released": released })
                }
                "row" => match leases.load(num(&step["worker_id"])).await.unwrap() {
                    None => Value::Null,
                    Some(row) => json!({
                        "owner": row.owner,
                        "fencing_token": row.fencing_token.to_string(),
                        "lease_deadline": row.lease_deadline_millis.to_string(),
                        "high_water": row.high_water_millis.to_string(),
                    }),
                },
                "guard" => {
                    let guard = &hosts[&host()].guard;
                    json!({
                        "lease_deadline": guard.lease_deadline_millis().to_string(),
                        "stop_at": guard.stop_at_millis().to_string(),
                        "next_renewal_at": guard.next_renewal_at_millis().to_string(),
                    })
                }
                "leased_acquire" => {
                    let system = WorkerLeases::new(Store::new(pool.clone()), policy);
                    let generator =
                        LeasedSnowflake::acquire(system, step["owner"].as_str().unwrap(), timeout)
                            .await
                            .unwrap();
                    let shown = json!({"worker_id": generator.worker_id().to_string()});
                    leased.insert(host(), generator);
                    shown
                }
                "leased_generate" => {
                    let generator = &leased[&host()];
                    for _ in 0..num(&step["count"]) {
                        issued.push(generator.next_id().unwrap().get());
                    }
                    json!({"admitted": step["count"]})
                }
                "leased_release" => {
                    let generator = leased.remove(&host()).expect("a leased generator");
                    let released = generator.close().await.unwrap();
                    let row = leases.load(generator.worker_id()).await.unwrap().unwrap();
                    let last = *issued.last().unwrap();
                    let last_millis = layout
                        .decode(mintid::SnowflakeId::new(last).unwrap())
                        .unwrap()
                        .unix_millis;
                    json!({
                        "released": released,
                        "high_water_is_generators": row.high_water_millis == generator.high_water_millis(),
                        "high_water_covers_last_id": row.high_water_millis >= last_millis,
                    })
                }
                "ids_increasing" => {
                    assert!(
                        issued.windows(2).all(|pair| pair[0] < pair[1]),
                        "{name}: an ID was not larger"
                    );
                    json!("ok")
                }
                "ids_unique" => {
                    let mut sorted = issued.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(sorted.len(), issued.len(), "{name}: an ID was issued twice");
                    json!("ok")
                }
                "concurrent_acquire" => {
                    let count = num(&step["hosts"]) as usize;
                    let tries = (0..count).map(|n| {
                        let leases = WorkerLeases::new(Store::new(pool.clone()), policy);
                        async move {
                            match leases.acquire(&format!("host-{n}"), None).await {
                                Ok(guard) => Some(guard.worker_id()),
                                Err(error) if error.code() == Some("lease.no_worker_free") => None,
                                Err(error) => panic!("{error}"),
                            }
                        }
                    });
                    let results = super::futures_join(tries.collect()).await;
                    let mut ids: Vec<u64> = results.iter().flatten().copied().collect();
                    let acquired = ids.len();
                    ids.sort_unstable();
                    ids.dedup();
                    assert_eq!(
                        ids.len(),
                        acquired,
                        "{name}: a worker id was acquired twice"
                    );
                    json!({
                        "acquired": acquired.to_string(),
                        "no_worker_free": (count - acquired).to_string(),
                    })
                }
                other => panic!("{name}: step {at}: unknown step {other}"),
            };
            end_step::<DB>(&got, step, &format!("{name}: step {at}"));
        }
        for (_, generator) in leased.drain() {
            let _ = generator.close().await;
        }
        pool.close().await;
    }
}
