//! One executor per database: run a named statement with positional
//! parameters, answer with rows or the affected-row count, classify errors.

use std::future::Future;

use mintid::store::{
    Answer, DbError, DbErrorClass, Dialect, ParamType, Placeholder, ResultKind, Statement, Value,
    classify_db_error,
};

/// A database sqlx can reach, as the core's store drivers see it: its
/// dialect of `schema/`, its placeholder style and its executor.
pub trait Backend: sqlx::Database {
    /// The dialect of `schema/`.
    const DIALECT: Dialect;
    /// How its sqlx driver writes parameters.
    const PLACEHOLDER: Placeholder;
    /// The statement that begins a transaction (`write`: SQLite's
    /// `BEGIN IMMEDIATE`, which takes the write lock at once).
    fn begin(write: bool) -> &'static str {
        let _ = write;
        "BEGIN"
    }
    /// Runs `statement` with `params` (in its binding order) on `conn`.
    fn run<'c>(
        conn: &'c mut Self::Connection,
        statement: &'c Statement,
        params: Vec<Value>,
    ) -> impl Future<Output = Answer> + Send + 'c;
}

/// Classifies a sqlx error as the core's drivers need it; the message is
/// kept for the log.
pub fn classify(error: &sqlx::Error) -> DbError {
    let class = match error {
        sqlx::Error::Database(db) => classify_database(db.as_ref()),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => DbErrorClass::ConnectionLost,
        _ => DbErrorClass::Other,
    };
    DbError {
        class,
        message: error.to_string(),
    }
}

/// The class of a database's own error, by the core's table: MySQL's error
/// number beside its SQLSTATE, SQLite's extended result code, PostgreSQL's
/// SQLSTATE.
fn classify_database(db: &dyn sqlx::error::DatabaseError) -> DbErrorClass {
    let code = db.code();
    #[cfg(feature = "mysql")]
    if let Some(mysql) = db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        let number = mysql.number().to_string();
        return classify_db_error(Dialect::Mysql, Some(&number), code.as_deref(), None);
    }
    #[cfg(feature = "sqlite")]
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        return classify_db_error(Dialect::Sqlite, code.as_deref(), None, Some(db.message()));
    }
    classify_db_error(Dialect::Postgres, None, code.as_deref(), None)
}

/// Reads one column of a row as the drivers' [`Value`].
fn column<R: sqlx::Row>(row: &R, at: usize) -> Value
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i32: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    use sqlx::ValueRef;
    match row.try_get_raw(at) {
        Ok(raw) if raw.is_null() => return Value::Null,
        Ok(_) => {}
        Err(_) => return Value::Null,
    }
    if let Ok(value) = row.try_get::<i64, _>(at) {
        return Value::Int(value);
    }
    if let Ok(value) = row.try_get::<i32, _>(at) {
        return Value::Int(i64::from(value));
    }
    if let Ok(value) = row.try_get::<String, _>(at) {
        return Value::Text(value);
    }
    row.try_get::<Vec<u8>, _>(at)
        .map_or(Value::Null, Value::Bytes)
}

macro_rules! backend {
    ($feature:literal, $db:ty, $dialect:expr, $placeholder:expr $(, $begin:expr)?) => {
        #[cfg(feature = $feature)]
        impl Backend for $db {
            const DIALECT: Dialect = $dialect;
            const PLACEHOLDER: Placeholder = $placeholder;
            $(fn begin(write: bool) -> &'static str {
                $begin(write)
            })?
            fn run<'c>(
                conn: &'c mut Self::Connection,
                statement: &'c Statement,
                params: Vec<Value>,
            ) -> impl Future<Output = Answer> + Send + 'c {
                async move {
                    let mut query = sqlx::query::<$db>(sqlx::AssertSqlSafe(statement.sql.as_str()));
                    for (value, kind) in params.into_iter().zip(&statement.param_types) {
                        query = match (value, kind) {
                            (Value::Null, ParamType::Int) => query.bind(None::<i64>),
                            (Value::Null, ParamType::Text) => query.bind(None::<String>),
                            (Value::Null, ParamType::Bytes) => query.bind(None::<Vec<u8>>),
                            (Value::Int(value), _) => query.bind(value),
                            (Value::Text(value), _) => query.bind(value),
                            (Value::Bytes(value), _) => query.bind(value),
                        };
                    }
                    match statement.kind {
                        ResultKind::One | ResultKind::Many => match query.fetch_all(&mut *conn).await {
                            Ok(rows) => Answer::Rows(
                                rows.iter()
                                    .map(|row| {
                                        (0..sqlx::Row::len(row)).map(|at| column(row, at)).collect()
                                    })
                                    .collect(),
                            ),
                            Err(error) => Answer::Failed(classify(&error)),
                        },
                        ResultKind::ExecRows | ResultKind::Exec => {
                            match query.execute(&mut *conn).await {
                                Ok(done) => Answer::Affected(done.rows_affected()),
                                Err(error) => Answer::Failed(classify(&error)),
                            }
                        }
                    }
                }
            }
        }
    };
}

backend!(
    "postgres",
    sqlx::Postgres,
    Dialect::Postgres,
    Placeholder::Numbered
);
backend!("mysql", sqlx::MySql, Dialect::Mysql, Placeholder::Question);
backend!(
    "sqlite",
    sqlx::Sqlite,
    Dialect::Sqlite,
    Placeholder::Question,
    |write: bool| if write { "BEGIN IMMEDIATE" } else { "BEGIN" }
);
