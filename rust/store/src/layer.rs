//! The `tower::Layer` of the HTTP integrations: `Idempotency-Key` and signed
//! request IDs, run once through an [`IdempotencyStore`], with the rules,
//! problem documents and stored responses of every mintid language
//! (`mintid::http`, docs/spec.md "HTTP integrations", tests/http/README.md).
//! It works in axum and in any tower/hyper service; the grant endpoint is
//! served by the layer itself, so it is never covered. In the
//! same-transaction mode ([`IdempotencyLayer::same_transaction`]) the
//! handler writes on the record's [`Transaction`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use mintid::http::{
    Admission, DEFAULT_BODY_LIMIT, DEFAULT_GRANT_TTL_MILLIS, DEFAULT_METHODS,
    DEFAULT_STORED_HEADERS, GRANT_CONTENT_TYPE, HttpResponse, IDEMPOTENCY_KEY_HEADER, KeySource,
    REQUEST_ID_HEADER, admission, decode_envelope, default_kind, encode_envelope,
    fingerprint_request, grant_document, key_refusal, problem_document, status_document,
};
use mintid::key::{KeyError, KeyPart, parse_header};
use mintid::record::{
    PROBLEM_CONTENT_TYPE, Problem, REPLAYED_HEADER, REPLAYED_VALUE, RETRY_AFTER_HEADER,
    retry_after_secs,
};
use mintid::request_id::Freshness;
use mintid::store::database_failure;
use mintid::{IdempotencyKey, KeyRing};
use tokio::sync::{mpsc, oneshot};

use crate::backend::{Backend, classify};
use crate::error::{Error, OperationError};
use crate::idempotency::{IdempotencyStore, RunResult, StoreRequest};
use crate::telemetry;
use mintid::store::StoredResponse;

/// Any error a body can fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of the requests the inner service gets and of the responses the
/// layer sends: the original streaming body where the layer does not cover
/// the request, the buffered one where it does.
#[derive(Debug)]
pub struct LayerBody(UnsyncBoxBody<Bytes, BoxError>);

impl LayerBody {
    /// The body of `body`'s frames.
    pub fn new<B>(body: B) -> Self
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        Self(body.map_err(Into::into).boxed_unsync())
    }
}

impl Body for LayerBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.get_mut().0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.size_hint()
    }
}

type Scope = Arc<dyn Fn(&Parts) -> Option<String> + Send + Sync>;
type Predicate = Arc<dyn Fn(&Parts) -> bool + Send + Sync>;
type Kind = Arc<dyn Fn(&Parts) -> String + Send + Sync>;

/// The grant endpoint the layer serves itself: a `POST` to `path` (the full
/// path) answers the grant of the layer's scope for the request, as JSON
/// `{"grant", "expiresMillis"}` with `Cache-Control: no-store`, or 401 when
/// the scope function gives no user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRoute {
    /// The full path of the endpoint, e.g. `/api/grant`.
    pub path: String,
    /// How long a grant lasts, in milliseconds.
    pub ttl_millis: u64,
}

impl GrantRoute {
    /// The endpoint at `path`, its grants lasting the core's default (an hour).
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            ttl_millis: DEFAULT_GRANT_TTL_MILLIS,
        }
    }
}

/// The settings of the layer; all but the store and the scope have the
/// core's defaults.
struct Config<DB: Backend> {
    store: IdempotencyStore<DB>,
    scope: Scope,
    key_ring: Option<Arc<KeyRing>>,
    request_id_header: HeaderName,
    accept_idempotency_key: Option<bool>,
    freshness: Freshness,
    methods: Vec<Method>,
    routes: Option<Predicate>,
    body_limit: u64,
    stored_headers: Vec<String>,
    kind: Option<Kind>,
    grant: Option<GrantRoute>,
    same_transaction: bool,
}

clone_fields!(
    Config,
    store,
    scope,
    key_ring,
    request_id_header,
    accept_idempotency_key,
    freshness,
    methods,
    routes,
    body_limit,
    stored_headers,
    kind,
    grant,
    same_transaction
);

/// The idempotency layer: covered requests (`POST` and `PATCH` by default)
/// need a key, run once through the store, and duplicates get the stored
/// response with `Idempotent-Replayed: true`. The inner service finds the
/// request's [`IdempotencyKey`] in its extensions (axum:
/// `Extension<IdempotencyKey>`).
pub struct IdempotencyLayer<DB: Backend> {
    config: Arc<Config<DB>>,
}

