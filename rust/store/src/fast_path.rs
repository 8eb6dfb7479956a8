//! The Redis Cluster fast path in front of [`IdempotencyStore`](crate::IdempotencyStore)
//! (feature `redis`; `docs/spec.md`, "The fast path"). Every decision is the
//! core's ([`mintid::store::FastPath`]): this module runs the record driver's
//! named scripts on the application's connection and pushes back what Redis
//! said. The database stays the truth.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mintid::RecordPolicy;
use mintid::store::{FastAnswer, FastPath, FastReport, RedisCall};
use redis::aio::ConnectionLike;
use redis::{Cmd, ErrorKind, RedisFuture, RedisResult, ServerErrorKind, Value};

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
    /// The fast path over `connection`: the record driver's Redis steps
    /// run on it (the core's scripts by `EVALSHA`, by `EVAL` when a node
    /// answered `NOSCRIPT`, which loads the script there).
    pub fn new<C: ConnectionLike + Clone + Send + Sync + 'static>(connection: C) -> Self {
        Self {
            shared: Arc::new(Shared {
                connection: Box::new(connection),
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
}

/// What Redis said, for the core: nil, the fields of an array (an integer
/// reply as one field), `NOSCRIPT`, or a failure (an error, or a reply of
/// another shape).
fn answer(reply: RedisResult<Value>) -> FastAnswer {
    let fields = match reply {
        Ok(Value::Nil) => return FastAnswer::Nil,
        Ok(Value::Array(fields)) => fields,
        Ok(Value::Int(number)) => {
            return FastAnswer::Fields(vec![Some(number.to_string().into_bytes())]);
        }
        Ok(other) => return FastAnswer::Failed(format!("a reply of another shape: {other:?}")),
        Err(error) if error.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
            return FastAnswer::NoScript;
        }
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

/// A fast path under one store's policy: the core's [`FastPath`] for its
/// record drivers, and the connection their Redis steps run on.
#[derive(Debug, Clone)]
pub(crate) struct BoundFastPath {
    redis: RedisFastPath,
    core: FastPath,
}

impl BoundFastPath {
    /// The core's fast path, for [`RecordDriver::with_fast_path`](mintid::store::RecordDriver::with_fast_path).
    pub(crate) fn core(&self) -> FastPath {
        self.core
    }

    /// Runs a Redis step of the record driver (`EVALSHA`, or `EVAL` when
    /// the call says so): what Redis said. Down, slow, failing over: a
    /// failed answer, and the driver goes on to the database.
    pub(crate) async fn run(&self, call: &RedisCall) -> FastAnswer {
        let mut command = redis::cmd(if call.eval { "EVAL" } else { "EVALSHA" });
        command
            .arg(if call.eval { call.source } else { call.sha1 })
            .arg(call.keys.len());
        for key in &call.keys {
            command.arg(key.as_str());
        }
        for arg in &call.args {
            command.arg(arg.as_slice());
        }
        answer(self.redis.shared.connection.query(&command).await)
    }

    /// Counts what a driver's fast path came to.
    pub(crate) fn count(&self, report: FastReport) {
        crate::telemetry::fast_path(report.lookup, report.write_failures);
        let shared = &self.redis.shared;
        let counter = match report.lookup {
            Some("hit") => Some(&shared.hits),
            Some("miss") => Some(&shared.misses),
            Some(_) => Some(&shared.fallbacks),
            None => None,
        };
        if let Some(counter) = counter {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        shared
            .write_failures
            .fetch_add(u64::from(report.write_failures), Ordering::Relaxed);
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
        assert_eq!(
            answer(Ok(Value::Int(1))),
            FastAnswer::Fields(vec![Some(b"1".to_vec())])
        );
        let no_script =
            redis::RedisError::from((ErrorKind::Server(ServerErrorKind::NoScript), "NOSCRIPT"));
        assert_eq!(answer(Err(no_script)), FastAnswer::NoScript);
        let failed = |reply| matches!(answer(reply), FastAnswer::Failed(_));
        assert!(failed(Ok(Value::Okay)));
        assert!(failed(Ok(Value::Array(vec![Value::Double(1.5)]))));
        let timeout = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(failed(Err(timeout)));
    }
}
