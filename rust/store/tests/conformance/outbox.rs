//! The runner of tests/conformance/outbox.json: `Outbox` on one database,
//! each relay run with a scripted sender. sqlx's MySQL driver always sets
//! `CLIENT_FOUND_ROWS`, so the `found_rows` store is the default one.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mintid::store::{ClaimedMessage, DbErrorClass, RelayReport};
use mintid::{Clock, ManualClock, RelayPolicy};
use mintid_store::{Enqueued, Outbox, OutboxMessage, StatementFault, Store, StoreClock};
use serde_json::{Value, json};
use sqlx::{Executor, Pool};

use super::databases::Server;
use super::{begin_step, cases_of, num};

fn policy_of(spec: &Value) -> RelayPolicy {
    RelayPolicy::new(num(&spec["batch_size"]), num(&spec["claim_millis"]))
        .unwrap()
        .with_backoff(
            num(&spec["base_backoff_millis"]),
            num(&spec["max_backoff_millis"]),
            spec["jitter_percent"].as_u64().unwrap() as u8,
        )
        .unwrap()
        .with_max_attempts(num(&spec["max_attempts"]))
        .unwrap()
}

const FIELDS: [&str; 19] = [
    "do",
    "expect",
    "way",
    "message_id",
    "kind",
    "business_key",
    "payload",
    "now",
    "store",
    "relay",
    "draw",
    "sends",
    "sent_before",
    "batch_size",
    "messages",
    "relays",
    "send_millis",
    "second_after_millis",
    "lose_reply",
];
const SEND_FIELDS: [&str; 5] = ["message_id", "outcome", "millis", "during", "mark_fails"];

fn shown(report: RelayReport) -> Value {
    json!({
        "sent": report.sent.to_string(),
        "retried": report.retried.to_string(),
        "dead": report.dead.to_string(),
        "given_up": report.given_up.to_string(),
        "claim_lost": report.claim_lost.to_string(),
        "released": report.released.to_string(),
        "mark_failed": report.mark_failed.to_string(),
    })
}

fn error_text(spec: &Value) -> String {
    match spec.as_str() {
        Some(text) => text.to_owned(),
        None => {
            let fill = &spec["fill"];
            fill["text"]
                .as_str()
                .unwrap()
                .repeat(num(&fill["length"]) as usize)
        }
    }
}

fn sent_counts(sends: &Mutex<HashMap<u64, u64>>) -> Value {
    let sends = sends.lock().unwrap();
    let twice = sends.values().filter(|&&n| n > 1).count();
    json!({"sent": sends.len().to_string(), "sent_twice": twice.to_string()})
}

/// One case's run: its pool, clock and outbox.
struct Run<DB: Server> {
    name: String,
    pool: Pool<DB>,
    clock: StoreClock,
    manual: Option<Arc<ManualClock>>,
    policy: RelayPolicy,
}