clone_fields!(IdempotencyLayer, config);

impl<DB: Backend> std::fmt::Debug for IdempotencyLayer<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdempotencyLayer")
            .field("methods", &self.config.methods)
            .field("body_limit", &self.config.body_limit)
            .field("grant", &self.config.grant)
            .finish_non_exhaustive()
    }
}

impl<DB: Backend> IdempotencyLayer<DB> {
    /// Records in `store`; `scope` names whose keys these are from the
    /// request (the authenticated user or tenant, e.g. `user:<id>`, 1-64
    /// bytes), `None` when nobody is logged in (a covered request is then
    /// 401).
    pub fn new(
        store: IdempotencyStore<DB>,
        scope: impl Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            config: Arc::new(Config {
                store,
                scope: Arc::new(scope),
                key_ring: None,
                request_id_header: HeaderName::from_bytes(REQUEST_ID_HEADER.as_bytes())
                    .expect("a header name"),
                accept_idempotency_key: None,
                freshness: Freshness::DEFAULT,
                methods: DEFAULT_METHODS
                    .iter()
                    .map(|method| Method::from_bytes(method.as_bytes()).expect("a method"))
                    .collect(),
                routes: None,
                body_limit: DEFAULT_BODY_LIMIT,
                stored_headers: DEFAULT_STORED_HEADERS.map(String::from).to_vec(),
                kind: None,
                grant: None,
                same_transaction: false,
            }),
        }
    }

    fn with(mut self, change: impl FnOnce(&mut Config<DB>)) -> Self {
        change(Arc::make_mut(&mut self.config));
        self
    }

    /// Verifies signed request IDs (from the `Mintid-Request-Id` header) with
    /// `key_ring`; plain `Idempotency-Key` values are then no longer
    /// accepted unless [`accept_idempotency_key`](Self::accept_idempotency_key)
    /// says so.
    pub fn with_key_ring(self, key_ring: KeyRing) -> Self {
        self.with(|config| config.key_ring = Some(Arc::new(key_ring)))
    }

    /// Reads signed request IDs from `header` (e.g. `Idempotency-Key`).
    pub fn with_request_id_header(self, header: HeaderName) -> Self {
        self.with(|config| config.request_id_header = header)
    }

    /// Whether plain `Idempotency-Key` values are accepted (default: only
    /// without a key ring).
    pub fn accept_idempotency_key(self, accept: bool) -> Self {
        self.with(|config| config.accept_idempotency_key = Some(accept))
    }

    /// The freshness bounds of signed request IDs (default the core's: 24 h
    /// of age, 5 min of skew; the age should not exceed the retention).
    pub fn with_freshness(self, freshness: Freshness) -> Self {
        self.with(|config| config.freshness = freshness)
    }

    /// The methods covered (default `POST` and `PATCH`); others pass through.
    pub fn with_methods(self, methods: impl IntoIterator<Item = Method>) -> Self {
        self.with(|config| config.methods = methods.into_iter().collect())
    }

    /// Which requests of a covered method need a key (default: all).
    pub fn with_routes(self, routes: impl Fn(&Parts) -> bool + Send + Sync + 'static) -> Self {
        self.with(|config| config.routes = Some(Arc::new(routes)))
    }

    /// The largest body read, in bytes (default 1 MiB); above it, 413.
    pub fn with_body_limit(self, bytes: u64) -> Self {
        self.with(|config| config.body_limit = bytes)
    }

    /// The response headers stored and replayed besides `content-type`
    /// (default `mintid::http::DEFAULT_STORED_HEADERS`).
    pub fn with_stored_headers<S: Into<String>>(self, names: impl IntoIterator<Item = S>) -> Self {
        self.with(|config| config.stored_headers = names.into_iter().map(Into::into).collect())
    }

    /// The key's kind of a request (default the core's `default_kind` of
    /// its method and full path).
    pub fn with_kind(self, kind: impl Fn(&Parts) -> String + Send + Sync + 'static) -> Self {
        self.with(|config| config.kind = Some(Arc::new(kind)))
    }

    /// Serves the grant endpoint `route`: never covered. It needs the key
    /// ring ([`with_key_ring`](Self::with_key_ring)), which verifies the
    /// request IDs its grants mint; without one it answers 500 (logged).
    pub fn with_grant(self, route: GrantRoute) -> Self {
        self.with(|config| config.grant = Some(route))
    }

    /// The **same-transaction** mode (by default the layer runs the
    /// **run-once** way: the handler commits its own writes, then the record
    /// completes). A covered request then runs inside one transaction of the
    /// store's pool ([`IdempotencyStore::in_transaction`]); the handler finds
    /// it in its extensions (axum: `Extension<Transaction<DB>>`) and writes
    /// on it, so its rows, the claim and the completed record commit
    /// together or roll back together. A failed handler (a 5xx) rolls them
    /// all back and nothing is stored: the next request with the key runs it
    /// again.
    pub fn same_transaction(self) -> Self {
        self.with(|config| config.same_transaction = true)
    }
}

