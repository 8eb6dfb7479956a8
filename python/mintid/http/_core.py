"""The framework-neutral part of the HTTP integrations: which requests are
covered, reading and verifying the key, fingerprinting the body, running the
handler once through the store and turning every outcome into an
:class:`HttpAnswer`. :mod:`mintid.http.asgi` only moves bytes between ASGI
and this class. The behaviour is the one of ``tests/http/README.md``.
"""  # noqa: D205

from __future__ import annotations

import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, cast

from mintid._key import IdempotencyKey, parse_idempotency_key_header
from mintid._native import check_uint
from mintid._record import Problem, RecordPolicy, retry_after_secs
from mintid._request_id import KeyRing
from mintid._uuid import Uuid7
from mintid.errors import (
    HttpBodyConsumedError,
    HttpMalformedBodyError,
    IdempotencyKeyError,
    MintidError,
    RequestIdError,
)
from mintid.http._answer import (
    HttpAnswer,
    from_stored,
    problem_answer,
    refusal_answer,
    replayed_header,
    retry_after,
    status_answer,
    to_stored,
)
from mintid.http._grant import GrantRoute, grant_answer
from mintid.http._rules import (
    DEFAULT_BODY_LIMIT,
    DEFAULT_METHODS,
    DEFAULT_STORED_HEADERS,
    IDEMPOTENCY_KEY_HEADER,
    REQUEST_ID_HEADER,
    admit_key,
    check_body_read,
    default_kind,
    fingerprint_body,
    fingerprint_request,
    is_json_content_type,
    key_refusal,
)
from mintid.store import (
    OperationError,
    RunResult,
    StoredResponse,
    StoreError,
    StoreMetrics,
    StoreRequest,
)

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_METHODS",
    "DEFAULT_STORED_HEADERS",
    "IDEMPOTENCY_KEY_HEADER",
    "REQUEST_ID_HEADER",
    "Admitted",
    "AsyncRunOnceStore",
    "AsyncTransactionStore",
    "GrantRoute",
    "HttpIdempotency",
    "HttpRequestView",
    "RunOnceStore",
    "TransactionStore",
    "answer_of",
    "fingerprint_body",
    "fingerprint_request",
    "is_json_content_type",
    "transaction",
]

# The core names the problem of a failed verification (`RequestIdError::problem()`);
# an error without one (an invalid scope, a key-ring fault) is the server's own.
_PROBLEM_BY_NAME: Final = {problem.problem_name: problem for problem in Problem}

_log = logging.getLogger("mintid.http")

#: The connection of the record's transaction a handler runs in (same-transaction mode).
_TRANSACTION: contextvars.ContextVar[Any] = contextvars.ContextVar("mintid_http_transaction")


def transaction() -> Any:
    """The connection of the record's transaction the current handler runs in.

    Under an :class:`HttpIdempotency` made with ``same_transaction=True``, a
    covered request's handler writes on this connection (the database
    driver's, as :meth:`Database.transaction <mintid.store.Database.transaction>`
    gives it): its writes, the claim and the completed record commit together,
    or roll back together. Raises :class:`LookupError` anywhere else.
    """
    try:
        return _TRANSACTION.get()
    except LookupError:
        raise LookupError(
            "no record transaction here: only a covered request's handler under "
            "HttpIdempotency(same_transaction=True) runs in one"
        ) from None


def _problem_of(error: Exception) -> Problem | None:
    """The problem the core attaches to ``error``, if any."""
    if isinstance(error, MintidError) and error.problem_name is not None:
        return _PROBLEM_BY_NAME.get(error.problem_name)
    # Every store.* error answers storage_unavailable (the core's rule), also
    # one raised by the host's executor without a problem attached.
    if isinstance(error, StoreError):
        return Problem.STORAGE_UNAVAILABLE
    return None


class RunOnceStore(Protocol):
    """What the integrations need of a store (an :class:`~mintid.store.IdempotencyStore`)."""

    policy: RecordPolicy

    def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], StoredResponse],
    ) -> RunResult:
        """Run ``operation`` once for ``key``."""
        ...


class AsyncRunOnceStore(Protocol):
    """What the ASGI middleware needs of an asyncio store
    (an :class:`~mintid.store.aio.AsyncIdempotencyStore`).
    """  # noqa: D205

    policy: RecordPolicy

    async def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], Awaitable[StoredResponse]],
    ) -> RunResult:
        """Run ``operation`` once for ``key``."""
        ...


