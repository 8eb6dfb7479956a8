//! Which [`DbErrorClass`] a database's own error code belongs to: the one
//! table every host's executor asks, so that a deadlock, a unique violation
//! or a lost server means the same in every language.
//!
//! An executor reads the codes from its driver's error and passes them as
//! text: it never maps them itself. Only what has no code stays with the
//! executor: a driver that reports a closed or broken connection by its
//! exception type (a socket error, a pool that is shut) says
//! [`DbErrorClass::ConnectionLost`] on its own.

use super::{DbErrorClass, Dialect};

/// The class of a database error from the codes its driver reports.
///
/// - `code`: the database's own code, as text. MySQL/MariaDB: the error
///   number in decimal (server errors 1000–4999, client errors 2000–2999).
///   SQLite: the extended result code in decimal (`2067`) or by its
///   symbolic name (`SQLITE_CONSTRAINT_UNIQUE`), as drivers give one or the
///   other. PostgreSQL has none beyond its SQLSTATE: pass `None`.
/// - `sqlstate`: the five-character SQLSTATE, when the driver reports one.
/// - `message`: the driver's message, read only where a class has no code
///   of its own: SQLite reports a missing table as plain `SQLITE_ERROR`
///   (1) with the message `no such table: …`.
///
/// The dialect's own code is read first; when it names no class the
/// SQLSTATE is read (`23505` unique; `40001`/`40P01` serialization; class
/// `08` and `57P01`–`57P03` connection lost; other class `23` and class `22`
/// constraint; `42P01` schema missing). Anything unknown is
/// [`DbErrorClass::Other`].
pub fn classify_db_error(
    dialect: Dialect,
    code: Option<&str>,
    sqlstate: Option<&str>,
    message: Option<&str>,
) -> DbErrorClass {
    let own = code.and_then(|code| match dialect {
        Dialect::Mysql => code.trim().parse().ok().and_then(mysql_class),
        Dialect::Sqlite => sqlite_class(code.trim()),
        Dialect::Postgres => None,
    });
    own.or_else(|| sqlstate.and_then(|state| sqlstate_class(state.trim())))
        .or_else(|| sqlite_missing_table(dialect, code, message))
        .unwrap_or(DbErrorClass::Other)
}

/// The message SQLite gives a statement naming a table that does not exist
/// (`sqlite3LocateTable`): no result code of its own tells it apart.
const SQLITE_NO_SUCH_TABLE: &str = "no such table";

/// A missing table on SQLite, known by its message: with no code, or with
/// `SQLITE_ERROR` (1) as the code.
fn sqlite_missing_table(
    dialect: Dialect,
    code: Option<&str>,
    message: Option<&str>,
) -> Option<DbErrorClass> {
    let plain_error = code.is_none_or(|code| matches!(code.trim(), "1" | "SQLITE_ERROR"));
    (dialect == Dialect::Sqlite
        && plain_error
        && message.is_some_and(|message| message.contains(SQLITE_NO_SUCH_TABLE)))
    .then_some(DbErrorClass::SchemaMissing)
}

/// SQLSTATE classes (ISO/IEC 9075, and PostgreSQL's class 57 for a shutdown).
fn sqlstate_class(state: &str) -> Option<DbErrorClass> {
    if state.len() != 5 || !state.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
        return None;
    }
    Some(match state {
        "23505" => DbErrorClass::UniqueViolation,
        "40001" | "40P01" => DbErrorClass::Serialization,
        // undefined_table
        "42P01" => DbErrorClass::SchemaMissing,
        "57P01" | "57P02" | "57P03" => DbErrorClass::ConnectionLost,
        _ if state.starts_with("08") => DbErrorClass::ConnectionLost,
        _ if state.starts_with("23") || state.starts_with("22") => DbErrorClass::Constraint,
        _ => return None,
    })
}

/// MySQL and MariaDB error numbers.
fn mysql_class(number: u32) -> Option<DbErrorClass> {
    Some(match number {
        // ER_DUP_ENTRY
        1062 => DbErrorClass::UniqueViolation,
        // ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT
        1213 | 1205 => DbErrorClass::Serialization,
        // the client errors (cannot connect, server gone, lost), ER_CON_COUNT_ERROR,
        // ER_SERVER_SHUTDOWN, ER_CONNECTION_KILLED (MariaDB)
        2000..=2999 | 1040 | 1053 | 1927 => DbErrorClass::ConnectionLost,
        // ER_DATA_TOO_LONG, ER_CHECK_CONSTRAINT_VIOLATED (MySQL), ER_CONSTRAINT_FAILED
        // (MariaDB), ER_BAD_NULL_ERROR, ER_WARN_DATA_OUT_OF_RANGE
        1406 | 3819 | 4025 | 1048 | 1264 => DbErrorClass::Constraint,
        // ER_NO_SUCH_TABLE
        1146 => DbErrorClass::SchemaMissing,
        _ => return None,
    })
}

/// SQLite result codes (`sqlite3.h`): primary codes in the low byte, the
/// extended constraint codes in full.
const SQLITE_NAMES: [(&str, u32); 9] = [
    ("SQLITE_BUSY", 5),
    ("SQLITE_LOCKED", 6),
    ("SQLITE_IOERR", 10),
    ("SQLITE_CANTOPEN", 14),
    ("SQLITE_CONSTRAINT", 19),
    ("SQLITE_CONSTRAINT_CHECK", 275),
    ("SQLITE_CONSTRAINT_NOTNULL", 1299),
    ("SQLITE_CONSTRAINT_PRIMARYKEY", 1555),
    ("SQLITE_CONSTRAINT_UNIQUE", 2067),
];

/// An SQLite result code in decimal or by name; an extended name this table
/// does not list (`SQLITE_IOERR_READ`) counts as its primary code's family.
fn sqlite_class(code: &str) -> Option<DbErrorClass> {
    let number = match code.parse::<u32>() {
        Ok(number) => number,
        Err(_) => SQLITE_NAMES
            .iter()
            .filter(|(name, _)| {
                code == *name
                    || code
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with('_'))
            })
            .max_by_key(|(name, _)| name.len())
            .map(|&(_, number)| number)?,
    };
    match number {
        1555 | 2067 => return Some(DbErrorClass::UniqueViolation),
        _ => {}
    }
    Some(match number & 0xff {
        5 | 6 => DbErrorClass::Serialization,
        10 | 14 => DbErrorClass::ConnectionLost,
        19 => DbErrorClass::Constraint,
        _ => return None,
    })
}