/// Work on the record's connection, as [`Transaction::run`] takes it.
pub type TransactionWork<'c, T> = Pin<Box<dyn Future<Output = T> + Send + 'c>>;

/// One piece of work queued for the record's connection.
type Job<DB> = Box<
    dyn for<'c> FnOnce(&'c mut <DB as sqlx::Database>::Connection) -> TransactionWork<'c, ()>
        + Send,
>;

/// The record's transaction, for a handler under
/// [`IdempotencyLayer::same_transaction`]: the request's extensions hold it
/// (axum: `Extension<Transaction<DB>>`). What the handler runs on it commits
/// with the record, or rolls back with it.
pub struct Transaction<DB: Backend> {
    jobs: mpsc::UnboundedSender<Job<DB>>,
}

clone_fields!(Transaction, jobs);

impl<DB: Backend> std::fmt::Debug for Transaction<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction").finish_non_exhaustive()
    }
}

impl<DB: Backend> Transaction<DB> {
    /// Runs `work` on the transaction's connection (while the handler runs)
    /// and gives its output: `tx.run(|conn| Box::pin(async move {
    /// sqlx::query("INSERT …").execute(conn).await })).await?`.
    ///
    /// # Errors
    ///
    /// [`TransactionEnded`] once the handler's request has ended.
    pub async fn run<T, F>(&self, work: F) -> Result<T, TransactionEnded>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut DB::Connection) -> TransactionWork<'c, T> + Send + 'static,
    {
        let (reply, output) = oneshot::channel();
        let job: Job<DB> = Box::new(move |conn| {
            Box::pin(async move {
                let _ = reply.send(work(conn).await);
            })
        });
        self.jobs.send(job).map_err(|_| TransactionEnded)?;
        output.await.map_err(|_| TransactionEnded)
    }
}

/// A [`Transaction`] used after its request ended: its work did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionEnded;

impl std::fmt::Display for TransactionEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the record's transaction has ended: use it only while the handler runs")
    }
}

impl std::error::Error for TransactionEnded {}

/// Runs the handler's `call` while serving its [`Transaction`]'s work on `conn`.
async fn serving<T, DB: Backend>(
    call: impl Future<Output = T>,
    mut jobs: mpsc::UnboundedReceiver<Job<DB>>,
    conn: &mut DB::Connection,
) -> T {
    let mut call = std::pin::pin!(call);
    loop {
        let next = std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = call.as_mut().poll(cx) {
                return Poll::Ready(Ok(output));
            }
            match jobs.poll_recv(cx) {
                Poll::Ready(Some(job)) => Poll::Ready(Err(job)),
                // No work queued, or no handle left: the call goes on.
                Poll::Ready(None) | Poll::Pending => Poll::Pending,
            }
        })
        .await;
        match next {
            Ok(output) => return output,
            Err(job) => job(conn).await,
        }
    }
}

impl<S, DB: Backend> tower_layer::Layer<S> for IdempotencyLayer<DB> {
    type Service = Idempotency<S, DB>;

    fn layer(&self, inner: S) -> Self::Service {
        Idempotency {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}

/// The service of [`IdempotencyLayer`] around `S`.
pub struct Idempotency<S, DB: Backend> {
    inner: S,
    config: Arc<Config<DB>>,
}

impl<S: Clone, DB: Backend> Clone for Idempotency<S, DB> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            config: Arc::clone(&self.config),
        }
    }
}

