//! The heartbeat of a `run once` operation's record is the core's
//! (`RecordHeartbeat`, docs/spec.md "The heartbeat"), on the store's own
//! clock: on a manual clock it beats when the clock is moved past a beat,
//! and the lease it renews is the one a duplicate sees.

use std::sync::Arc;
use std::time::Duration;

use mintid::{Fingerprint, IdempotencyKey, ManualClock, RecordPolicy};
use mintid_store::{IdempotencyStore, RunResult, Store, StoreClock, StoreRequest, StoredResponse};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_renews_the_lease_when_a_manual_clock_passes_a_beat() {
    let dir = std::env::temp_dir().join(format!("mintid-heartbeat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.sqlite3");
    let _ = std::fs::remove_file(&path);
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let clock = Arc::new(ManualClock::new(1_000_000));
    let store = Store::new(SqlitePool::connect_with(options).await.unwrap())
        .with_clock(StoreClock::Manual(Arc::clone(&clock)));
    store.migrate().await.unwrap();
    // A 30 s lease, renewed every 10 s.
    let policy = RecordPolicy::new(30_000, 86_400_000).unwrap();
    let orders = IdempotencyStore::new(store, policy);
    let key = IdempotencyKey::new("order.create", "tenant-1", "order-1001").unwrap();
    let request = StoreRequest::new(Fingerprint::from_digest([7; 32]));

    let result = orders
        .run_once(&key, request, async |lease| {
            let claimed = lease.lease_deadline_millis();
            assert_eq!(claimed, 1_030_000);
            // Past the first beat: the heartbeat renews to now + lease.
            clock.set_millis(1_010_001);
            let mut waited = 0;
            while lease.lease_deadline_millis() == claimed {
                assert!(waited < 10_000, "no renewal after the clock passed a beat");
                tokio::time::sleep(Duration::from_millis(1)).await;
                waited += 1;
            }
            assert_eq!(lease.lease_deadline_millis(), 1_040_001);
            // A duplicate past the claimed deadline still finds the key held.
            clock.set_millis(1_035_000);
            let duplicate = orders
                .load(&key)
                .await
                .unwrap()
                .expect("the pending record");
            assert!(duplicate.record.lease_deadline_millis >= 1_040_001);
            assert!(!lease.is_lost());
            Ok(StoredResponse {
                content_type: "text/plain".into(),
                body: b"ok".to_vec(),
            })
        })
        .await
        .unwrap();
    assert!(matches!(result, RunResult::Executed(_)), "{result:?}");
}