class TransactionStore(RunOnceStore, Protocol):
    """What the same-transaction mode needs of a store: its database's
    transactions and :meth:`~mintid.store.IdempotencyStore.in_transaction`.
    """  # noqa: D205

    database: Any

    def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], StoredResponse],
    ) -> RunResult:
        """Run ``operation`` once for ``key`` inside the transaction on ``connection``."""
        ...


class AsyncTransactionStore(AsyncRunOnceStore, Protocol):
    """:class:`TransactionStore` for asyncio
    (an :class:`~mintid.store.aio.AsyncIdempotencyStore`).
    """  # noqa: D205

    database: Any

    async def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], Awaitable[StoredResponse]],
    ) -> RunResult:
        """Run ``operation`` once for ``key`` inside the transaction on ``connection``."""
        ...


@dataclass(frozen=True)
class HttpRequestView:
    """A request as the neutral core sees it; ``raw`` is the framework's own
    (the ASGI scope, the WSGI environ).
    """  # noqa: D205

    #: The method, upper case.
    method: str
    #: The full path as the application sees it, mount prefix included
    #: (ASGI ``root_path``, WSGI ``SCRIPT_NAME``), without the query.
    path: str
    #: Header names (lower case) and values.
    headers: tuple[tuple[str, str], ...]
    #: The framework's request.
    raw: Any = field(repr=False)
    #: The raw query string, without the ``?`` (empty without one).
    query: str = ""

    def header(self, name: str) -> str | None:
        """A header's value (repeated ones joined with ``, ``), or ``None``."""
        wanted = name.lower()
        values = [value for key, value in self.headers if key == wanted]
        return ", ".join(values) if values else None


@dataclass(frozen=True)
class Admitted:
    """A request whose key was read and verified."""

    key: IdempotencyKey
    #: When the key was created (a signed request ID's UUIDv7 time), if known.
    key_created_millis: int | None
    #: The request's raw query string, which takes part in its fingerprint.
    query: str = ""


def _default_kind(request: HttpRequestView) -> str:
    return default_kind(request.method, request.path)