impl<S: std::fmt::Debug, DB: Backend> std::fmt::Debug for Idempotency<S, DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, DB, ReqBody, ResBody> tower_service::Service<Request<ReqBody>> for Idempotency<S, DB>
where
    DB: Backend,
    S: tower_service::Service<Request<LayerBody>, Response = Response<ResBody>>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
    S::Error: Send,
    ReqBody: Body<Data = Bytes> + Send + 'static,
    ReqBody::Error: Into<BoxError>,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    type Response = Response<LayerBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        // The ready service serves this request; a clone waits for the next.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let config = Arc::clone(&self.config);
        Box::pin(async move { config.serve(inner, request).await })
    }
}

/// The request as the rules see it: its full path and raw query.
struct Target {
    path: String,
    query: String,
}

fn target_of(parts: &Parts) -> Target {
    #[cfg(feature = "axum")]
    let uri = parts
        .extensions
        .get::<axum::extract::OriginalUri>()
        .map_or(&parts.uri, |original| &original.0);
    #[cfg(not(feature = "axum"))]
    let uri = &parts.uri;
    Target {
        path: uri.path().to_owned(),
        query: uri.query().unwrap_or("").to_owned(),
    }
}

/// A request whose key was read and verified.
struct Admitted {
    key: IdempotencyKey,
    key_created_millis: Option<u64>,
}

/// What the handler answered, kept to send it as it was.
type Answered<E> = Mutex<Option<Result<(http::response::Parts, Bytes), E>>>;

