//! The Redis Cluster fast path in front of [`IdempotencyStore`](crate::IdempotencyStore)
//! (feature `redis`).
//!
//! Before the database, one script (`EVALSHA`, one round trip) either
//! replays a stored response, says that a duplicate is in flight, or lets the
//! request through to the database claim; after the database committed a
//! result, a second script writes it to Redis with a time to live below the
//! record's retention. The database stays the truth: Redis failing, slow,
//! failing over, evicting or flushed sends the request down the database
//! path. Every decision is the core's ([`mintid::store::FastPath`]); this
//! module only runs the named scripts on the connection given and pushes back
//! what Redis said (`docs/spec.md`, "The fast path").

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mintid::store::{
    FastAnswer, FastPath, FastVerdict, Finished, Held, RedisCall, SCRIPTS, Settled, StoredResponse,
};
use mintid::{Fingerprint, IdempotencyKey, RecordPolicy};
use redis::aio::ConnectionLike;
use redis::{Cmd, ErrorKind, RedisFuture, RedisResult, ServerErrorKind, Value};

use crate::error::OperationError;
use crate::idempotency::{RunResult, StoreRequest};

/// The fast path's counters, as read by [`RedisFastPath::metrics`] (the
/// core's registry names them `mintid.fast_path.lookups`, by `verdict`, and
/// `mintid.fast_path.write_failures`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastPathMetrics {
    /// Requests answered from Redis (a replay or in progress).
    pub hits: u64,
    /// Requests that found nothing usable in Redis and went to the database.
    pub misses: u64,
    /// Requests whose check failed (an error, a timeout, a failover) and
    /// went to the database.
    pub fallbacks: u64,
    /// Writes after the database path (claimed, settle, forget) that
    /// failed; nothing depends on them.
    pub write_failures: u64,
}

/// The fast path over a Redis connection: give it to a store with
/// [`IdempotencyStore::with_fast_path`](crate::IdempotencyStore::with_fast_path).
///
/// The connection is the application's `redis::cluster_async::ClusterConnection`
/// (or any async `redis` connection: a `MultiplexedConnection` to one server,
/// a `ConnectionManager`), made with a response and connection timeout well
/// under the request's and no retries, so that a Redis that is down or slow
/// falls back to the database soon. One instance (and its clones) may serve
/// several stores; its [`metrics`](Self::metrics) add up across them.
#[derive(Clone)]
pub struct RedisFastPath {
    shared: Arc<Shared>,
    ttl_millis: Option<u64>,
}

struct Shared {
    connection: Box<dyn Connection>,
    /// The core's scripts: name, text and SHA-1 (for `EVALSHA`).
    scripts: Vec<(&'static str, &'static str, String)>,
    hits: AtomicU64,
    misses: AtomicU64,
    fallbacks: AtomicU64,
    write_failures: AtomicU64,
}

/// An async `redis` connection, cloned for each call (its clones share one
/// multiplexed link); an error reply comes back as an error.
trait Connection: Send + Sync {
    fn query<'a>(&'a self, command: &'a Cmd) -> RedisFuture<'a, Value>;
}

impl<C: ConnectionLike + Clone + Send + Sync + 'static> Connection for C {
    fn query<'a>(&'a self, command: &'a Cmd) -> RedisFuture<'a, Value> {
        let mut connection = self.clone();
        Box::pin(async move { command.query_async(&mut connection).await })
    }
}

impl core::fmt::Debug for RedisFastPath {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RedisFastPath")
            .field("ttl_millis", &self.ttl_millis)
            .field("metrics", &self.metrics())
            .finish_non_exhaustive()
    }
}

