"""The HTTP conformance scenarios (tests/http/scenarios.json) against the ASGI
middleware on a Starlette app (driven through httpx's ASGI transport) and the
WSGI middleware on a plain WSGI app (served by a threaded wsgiref server on
127.0.0.1), and the ASGI middleware again with the asyncio store
(``asgi-aio``), on SQLite, PostgreSQL and MariaDB; each scenario on a fresh
database. An unknown config key, step, request field, header value, body kind,
handler directive or expectation fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import socketserver
import threading
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
import psycopg
import pymysql
import pytest
from fastapi import APIRouter, FastAPI
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from mintid import IdempotencyKey, KeyRing, Problem, RecordPolicy, RequestId, Uuid7
from mintid.http import (
    DEFAULT_BODY_LIMIT,
    GrantRoute,
    HttpIdempotency,
    HttpRequestView,
    transaction,
)
from mintid.http.asgi import IdempotencyMiddleware as AsgiIdempotency
from mintid.http.fastapi import Transaction, idempotent_route
from mintid.http.wsgi import IdempotencyMiddleware as WsgiIdempotency
from mintid.store import (
    Database,
    IdempotencyStore,
    MySqlDatabase,
    PostgresDatabase,
    RunResult,
    SqliteDatabase,
    StoredResponse,
    StoreRequest,
)
from mintid.store.aio import (
    AsyncDatabase,
    AsyncIdempotencyStore,
    AsyncMySqlDatabase,
    AsyncPostgresDatabase,
    AsyncSqliteDatabase,
)

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

SCENARIOS = pathlib.Path(__file__).resolve().parents[3] / "tests" / "http" / "scenarios.json"
LOADED: list[dict[str, Any]] = json.loads(SCENARIOS.read_text())["scenarios"]
CONFIG_KEYS = {
    "signed",
    "storeErrors",
    "maxWaitMillis",
    "bodyLimit",
    "mounts",
    "grant",
    "sameTransaction",
}
DATABASE = "mintid_pyhttp"
# Nothing listens on port 1: connection refused.
UNREACHABLE = "postgresql://mintid@127.0.0.1:1/mintid?connect_timeout=2"
# The test table the handler's `write` directive inserts into (tests/http/README.md).
TEST_TABLE = "CREATE TABLE mintid_test_orders (n integer)"
INSERT_ROW = "INSERT INTO mintid_test_orders (n) VALUES (1)"
COUNT_ROWS = "SELECT COUNT(*) FROM mintid_test_orders"


def only(value: dict[str, Any], allowed: set[str], what: str) -> None:
    """Fail on a member the runner does not know."""
    extra = sorted(set(value) - allowed)
    assert not extra, f"unknown {what}: {extra}"


def _pg_url() -> str:
    value = os.environ.get("MINTID_PG_URL")
    if not value:
        message = "MINTID_PG_URL is not set: run the tests through scripts/db/with-db.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return value


@dataclass
class Fresh:
    """An empty database: the sync store's, and a maker of async ones on it."""

    database: Database
    make_async: Callable[[], AsyncDatabase]


@pytest.fixture(scope="module", params=["sqlite", "postgres", "mysql"])
def fresh_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[], Fresh]]:
    """A factory of empty databases of one dialect."""
    directory = tmp_path_factory.mktemp("http")
    counter = iter(range(1_000_000))
    if request.param == "sqlite":

        def fresh_sqlite() -> Fresh:
            path = str(directory / f"case-{next(counter)}.sqlite3")
            return Fresh(SqliteDatabase(path), lambda: AsyncSqliteDatabase(path))

        yield fresh_sqlite
        return
    if request.param == "mysql":
        yield fresh_mysql
        return
    admin_url = urllib.parse.urlsplit(_pg_url())
    with psycopg.connect(admin_url.geturl(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    url = urllib.parse.urlunsplit(admin_url._replace(path=f"/{DATABASE}"))

    def fresh() -> Fresh:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
            conn.execute("CREATE SCHEMA public")
        return Fresh(PostgresDatabase(url), lambda: AsyncPostgresDatabase(url))

    yield fresh


def fresh_mysql() -> Fresh:
    """An empty MariaDB database (dropped and made again)."""
    value = os.environ.get("MINTID_MYSQL_URL")
    if not value:
        message = "MINTID_MYSQL_URL is not set: run the tests through scripts/db/with-db.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    parts = urllib.parse.urlsplit(value)
    admin = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=parts.username,
        password=parts.password or "",
        autocommit=True,
    )
    try:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
            cursor.execute(f"CREATE DATABASE {DATABASE}")
    finally:
        admin.close()
    url = urllib.parse.urlunsplit(parts._replace(path=f"/{DATABASE}"))
    return Fresh(MySqlDatabase(url), lambda: AsyncMySqlDatabase(url))


class SwitchedStore:
    """The store under test, or (storage down) one whose database refuses connections."""

    def __init__(self, up: Any, down: Any) -> None:
        self.policy = up.policy
        self.up = up
        self.down = down
        self.is_down = False

    def run_once(
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], StoredResponse],
    ) -> RunResult:
        return (self.down if self.is_down else self.up).run_once(key, request, operation)  # type: ignore[no-any-return]

    @property
    def database(self) -> Any:
        """The database of the store in use (whose transactions the same-transaction mode opens)."""
        return (self.down if self.is_down else self.up).database

    def in_transaction(
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], StoredResponse],
    ) -> RunResult:
        store = self.down if self.is_down else self.up
        return store.in_transaction(connection, key, request, operation)  # type: ignore[no-any-return]


