//! The databases of the Rust store's tests: a fresh one per case on SQLite,
//! PostgreSQL and MariaDB (the servers of `scripts/db/with-db.sh`:
//! `MINTID_PG_URL`, `MINTID_MYSQL_URL`; under `CI=true` their absence fails
//! instead of skipping), where nothing listens, and pools that can be
//! repointed there and back.

use std::time::Duration;

use mintid_store::Backend;
use sqlx::{Executor, Pool};

/// One dialect's server: a fresh database per case, and its pools.
pub(crate) trait Server: Backend + Sized {
    /// A fresh, empty database for case `case`, and a pool on it.
    async fn fresh(case: usize) -> Pool<Self>;
    /// A pool where no database listens.
    async fn unavailable() -> Pool<Self> {
        sqlx::pool::PoolOptions::new()
            .acquire_timeout(Duration::from_secs(2))
            .connect_lazy_with(Self::nowhere())
    }
    /// Where no database listens.
    fn nowhere() -> <Self::Connection as sqlx::Connection>::Options;
    /// Ends the server sessions of every connection to the case's database.
    async fn kill_connections(pool: &Pool<Self>);
    /// The first four placeholders of the dialect.
    fn placeholders() -> [&'static str; 4];
    /// The type of a text column of the side-effect table.
    fn business_column() -> &'static str;
    /// The type a `CAST` to a 64-bit integer names.
    fn bigint() -> &'static str {
        "BIGINT"
    }
    /// A pool on `live`'s database that an [`outage`](Self::outage) cuts:
    /// through a listener of the fault proxy (`MINTID_FAULT_PROXY`) of its
    /// own. SQLite (no network): `live` itself.
    async fn cuttable(live: &Pool<Self>) -> Pool<Self> {
        let options = (*live.connect_options()).clone();
        let (host, port) = Self::address(&options);
        let through = proxy(&format!("open {host} {port}"));
        let port: u16 = through.parse().expect("the proxy's port");
        PROXIED.lock().unwrap().insert(Self::DIALECT.as_str(), port);
        sqlx::pool::PoolOptions::<Self>::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(60))
            .connect_lazy_with(Self::via(options, port))
    }
    /// Makes the case's database unreachable for `millis` ms to the pool
    /// [`cuttable`](Self::cuttable) made, and returns once that is in force.
    async fn outage(_live: &Pool<Self>, millis: u64) {
        let port = PROXIED.lock().unwrap()[Self::DIALECT.as_str()];
        assert_eq!(proxy(&format!("cut {port} {millis}")), "ok");
    }
    /// The server's host and port in `options`.
    fn address(options: &<Self::Connection as sqlx::Connection>::Options) -> (String, u16);
    /// `options` pointed at `127.0.0.1:port`.
    fn via(
        options: <Self::Connection as sqlx::Connection>::Options,
        port: u16,
    ) -> <Self::Connection as sqlx::Connection>::Options;
}

/// The fault proxy's listener of each dialect's current outage case.
static PROXIED: std::sync::Mutex<std::collections::BTreeMap<&str, u16>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// One request to the fault proxy's control port; its reply line.
fn proxy(request: &str) -> String {
    use std::io::{BufRead, Write};
    let control = std::env::var("MINTID_FAULT_PROXY")
        .expect("MINTID_FAULT_PROXY: an outage case runs under scripts/db/with-db.sh");
    let mut stream = std::net::TcpStream::connect(control).expect("the fault proxy");
    writeln!(stream, "{request}").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut line)
        .unwrap();
    let reply = line.trim().to_owned();
    assert!(!reply.starts_with("error"), "{request}: {reply}");
    reply
}

const DATABASE: &str = "mintid_rust_conformance";

pub(crate) fn url(variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) => Some(url),
        Err(_) if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("{variable} is not set: run under scripts/db/with-db.sh")
        }
        Err(_) => None,
    }
}

fn with_database(url: &str, database: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{database}")
}

impl Server for sqlx::Sqlite {
    async fn fresh(case: usize) -> Pool<Self> {
        let dir =
            std::env::temp_dir().join(format!("mintid-rust-conformance-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("case-{case}.sqlite3"));
        let _ = std::fs::remove_file(&path);
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(60));
        sqlx::pool::PoolOptions::new()
            .max_connections(40)
            .connect_with(options)
            .await
            .unwrap()
    }
    fn nowhere() -> sqlx::sqlite::SqliteConnectOptions {
        sqlx::sqlite::SqliteConnectOptions::new().filename("/nonexistent/mintid/no.sqlite3")
    }
    async fn kill_connections(_pool: &Pool<Self>) {}
    fn placeholders() -> [&'static str; 4] {
        ["?", "?", "?", "?"]
    }
    fn business_column() -> &'static str {
        "TEXT"
    }
    async fn cuttable(live: &Pool<Self>) -> Pool<Self> {
        live.clone()
    }
    /// No network to cut: another connection holds the file's exclusive
    /// lock for `millis` ms.
    async fn outage(live: &Pool<Self>, millis: u64) {
        let mut conn = live.acquire().await.unwrap().detach();
        conn.execute("BEGIN EXCLUSIVE").await.unwrap();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(millis)).await;
            conn.execute("COMMIT").await.unwrap();
        });
    }
    fn address(_options: &sqlx::sqlite::SqliteConnectOptions) -> (String, u16) {
        unreachable!("SQLite has no network")
    }
    fn via(
        options: sqlx::sqlite::SqliteConnectOptions,
        _port: u16,
    ) -> sqlx::sqlite::SqliteConnectOptions {
        options
    }
}