impl RedisFastPath {
    /// The fast path over `connection`, with the core's scripts (sent by
    /// `EVALSHA`, by `EVAL` on `NOSCRIPT`, which loads the script on that
    /// node).
    pub fn new<C: ConnectionLike + Clone + Send + Sync + 'static>(connection: C) -> Self {
        let scripts = SCRIPTS
            .iter()
            .map(|(name, text)| {
                let sha = redis::Script::new(text).get_hash().to_owned();
                (*name, *text, sha)
            })
            .collect();
        Self {
            shared: Arc::new(Shared {
                connection: Box::new(connection),
                scripts,
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                fallbacks: AtomicU64::new(0),
                write_failures: AtomicU64::new(0),
            }),
            ttl_millis: None,
        }
    }

    /// The same, entries living at most `ttl_millis` too (they always end
    /// before the record's retention).
    pub fn with_ttl_millis(mut self, ttl_millis: u64) -> Self {
        self.ttl_millis = Some(ttl_millis);
        self
    }

    /// The counters so far.
    pub fn metrics(&self) -> FastPathMetrics {
        let shared = &self.shared;
        FastPathMetrics {
            hits: shared.hits.load(Ordering::Relaxed),
            misses: shared.misses.load(Ordering::Relaxed),
            fallbacks: shared.fallbacks.load(Ordering::Relaxed),
            write_failures: shared.write_failures.load(Ordering::Relaxed),
        }
    }

    /// The fast path under a store's `policy`.
    pub(crate) fn bind(self, policy: RecordPolicy) -> BoundFastPath {
        let core = match self.ttl_millis {
            Some(ttl) => FastPath::new(policy).with_ttl_millis(ttl),
            None => FastPath::new(policy),
        };
        BoundFastPath { redis: self, core }
    }

    /// Runs `call` (`EVALSHA`; `EVAL` on `NOSCRIPT`): Redis's reply.
    async fn run(&self, call: &RedisCall) -> RedisResult<Value> {
        let Some((_, text, sha)) = self
            .shared
            .scripts
            .iter()
            .find(|(name, ..)| *name == call.script)
        else {
            let unknown = format!("the core named an unknown script {}", call.script);
            return Err((ErrorKind::Client, "unknown script", unknown).into());
        };
        let command = |name: &str, script: &str| {
            let mut command = redis::cmd(name);
            command.arg(script).arg(call.keys.len());
            for key in &call.keys {
                command.arg(key.as_str());
            }
            for arg in &call.args {
                command.arg(arg.as_slice());
            }
            command
        };
        let connection = &self.shared.connection;
        match connection.query(&command("EVALSHA", sha)).await {
            Err(error) if error.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                connection.query(&command("EVAL", text)).await
            }
            reply => reply,
        }
    }

    fn count(&self, verdict: &FastVerdict) {
        let shared = &self.shared;
        let counter = match verdict {
            FastVerdict::Answer(_) => &shared.hits,
            FastVerdict::Miss => &shared.misses,
            FastVerdict::Fallback => &shared.fallbacks,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// What Redis said to a `check`, for the core: nil, the fields of an array,
/// or a failure (an error, or a reply of another shape).
fn answer(reply: RedisResult<Value>) -> FastAnswer {
    let fields = match reply {
        Ok(Value::Nil) => return FastAnswer::Nil,
        Ok(Value::Array(fields)) => fields,
        Ok(other) => return FastAnswer::Failed(format!("a reply of another shape: {other:?}")),
        Err(error) => return FastAnswer::Failed(error.to_string()),
    };
    let mut read = Vec::with_capacity(fields.len());
    for field in fields {
        read.push(match field {
            Value::Nil => None,
            Value::BulkString(bytes) => Some(bytes),
            Value::SimpleString(text) => Some(text.into_bytes()),
            Value::Int(number) => Some(number.to_string().into_bytes()),
            other => return FastAnswer::Failed(format!("an element of another shape: {other:?}")),
        });
    }
    FastAnswer::Fields(read)
}

/// A fast path under one store's policy: the core's calls out, Redis's
/// answers in.
#[derive(Debug, Clone)]
pub(crate) struct BoundFastPath {
    redis: RedisFastPath,
    core: FastPath,
}

impl BoundFastPath {
    /// The check before the database, counted: the result to answer with
    /// (a replay or in progress), or `None` for the database path.
    pub(crate) async fn check(
        &self,
        key: &IdempotencyKey,
        request: &StoreRequest,
        now_millis: u64,
    ) -> Option<RunResult> {
        let fingerprint = &request.fingerprint;
        let call = self
            .core
            .check(key, fingerprint, request.key_created_millis, now_millis)?;
        // Down, slow, failing over: a failed answer, the database path.
        let answer = answer(self.redis.run(&call).await);
        let verdict = self.core.read_check(fingerprint, &answer);
        self.redis.count(&verdict);
        match verdict {
            FastVerdict::Answer(finished) => RunResult::not_run(finished),
            FastVerdict::Miss | FastVerdict::Fallback => None,
        }
    }

    /// Runs a write that nothing depends on: a failure is only counted.
    async fn write(&self, call: Option<RedisCall>) {
        let Some(call) = call else { return };
        if self.redis.run(&call).await.is_err() {
            // Redis down or slow: the database holds the truth.
            self.redis
                .shared
                .write_failures
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// One request's way down the database path, for the writes after it.
    pub(crate) fn settling(&self, key: &IdempotencyKey, fingerprint: Fingerprint) -> Settling {
        Settling {
            fast: self.clone(),
            key: key.clone(),
            fingerprint,
            held: None,
            settled: None,
        }
    }
}

/// One request on the database path: its claim and what it came to, written
/// to Redis when it ends ([`settle`](Self::settle)).
#[derive(Debug)]
pub(crate) struct Settling {
    fast: BoundFastPath,
    key: IdempotencyKey,
    fingerprint: Fingerprint,
    held: Option<Held>,
    settled: Option<Settled>,
}

impl Settling {
    /// A claim was written under `held`: a fenced takeover invalidates the
    /// entry.
    pub(crate) async fn claimed(&mut self, held: Held) {
        self.held = Some(held);
        let call = self.fast.core.claimed(&self.key, &held);
        self.fast.write(call).await;
    }

    /// What the operation returned and how the driver ended (`None` when
    /// the store failed): only a result the database committed is written.
    pub(crate) fn ended(
        &mut self,
        result: &Result<StoredResponse, OperationError>,
        end: Option<&Finished>,
    ) {
        self.settled = Some(match (self.held, result, end) {
            (Some(held), Ok(response), Some(Finished::Executed)) => Settled::Executed {
                held,
                response: response.clone(),
            },
            (Some(held), Err(error), Some(Finished::OperationFailed { stored: true })) => {
                Settled::FailedStored {
                    held,
                    message: error.message.clone(),
                    response: error.response.clone(),
                }
            }
            (held, ..) => Settled::Other { held },
        });
    }

    /// The write after the database path: the committed result, or forget.
    pub(crate) async fn settle(&self, now_millis: u64) {
        let other = Settled::Other { held: self.held };
        let settled = self.settled.as_ref().unwrap_or(&other);
        let call = self
            .fast
            .core
            .settle(&self.key, &self.fingerprint, settled, now_millis);
        self.fast.write(Some(call)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_become_the_cores_answers() {
        assert_eq!(answer(Ok(Value::Nil)), FastAnswer::Nil);
        let fields = Value::Array(vec![
            Value::BulkString(b"done".to_vec()),
            Value::Nil,
            Value::Int(-2),
            Value::SimpleString("ok".into()),
        ]);
        assert_eq!(
            answer(Ok(fields)),
            FastAnswer::Fields(vec![
                Some(b"done".to_vec()),
                None,
                Some(b"-2".to_vec()),
                Some(b"ok".to_vec()),
            ])
        );
        let failed = |reply| matches!(answer(reply), FastAnswer::Failed(_));
        assert!(failed(Ok(Value::Okay)));
        assert!(failed(Ok(Value::Array(vec![Value::Double(1.5)]))));
        let timeout = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(failed(Err(timeout)));
    }
}
