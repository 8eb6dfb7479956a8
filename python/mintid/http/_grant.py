"""The grant endpoint: a logged-in browser asks for a grant for its own scope."""

from __future__ import annotations

import time

from mintid._request_id import KeyRing
from mintid.http._answer import HttpAnswer, status_answer
from mintid.http._rules import DEFAULT_GRANT_TTL_MS, GRANT_CONTENT_TYPE, grant_document

__all__ = ["grant_answer"]


def grant_answer(
    key_ring: KeyRing,
    scope: str | None,
    *,
    ttl_ms: int = DEFAULT_GRANT_TTL_MS,
    now_ms: int | None = None,
) -> HttpAnswer:
    """The answer of a grant endpoint for the logged-in user's ``scope``: JSON
    ``{"grant", "expiresMillis"}`` with ``Cache-Control: no-store`` (a grant is
    a bearer secret of its scope), or 401 when nobody is logged in (``None``).
    """  # noqa: D205
    if not isinstance(key_ring, KeyRing):
        raise TypeError("key_ring must be a KeyRing")
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0:
        raise ValueError("ttl_ms must be a positive integer")
    if scope is None:
        return status_answer(401, "log in to get a grant")
    expires_ms = (time.time_ns() // 1_000_000 if now_ms is None else now_ms) + ttl_ms
    grant = key_ring.issue_grant(scope, expires_ms)
    headers = (("content-type", GRANT_CONTENT_TYPE), ("cache-control", "no-store"))
    return HttpAnswer(200, headers, grant_document(grant.text, expires_ms))