impl Server for sqlx::Postgres {
    async fn fresh(_case: usize) -> Pool<Self> {
        let url = url("MINTID_PG_URL").unwrap();
        let admin = sqlx::PgPool::connect(&url).await.unwrap();
        let exists: Option<(i32,)> = sqlx::query_as("SELECT 1 FROM pg_database WHERE datname = $1")
            .bind(DATABASE)
            .fetch_optional(&admin)
            .await
            .unwrap();
        if exists.is_none() {
            admin
                .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {DATABASE}")))
                .await
                .unwrap();
        }
        admin.close().await;
        let pool = sqlx::pool::PoolOptions::new()
            .max_connections(40)
            .connect(&with_database(&url, DATABASE))
            .await
            .unwrap();
        pool.execute("DROP SCHEMA IF EXISTS public CASCADE")
            .await
            .unwrap();
        pool.execute("CREATE SCHEMA public").await.unwrap();
        pool
    }
    fn nowhere() -> sqlx::postgres::PgConnectOptions {
        "postgresql://mintid@127.0.0.1:1/none".parse().unwrap()
    }
    async fn kill_connections(pool: &Pool<Self>) {
        let url = url("MINTID_PG_URL").unwrap();
        let admin = sqlx::PgPool::connect(&url).await.unwrap();
        // Client sessions only: an autovacuum worker on the database is the
        // server's own (terminating it is refused without superuser rights).
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
        )
        .bind(DATABASE)
        .execute(&admin)
        .await
        .unwrap();
        admin.close().await;
        let _ = pool;
    }
    fn placeholders() -> [&'static str; 4] {
        ["$1", "$2", "$3", "$4"]
    }
    fn business_column() -> &'static str {
        "text COLLATE \"C\""
    }
    fn address(options: &sqlx::postgres::PgConnectOptions) -> (String, u16) {
        (options.get_host().to_owned(), options.get_port())
    }
    fn via(
        options: sqlx::postgres::PgConnectOptions,
        port: u16,
    ) -> sqlx::postgres::PgConnectOptions {
        options.host("127.0.0.1").port(port)
    }
}

impl Server for sqlx::MySql {
    async fn fresh(_case: usize) -> Pool<Self> {
        let url = url("MINTID_MYSQL_URL").unwrap();
        let admin = sqlx::MySqlPool::connect(&url).await.unwrap();
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {DATABASE}"
            )))
            .await
            .unwrap();
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {DATABASE}")))
            .await
            .unwrap();
        admin.close().await;
        sqlx::pool::PoolOptions::new()
            .max_connections(40)
            .connect(&with_database(&url, DATABASE))
            .await
            .unwrap()
    }
    fn nowhere() -> sqlx::mysql::MySqlConnectOptions {
        "mysql://mintid@127.0.0.1:1/none".parse().unwrap()
    }
    async fn kill_connections(pool: &Pool<Self>) {
        let url = url("MINTID_MYSQL_URL").unwrap();
        let admin = sqlx::MySqlPool::connect(&url).await.unwrap();
        let sessions: Vec<(i64,)> =
            sqlx::query_as("SELECT id FROM information_schema.processlist WHERE db = ?")
                .bind(DATABASE)
                .fetch_all(&admin)
                .await
                .unwrap();
        for (session,) in sessions {
            let _ = admin
                .execute(sqlx::AssertSqlSafe(format!("KILL {session}")))
                .await;
        }
        admin.close().await;
        let _ = pool;
    }
    fn placeholders() -> [&'static str; 4] {
        ["?", "?", "?", "?"]
    }
    fn business_column() -> &'static str {
        "VARBINARY(64)"
    }
    fn bigint() -> &'static str {
        "SIGNED"
    }
    fn address(options: &sqlx::mysql::MySqlConnectOptions) -> (String, u16) {
        (options.get_host().to_owned(), options.get_port())
    }
    fn via(
        options: sqlx::mysql::MySqlConnectOptions,
        port: u16,
    ) -> sqlx::mysql::MySqlConnectOptions {
        options.host("127.0.0.1").port(port)
    }
}

/// A pool that opens a connection for every use, from the options it holds
/// now (`set_connect_options` repoints it): on `live`'s database, or where
/// no database listens.
pub(crate) fn switchable<DB: Server>(live: &Pool<DB>, down: bool) -> Pool<DB> {
    let options = if down {
        DB::nowhere()
    } else {
        (*live.connect_options()).clone()
    };
    sqlx::pool::PoolOptions::<DB>::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(2))
        .after_release(|_, _| Box::pin(async { Ok(false) }))
        .connect_lazy_with(options)
}
