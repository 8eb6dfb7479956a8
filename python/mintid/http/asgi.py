"""Idempotent requests for any ASGI app (Starlette, FastAPI, …).

::

    app = Starlette(routes=..., middleware=[Middleware(
        IdempotencyMiddleware,
        http=HttpIdempotency(store=store, scope=lambda request: f"user:{user_of(request.raw)}"),
    )])

A covered request (POST and PATCH by default) needs a key; its handler runs
once and its response is stored, so a duplicate gets the same response with
``Idempotent-Replayed: true``. The app's response is buffered (the store keeps
it whole); an asyncio store (``mintid.store.aio``) runs on the event loop, a
synchronous one in a worker thread. Refusals are
``application/problem+json``: see ``tests/http/README.md``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from functools import partial
from typing import Any

from mintid.http._answer import HttpAnswer, status_answer
from mintid.http._core import Admitted, HttpIdempotency, HttpRequestView

__all__ = ["IdempotencyMiddleware", "full_path", "request_view", "send_answer"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("mintid.http")


#: What to do when something read the body before the middleware.
_FIX = (
    "mount the idempotency middleware outside whatever reads the body first, or have that "
    "reader pass the body on (Starlette's BaseHTTPMiddleware does after request.body(), "
    "not after request.stream())"
)


class _BodyTooLargeError(Exception):
    pass


def full_path(scope: Scope) -> str:
    """The request's path as the application sees it, mount prefix included.

    ASGI servers and routers that follow the spec keep ``root_path`` inside
    ``path`` (uvicorn 0.26 and later, Starlette 0.33 and later); older ones
    strip it, and then it is put back in front.
    """
    root = str(scope.get("root_path") or "")
    path = str(scope["path"])
    if not root or path == root or path.startswith(root.rstrip("/") + "/"):
        return path
    return root + path


def request_view(scope: Scope) -> HttpRequestView:
    """The neutral view of an ASGI HTTP request (``raw`` is the ASGI scope)."""
    headers = tuple(
        (bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
        for name, value in scope.get("headers", [])
    )
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    return HttpRequestView(
        str(scope["method"]).upper(), full_path(scope), headers, scope, query=query
    )


async def send_answer(send: Send, answer: HttpAnswer) -> None:
    """Send a complete answer."""
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in answer.headers]
    headers.append((b"content-length", str(len(answer.body)).encode()))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ConnectionError("the client went away")
        chunks += message.get("body", b"")
        if len(chunks) > limit:
            raise _BodyTooLargeError
        if not message.get("more_body", False):
            return bytes(chunks)


async def _call_app(app: ASGIApp, scope: Scope, body: bytes) -> HttpAnswer:
    """Run ``app`` on a buffered body and collect its whole response."""
    delivered = False
    status = 500
    headers: list[tuple[str, str]] = []
    parts = bytearray()
    complete = False

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # no more body: the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, complete
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers.extend(
                (bytes(name).decode("latin-1").lower(), bytes(value).decode("latin-1"))
                for name, value in message.get("headers", [])
                if bytes(name).lower() != b"content-length"
            )
        elif message["type"] == "http.response.body":
            parts.extend(message.get("body", b""))
            complete = not message.get("more_body", False)

    try:
        await app(scope, receive, send)
    except Exception:
        if complete:
            return HttpAnswer(status, tuple(headers), bytes(parts))
        _log.exception("the handler raised; answering 500")
        return status_answer(500)
    if not complete:
        _log.error("the handler returned without a complete response; answering 500")
        return status_answer(500)
    return HttpAnswer(status, tuple(headers), bytes(parts))


class IdempotencyMiddleware:
    """Pure ASGI middleware around ``app`` applying ``http`` (an :class:`HttpIdempotency`).

    With an asyncio store (:class:`~mintid.store.aio.AsyncIdempotencyStore`)
    every covered request runs on the event loop: the scope function (which
    must not block then), the store and the app; with a sync store, the
    scope function and the store run in a worker thread per request. With
    ``HttpIdempotency(same_transaction=True)`` (an asyncio store) the app's
    handler writes on :func:`mintid.http.transaction`, the record's
    transaction's connection.
    """

    def __init__(self, app: ASGIApp, *, http: HttpIdempotency) -> None:
        """Wrap ``app``; ``http`` holds the store, scope function and settings."""
        if not isinstance(http, HttpIdempotency):
            raise TypeError("http must be an HttpIdempotency")
        if http.same_transaction and not http.is_async:
            raise TypeError(
                "same_transaction under ASGI needs an asyncio store (AsyncIdempotencyStore): "
                "the handler writes on the event loop, on the transaction's async connection"
            )
        self.app = app
        self.http = http

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI connection event."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        view = request_view(scope)
        route = self.http.grant_route
        if route is not None and self.http.grants(view):
            grant: HttpAnswer | None
            if inspect.iscoroutinefunction(route.scope):
                grant = self.http.grant_of(await route.scope(view))
            else:
                # A plain scope function may block (a session lookup): off the event loop.
                grant = await asyncio.to_thread(self.http.grant, view)
            if grant is not None:
                await send_answer(send, grant)
                return
        if not self.http.covers(view):
            await self.app(scope, receive, send)
            return
        if self.http.is_async:
            # An asyncio store: admission, the store and the handler all on the loop.
            admission = self.http.admit(view)
        else:
            admission = await asyncio.to_thread(self.http.admit, view)
        if isinstance(admission, HttpAnswer):
            await send_answer(send, admission)
            return
        try:
            body = await _read_body(receive, self.http.body_limit)
        except _BodyTooLargeError:
            await send_answer(send, self.http.too_large())
            return
        self.http.check_body(view, len(body), _FIX)
        answer = await self._run(scope, view, admission, body)
        await send_answer(send, answer)

    async def _run(
        self, scope: Scope, view: HttpRequestView, admitted: Admitted, body: bytes
    ) -> HttpAnswer:
        content_type = view.header("content-type")
        if self.http.is_async:
            answer, _ran = await self.http.run_async(
                admitted, content_type, body, partial(_call_app, self.app, scope, body)
            )
            return answer
        loop = asyncio.get_running_loop()

        def handler() -> HttpAnswer:
            # The store runs in a worker thread; the app runs on the event loop.
            future = asyncio.run_coroutine_threadsafe(_call_app(self.app, scope, body), loop)
            return future.result()

        answer, _ran = await asyncio.to_thread(self.http.run, admitted, content_type, body, handler)
        return answer