class HttpIdempotency:
    """The neutral middleware: one per app (or per group of routes sharing settings)."""

    def __init__(
        self,
        *,
        store: RunOnceStore | AsyncRunOnceStore,
        scope: Callable[[HttpRequestView], str | None],
        key_ring: KeyRing | None = None,
        request_id_header: str = REQUEST_ID_HEADER,
        accept_idempotency_key: bool | None = None,
        max_age_millis: int | None = None,
        max_skew_millis: int | None = None,
        methods: Iterable[str] = DEFAULT_METHODS,
        routes: Callable[[HttpRequestView], bool] | None = None,
        body_limit: int = DEFAULT_BODY_LIMIT,
        stored_headers: Iterable[str] = DEFAULT_STORED_HEADERS,
        kind: Callable[[HttpRequestView], str] | None = None,
        grant: GrantRoute | None = None,
        same_transaction: bool = False,
    ) -> None:
        """The settings; all but ``store`` and ``scope`` have safe defaults.

        ``scope`` names whose keys these are (``f"user:{id}"``), or ``None``
        when the request has no authenticated caller (answered 401); with a
        ``key_ring``, signed request IDs are read from ``request_id_header``
        and plain ``Idempotency-Key`` values only when
        ``accept_idempotency_key`` says so (default: only without a ring).
        With ``grant`` (it needs the ``key_ring``), the middleware itself
        serves the grant endpoint at ``grant.path``: never covered.

        By default a handler runs in the store's **run-once** way (it commits
        its own writes, then the record completes). With ``same_transaction``
        it runs in the **same-transaction** way: inside one transaction of the
        store's database, whose connection the handler gets from
        :func:`transaction`; the claim, the handler's writes and the completed
        record commit together, and a handler that fails (a 5xx, an exception)
        rolls them all back and stores nothing.
        """
        if not callable(getattr(store, "run_once", None)):
            raise TypeError("store must be an IdempotencyStore")
        if same_transaction and not callable(getattr(store, "in_transaction", None)):
            raise TypeError("same_transaction needs a store with in_transaction (IdempotencyStore)")
        if not callable(scope):
            raise TypeError("scope must be a function of the request")
        if key_ring is not None and not isinstance(key_ring, KeyRing):
            raise TypeError("key_ring must be a KeyRing")
        check_uint("body_limit", body_limit)
        if grant is not None and not isinstance(grant, GrantRoute):
            raise TypeError("grant must be a GrantRoute")
        if grant is not None and key_ring is None:
            raise ValueError("a grant endpoint needs the key_ring that verifies its request IDs")
        self._grant = grant
        self._store = store
        # Refused request IDs are reported where the store reports (its ``metrics``).
        metrics = getattr(store, "metrics", None)
        self._metrics = (
            metrics
            if isinstance(metrics, StoreMetrics) and metrics is not StoreMetrics.NONE
            else None
        )
        self._scope = scope
        self._ring = key_ring
        self._request_id_header = request_id_header
        self._accept_plain = (
            key_ring is None if accept_idempotency_key is None else accept_idempotency_key
        )
        self._max_age_ms = max_age_millis
        self._max_skew_ms = max_skew_millis
        self._methods = frozenset(method.upper() for method in methods)
        self._routes = routes
        self._stored_headers = tuple(stored_headers)
        self._kind = kind if kind is not None else _default_kind
        #: The largest body read, in bytes.
        self.body_limit = body_limit
        #: Whether handlers run in the record's transaction (see :func:`transaction`).
        self.same_transaction = same_transaction

    def grants(self, request: HttpRequestView) -> bool:
        """Whether ``request`` is a ``POST`` to the grant endpoint's path."""
        return (
            self._grant is not None
            and request.path == self._grant.path
            and request.method.upper() == "POST"
        )

    def grant(self, request: HttpRequestView) -> HttpAnswer | None:
        """The grant endpoint's answer when ``request`` is for it
        (:meth:`grants`): a grant for ``grant.scope(request)``, or 401; else
        ``None``.
        """  # noqa: D205
        route = self._grant
        if route is None or not self.grants(request):
            return None
        if inspect.iscoroutinefunction(route.scope):
            raise TypeError("an async grant scope function needs the ASGI middleware")
        scope = route.scope(request)
        assert scope is None or isinstance(scope, str), "a plain scope function gives a str"
        return self.grant_of(scope)

    def grant_of(self, scope: str | None) -> HttpAnswer:
        """The grant endpoint's answer for the logged-in user's ``scope`` (what
        ``grant.scope(request)`` gave, or awaited to): a grant, or 401 for ``None``.
        """  # noqa: D205
        route = self._grant
        if route is None or self._ring is None:
            raise ValueError("no grant endpoint is configured")
        return grant_answer(self._ring, scope, ttl_millis=route.ttl_millis)

    @property
    def grant_route(self) -> GrantRoute | None:
        """The grant endpoint the middleware serves, if any."""
        return self._grant

    def covers(self, request: HttpRequestView) -> bool:
        """Whether the request is covered: its method is, it is not for the
        grant endpoint, and the route predicate accepts it.
        """  # noqa: D205
        if self._grant is not None and request.path == self._grant.path:
            return False
        return request.method.upper() in self._methods and (
            self._routes is None or self._routes(request)
        )

    def admit(self, request: HttpRequestView) -> Admitted | HttpAnswer:
        """Read the key (a signed request ID, else an accepted ``Idempotency-Key``),
        verified and scoped; or the answer refusing it: 401 when the scope
        function finds no caller (``None``), 400 when no accepted header was
        sent (the core's rule, its detail naming the header the route takes).
        """  # noqa: D205
        scope = self._scope(request)
        if scope is not None and not isinstance(scope, str):
            raise TypeError(
                f"the scope function must give a str or None, got {type(scope).__name__}"
            )
        signed = None if self._ring is None else request.header(self._request_id_header)
        plain = request.header(IDEMPOTENCY_KEY_HEADER)
        source = admit_key(
            None if self._ring is None else self._request_id_header,
            self._accept_plain,
            caller=scope is not None,
            request_id_sent=signed is not None,
            idempotency_key_sent=plain is not None,
        )
        if isinstance(source, tuple):
            status, code, document = source
            _log.info("mintid: %s %s refused (%s)", request.method, request.path, code)
            return refusal_answer(status, document)
        assert scope is not None, "the core admits no request without a caller"
        kind = self._kind(request)
        if source:
            assert self._ring is not None and signed is not None, "the core's signed source"
            try:
                uuid = self._ring.verify(
                    parse_idempotency_key_header(signed),
                    scope,
                    max_age_millis=self._max_age_ms,
                    max_skew_millis=self._max_skew_ms,
                )
            except (IdempotencyKeyError, RequestIdError) as error:
                refusal = key_refusal(error, signed=True)
                if refusal is None:
                    raise
                if self._metrics is not None:
                    self._metrics.request_id_rejected(error.code)
                return problem_answer(refusal, error.message)
            key = IdempotencyKey(kind, scope, str(uuid))
            return Admitted(key, Uuid7.parse(str(uuid)).unix_millis, request.query)
        try:
            key = IdempotencyKey.from_header(kind, scope, plain or "")
            return Admitted(key, None, request.query)
        except IdempotencyKeyError as error:
            refusal = key_refusal(error, signed=False)
            if refusal is None:
                raise
            return problem_answer(refusal, error.message)

    def check_body(self, request: HttpRequestView, read: int, fix: str) -> None:
        """Refuse a covered request whose body something read before the
        middleware (a body parser mounted first): the ``read`` bytes are not
        the body it declares, and fingerprinted as empty they would replay
        another body's answer. Raises (and logs)
        :class:`~mintid.errors.HttpBodyConsumedError` naming ``fix``.
        """  # noqa: D205
        try:
            check_body_read(
                request.header("content-length"), request.header("transfer-encoding"), read, fix
            )
        except HttpBodyConsumedError as error:
            _log.error("mintid: %s %s refused: %s", request.method, request.path, error.message)
            raise

    def too_large(self) -> HttpAnswer:
        """The answer for a body over :attr:`body_limit`: 413."""
        return status_answer(413, f"the body exceeds {self.body_limit} bytes")

    def store_request(
        self, admitted: Admitted, content_type: str | None, body: bytes
    ) -> StoreRequest | HttpAnswer:
        """What the store compares when the key comes again: the request's
        fingerprint (its body and query string) and the key's creation time;
        or 400 ``malformed_body`` for a JSON content type whose body is not
        JSON (nothing runs, nothing is stored).
        """  # noqa: D205
        try:
            fingerprint = fingerprint_request(content_type, admitted.query, body)
        except HttpMalformedBodyError as error:
            return problem_answer(Problem.MALFORMED_BODY, error.message)
        return StoreRequest(fingerprint, admitted.key_created_millis)

    def failure_answer(self, error: Exception, *, ran: bool) -> HttpAnswer:
        """The answer when the store (or the record rules) failed with
        ``error``: before the handler ran, the problem the core attaches to
        the error (503 ``storage_unavailable`` for every store error); after
        it ran (``ran``), 500, since its outcome is the record's to tell (a
        retry gets what the record holds). Never a detail: the error and its
        cause (the driver's exception) go to the log.

        Raises ``error`` again when the handler did not run and the error
        names no problem: a fault of the server, answered by its framework.
        """  # noqa: D205
        problem = None if ran else _problem_of(error)
        if problem is None and not ran:
            raise error
        answer = status_answer(500) if problem is None else problem_answer(problem)
        when = "after the handler ran" if ran else "before the handler ran"
        _log.error("mintid: the store failed %s; answering %d", when, answer.status, exc_info=error)
        return answer

    @property
    def is_async(self) -> bool:
        """Whether the store is an asyncio one (its ``run_once`` is a coroutine function)."""
        return inspect.iscoroutinefunction(self._store.run_once)

    def run(
        self,
        admitted: Admitted,
        content_type: str | None,
        body: bytes,
        handler: Callable[[], HttpAnswer],
    ) -> tuple[HttpAnswer, bool]:
        """Run ``handler`` once for the admitted key; the answer to send and
        whether the handler ran for this request.

        Blocks (the store is synchronous): call it from a worker thread in
        async servers. A 5xx answer is a final failure: stored and replayed
        when the store's policy stores errors, else the key is released. A
        store failure is logged and answered by :meth:`failure_answer`, also
        after the handler ran (its response is then not sent: what a retry
        gets is what the record holds).
        """  # noqa: D205
        request = self.store_request(admitted, content_type, body)
        if isinstance(request, HttpAnswer):
            return request, False
        ran: list[HttpAnswer] = []

        def operation() -> StoredResponse:
            return self._stored(handler(), ran)

        try:
            if self.same_transaction:
                store = cast(TransactionStore, self._store)
                with store.database.transaction(write=True) as connection:
                    result = store.in_transaction(
                        connection, admitted.key, request, _within(connection, operation)
                    )
            else:
                result = cast(RunOnceStore, self._store).run_once(admitted.key, request, operation)
        except Exception as error:
            return self._failed(error, ran)
        return self._answered(result, ran)

    async def run_async(
        self,
        admitted: Admitted,
        content_type: str | None,
        body: bytes,
        handler: Callable[[], Awaitable[HttpAnswer]],
    ) -> tuple[HttpAnswer, bool]:
        """:meth:`run` with an asyncio store (:class:`~mintid.store.aio.AsyncIdempotencyStore`)
        and an async ``handler``: on the event loop, no thread.
        """  # noqa: D205
        request = self.store_request(admitted, content_type, body)
        if isinstance(request, HttpAnswer):
            return request, False
        ran: list[HttpAnswer] = []

        async def operation() -> StoredResponse:
            return self._stored(await handler(), ran)

        try:
            if self.same_transaction:
                held = cast(AsyncTransactionStore, self._store)
                async with held.database.transaction(write=True) as connection:
                    result = await held.in_transaction(
                        connection, admitted.key, request, _within_async(connection, operation)
                    )
            else:
                store = cast(AsyncRunOnceStore, self._store)
                result = await store.run_once(admitted.key, request, operation)
        except Exception as error:
            return self._failed(error, ran)
        return self._answered(result, ran)

    def _stored(self, answer: HttpAnswer, ran: list[HttpAnswer]) -> StoredResponse:
        """The handler's answer as the operation's result (a 5xx: its final failure)."""
        ran.append(answer)
        stored = to_stored(answer, self._stored_headers)
        if answer.status >= 500:
            raise OperationError(f"the handler answered {answer.status}", response=stored)
        return stored

    def _failed(self, error: Exception, ran: list[HttpAnswer]) -> tuple[HttpAnswer, bool]:
        if isinstance(error, OperationError):
            # The handler's own 5xx, stored as its final failure (or released).
            return ran[0], True
        return self.failure_answer(error, ran=bool(ran)), bool(ran)

    @staticmethod
    def _answered(result: RunResult, ran: list[HttpAnswer]) -> tuple[HttpAnswer, bool]:
        return answer_of(result, ran[0] if ran else None), result.decision == "execute"