impl<DB: Backend> Config<DB> {
    async fn serve<S, ReqBody, ResBody>(
        &self,
        inner: S,
        request: Request<ReqBody>,
    ) -> Result<Response<LayerBody>, S::Error>
    where
        S: tower_service::Service<Request<LayerBody>, Response = Response<ResBody>> + Send,
        S::Future: Send,
        S::Error: Send,
        ReqBody: Body<Data = Bytes> + Send + 'static,
        ReqBody::Error: Into<BoxError>,
        ResBody: Body<Data = Bytes> + Send + 'static,
        ResBody::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        let target = target_of(&parts);
        if let Some(route) = &self.grant
            && target.path == route.path
        {
            if parts.method == Method::POST {
                return Ok(self.grant_answer(route, &parts));
            }
            return pass(inner, parts, body).await;
        }
        let covered = self.methods.contains(&parts.method)
            && self.routes.as_ref().is_none_or(|routes| routes(&parts));
        if !covered {
            return pass(inner, parts, body).await;
        }
        let admitted = match self.admit(&parts, &target) {
            Ok(admitted) => admitted,
            Err(answer) => return Ok(*answer),
        };
        let bytes = match Limited::new(body, usize::try_from(self.body_limit).unwrap_or(usize::MAX))
            .collect()
            .await
        {
            Ok(collected) => collected.to_bytes(),
            Err(error) if error.is::<LengthLimitError>() => {
                let detail = format!("the body exceeds {} bytes", self.body_limit);
                return Ok(status_answer(413, Some(&detail)));
            }
            Err(error) => {
                tracing::error!(error = %error, "mintid: the request body could not be read; answering 500");
                return Ok(status_answer(500, None));
            }
        };
        let content_type = header_text(&parts.headers, http::header::CONTENT_TYPE.as_str());
        let fingerprint = match fingerprint_request(content_type.as_deref(), &target.query, &bytes)
        {
            Ok(fingerprint) => fingerprint,
            Err(error) if error.problem() == Some(Problem::MalformedBody) => {
                return Ok(problem_answer(
                    Problem::MalformedBody,
                    Some(&error.to_string()),
                ));
            }
            Err(error) => return Ok(server_fault("the fingerprint", &error)),
        };
        let mut store_request = StoreRequest::new(fingerprint);
        if let Some(created) = admitted.key_created_millis {
            store_request = store_request.with_key_created_millis(created);
        }
        let answered: Answered<S::Error> = Mutex::new(None);
        let mut request = Request::from_parts(parts, boxed(Full::new(bytes)));
        request.extensions_mut().insert(admitted.key.clone());
        let result = if self.same_transaction {
            let (jobs, queue) = mpsc::unbounded_channel();
            request.extensions_mut().insert(Transaction::<DB> { jobs });
            let operation = async |conn: &mut DB::Connection| {
                let result = serving::<_, DB>(call_whole(inner, request), queue, conn).await;
                self.kept(result, &answered)
            };
            self.in_transaction(&admitted.key, store_request, operation)
                .await
        } else {
            let operation = async |_lease| self.kept(call_whole(inner, request).await, &answered);
            self.store
                .run_once(&admitted.key, store_request, operation)
                .await
        };
        let handled = answered
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let handled = match handled {
            Some(Err(error)) => return Err(error),
            Some(Ok(handled)) => Some(handled),
            None => None,
        };
        Ok(match (result, handled) {
            (Ok(RunResult::Executed(_)), Some((parts, body))) => sent(parts, body),
            // The handler's own 5xx, stored as its final failure (or released).
            (Err(Error::Operation(_)), Some((parts, body))) => sent(parts, body),
            (Ok(result), _) => answer_of(result),
            (Err(error), handled) => failure_answer(&error, handled.is_some()),
        })
    }

    /// The handler's outcome as the operation's result; the outcome is kept
    /// in `answered`, to send it as it was.
    fn kept<E>(
        &self,
        result: Result<(http::response::Parts, Bytes), E>,
        answered: &Answered<E>,
    ) -> Result<StoredResponse, OperationError> {
        let stored = match &result {
            Ok((parts, body)) => self.stored(parts, body),
            Err(_) => Err(OperationError::retryable("the service failed")),
        };
        *answered.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        stored
    }

    /// The store's same-transaction way in a transaction of its pool
    /// (begun with the write lock where the dialect has one), committed
    /// when it succeeded and rolled back otherwise.
    async fn in_transaction<F>(
        &self,
        key: &IdempotencyKey,
        request: StoreRequest,
        operation: F,
    ) -> Result<RunResult, Error>
    where
        F: AsyncFnOnce(&mut DB::Connection) -> Result<StoredResponse, OperationError>,
    {
        let failed = |error: sqlx::Error| Error::from(database_failure(&classify(&error)));
        let pool = self.store.store().pool();
        let mut transaction = pool.begin_with(DB::begin(true)).await.map_err(failed)?;
        match self
            .store
            .in_transaction(&mut transaction, key, request, operation)
            .await
        {
            Ok(result) => {
                transaction.commit().await.map_err(failed)?;
                Ok(result)
            }
            Err(error) => {
                if let Err(rollback) = transaction.rollback().await {
                    tracing::warn!(error = %rollback, "mintid: the rollback failed; the connection is closed");
                }
                Err(error)
            }
        }
    }

    /// The grant endpoint's answer.
    fn grant_answer(&self, route: &GrantRoute, parts: &Parts) -> Response<LayerBody> {
        let Some(ring) = &self.key_ring else {
            return server_fault("a grant", &"the grant endpoint needs the key ring");
        };
        let Some(scope) = (self.scope)(parts) else {
            return status_answer(401, Some("log in to get a grant"));
        };
        let expires = self
            .store
            .store()
            .clock()
            .now_millis()
            .saturating_add(route.ttl_millis);
        match ring.issue_grant(&scope, expires) {
            Ok(grant) => answer(
                200,
                &[
                    ("content-type", GRANT_CONTENT_TYPE),
                    ("cache-control", "no-store"),
                ],
                grant_document(&grant.to_text(), expires).into(),
            ),
            Err(error) => server_fault("the grant", &error),
        }
    }

    /// Reads the key: a signed request ID (with a key ring) from its header,
    /// else an accepted `Idempotency-Key`, verified and scoped; or the answer
    /// refusing it. Which header, or why none: the core's [`admission`] (401
    /// without a caller, 400 `missing_key` naming the accepted headers); a
    /// key the client sent that the core refuses: [`key_refusal`]'s problem,
    /// a signed one counted in `mintid.request_id.rejected`.
    fn admit(&self, parts: &Parts, target: &Target) -> Result<Admitted, Box<Response<LayerBody>>> {
        let ring = self.key_ring.as_deref();
        let signed = ring.and(parts.headers.get(&self.request_id_header));
        let plain = parts.headers.get(IDEMPOTENCY_KEY_HEADER);
        let scope = (self.scope)(parts);
        // A HeaderName is in lower case: the default is named as it is spelled.
        let header = self.request_id_header.as_str();
        let header = if header.eq_ignore_ascii_case(REQUEST_ID_HEADER) {
            REQUEST_ID_HEADER
        } else {
            header
        };
        let accepts_plain = self.accept_idempotency_key.unwrap_or(ring.is_none());
        let (caller, sent) = (scope.is_some(), (signed.is_some(), plain.is_some()));
        let source = match admission(ring.map(|_| header), accepts_plain, caller, sent.0, sent.1) {
            Admission::Read(source) => source,
            Admission::Refused {
                status, document, ..
            } => return Err(Box::new(problem_body(status, document))),
        };
        let scope = scope.expect("the core admits no request without a caller");
        let kind = match &self.kind {
            Some(kind) => kind(parts),
            None => default_kind(parts.method.as_str(), &target.path)
                .map_err(|error| Box::new(server_fault("the key kind", &error)))?,
        };
        let refused = |code: &'static str, part: Option<KeyPart>, detail: String| {
            Box::new(match key_refusal(source, code, part.map(KeyPart::name)) {
                Some(problem) => {
                    if source == KeySource::SignedRequestId {
                        telemetry::request_id_rejected(code);
                    }
                    problem_answer(problem, Some(&detail))
                }
                // A bad kind or scope, a ring that cannot verify: the server's.
                None => server_fault("the key", &detail),
            })
        };
        let key_error = |error: KeyError| refused(error.code(), error.part(), error.to_string());
        let (key, key_created_millis) = match (source, ring, signed) {
            (KeySource::SignedRequestId, Some(ring), Some(signed)) => {
                let text = parse_header(signed.as_bytes()).map_err(key_error)?;
                let now = self.store.store().clock().now_millis();
                let uuid = ring
                    .verify(&text, &scope, now, &self.freshness)
                    .map_err(|error| refused(error.code(), None, error.to_string()))?;
                let key = IdempotencyKey::new(&kind, &scope, &uuid.to_string());
                (key, Some(uuid.timestamp_millis()))
            }
            _ => {
                let header = plain.map_or(&[][..], HeaderValue::as_bytes);
                (IdempotencyKey::from_header(&kind, &scope, header), None)
            }
        };
        Ok(Admitted {
            key: key.map_err(key_error)?,
            key_created_millis,
        })
    }

    /// The stored form of the handler's response: a 5xx is a final failure
    /// with its response; a response that cannot be stored releases the key.
    fn stored(
        &self,
        parts: &http::response::Parts,
        body: &Bytes,
    ) -> Result<StoredResponse, OperationError> {
        let response = HttpResponse {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .filter_map(|(name, value)| {
                    Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
                })
                .collect(),
            body: body.to_vec(),
        };
        let envelope = encode_envelope(&response, &self.stored_headers)
            .map_err(|error| OperationError::retryable(error.code()))?;
        let stored = StoredResponse {
            content_type: envelope.content_type,
            body: envelope.bytes,
        };
        if parts.status.is_server_error() {
            let message = format!("the handler answered {}", parts.status.as_u16());
            return Err(OperationError::new(message).with_response(stored));
        }
        Ok(stored)
    }
}