impl<DB: Server> Run<DB>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    fn outbox(&self, clock: StoreClock) -> Outbox<DB> {
        Outbox::new(Store::new(self.pool.clone()).with_clock(clock), self.policy)
    }

    /// Enqueues in a business transaction that commits or rolls back.
    async fn enqueue(&self, message: &OutboxMessage, way: &str, clock: StoreClock) -> Value {
        let mut conn = self.pool.acquire().await.unwrap();
        conn.execute(DB::begin(true)).await.unwrap();
        let result = self.outbox(clock).enqueue(&mut conn, message).await;
        let end = if result.is_ok() && way == "commit" {
            "COMMIT"
        } else {
            assert!(way == "commit" || way == "rollback", "unknown way {way}");
            "ROLLBACK"
        };
        conn.execute(end).await.unwrap();
        match result {
            Ok(Enqueued::New) => json!("new"),
            Ok(Enqueued::AlreadyEnqueued) => json!("already_enqueued"),
            Err(error) => json!({"error": error.code().unwrap()}),
        }
    }

    async fn enqueue_many(&self, count: u64) {
        for n in 1..=count {
            let message = OutboxMessage {
                message_id: n,
                kind: "order.created".into(),
                business_key: format!("order-{n}"),
                payload: b"{}".to_vec(),
            };
            assert_eq!(
                self.enqueue(&message, "commit", StoreClock::System).await,
                "new"
            );
        }
    }

    async fn relay(&self, step: &Value) -> Value {
        let script = Mutex::new(step["sends"].as_array().unwrap().clone());
        let draw = num(&step["draw"]);
        // The relay's store: the first mark a step's `lose_reply` names loses its
        // reply; the mark after a send whose entry says `mark_fails` fails.
        let lose = Arc::new(Mutex::new(
            step.get("lose_reply")
                .map(|n| n.as_str().unwrap().to_owned()),
        ));
        let fail_mark = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let store = {
            let (lose, fail_mark) = (Arc::clone(&lose), Arc::clone(&fail_mark));
            Store::new(self.pool.clone())
                .with_clock(self.clock.clone())
                .with_faults(move |name| {
                    if name.starts_with("outbox_mark") && fail_mark.swap(false, Ordering::SeqCst) {
                        return Some(StatementFault::Fail(DbErrorClass::Other));
                    }
                    let mut lose = lose.lock().unwrap();
                    (lose.as_deref() == Some(name)).then(|| {
                        *lose = None;
                        StatementFault::LoseReply
                    })
                })
        };
        let outbox = Outbox::new(store, self.policy).with_draw(move || draw);
        let manual = self
            .manual
            .as_ref()
            .expect("a scripted relay runs on the manual clock");
        let send = async |message: &ClaimedMessage| -> Result<(), String> {
            let entry = {
                let mut script = script.lock().unwrap();
                assert!(
                    !script.is_empty(),
                    "an unscripted send of message {}",
                    message.message_id
                );
                script.remove(0)
            };
            for field in entry.as_object().unwrap().keys() {
                assert!(
                    SEND_FIELDS.contains(&field.as_str()),
                    "unknown send field {field}"
                );
            }
            assert_eq!(
                message.message_id.to_string(),
                entry["message_id"],
                "the send order"
            );
            let start = manual.now_millis();
            for inner in entry
                .get("during")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.step(inner).await;
            }
            manual.set_millis(start + num(&entry["millis"]));
            if let Some(class) = entry.get("mark_fails") {
                assert_eq!(class, "other", "mark_fails: a class the runner knows");
                fail_mark.store(true, Ordering::SeqCst);
            }
            match &entry["outcome"] {
                Value::String(delivered) if delivered == "delivered" => Ok(()),
                outcome => Err(error_text(&outcome["failed"])),
            }
        };
        let report = outbox.relay(send).await.unwrap();
        assert!(
            lose.lock().unwrap().is_none(),
            "the lost reply never happened"
        );
        assert!(
            script.lock().unwrap().is_empty(),
            "scripted sends never made"
        );
        shown(report)
    }

    /// Runs one step and checks its outcome.
    fn step<'a>(&'a self, step: &'a Value) -> Pin<Box<dyn Future<Output = ()> + 'a>> {
        Box::pin(async move {
            begin_step(step, &FIELDS, &self.clock, &self.name);
            let got = match step["do"].as_str().unwrap() {
                "migrate" => {
                    Store::new(self.pool.clone()).migrate().await.unwrap();
                    json!("ok")
                }
                "enqueue" => {
                    let store = step.get("store").and_then(Value::as_str);
                    assert!(
                        store.is_none() || store == Some("found_rows"),
                        "unknown store {store:?}"
                    );
                    let message = OutboxMessage {
                        message_id: num(&step["message_id"]),
                        kind: step["kind"].as_str().unwrap().into(),
                        business_key: step["business_key"].as_str().unwrap().into(),
                        payload: step["payload"].as_str().unwrap().as_bytes().to_vec(),
                    };
                    self.enqueue(&message, step["way"].as_str().unwrap(), self.clock.clone())
                        .await
                }
                "relay" => self.relay(step).await,
                "message" => {
                    let outbox = self.outbox(self.clock.clone());
                    let kind = step["kind"].as_str().unwrap();
                    match outbox
                        .load(kind, step["business_key"].as_str().unwrap())
                        .await
                        .unwrap()
                    {
                        None => Value::Null,
                        Some(stored) => json!({
                            "status": stored.status.as_str(),
                            "attempts": stored.attempts.to_string(),
                            "next_attempt": stored.next_attempt_millis.to_string(),
                            "last_error": stored.last_error,
                        }),
                    }
                }
                "cleanup" => {
                    let outbox = self.outbox(self.clock.clone());
                    let deleted = outbox
                        .cleanup(num(&step["sent_before"]), num(&step["batch_size"]))
                        .await
                        .unwrap();
                    json!({"deleted": deleted.to_string()})
                }
                "concurrent_relays" => {
                    self.enqueue_many(num(&step["messages"])).await;
                    let sends = Mutex::new(HashMap::<u64, u64>::new());
                    let relays = (0..num(&step["relays"])).map(|_| {
                        let outbox = self.outbox(StoreClock::System);
                        let sends = &sends;
                        async move {
                            outbox
                                .relay(async |message: &ClaimedMessage| -> Result<(), String> {
                                    *sends
                                        .lock()
                                        .unwrap()
                                        .entry(message.message_id)
                                        .or_default() += 1;
                                    tokio::task::yield_now().await;
                                    Ok(())
                                })
                                .await
                                .unwrap()
                        }
                    });
                    super::futures_join(relays.collect()).await;
                    sent_counts(&sends)
                }
                "slow_relays" => {
                    self.enqueue_many(num(&step["messages"])).await;
                    let sends = Mutex::new(HashMap::<u64, u64>::new());
                    let pause = Duration::from_millis(num(&step["send_millis"]));
                    let relay = |after: Duration| {
                        let outbox = self.outbox(StoreClock::System);
                        let sends = &sends;
                        async move {
                            tokio::time::sleep(after).await;
                            outbox
                                .relay(async |message: &ClaimedMessage| -> Result<(), String> {
                                    tokio::time::sleep(pause).await;
                                    *sends
                                        .lock()
                                        .unwrap()
                                        .entry(message.message_id)
                                        .or_default() += 1;
                                    Ok(())
                                })
                                .await
                                .unwrap()
                        }
                    };
                    let second_after = Duration::from_millis(num(&step["second_after_millis"]));
                    tokio::join!(relay(Duration::ZERO), relay(second_after));
                    sent_counts(&sends)
                }
                other => panic!("{}: unknown step {other}", self.name),
            };
            assert_eq!(
                got,
                step["expect"],
                "{}: {}: {} {}",
                DB::DIALECT.as_str(),
                self.name,
                step["do"],
                step.get("relay").unwrap_or(&Value::Null)
            );
        })
    }
}

pub(super) async fn run_all<DB: Server>()
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    for (index, case) in cases_of("outbox.json").into_iter().enumerate() {
        let name = case["name"].as_str().unwrap().to_owned();
        assert_eq!(case["op"], "scenario", "{name}");
        let pool = DB::fresh(3000 + index).await;
        let (clock, manual) = match case["clock"].as_str().unwrap() {
            "manual" => {
                let manual = Arc::new(ManualClock::new(0).advancing_on_pause());
                (StoreClock::Manual(Arc::clone(&manual)), Some(manual))
            }
            "system" => (StoreClock::System, None),
            other => panic!("unknown clock {other}"),
        };
        let run = Run {
            name,
            pool: pool.clone(),
            clock,
            manual,
            policy: policy_of(&case["policy"]),
        };
        for step in case["steps"].as_array().unwrap() {
            run.step(step).await;
        }
        pool.close().await;
    }
}