class AsyncSwitchedStore(SwitchedStore):
    """:class:`SwitchedStore` over two asyncio stores."""

    async def run_once(  # type: ignore[override]
        self,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[], Awaitable[StoredResponse]],
    ) -> RunResult:
        store = self.down if self.is_down else self.up
        return await store.run_once(key, request, operation)  # type: ignore[no-any-return]

    async def in_transaction(  # type: ignore[override]
        self,
        connection: Any,
        key: IdempotencyKey,
        request: StoreRequest,
        operation: Callable[[Any], Awaitable[StoredResponse]],
    ) -> RunResult:
        store = self.down if self.is_down else self.up
        return await store.in_transaction(connection, key, request, operation)  # type: ignore[no-any-return]


@dataclass
class Writes:
    """The handler's ``write`` directive: a row on the record's transaction
    (``same``) or on a connection of its own, committed at once.
    """

    database: Database
    async_database: AsyncDatabase | None = None
    same: bool = False

    def write(self) -> None:
        """The row, from a synchronous handler."""
        if self.same:
            self.database.execute(transaction(), INSERT_ROW)
            return
        with self.database.connection() as raw:
            self.database.execute(raw, INSERT_ROW)

    async def write_async(self, connection: Any = None) -> None:
        """The row, from an async handler (``connection``: FastAPI's ``Transaction``)."""
        if self.async_database is None:
            await asyncio.to_thread(self.write)
        elif self.same:
            held = transaction() if connection is None else connection
            assert held is transaction(), "the parameter is the record's transaction"
            await self.async_database.execute(held, INSERT_ROW)
        else:
            async with self.async_database.connection() as raw:
                await self.async_database.execute(raw, INSERT_ROW)

    def count(self) -> int:
        """The committed rows, seen from a connection of its own."""
        with self.database.connection() as raw:
            cursor = raw.cursor()
            try:
                cursor.execute(COUNT_ROWS)
                return int(cursor.fetchone()[0])
            finally:
                cursor.close()


@dataclass
class HandlerState:
    """The test app's handler calls and gates (handlers may run in threads)."""

    writes: Writes
    calls: int = 0
    gates: dict[str, threading.Event] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self) -> int:
        with self.lock:
            self.calls += 1
            return self.calls

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())


def directive_of(text: str | None) -> dict[str, Any]:
    directive: dict[str, Any] = json.loads(text or "{}")
    only(directive, {"status", "throw", "gate", "contentType", "write"}, "handler directive")
    return directive


def received_of(content_type: str | None, body: bytes) -> object:
    return json.loads(body) if content_type == "application/json" else None


def orders_handler(state: HandlerState) -> Callable[..., Awaitable[Response]]:
    """The test app's one handler (tests/http/README.md); ``connection`` is
    FastAPI's ``Transaction`` parameter, when the route takes one.
    """

    async def orders(request: Request, connection: Any = None) -> Response:
        n = state.call()
        directive = directive_of(request.headers.get("x-test-handler"))
        if directive.get("write"):
            await state.writes.write_async(connection)
        if "gate" in directive:
            await asyncio.to_thread(state.gate(str(directive["gate"])).wait)
        if "status" in directive:
            status = int(directive["status"])
            return JSONResponse({"error": f"status {status}"}, status_code=status)
        if directive.get("throw"):
            raise RuntimeError("the handler throws (test directive)")
        if request.method == "GET":
            return JSONResponse({"orders": n})
        received = received_of(request.headers.get("content-type"), await request.body())
        media_type = str(directive.get("contentType", "application/json"))
        if request.method == "POST":
            return JSONResponse(
                {"order": n, "received": received},
                status_code=201,
                headers={"location": f"/orders/{n}"},
                media_type=media_type,
            )
        return JSONResponse({"order": n, "received": received}, media_type=media_type)

    return orders