/// Hands an uncovered request to the inner service as it is.
async fn pass<S, ReqBody, ResBody>(
    mut inner: S,
    parts: Parts,
    body: ReqBody,
) -> Result<Response<LayerBody>, S::Error>
where
    S: tower_service::Service<Request<LayerBody>, Response = Response<ResBody>>,
    ReqBody: Body<Data = Bytes> + Send + 'static,
    ReqBody::Error: Into<BoxError>,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    let response = inner.call(Request::from_parts(parts, boxed(body))).await?;
    Ok(response.map(boxed))
}

/// Runs the inner service and reads its whole response.
async fn call_whole<S, ResBody>(
    mut inner: S,
    request: Request<LayerBody>,
) -> Result<(http::response::Parts, Bytes), S::Error>
where
    S: tower_service::Service<Request<LayerBody>, Response = Response<ResBody>>,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Into<BoxError>,
{
    let (parts, body) = inner.call(request).await?.into_parts();
    match body.collect().await {
        Ok(collected) => Ok((parts, collected.to_bytes())),
        Err(error) => {
            let error: BoxError = error.into();
            tracing::error!(error = %error, "mintid: the response body could not be read; answering 500");
            let (parts, _) = status_answer(500, None).into_parts();
            Ok((parts, Bytes::new()))
        }
    }
}

