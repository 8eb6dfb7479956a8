"""The pieces of mintid.http besides the scenarios: the stored envelope, the
grant endpoint, settings, fingerprints and what the middleware passes through.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import mintid
import mintid.errors
from mintid import Grant, IdempotencyKey, KeyRing, Problem, RecordPolicy, RequestId
from mintid.http import (
    GrantRoute,
    HttpAnswer,
    HttpIdempotency,
    HttpRequestView,
    default_kind,
    fingerprint_body,
    fingerprint_request,
    from_stored,
    grant_answer,
    problem_answer,
    status_answer,
    to_stored,
)
from mintid.http.asgi import IdempotencyMiddleware, full_path
from mintid.http.fastapi import idempotent_route
from mintid.http.wsgi import IdempotencyMiddleware as WsgiIdempotency
from mintid.http.wsgi import request_view as wsgi_view
from mintid.store import (
    IdempotencyStore,
    PostgresDatabase,
    RunResult,
    SqliteDatabase,
    StoredResponse,
    StoreRequest,
)

KEEP = ("location",)


class NoStore:
    """A store that must not be reached."""

    policy = RecordPolicy()

    def run_once(
        self, key: IdempotencyKey, request: StoreRequest, operation: Callable[[], StoredResponse]
    ) -> RunResult:
        raise AssertionError("the store was reached")


def view(method: str = "POST", path: str = "/orders", **headers: str) -> HttpRequestView:
    pairs = tuple((name.replace("_", "-"), value) for name, value in headers.items())
    return HttpRequestView(method, path, pairs, None)


def http(**options: Any) -> HttpIdempotency:
    return HttpIdempotency(store=NoStore(), scope=lambda _request: "user:ann", **options)


def test_the_envelope_is_the_shared_format() -> None:
    answer = HttpAnswer(
        201,
        (("content-type", "application/json"), ("location", "/orders/7"), ("set-cookie", "s=1")),
        b'{"order":7}',
    )
    stored = to_stored(answer, KEEP)
    assert stored.content_type == "application/json"
    # Byte for byte what every language writes (tests/http/README.md): set-cookie not kept.
    assert stored.body == b'mintid-http/1 201\r\nlocation: /orders/7\r\n\r\n{"order":7}'
    assert from_stored(stored) == HttpAnswer(
        201, (("content-type", "application/json"), ("location", "/orders/7")), b'{"order":7}'
    )


def test_an_envelope_without_content_type_or_headers_round_trips() -> None:
    answer = HttpAnswer(204, (), b"")
    assert to_stored(answer, KEEP) == StoredResponse("", b"mintid-http/1 204\r\n\r\n")
    assert from_stored(to_stored(answer, KEEP)) == answer


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"HTTP/1.1 200 OK\r\n\r\n",
        b"mintid-http/1 99\r\n\r\n",
        b"mintid-http/1 200\r\nbad\r\n\r\n",
    ],
)
def test_bytes_that_are_not_an_envelope_are_refused(body: bytes) -> None:
    with pytest.raises(mintid.HttpBadStoredResponseError) as raised:
        from_stored(StoredResponse("", body))
    assert raised.value.code == "http.bad_stored_response"
    assert raised.value.position is not None


def test_problem_documents_come_from_the_core() -> None:
    answer = problem_answer(Problem.IN_PROGRESS, "wait", (("retry-after", "1"),))
    assert answer.status == 409
    assert answer.header("content-type") == "application/problem+json"
    assert answer.header("Retry-After") == "1"
    assert json.loads(answer.body) == {**Problem.IN_PROGRESS.body(), "detail": "wait"}
    too_large = status_answer(413)
    assert json.loads(too_large.body) == {
        "type": "about:blank",
        "title": "Content Too Large",
        "status": 413,
    }


def test_the_grant_endpoint_answers_a_grant_for_the_scope_or_401() -> None:
    ring = KeyRing(3, os.urandom(32))
    answer = grant_answer(ring, "user:ann", ttl_millis=60_000, now_millis=1_000_000)
    assert answer.status == 200
    assert answer.header("cache-control") == "no-store"
    document = json.loads(answer.body)
    assert document["expiresMillis"] == 1_060_000
    assert Grant.parse(document["grant"]).expires_millis == 1_060_000
    live = json.loads(grant_answer(ring, "user:ann").body)["grant"]
    minted = RequestId.mint(live)
    assert ring.verify(minted.text, "user:ann") == minted.uuid
    refused = grant_answer(ring, None)
    assert refused.status == 401
    assert json.loads(refused.body)["type"] == "about:blank"
    # Typed with the core's codes, as in Kotlin and JS.
    with pytest.raises(mintid.errors.ArgumentOutOfRangeError):
        grant_answer(ring, "user:ann", ttl_millis=0)
    with pytest.raises(mintid.errors.ArgumentNegativeError):
        grant_answer(ring, "user:ann", ttl_millis=-1)


def test_settings_are_checked() -> None:
    with pytest.raises(TypeError):
        HttpIdempotency(store=object(), scope=lambda _r: "s")  # type: ignore[arg-type]
    with pytest.raises(mintid.errors.ArgumentNegativeError) as refused:
        http(body_limit=-1)
    assert refused.value.code == "argument.negative"
    with pytest.raises(TypeError):
        http(key_ring="secret")
    with pytest.raises(TypeError):
        IdempotencyMiddleware(lambda *_: None, http="http")  # type: ignore[arg-type, arg-type]


def test_covered_methods_and_routes() -> None:
    routes = http(routes=lambda request: request.path.startswith("/orders"))
    assert routes.covers(view("POST", "/orders"))
    assert routes.covers(view("patch", "/orders/1"))
    assert not routes.covers(view("POST", "/search"))
    assert not routes.covers(view("GET", "/orders"))
    assert http(methods=["PUT"]).covers(view("PUT"))


def test_plain_keys_only_count_with_a_ring_when_accepted() -> None:
    ring = KeyRing(1, os.urandom(32))
    plain = view(**{"idempotency_key": '"abc"'})
    refused = http(key_ring=ring).admit(plain)
    assert isinstance(refused, HttpAnswer)
    assert json.loads(refused.body)["type"] == Problem.MISSING_KEY.type_uri
    admitted = http(key_ring=ring, accept_idempotency_key=True).admit(plain)
    assert not isinstance(admitted, HttpAnswer)
    assert admitted.key.id == "abc"
    assert admitted.key_created_millis is None


def test_a_signed_id_is_read_bare_or_as_a_structured_field_string() -> None:
    ring = KeyRing(1, os.urandom(32))
    minted = RequestId.mint(ring.issue_grant("user:ann", 2**46)).text
    keys = []
    for header in (minted, f'"{minted}"'):
        admitted = http(key_ring=ring).admit(view(mintid_request_id=header))
        assert not isinstance(admitted, HttpAnswer)
        keys.append(admitted.key)
    assert keys[0] == keys[1]
    assert keys[0].scope == "user:ann"
    assert keys[0].kind.startswith("http.post.")


def test_a_bad_scope_is_the_servers_fault_not_a_400() -> None:
    broken = HttpIdempotency(store=NoStore(), scope=lambda _request: "")
    with pytest.raises(Exception) as raised:
        broken.admit(view(idempotency_key="abc"))
    assert not isinstance(raised.value, AssertionError)


def test_json_bodies_fingerprint_canonically_others_as_bytes() -> None:
    spaced = fingerprint_body("application/json; charset=utf-8", b'{ "b": 1, "a": 2 }')
    assert spaced == fingerprint_body("application/problem+json", b'{"a":2,"b":1}')
    assert spaced != fingerprint_body("text/plain", b'{"a":2,"b":1}')
    # JSON the canonicaliser refuses counts as bytes; what is not JSON is an error.
    assert fingerprint_body("application/json", b'{"a":1,"a":2}') == fingerprint_body(
        None, b'{"a":1,"a":2}'
    )
    with pytest.raises(mintid.HttpMalformedBodyError) as raised:
        fingerprint_body("application/json", b"{")
    assert raised.value.problem_name == "malformed_body"
    assert raised.value.position == 1


def test_the_query_takes_part_in_the_fingerprint() -> None:
    body = b'{"sku":"tea"}'
    plain = fingerprint_request("application/json", "", body)
    assert plain == fingerprint_body("application/json", body)
    one = fingerprint_request("application/json", "amount=1", body)
    assert one not in (plain, fingerprint_request("application/json", "amount=9999", body))


def test_a_body_that_is_not_json_is_refused_before_the_store() -> None:
    admitted = http().admit(view(idempotency_key="abc"))
    assert not isinstance(admitted, HttpAnswer)
    answer, ran = http().run(admitted, "application/json", b"{bad", lambda: status_answer(500))
    assert (answer.status, ran) == (400, False)
    assert json.loads(answer.body)["type"] == Problem.MALFORMED_BODY.type_uri


def test_the_kind_is_of_the_full_path() -> None:
    assert full_path({"path": "/api/orders", "root_path": "/api"}) == "/api/orders"
    assert full_path({"path": "/orders", "root_path": "/api"}) == "/api/orders"
    assert full_path({"path": "/orders", "root_path": ""}) == "/orders"
    assert full_path({"path": "/apix", "root_path": "/api"}) == "/api/apix"
    environ = {"REQUEST_METHOD": "POST", "SCRIPT_NAME": "/shop", "PATH_INFO": "/caf\xc3\xa9"}
    mounted = wsgi_view(environ)
    assert mounted.path == "/shop/caf\u00e9"
    assert mounted.query == ""
    kinds = {default_kind("POST", path) for path in ("/shop/caf%C3%A9", mounted.path)}
    assert len(kinds) == 1
    assert default_kind("POST", "/orders") != default_kind("POST", "/shop/orders")


def test_the_grant_endpoint_is_served_never_covered() -> None:
    ring = KeyRing(1, os.urandom(32))
    served = http(key_ring=ring, grant=GrantRoute("/api/grant", lambda _request: "user:ann"))
    grant = served.grant(view("POST", "/api/grant"))
    assert grant is not None
    assert grant.status == 200
    Grant.parse(json.loads(grant.body)["grant"])
    assert not served.covers(view("POST", "/api/grant"))
    assert served.grant(view("GET", "/api/grant")) is None
    assert served.grant(view("POST", "/orders")) is None
    assert served.covers(view("POST", "/orders"))
    with pytest.raises(ValueError):
        http(grant=GrantRoute("/api/grant", lambda _request: "user:ann"))
    with pytest.raises(ValueError):
        GrantRoute("api/grant", lambda _request: None)


def test_store_failures_are_logged_not_sent(caplog: pytest.LogCaptureFixture) -> None:
    # Nothing listens on port 1: the driver's error names the host, port and user.
    down = IdempotencyStore(
        PostgresDatabase("postgresql://secretuser@127.0.0.1:1/db"), RecordPolicy()
    )
    middleware = HttpIdempotency(store=down, scope=lambda _request: "user:ann")
    admitted = middleware.admit(view(idempotency_key="abc"))
    assert not isinstance(admitted, HttpAnswer)
    with caplog.at_level("ERROR", logger="mintid.http"):
        answer, ran = middleware.run(admitted, None, b"", lambda: status_answer(500))
    assert (answer.status, ran) == (503, False)
    assert sorted(json.loads(answer.body)) == ["status", "title", "type"]
    assert b"127.0.0.1" not in answer.body
    assert b"secretuser" not in answer.body
    [record] = caplog.records
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], mintid.MintidError)


def test_the_asgi_middleware_passes_other_scopes_through() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    middleware = IdempotencyMiddleware(app, http=http())

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def send(message: Any) -> None:
        raise AssertionError("nothing is sent")

    asyncio.run(middleware({"type": "lifespan"}, receive, send))
    get = {"type": "http", "method": "GET", "path": "/orders", "headers": []}
    asyncio.run(middleware(get, receive, send))
    assert seen == ["lifespan", "http"]


def test_the_asgi_grant_endpoint_awaits_an_async_scope_on_the_loop() -> None:
    ring = KeyRing(1, os.urandom(32))
    on: list[object] = []

    async def logged_in(request: HttpRequestView) -> str | None:
        on.append(threading.current_thread())
        await asyncio.sleep(0)
        return "user:ann" if request.header("cookie") == "session=ann" else None

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the grant endpoint never reaches the app")

    def granted(body: bytes, scope: str) -> bool:
        minted = RequestId.mint(Grant.parse(json.loads(body)["grant"])).text
        RequestId.verify(minted, ring, scope)  # raises for another scope
        return True

    def plain(request: HttpRequestView) -> str:
        on.append(threading.current_thread())
        return "user:bob"

    async def ask(scope_of: Any, *headers: tuple[bytes, bytes]) -> tuple[int, bytes]:
        served = http(key_ring=ring, grant=GrantRoute("/api/grant", scope_of))
        middleware = IdempotencyMiddleware(app, http=served)
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b""}

        async def send(message: Any) -> None:
            sent.append(message)

        request = {"type": "http", "method": "POST", "path": "/api/grant", "headers": headers}
        await middleware(request, receive, send)
        return int(sent[0]["status"]), bytes(sent[1]["body"])

    async def main() -> None:
        status, body = await ask(logged_in, (b"cookie", b"session=ann"))
        assert status == 200 and granted(body, "user:ann")
        assert (await ask(logged_in))[0] == 401
        assert on == [threading.current_thread()] * 2  # awaited on the loop, no thread
        status, body = await ask(plain)  # a plain function still works (in a worker thread)
        assert status == 200 and granted(body, "user:bob")
        assert on[-1] is not threading.current_thread()

    asyncio.run(main())
    with pytest.raises(TypeError, match="ASGI"):
        http(key_ring=ring, grant=GrantRoute("/api/grant", logged_in)).grant(
            view("POST", "/api/grant")
        )


class _Streams(BaseHTTPMiddleware):
    """A middleware that reads the body as a stream and keeps nothing: the
    inner app gets an empty body (Starlette's rule after ``request.stream()``).
    """

    async def dispatch(self, request: Request, call_next: Any) -> Any:
        async for _chunk in request.stream():
            pass
        return await call_next(request)


class _Reads(BaseHTTPMiddleware):
    """A middleware that reads the whole body: Starlette keeps it and passes it on."""

    async def dispatch(self, request: Request, call_next: Any) -> Any:
        await request.body()
        return await call_next(request)


def _sqlite_http(path: str) -> HttpIdempotency:
    database = SqliteDatabase(path)
    database.migrate()
    return HttpIdempotency(
        store=IdempotencyStore(database, RecordPolicy()), scope=lambda _request: "user:ann"
    )


def _starlette(outer: type[BaseHTTPMiddleware], served: HttpIdempotency, ran: list[bytes]) -> Any:
    async def orders(request: Request) -> Response:
        ran.append(await request.body())
        return Response(b"made", 201)

    return Starlette(
        routes=[Route("/orders", orders, methods=["POST"])],
        middleware=[Middleware(outer), Middleware(IdempotencyMiddleware, http=served)],
    )


async def _post(app: Any, body: bytes, key: str = "k-1") -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        headers = {"idempotency-key": key, "content-type": "application/json"}
        return await client.post("/orders", content=body, headers=headers)


def test_an_asgi_body_another_middleware_consumed_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Never fingerprinted as empty (the same key with another body would get
    the first answer replayed): refused before the store, naming the fix.
    """
    ran: list[bytes] = []
    app = _starlette(_Streams, http(), ran)  # NoStore: the store must not be reached
    with (
        caplog.at_level("ERROR", logger="mintid.http"),
        pytest.raises(mintid.errors.HttpBodyConsumedError, match="outside whatever reads"),
    ):
        asyncio.run(_post(app, b'{"amount":1}'))
    assert ran == []
    assert any("declares a body (12 bytes)" in r.getMessage() for r in caplog.records)


def test_an_asgi_body_another_middleware_kept_is_the_fingerprints(tmp_path: Any) -> None:
    ran: list[bytes] = []
    app = _starlette(_Reads, _sqlite_http(str(tmp_path / "kept.sqlite3")), ran)

    async def main() -> tuple[int, int, int]:
        first = await _post(app, b'{"amount":1}')
        again = await _post(app, b'{"amount":1}')
        other = await _post(app, b'{"amount":9999}')
        return first.status_code, again.status_code, other.status_code

    assert asyncio.run(main()) == (201, 201, 422)
    assert ran == [b'{"amount":1}']


def test_a_fastapi_route_behind_a_body_consumer_is_refused() -> None:
    ran: list[bytes] = []
    router = APIRouter(route_class=idempotent_route(http()))

    @router.post("/orders", status_code=201)
    async def create(request: Request) -> dict[str, str]:
        ran.append(await request.body())
        return {"made": "yes"}

    app = FastAPI()
    app.include_router(router)
    app.add_middleware(_Streams)
    with pytest.raises(mintid.errors.HttpBodyConsumedError):
        asyncio.run(_post(app, b'{"amount":1}'))
    assert ran == []


def _wsgi_post(middleware: WsgiIdempotency, stream: io.BytesIO, length: int) -> tuple[str, bytes]:
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/orders",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(length),
        "HTTP_IDEMPOTENCY_KEY": "k-1",
        "wsgi.input": stream,
    }
    started: list[str] = []

    def start_response(status: str, _headers: list[tuple[str, str]], _exc: Any = None) -> Any:
        started.append(status)
        return lambda _data: None

    body = b"".join(middleware(environ, start_response))
    return started[0], body


def test_a_wsgi_input_read_before_the_middleware_is_refused(tmp_path: Any) -> None:
    ran: list[bytes] = []

    def app(environ: Any, start_response: Any) -> list[bytes]:
        ran.append(environ["wsgi.input"].read())
        start_response("201 Created", [("content-type", "text/plain")])
        return [b"made"]

    body = b'{"amount":1}'
    consumed = io.BytesIO(body)
    consumed.read()  # another middleware read it and put nothing back
    with pytest.raises(mintid.errors.HttpBodyConsumedError, match=r"wsgi.input"):
        _wsgi_post(WsgiIdempotency(app, http=http()), consumed, len(body))
    served = WsgiIdempotency(app, http=_sqlite_http(str(tmp_path / "wsgi.sqlite3")))
    # One that puts the bytes back is fine.
    assert _wsgi_post(served, io.BytesIO(body), len(body))[0] == "201 Created"
    assert ran == [body]