def mounted(app: Any, mounts: list[str]) -> Any:
    """``app``, or a Starlette app with it mounted at each of ``mounts``."""
    if not mounts:
        return app
    return Starlette(routes=[Mount(prefix, app=app) for prefix in mounts])


def make_asgi_app(state: HandlerState, http: HttpIdempotency, mounts: list[str]) -> Any:
    """The test app of tests/http/README.md behind the ASGI middleware (mounted
    with the middleware inside at each of ``mounts``, when there are any).
    """
    routes = [Route("/orders", orders_handler(state), methods=["GET", "POST", "PATCH"])]
    app = Starlette(routes=routes, middleware=[Middleware(AsgiIdempotency, http=http)])
    return mounted(app, mounts)


def make_fastapi_app(state: HandlerState, http: HttpIdempotency, mounts: list[str]) -> Any:
    """The test app as a FastAPI app whose ``/orders`` route (and the grant
    endpoint's, when there is one) is of :func:`idempotent_route`'s class: no
    app-wide middleware.
    """
    app = FastAPI()
    covered = APIRouter(route_class=idempotent_route(http))
    orders = orders_handler(state)
    if http.same_transaction:

        async def orders_in_transaction(request: Request, connection: Transaction) -> Response:
            return await orders(request, connection)

        covered.add_api_route("/orders", orders_in_transaction, methods=["GET", "POST", "PATCH"])
    else:
        covered.add_api_route("/orders", orders, methods=["GET", "POST", "PATCH"])
    grant = http.grant_route
    if grant is not None:

        async def never(request: Request) -> Response:
            raise AssertionError("the middleware serves the grant endpoint")

        covered.add_api_route(grant.path, never, methods=["POST"])
    app.include_router(covered)
    return mounted(app, mounts)


