"""The grant endpoint: a logged-in browser asks for a grant for its own scope."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mintid._native import check_uint
from mintid._request_id import KeyRing
from mintid.errors import ArgumentOutOfRangeError
from mintid.http._answer import HttpAnswer, status_answer
from mintid.http._rules import DEFAULT_GRANT_TTL_MILLIS, GRANT_CONTENT_TYPE, grant_document

if TYPE_CHECKING:
    from mintid.http._core import HttpRequestView

__all__ = ["GrantRoute", "grant_answer"]


def grant_answer(
    key_ring: KeyRing,
    scope: str | None,
    *,
    ttl_millis: int = DEFAULT_GRANT_TTL_MILLIS,
    now_millis: int | None = None,
) -> HttpAnswer:
    """The answer of a grant endpoint for the logged-in user's ``scope``: JSON
    ``{"grant", "expiresMillis"}`` with ``Cache-Control: no-store`` (a grant is
    a bearer secret of its scope), or 401 when nobody is logged in (``None``).
    """  # noqa: D205
    if not isinstance(key_ring, KeyRing):
        raise TypeError("key_ring must be a KeyRing")
    _check_ttl(ttl_millis)
    if scope is None:
        return status_answer(401, "log in to get a grant")
    expires_millis = (
        time.time_ns() // 1_000_000 if now_millis is None else now_millis
    ) + ttl_millis
    grant = key_ring.issue_grant(scope, expires_millis)
    headers = (("content-type", GRANT_CONTENT_TYPE), ("cache-control", "no-store"))
    return HttpAnswer(200, headers, grant_document(grant.text, expires_millis))


def _check_ttl(ttl_millis: int) -> None:
    if check_uint("ttl_millis", ttl_millis) == 0:
        raise ArgumentOutOfRangeError("ttl_millis must be positive, got 0")


@dataclass(frozen=True)
class GrantRoute:
    """The grant endpoint served by the idempotency middleware itself
    (``HttpIdempotency(grant=GrantRoute(...))``), so that it is never covered:
    a ``POST`` to ``path`` (the full path, mount prefix included) answers
    :func:`grant_answer` for ``scope(request)`` with the middleware's key ring.
    """  # noqa: D205

    #: The full path of the endpoint, e.g. ``/api/grant``.
    path: str
    #: The logged-in user's scope (as the middleware's ``scope``), or ``None``: 401.
    #: Under the ASGI middleware it may be an ``async`` function, awaited on the loop.
    scope: (
        Callable[[HttpRequestView], str | None] | Callable[[HttpRequestView], Awaitable[str | None]]
    )
    #: How long a grant lasts, in milliseconds.
    ttl_millis: int = DEFAULT_GRANT_TTL_MILLIS

    def __post_init__(self) -> None:
        """Check the settings."""
        if not isinstance(self.path, str) or not self.path.startswith("/"):
            raise ValueError("the grant path must be a path starting with '/'")
        if not callable(self.scope):
            raise TypeError("scope must be a function of the request")
        _check_ttl(self.ttl_millis)
