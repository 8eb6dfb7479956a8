//! The receiving side on SQLite, PostgreSQL and MariaDB (issue 28): an
//! inbox consumer whose handler credits a payment and moves the order
//! `WAIT_PAY → PAID`, under 10 concurrent first deliveries plus 3 retries
//! (one credit, one transition), a crash between the handler and the
//! commit (the redelivery runs it once), and a transition the table does
//! not allow.

use std::sync::Arc;

use mintid::inbox::InboxPolicy;
use mintid::transition::{TransitionOutcome, TransitionTable, TransitionTarget};
use mintid_store::{Consumption, Inbox, StatementFault, Store, StoreClock, Transitions};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
use sqlx::{Executor, Pool};

#[path = "support/databases.rs"]
#[allow(dead_code)]
mod databases;

use databases::{Server, url};

const CONSUMER: &str = "payments";

fn orders() -> Transitions {
    let table = TransitionTable::new(
        &["WAIT_PAY", "PAID", "CANCELLED"],
        &[("WAIT_PAY", "PAID"), ("WAIT_PAY", "CANCELLED")],
    )
    .unwrap();
    Transitions::new(
        table,
        TransitionTarget::new("shop_order", "id", "status").unwrap(),
    )
}

async fn setup<DB: Server>(case: usize) -> (Pool<DB>, Inbox<DB>)
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
{
    let pool = DB::fresh(case).await;
    let store = Store::new(pool.clone());
    store.migrate().await.unwrap();
    let text = DB::business_column();
    pool.execute(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE shop_order (id BIGINT NOT NULL PRIMARY KEY, status {text} NOT NULL)"
    )))
    .await
    .unwrap();
    pool.execute(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE payment_credit (delivery {text} NOT NULL, order_id BIGINT NOT NULL)"
    )))
    .await
    .unwrap();
    pool.execute("INSERT INTO shop_order (id, status) VALUES (7, 'WAIT_PAY')")
        .await
        .unwrap();
    // Retention one day, for a provider that retries for up to three hours.
    let policy = InboxPolicy::new(86_400_000, 3 * 3_600_000).unwrap();
    (pool, Inbox::new(store, policy))
}

/// Begins the consumer's transaction (SQLite: `BEGIN IMMEDIATE`, the write
/// lock at once).
async fn begin<DB: Server>(pool: &Pool<DB>) -> sqlx::Transaction<'static, DB> {
    if DB::DIALECT == mintid::store::Dialect::Sqlite {
        pool.begin_with("BEGIN IMMEDIATE").await.unwrap()
    } else {
        pool.begin().await.unwrap()
    }
}

/// One delivery of the payment callback `delivery`: the inbox claims it,
/// the handler credits and moves the order. A store error (a deadlock, a
/// lost reply) is the broker's cue to redeliver, as a broker would (100
/// tries at most: a protocol that never lands fails the test).
async fn deliver<DB: Server>(
    pool: &Pool<DB>,
    inbox: &Inbox<DB>,
    delivery: &str,
) -> Consumption<TransitionOutcome>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    for _ in 0..100 {
        let mut tx = begin(pool).await;
        let consumed = inbox
            .consume(&mut *tx, CONSUMER, delivery, async |conn| {
                let [p1, ..] = DB::placeholders();
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO payment_credit (delivery, order_id) VALUES ({p1}, 7)"
                )))
                .bind(delivery)
                .execute(&mut *conn)
                .await?;
                Ok::<_, BoxError>(
                    orders()
                        .transition::<DB>(conn, 7, "WAIT_PAY", "PAID")
                        .await?,
                )
            })
            .await;
        match consumed {
            Ok(consumed) => {
                if tx.commit().await.is_ok() {
                    return consumed;
                }
            }
            Err(_) => drop(tx),
        }
    }
    panic!("delivery {delivery} failed on 100 tries");
}

