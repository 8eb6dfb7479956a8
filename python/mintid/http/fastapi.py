"""Idempotent routes for FastAPI, route by route (``pip install fastapi``).

::

    http = HttpIdempotency(store=store, scope=lambda request: f"user:{user_of(request.raw)}")
    orders = APIRouter(route_class=idempotent_route(http))

    @orders.post("/orders", status_code=201)
    async def create_order(order: Order) -> Created: ...

    app.include_router(orders)  # the app's other routes stay as they are

A route of the class :func:`idempotent_route` makes runs the ASGI middleware
(:class:`mintid.http.asgi.IdempotencyMiddleware`) around its own handler:
the same key, fingerprint, stored response, replay and problem documents,
with nothing decided here. FastAPI's exception handlers answer inside it, so
an ``HTTPException`` or a validation error is the route's response (stored
like any other). A route of the class at the ``GrantRoute``'s path is served
the grant endpoint by the middleware.

With ``HttpIdempotency(same_transaction=True)`` (an asyncio store) a route's
handler takes the record's transaction as a parameter of type
:data:`Transaction` (the async driver connection, as
:meth:`AsyncDatabase.transaction <mintid.store.aio.AsyncDatabase.transaction>`
gives it) and writes on it: its rows and the record commit together.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.routing import APIRoute
from starlette._exception_handler import wrap_app_handling_exceptions

from mintid.http._core import HttpIdempotency, transaction
from mintid.http.asgi import IdempotencyMiddleware, Message, Receive, Scope, Send

__all__ = ["Transaction", "idempotent_route", "record_transaction"]

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


async def record_transaction() -> Any:
    """A FastAPI dependency: the connection of the record's transaction this
    route's handler runs in (:func:`mintid.http.transaction`); a
    :class:`LookupError` outside the same-transaction mode.
    """  # noqa: D205
    return transaction()


#: A handler parameter of this type gets the record's transaction's connection
#: (``async def create(order: Order, connection: Transaction)``).
Transaction = Annotated[Any, Depends(record_transaction)]


def idempotent_route(http: HttpIdempotency) -> type[APIRoute]:
    """A FastAPI route class whose routes run once per key under ``http``
    (``APIRouter(route_class=...)``, or ``route_class_override`` for one route).
    """  # noqa: D205
    if not isinstance(http, HttpIdempotency):
        raise TypeError("http must be an HttpIdempotency")

    class IdempotentRoute(APIRoute):
        """A FastAPI route behind mintid's idempotency middleware."""

        def get_route_handler(self) -> Handler:
            """FastAPI's handler of this route, run inside the middleware."""
            return _covered(http, super().get_route_handler())

    return IdempotentRoute


def _covered(http: HttpIdempotency, handler: Handler) -> Handler:
    """``handler`` behind the middleware: a handler again (request in, response out)."""

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        # The route's own handler as an ASGI app, FastAPI's exception handlers included.
        request = Request(scope, receive, send)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            response = await handler(request)
            await response(scope, receive, send)

        await wrap_app_handling_exceptions(app, request)(scope, receive, send)

    middleware = IdempotencyMiddleware(route, http=http)

    async def covered(request: Request) -> Response:
        sent: list[Message] = []

        async def send(message: Message) -> None:
            sent.append(message)

        await middleware(request.scope, request.receive, send)
        start, *body = sent
        response = Response(
            b"".join(bytes(part.get("body", b"")) for part in body),
            status_code=int(start["status"]),
        )
        response.raw_headers = [(bytes(name), bytes(value)) for name, value in start["headers"]]
        return response

    return covered