def make_wsgi_app(state: HandlerState, http: HttpIdempotency, mounts: list[str]) -> WSGIApplication:
    """The test app of tests/http/README.md behind the WSGI middleware (mounted
    with the middleware inside at each of ``mounts``, when there are any).
    """

    def orders(environ: WSGIEnvironment, start_response: StartResponse) -> list[bytes]:
        n = state.call()
        directive = directive_of(environ.get("HTTP_X_TEST_HANDLER"))
        if directive.get("write"):
            state.writes.write()
        if "gate" in directive:
            state.gate(str(directive["gate"])).wait()
        status = 200
        headers = [("content-type", str(directive.get("contentType", "application/json")))]
        document: dict[str, object] = {}
        if "status" in directive:
            status = int(directive["status"])
            document = {"error": f"status {status}"}
        elif directive.get("throw"):
            raise RuntimeError("the handler throws (test directive)")
        elif environ["REQUEST_METHOD"] == "GET":
            document = {"orders": n}
        else:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            received = received_of(environ.get("CONTENT_TYPE"), environ["wsgi.input"].read(length))
            document = {"order": n, "received": received}
            if environ["REQUEST_METHOD"] == "POST":
                status = 201
                headers.append(("location", f"/orders/{n}"))
        start_response(f"{status} {HTTPStatus(status).phrase}", headers)
        return [json.dumps(document).encode()]

    app = WsgiIdempotency(orders, http=http)
    if not mounts:
        return app

    def dispatch(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        # A mount as WSGI routers do it: the prefix moves from PATH_INFO to SCRIPT_NAME.
        path = str(environ.get("PATH_INFO", ""))
        for prefix in mounts:
            if path.startswith(prefix + "/"):
                inner = dict(environ)
                inner["SCRIPT_NAME"] = str(environ.get("SCRIPT_NAME", "")) + prefix
                inner["PATH_INFO"] = path[len(prefix) :]
                return app(inner, start_response)
        start_response("404 Not Found", [("content-type", "text/plain")])
        return [b"no such mount"]

    return dispatch


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


def asgi_client_of(make_app: Callable[[HandlerState, HttpIdempotency, list[str]], Any]) -> Any:
    """A client of the app ``make_app`` makes, through httpx's ASGI transport."""

    @asynccontextmanager
    async def client_of(
        state: HandlerState, http: HttpIdempotency, mounts: list[str]
    ) -> AsyncIterator[httpx.AsyncClient]:
        transport = httpx.ASGITransport(app=make_app(state, http, mounts))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client

    return client_of


@asynccontextmanager
async def wsgi_client(
    state: HandlerState, http: HttpIdempotency, mounts: list[str]
) -> AsyncIterator[httpx.AsyncClient]:
    server = make_server(
        "127.0.0.1",
        0,
        make_wsgi_app(state, http, mounts),
        server_class=_ThreadingWSGIServer,
        handler_class=_QuietHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            yield client
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


ClientOf = Callable[
    [HandlerState, HttpIdempotency, list[str]], AbstractAsyncContextManager[httpx.AsyncClient]
]


FRAMEWORKS: dict[str, ClientOf] = {
    "asgi": asgi_client_of(make_asgi_app),
    "asgi-aio": asgi_client_of(make_asgi_app),
    "fastapi-aio": asgi_client_of(make_fastapi_app),
    "wsgi": wsgi_client,
}


def user_scope(request: HttpRequestView) -> str | None:
    """``user:<the step's user>``, or ``None`` for a step without one (an anonymous caller)."""
    user = request.header("x-test-user")
    return None if user is None else f"user:{user}"


def user_scope_on_loop(request: HttpRequestView) -> str | None:
    """:func:`user_scope`, failing unless called on the event loop's thread (no worker thread)."""
    assert threading.current_thread() is threading.main_thread(), "admission left the loop"
    return user_scope(request)


class HeaderValues:
    """Keys and request IDs of one scenario run, minted once by name."""

    def __init__(self, ring: KeyRing | None) -> None:
        self.ring = ring
        self.keys: dict[str, str] = {}
        self.ids: dict[str, str] = {}

    def resolve(self, value: object, user: str | None) -> str:
        if isinstance(value, str):
            return value
        assert isinstance(value, dict), f"unknown header value {value!r}"
        if "key" in value:
            only(value, {"key", "form"}, "key field")
            key = self.keys.setdefault(str(value["key"]), str(uuid.uuid4()))
            if "form" not in value:
                return key
            assert value["form"] == "sf-string", f"unknown key form {value['form']!r}"
            return f'"{key}"'
        if "requestId" in value:
            only(
                value, {"requestId", "grantFor", "grant", "tamper", "ageMillis"}, "requestId field"
            )
            assert self.ring is not None, "a requestId needs the signed config"
            name = str(value["requestId"])
            if name not in self.ids:
                self.ids[name] = self._mint(value, user)
            minted = self.ids[name]
            if not value.get("tamper"):
                return minted
            at = 40  # inside the tag
            return minted[:at] + ("B" if minted[at] == "A" else "A") + minted[at + 1 :]
        raise AssertionError(f"unknown header value {value!r}")

    def _mint(self, value: dict[str, Any], user: str | None) -> str:
        assert self.ring is not None
        assert user is not None or "grantFor" in value, (
            "an anonymous step's requestId needs grantFor"
        )
        if "grant" in value:
            assert value["grant"] == "expired", f"unknown grant {value['grant']!r}"
        now = time.time_ns() // 1_000_000
        expires = now - 1000 if value.get("grant") == "expired" else now + 3_600_000
        grant = self.ring.issue_grant(f"user:{value.get('grantFor', user)}", expires)
        if "ageMillis" not in value:
            return RequestId.mint(grant).text
        made = Uuid7.from_fields(now - int(value["ageMillis"]), 0, 1)
        return RequestId.mint(grant, uuid.UUID(bytes=made.bytes)).text


def body_of(body: dict[str, Any]) -> tuple[str | None, bytes]:
    only(body, {"json", "jsonText", "text", "none"}, "body kind")
    if "json" in body:
        return "application/json", json.dumps(body["json"]).encode()
    if "jsonText" in body:
        return "application/json", str(body["jsonText"]).encode()
    if "text" in body:
        return "text/plain", str(body["text"]).encode()
    return None, b""


def check_response(
    response: httpx.Response,
    expect: dict[str, Any],
    responses: dict[str, httpx.Response],
    where: str,
) -> None:
    only(
        expect,
        {
            "status",
            "problem",
            "replayed",
            "retryAfter",
            "headers",
            "json",
            "sameBodyAs",
            "bare",
            "members",
            "detailContains",
        },
        "expectation",
    )
    assert response.status_code == expect["status"], f"{where}: status (body {response.text})"
    if "problem" in expect:
        content_type = response.headers.get("content-type", "")
        assert content_type.startswith("application/problem+json"), f"{where}: content type"
        problem = response.json()
        if expect["problem"] == "about:blank":
            assert problem["type"] == "about:blank", f"{where}: problem type"
        else:
            known = {p.problem_name: p for p in Problem}
            assert expect["problem"] in known, f"unknown problem {expect['problem']!r}"
            details = known[expect["problem"]]
            wanted = {"type": details.type_uri, "title": details.title, "status": details.status}
            got = {name: problem.get(name) for name in wanted}
            assert got == wanted, f"{where}: problem"
        assert problem["status"] == expect["status"], f"{where}: problem status"
    for text in expect.get("detailContains", []):
        detail = response.json().get("detail", "")
        assert text in detail, f"{where}: detail {detail!r} lacks {text!r}"
    if "bare" in expect:
        assert expect["bare"] is True, "bare can only be true"
        assert sorted(response.json()) == ["status", "title", "type"], f"{where}: {response.text}"
    for member in expect.get("members", []):
        assert member in response.json(), f"{where}: body member {member} ({response.text})"
    if "replayed" in expect:
        marker = response.headers.get("idempotent-replayed")
        assert marker == ("true" if expect["replayed"] else None), f"{where}: replay marker"
    if "retryAfter" in expect:
        assert expect["retryAfter"] is True, "retryAfter can only be true"
        seconds = response.headers.get("retry-after", "")
        assert seconds.isdigit() and int(seconds) > 0, f"{where}: Retry-After {seconds!r}"
    for name, value in expect.get("headers", {}).items():
        assert response.headers.get(name) == value, f"{where}: header {name}"
    if "json" in expect:
        document = response.json()
        for name, value in expect["json"].items():
            assert document.get(name) == value, f"{where}: body member {name}"
    if "sameBodyAs" in expect:
        first = responses.get(expect["sameBodyAs"])
        assert first is not None, f"{where}: no response named {expect['sameBodyAs']}"
        assert response.status_code == first.status_code, f"{where}: same status"
        assert response.content == first.content, f"{where}: same body"


async def send(
    client: httpx.AsyncClient, spec: dict[str, Any], values: HeaderValues
) -> httpx.Response:
    only(spec, {"method", "path", "user", "headers", "body", "handler"}, "request field")
    user = spec.get("user")
    headers = {} if user is None else {"x-test-user": str(user)}
    for name, value in spec.get("headers", {}).items():
        headers[name] = values.resolve(value, user)
    if "handler" in spec:
        headers["x-test-handler"] = json.dumps(spec["handler"])
    content_type, content = body_of(spec.get("body", {"none": True}))
    if content_type is not None:
        headers["content-type"] = content_type
    return await client.request(spec["method"], spec["path"], headers=headers, content=content)


async def run_scenario(scenario: dict[str, Any], fresh: Fresh, framework: str) -> None:
    only(scenario, {"name", "doc", "config", "steps"}, "scenario field")
    config: dict[str, Any] = scenario.get("config", {})
    only(config, CONFIG_KEYS, "config key")
    policy = RecordPolicy(
        lease_millis=30_000,
        retention_millis=86_400_000,
        store_errors=bool(config.get("storeErrors", True)),
        max_wait_millis=int(config.get("maxWaitMillis", 0)),
        poll_millis=20,
    )
    fresh.database.migrate()
    with fresh.database.connection() as raw:
        fresh.database.execute(raw, TEST_TABLE)
    same = bool(config.get("sameTransaction", False))
    writes = Writes(fresh.database, same=same)
    store: SwitchedStore
    if framework.endswith("-aio"):
        up = fresh.make_async()
        writes.async_database = up
        store = AsyncSwitchedStore(
            AsyncIdempotencyStore(up, policy),
            AsyncIdempotencyStore(AsyncPostgresDatabase(UNREACHABLE), policy),
        )
    else:
        store = SwitchedStore(
            IdempotencyStore(fresh.database, policy),
            IdempotencyStore(PostgresDatabase(UNREACHABLE), policy),
        )
    ring = KeyRing(7, os.urandom(32)) if config.get("signed") else None
    limit = int(config.get("bodyLimit", DEFAULT_BODY_LIMIT))
    grant = GrantRoute(str(config["grant"]), user_scope) if "grant" in config else None
    scope = user_scope_on_loop if isinstance(store, AsyncSwitchedStore) else user_scope
    http = HttpIdempotency(
        store=store,
        scope=scope,
        key_ring=ring,
        body_limit=limit,
        grant=grant,
        same_transaction=same,
    )
    mounts = [str(prefix) for prefix in config.get("mounts", [])]
    state = HandlerState(writes)
    if same and framework == "asgi":
        # The handler would write on the event loop with the sync store's connection.
        with pytest.raises(TypeError, match="needs an asyncio store"):
            AsgiIdempotency(Starlette(), http=http)
        pytest.skip("same_transaction under ASGI needs the asyncio store: asgi-aio runs it")
    values = HeaderValues(ring)
    responses: dict[str, httpx.Response] = {}
    background: Background = {}
    async with FRAMEWORKS[framework](state, http, mounts) as client:
        try:
            for index, step in enumerate(scenario["steps"]):
                where = f"{scenario['name']} step {index}"
                await run_step(step, where, client, state, store, values, responses, background)
            assert not background, f"{scenario['name']}: background requests never awaited"
        finally:
            for gate in state.gates.values():
                gate.set()
            await asyncio.gather(
                *(task for task, _, _ in background.values()), return_exceptions=True
            )
            if isinstance(store, AsyncSwitchedStore):
                await store.up.database.close()


Background = dict[str, tuple["asyncio.Task[httpx.Response]", dict[str, Any], str]]
"""The requests in flight by name: the task sending each, its step and where it is."""


def record_response(
    response: httpx.Response, step: dict[str, Any], responses: dict[str, httpx.Response], where: str
) -> None:
    """Checks a request step's response, then names it for a later ``sameBodyAs``."""
    check_response(response, step["expect"], responses, where)
    if "name" in step:
        responses[str(step["name"])] = response


async def run_step(
    step: dict[str, Any],
    where: str,
    client: httpx.AsyncClient,
    state: HandlerState,
    store: SwitchedStore,
    values: HeaderValues,
    responses: dict[str, httpx.Response],
    background: Background,
) -> None:
    if "request" in step:
        only(step, {"name", "request", "expect", "background"}, "step field")

        if step.get("background"):
            # Checked (and named) at its "await" step, in the scenario's order, like the
            # other runners: a response it names may not have arrived before it does.
            request = asyncio.create_task(send(client, step["request"], values))
            background[str(step["name"])] = (request, step, where)
        else:
            response = await send(client, step["request"], values)
            record_response(response, step, responses, where)
    elif "await" in step:
        assert step["await"] in background, f"{where}: no background request {step['await']}"
        request, sent, sent_where = background.pop(step["await"])
        record_response(await request, sent, responses, sent_where)
    elif "open" in step:
        state.gate(str(step["open"])).set()
    elif "untilHandlerCalls" in step:
        deadline = time.monotonic() + 5
        while state.calls < int(step["untilHandlerCalls"]):
            assert time.monotonic() < deadline, f"{where}: the handler was not called enough"
            await asyncio.sleep(0.005)
    elif "sleepMillis" in step:
        await asyncio.sleep(int(step["sleepMillis"]) / 1000)
    elif "storage" in step:
        assert step["storage"] in ("up", "down"), f"{where}: storage must be up or down"
        store.is_down = step["storage"] == "down"
    elif "check" in step:
        only(step["check"], {"handlerCalls", "writes"}, "check")
        if "handlerCalls" in step["check"]:
            assert state.calls == step["check"]["handlerCalls"], f"{where}: handler calls"
        if "writes" in step["check"]:
            count = await asyncio.to_thread(state.writes.count)
            assert count == step["check"]["writes"], f"{where}: committed rows"
    else:
        raise AssertionError(f"{where}: unknown step {step!r}")


def test_scenario_names_are_unique() -> None:
    assert LOADED
    assert len({scenario["name"] for scenario in LOADED}) == len(LOADED)


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
@pytest.mark.parametrize("scenario", LOADED, ids=[str(s["name"]) for s in LOADED])
def test_http_scenario(
    framework: str, scenario: dict[str, Any], fresh_database: Callable[[], Fresh]
) -> None:
    fresh = fresh_database()
    try:
        asyncio.run(run_scenario(scenario, fresh, framework))
    finally:
        fresh.database.close()
