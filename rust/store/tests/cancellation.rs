//! Once the operation has an outcome, recording it finishes even if the
//! caller goes away (docs/spec.md, "Completion keeps trying"): a `run_once`
//! future dropped right after its operation returned still completes the
//! record, so a duplicate replays instead of running the operation again.

use mintid::{Fingerprint, IdempotencyKey, RecordPolicy};
use mintid_store::{IdempotencyStore, RunResult, Store, StoreRequest, StoredResponse};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

fn response() -> StoredResponse {
    StoredResponse {
        content_type: "application/json".into(),
        body: br#"{"order":1001}"#.to_vec(),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_once_dropped_after_its_operation_returned_still_records_the_outcome() {
    let dir = std::env::temp_dir().join(format!("mintid-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.sqlite3");
    let _ = std::fs::remove_file(&path);
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let store = Store::new(SqlitePool::connect_with(options).await.unwrap());
    store.migrate().await.unwrap();
    // A duplicate waits up to 10 s for the first request's outcome.
    let policy = RecordPolicy::new(30_000, 86_400_000)
        .unwrap()
        .with_wait(10_000, 10)
        .unwrap();
    let orders = IdempotencyStore::new(store, policy);
    let key = IdempotencyKey::new("order.create", "tenant-1", "order-1001").unwrap();
    let request = StoreRequest::new(Fingerprint::from_digest([7; 32]));

    let (returned, operation_returned) = tokio::sync::oneshot::channel();
    let first = orders.run_once(&key, request, async move |_lease| {
        returned.send(()).unwrap();
        Ok(response())
    });
    tokio::select! {
        biased;
        _ = first => panic!("the request ended before its caller went away"),
        // The operation returned: the caller goes away, dropping `first`
        // while its completion is under way.
        _ = operation_returned => {}
    }

    let again = orders
        .run_once(&key, request, async |_lease| {
            panic!("the operation ran a second time")
        })
        .await
        .unwrap();
    let RunResult::Replayed {
        response: stored, ..
    } = again
    else {
        panic!("a duplicate after the caller went away: {again:?}")
    };
    assert_eq!(stored, Some(response()));
}