fn boxed<B>(body: B) -> LayerBody
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    LayerBody::new(body)
}

fn sent(parts: http::response::Parts, body: Bytes) -> Response<LayerBody> {
    Response::from_parts(parts, boxed(Full::new(body)))
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(String::from)
}

/// A response of the layer's own, from the core's documents.
fn answer(status: u16, headers: &[(&str, &str)], body: Bytes) -> Response<LayerBody> {
    let mut response = Response::new(boxed(Full::new(body)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// The `application/problem+json` answer of the core's `problem`.
fn problem_answer(problem: Problem, detail: Option<&str>) -> Response<LayerBody> {
    problem_body(problem.status(), problem_document(problem, detail))
}

/// An `application/problem+json` answer of `status` with the core's `document`.
fn problem_body(status: u16, document: String) -> Response<LayerBody> {
    answer(
        status,
        &[("content-type", PROBLEM_CONTENT_TYPE)],
        document.into(),
    )
}

/// A plain HTTP status as a problem (type `about:blank`: 401, 413, 500).
fn status_answer(status: u16, detail: Option<&str>) -> Response<LayerBody> {
    problem_body(status, status_document(status, detail).unwrap_or_default())
}

/// A fault of the server's own (its configuration): logged, answered 500.
fn server_fault(what: &str, error: &dyn std::fmt::Display) -> Response<LayerBody> {
    tracing::error!(error = %error, "mintid: {what} could not be made; answering 500");
    status_answer(500, None)
}

/// The answer of a request that was not run, or ran and was stored.
fn answer_of(result: RunResult) -> Response<LayerBody> {
    match result {
        RunResult::Executed(stored) => replay(&stored, false),
        RunResult::Replayed {
            response: Some(stored),
            ..
        } => replay(&stored, true),
        RunResult::Replayed {
            response: None,
            error,
            ..
        } => {
            let mut response = status_answer(500, error.as_deref());
            mark_replayed(&mut response);
            response
        }
        RunResult::InProgress { retry_after_millis } => {
            let secs = retry_after_secs(retry_after_millis).to_string();
            let mut response = problem_answer(Problem::InProgress, None);
            if let Ok(value) = HeaderValue::from_str(&secs) {
                response.headers_mut().insert(RETRY_AFTER_HEADER, value);
            }
            response
        }
        RunResult::FingerprintMismatch => problem_answer(Problem::FingerprintMismatch, None),
        RunResult::KeyTooOld => problem_answer(Problem::KeyTooOld, None),
    }
}

fn mark_replayed(response: &mut Response<LayerBody>) {
    response
        .headers_mut()
        .insert(REPLAYED_HEADER, HeaderValue::from_static(REPLAYED_VALUE));
}

/// The response a stored envelope replays.
fn replay(stored: &StoredResponse, replayed: bool) -> Response<LayerBody> {
    match decode_envelope(&stored.content_type, &stored.body) {
        Ok(decoded) => {
            let headers: Vec<(&str, &str)> = decoded
                .headers
                .iter()
                .map(|(name, value)| (name.as_str(), value.as_str()))
                .collect();
            let mut response = answer(decoded.status, &headers, decoded.body.into());
            if replayed {
                mark_replayed(&mut response);
            }
            response
        }
        Err(error) => server_fault("the stored response", &error),
    }
}

/// The answer when the store (or the record rules) failed: before the
/// handler ran, the problem the core attaches (503 `storage_unavailable` for
/// every store error); after it ran, 500, since its outcome is the record's
/// to tell. Never a detail: the error and the driver's message go to the log.
fn failure_answer(error: &Error, ran: bool) -> Response<LayerBody> {
    let problem = match error {
        Error::Driver(driver) if !ran => driver.problem(),
        _ => None,
    };
    let response = problem.map_or_else(|| status_answer(500, None), |p| problem_answer(p, None));
    let when = if ran { "after" } else { "before" };
    let cause = match error {
        Error::Driver(mintid::store::DriverError::Store(store)) => store.db_message(),
        _ => None,
    };
    tracing::error!(
        code = error.code().unwrap_or(""),
        error = %error,
        cause = cause.unwrap_or(""),
        "mintid: the store failed {when} the handler ran; answering {}",
        response.status().as_u16()
    );
    response
}