async fn count<DB: Server>(pool: &Pool<DB>, sql: &'static str) -> i64
where
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    i64: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
    <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
{
    let (n,): (i64,) = sqlx::query_as(sql).fetch_one(pool).await.unwrap();
    n
}

async fn run<DB: Server>(case: usize)
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'c> &'c Pool<DB>: Executor<'c, Database = DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    <DB as sqlx::Database>::Arguments: sqlx::IntoArguments<DB>,
    i64: sqlx::Type<DB> + for<'r> sqlx::Decode<'r, DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    let (pool, inbox) = setup::<DB>(case).await;
    let credits = "SELECT COUNT(*) FROM payment_credit";
    let paid = "SELECT COUNT(*) FROM shop_order WHERE status = 'PAID'";

    // 10 concurrent first deliveries of one callback, then 3 retries.
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let (pool, inbox) = (pool.clone(), inbox.clone());
        tasks.push(tokio::spawn(async move {
            deliver(&pool, &inbox, "evt_1").await
        }));
    }
    let mut ends = Vec::new();
    for task in tasks {
        ends.push(task.await.unwrap());
    }
    for _ in 0..3 {
        ends.push(deliver(&pool, &inbox, "evt_1").await);
    }
    let processed: Vec<_> = ends
        .iter()
        .filter(|end| matches!(end, Consumption::Processed(_)))
        .collect();
    assert_eq!(
        processed,
        [&Consumption::Processed(TransitionOutcome::Applied)]
    );
    assert_eq!(ends.len() - processed.len(), 12, "{ends:?}");
    assert_eq!(count(&pool, credits).await, 1);
    assert_eq!(count(&pool, paid).await, 1);

    // A crash between the handler and the commit: nothing committed, the
    // redelivery runs the handler once.
    {
        let mut tx = begin(&pool).await;
        let crashed = inbox
            .consume(&mut *tx, CONSUMER, "evt_2", async |conn| {
                sqlx::query("INSERT INTO payment_credit (delivery, order_id) VALUES ('evt_2', 8)")
                    .execute(&mut *conn)
                    .await?;
                Ok::<_, BoxError>(())
            })
            .await
            .unwrap();
        assert_eq!(crashed, Consumption::Processed(()));
        drop(tx); // the process dies before COMMIT
    }
    assert_eq!(count(&pool, credits).await, 1);
    // The reply of the processed mark is lost once (the statement ran in
    // the transaction, the connection's answer never came): an error, a
    // rollback, a redelivery.
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let faulty = Inbox::new(
        inbox.store().clone().with_faults({
            let lost = Arc::clone(&lost);
            move |name| {
                (name == "inbox_processed" && !lost.swap(true, std::sync::atomic::Ordering::SeqCst))
                    .then_some(StatementFault::LoseReply)
            }
        }),
        InboxPolicy::new(86_400_000, 3 * 3_600_000).unwrap(),
    );
    let mut runs = 0;
    loop {
        let mut tx = begin(&pool).await;
        let consumed = faulty
            .consume(&mut *tx, CONSUMER, "evt_2", async |conn| {
                runs += 1;
                sqlx::query("INSERT INTO payment_credit (delivery, order_id) VALUES ('evt_2', 8)")
                    .execute(&mut *conn)
                    .await?;
                Ok::<_, BoxError>(())
            })
            .await;
        match consumed {
            Ok(consumed) => {
                assert_eq!(consumed, Consumption::Processed(()));
                tx.commit().await.unwrap();
                break;
            }
            Err(error) => {
                assert!(
                    error.to_string().starts_with("store.unavailable"),
                    "{error}"
                );
                drop(tx);
            }
        }
    }
    assert_eq!(runs, 2, "the failed try and the redelivery");
    assert_eq!(count(&pool, credits).await, 2);
    let mut tx = begin(&pool).await;
    let again = inbox
        .consume(&mut *tx, CONSUMER, "evt_2", async |_| Ok::<_, BoxError>(()))
        .await
        .unwrap();
    assert_eq!(again, Consumption::Duplicate);
    tx.rollback().await.unwrap();

    // Transitions: the duplicate callback, a state the row left, a move the
    // table does not allow, a missing row.
    let mut conn = pool.acquire().await.unwrap();
    let orders = orders();
    assert_eq!(
        orders
            .transition::<DB>(&mut conn, 7, "WAIT_PAY", "PAID")
            .await
            .unwrap(),
        TransitionOutcome::Already
    );
    assert_eq!(
        orders
            .transition::<DB>(&mut conn, 7, "WAIT_PAY", "CANCELLED")
            .await
            .unwrap(),
        TransitionOutcome::Refused {
            current: "PAID".into()
        }
    );
    let refused = orders
        .transition::<DB>(&mut conn, 7, "PAID", "WAIT_PAY")
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some("transition.not_allowed"));
    let missing = orders
        .transition::<DB>(&mut conn, 99, "WAIT_PAY", "PAID")
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some("transition.not_found"));
    drop(conn);

    // Cleanup, two days on: both rows expired.
    let later = Arc::new(mintid::ManualClock::new(
        inbox.store().clock().now_millis() + 2 * 86_400_000,
    ));
    let cleaner = Inbox::new(
        inbox.store().clone().with_clock(StoreClock::Manual(later)),
        InboxPolicy::new(86_400_000, 0).unwrap(),
    );
    assert_eq!(cleaner.cleanup(1).await.unwrap(), 2);
    assert_eq!(inbox.cleanup(100).await.unwrap(), 0);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    run::<sqlx::Sqlite>(900).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    if url("MINTID_PG_URL").is_some() {
        run::<sqlx::Postgres>(901).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb() {
    if url("MINTID_MYSQL_URL").is_some() {
        run::<sqlx::MySql>(902).await;
    }
}

#[test]
fn a_retention_shorter_than_the_redelivery_horizon_is_refused() {
    let error = InboxPolicy::new(3_600_000, 86_400_000).unwrap_err();
    assert_eq!(error.code(), "inbox.retention_too_short");
}