def _within(
    connection: Any, operation: Callable[[], StoredResponse]
) -> Callable[[Any], StoredResponse]:
    """``operation`` as the store's in-transaction operation; :func:`transaction` gives
    ``connection`` while it runs.
    """  # noqa: D205

    def run(_connection: Any) -> StoredResponse:
        token = _TRANSACTION.set(connection)
        try:
            return operation()
        finally:
            _TRANSACTION.reset(token)

    return run


def _within_async(
    connection: Any, operation: Callable[[], Awaitable[StoredResponse]]
) -> Callable[[Any], Awaitable[StoredResponse]]:
    """:func:`_within` for an asyncio store."""

    async def run(_connection: Any) -> StoredResponse:
        token = _TRANSACTION.set(connection)
        try:
            return await operation()
        finally:
            _TRANSACTION.reset(token)

    return run


def answer_of(result: RunResult, executed: HttpAnswer | None = None) -> HttpAnswer:
    """The answer for a store's :class:`~mintid.store.RunResult`: ``executed``
    (the handler's own answer, else the stored one) when the request ran, a
    replay with ``Idempotent-Replayed: true``, 409 with ``Retry-After``, 422 or
    400 (key too old).
    """  # noqa: D205
    if result.decision == "execute":
        if executed is not None:
            return executed
        if result.response is None:
            raise ValueError("an executed request has no response")
        return from_stored(result.response)
    if result.decision == "replay":
        if result.response is None:
            replayed = status_answer(500, result.error)
        else:
            replayed = from_stored(result.response)
        return replayed.with_header(*replayed_header())
    problem = result.problem if result.problem is not None else Problem.IN_PROGRESS
    if result.decision == "in_progress":
        secs = retry_after_secs(result.retry_after_millis or 0)
        return problem_answer(problem, None, (retry_after(secs),))
    return problem_answer(problem)
