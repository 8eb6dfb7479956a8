//! A scripted in-memory database that applies each named record query as
//! the schema's SQL does (and refuses what its CHECKs refuse), shared by the
//! record driver's tests.

use std::collections::HashMap;

use mintid::store::{Answer, DbError, DbErrorClass, Dialect, Manifest, Placeholder, Query, Value};

/// A record's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub status: String,
    pub fingerprint: Vec<u8>,
    pub token: i64,
    pub lease: i64,
    pub created: i64,
    pub expires: i64,
    pub body: Option<Vec<u8>>,
    pub content_type: Option<String>,
    pub error: Option<String>,
}

/// One database: rows by key, and errors to answer the next queries with.
#[derive(Debug, Clone)]
pub struct FakeDb {
    pub manifest: Manifest,
    pub rows: HashMap<(String, String, String), Row>,
    pub failures: Vec<DbErrorClass>,
    pub queries: Vec<&'static str>,
    /// The first query of this name runs, then its reply is lost (a broken
    /// connection).
    pub lose_reply: Option<&'static str>,
}

fn int(v: &Value) -> i64 {
    v.as_int().expect("an integer parameter")
}

fn text(v: &Value) -> String {
    v.as_text().expect("a text parameter").to_owned()
}

fn opt_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::Null => None,
        other => Some(other.as_bytes().expect("bytes").to_vec()),
    }
}

fn opt_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        other => Some(text(other)),
    }
}

impl FakeDb {
    /// An empty database of `dialect`.
    pub fn new(dialect: Dialect) -> Self {
        Self {
            manifest: Manifest::new(dialect, Placeholder::Question),
            rows: HashMap::new(),
            failures: Vec::new(),
            queries: Vec::new(),
            lose_reply: None,
        }
    }

    /// Runs `query` as the schema's SQL would.
    pub fn run(&mut self, query: &Query) -> Answer {
        self.queries.push(query.name);
        let answer = self.apply(query);
        if self.lose_reply == Some(query.name) && !matches!(answer, Answer::Failed(_)) {
            self.lose_reply = None;
            return Answer::Failed(DbError {
                class: DbErrorClass::ConnectionLost,
                message: "the connection broke after the commit".into(),
            });
        }
        answer
    }

    fn apply(&mut self, query: &Query) -> Answer {
        if !self.failures.is_empty() {
            let class = self.failures.remove(0);
            return Answer::Failed(DbError {
                class,
                message: "server at 10.0.0.7:5432 user app said no".into(),
            });
        }
        let statement = self.manifest.statement(query.name).expect("a named query");
        assert_eq!(statement.params.len(), query.params.len(), "{}", query.name);
        let p: HashMap<&str, &Value> = statement
            .params
            .iter()
            .copied()
            .zip(&query.params)
            .collect();
        let key = (text(p["scope"]), text(p["kind"]), text(p["key_id"]));
        let now = p.get("now_millis").map(|v| int(v));
        let fenced = |row: &Row| {
            row.token == int(p["fencing_token"])
                && row.created == int(p["created_millis"])
                && row.status == "pending"
        };
        match query.name {
            "claim" => {
                let live = int(p["lease_deadline_millis"]) > now.unwrap();
                if self.rows.contains_key(&key) {
                    return match self.manifest.dialect {
                        Dialect::Mysql => Answer::Failed(DbError {
                            class: DbErrorClass::UniqueViolation,
                            message: "Duplicate entry".into(),
                        }),
                        _ => Answer::Rows(vec![]),
                    };
                }
                if !live {
                    return match self.manifest.dialect {
                        Dialect::Mysql => Answer::Affected(0),
                        _ => Answer::Rows(vec![]),
                    };
                }
                self.rows.insert(
                    key,
                    Row {
                        status: "pending".into(),
                        fingerprint: p["fingerprint"].as_bytes().unwrap().to_vec(),
                        token: int(p["fencing_token"]),
                        lease: int(p["lease_deadline_millis"]),
                        created: int(p["created_millis"]),
                        expires: int(p["expires_millis"]),
                        body: None,
                        content_type: None,
                        error: None,
                    },
                );
                match self.manifest.dialect {
                    Dialect::Mysql => Answer::Affected(1),
                    _ => Answer::Rows(vec![vec![Value::Int(int(p["fencing_token"]))]]),
                }
            }
            "load" => Answer::Rows(
                self.rows
                    .get(&key)
                    .map(|row| {
                        vec![
                            Value::Text(row.status.clone()),
                            Value::Bytes(row.fingerprint.clone()),
                            Value::Int(row.token),
                            Value::Int(row.lease),
                            Value::Int(row.created),
                            Value::Int(row.created),
                            Value::Int(row.expires),
                            row.body.clone().map_or(Value::Null, Value::Bytes),
                            row.content_type.clone().map_or(Value::Null, Value::Text),
                            row.error.clone().map_or(Value::Null, Value::Text),
                        ]
                    })
                    .into_iter()
                    .collect(),
            ),
            "reclaim" => {
                let Some(row) = self.rows.get_mut(&key) else {
                    return Answer::Affected(0);
                };
                let now = now.unwrap();
                let ok = row.token == int(p["expected_token"])
                    && row.created == int(p["expected_created_millis"])
                    && row.status == text(p["expected_status"])
                    && (row.status != "pending" || row.lease <= now)
                    && int(p["lease_deadline_millis"]) > now;
                if ok {
                    row.status = "pending".into();
                    row.token = int(p["fencing_token"]);
                    row.lease = int(p["lease_deadline_millis"]);
                    row.body = None;
                    row.content_type = None;
                    row.error = None;
                }
                Answer::Affected(u64::from(ok))
            }
            "complete" | "fail" | "release" => {
                let body = p.get("response_body").and_then(|v| opt_bytes(v));
                let content_type = p.get("response_content_type").and_then(|v| opt_text(v));
                let error = p.get("error").and_then(|v| opt_text(v));
                // The schema's CHECK constraints.
                let too_long = body.as_ref().is_some_and(|b| b.len() > 1_048_576)
                    || content_type.as_ref().is_some_and(|c| c.len() > 255)
                    || error.as_ref().is_some_and(|e| e.len() > 1024);
                if too_long {
                    return Answer::Failed(DbError {
                        class: DbErrorClass::Constraint,
                        message: "CHECK constraint failed".into(),
                    });
                }
                // PostgreSQL refuses U+0000 in a text.
                if error.as_ref().is_some_and(|e| e.contains('\0')) {
                    return Answer::Failed(DbError {
                        class: DbErrorClass::Other,
                        message: "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
                    });
                }
                let Some(row) = self.rows.get_mut(&key) else {
                    return Answer::Affected(0);
                };
                if !fenced(row) {
                    return Answer::Affected(0);
                }
                row.status = match query.name {
                    "complete" => "succeeded",
                    "fail" => "failed",
                    _ => "failed_retryable",
                }
                .into();
                if query.name == "release" {
                    row.body = None;
                    row.content_type = None;
                } else {
                    row.body = body;
                    row.content_type = content_type;
                }
                row.error = error;
                Answer::Affected(1)
            }
            "renew" => {
                let Some(row) = self.rows.get_mut(&key) else {
                    return Answer::Affected(0);
                };
                let next = int(p["lease_deadline_millis"]);
                if fenced(row) && row.lease < next {
                    row.lease = next;
                    Answer::Affected(1)
                } else {
                    Answer::Affected(0)
                }
            }
            other => panic!("the fake database does not know {other}"),
        }
    }
}
