"""Idempotent requests for any WSGI app (Flask, Django, Bottle, …).

::

    app.wsgi_app = IdempotencyMiddleware(
        app.wsgi_app,
        http=HttpIdempotency(store=store, scope=lambda request: f"user:{user_of(request.raw)}"),
    )

The same rules as :mod:`mintid.http.asgi` (``tests/http/README.md``): a
covered request needs a key, its handler runs once and its whole response is
stored, so a duplicate gets it again with ``Idempotent-Replayed: true``.
``raw`` of the request view is the WSGI environ.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from mintid.http._answer import HttpAnswer, status_answer
from mintid.http._core import HttpIdempotency, HttpRequestView

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["IdempotencyMiddleware", "request_view"]

_log = logging.getLogger("mintid.http")

#: What to do when something read ``wsgi.input`` before the middleware.
_FIX = (
    "wrap the app with the idempotency middleware outside any middleware that reads "
    "wsgi.input, or have that middleware put the bytes back "
    "(environ['wsgi.input'] = io.BytesIO(body))"
)


def _text(environ: WSGIEnvironment, name: str) -> str:
    """A path variable as text: WSGI carries its bytes as latin-1 (PEP 3333)."""
    return str(environ.get(name) or "").encode("latin-1").decode("utf-8", "replace")


def request_view(environ: WSGIEnvironment) -> HttpRequestView:
    """The neutral view of a WSGI request (``raw`` is the environ); its path
    is ``SCRIPT_NAME`` + ``PATH_INFO``, the full path with the mount prefix.
    """  # noqa: D205
    headers: list[tuple[str, str]] = []
    for name, value in environ.items():
        if name.startswith("HTTP_"):
            headers.append((name[5:].replace("_", "-").lower(), str(value)))
        elif name in ("CONTENT_TYPE", "CONTENT_LENGTH") and value:
            headers.append((name.replace("_", "-").lower(), str(value)))
    method = str(environ.get("REQUEST_METHOD", "GET")).upper()
    path = _text(environ, "SCRIPT_NAME") + _text(environ, "PATH_INFO")
    query = str(environ.get("QUERY_STRING") or "")
    return HttpRequestView(method, path, tuple(headers), environ, query=query)


def _reason(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


def _respond(start_response: StartResponse, answer: HttpAnswer) -> list[bytes]:
    headers = [*answer.headers, ("content-length", str(len(answer.body)))]
    start_response(_reason(answer.status), headers)
    return [answer.body]


def _read_body(environ: WSGIEnvironment, limit: int) -> bytes | None:
    """The body, or ``None`` when it is longer than ``limit``.

    Without ``CONTENT_LENGTH`` the body is empty (PEP 3333) unless the server
    marks its input as terminated (``wsgi.input_terminated``).
    """
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    length_text = str(environ.get("CONTENT_LENGTH") or "").strip()
    if length_text.isdigit():
        length = int(length_text)
        return None if length > limit else bytes(stream.read(length))
    if not environ.get("wsgi.input_terminated"):
        return b""
    body = bytes(stream.read(limit + 1))
    return None if len(body) > limit else body


def _call_app(app: WSGIApplication, environ: WSGIEnvironment, body: bytes) -> HttpAnswer:
    """Run ``app`` on a buffered body and collect its whole response."""
    inner = dict(environ)
    inner["wsgi.input"] = io.BytesIO(body)
    inner["CONTENT_LENGTH"] = str(len(body))
    started: list[tuple[int, tuple[tuple[str, str], ...]]] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        code = int(status.split(" ", 1)[0])
        kept = tuple(
            (name.lower(), value) for name, value in headers if name.lower() != "content-length"
        )
        started[:] = [(code, kept)]
        return lambda _data: None

    try:
        result: Iterable[bytes] = app(inner, start_response)
        try:
            body_out = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
    except Exception:
        _log.exception("the handler raised; answering 500")
        return status_answer(500)
    if not started:
        _log.error("the handler started no response; answering 500")
        return status_answer(500)
    status, headers = started[0]
    return HttpAnswer(status, headers, body_out)


class IdempotencyMiddleware:
    """WSGI middleware around ``app`` applying ``http`` (an :class:`HttpIdempotency`)."""

    def __init__(self, app: WSGIApplication, *, http: HttpIdempotency) -> None:
        """Wrap ``app``; ``http`` holds the store, scope function and settings."""
        if not isinstance(http, HttpIdempotency):
            raise TypeError("http must be an HttpIdempotency")
        if http.is_async:
            raise TypeError("WSGI needs a synchronous store (an IdempotencyStore)")
        self.app = app
        self.http = http

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Handle one request."""
        view = request_view(environ)
        grant = self.http.grant(view)
        if grant is not None:
            return _respond(start_response, grant)
        if not self.http.covers(view):
            return self.app(environ, start_response)
        admission = self.http.admit(view)
        if isinstance(admission, HttpAnswer):
            return _respond(start_response, admission)
        body = _read_body(environ, self.http.body_limit)
        if body is None:
            return _respond(start_response, self.http.too_large())
        self.http.check_body(view, len(body), _FIX)
        answer, _ran = self.http.run(
            admission,
            view.header("content-type"),
            body,
            lambda: _call_app(self.app, environ, body),
        )
        return _respond(start_response, answer)
