//! What the store benchmarks share: a timed loop on concurrent tokio tasks,
//! the median of rounds, the `--seconds N --rounds N` arguments, and the
//! pools they run on.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Operations per second of `op` on `tasks` concurrent tasks for `seconds`.
pub async fn measure<F, Fut>(tasks: usize, seconds: f64, op: F) -> f64
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let op = Arc::clone(&op);
        let done = Arc::clone(&done);
        handles.push(tokio::spawn(async move {
            while Instant::now() < until {
                op().await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    for handle in handles {
        handle.await.expect("a task");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `--seconds N` and `--rounds N` (default 2 and 3); cargo's `--bench` is ignored.
pub fn arguments() -> (f64, usize) {
    let mut args = std::env::args().skip(1);
    let (mut seconds, mut rounds) = (2.0, 3);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                seconds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--seconds N")
            }
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--rounds N")
            }
            "--bench" => {}
            other => panic!("unknown argument {other}"),
        }
    }
    (seconds, rounds)
}

/// A pool of 8 on the PostgreSQL of `MINTID_PG_URL`, if set.
pub async fn postgres() -> Option<sqlx::PgPool> {
    let url = std::env::var("MINTID_PG_URL").ok()?;
    Some(
        sqlx::pool::PoolOptions::new()
            .max_connections(8)
            .connect(&url)
            .await
            .unwrap(),
    )
}

/// A pool of 8 on a fresh SQLite file (WAL) in a folder of its own, and the folder.
pub async fn sqlite(name: &str) -> (sqlx::SqlitePool, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.join("bench.sqlite3"))
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(60));
    let pool = sqlx::pool::PoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await
        .unwrap();
    (pool, dir)
}
