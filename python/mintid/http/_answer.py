"""What the HTTP integrations send, and how a response is stored.

Refusals are ``application/problem+json`` documents whose status, type and
title come from the core (:class:`mintid.Problem`); the only others are the
plain-status ``about:blank`` documents (401, 413, 500). A stored response is
the envelope of ``tests/http/README.md`` ("Stored responses"), so that any
mintid integration, in any language, replays what another stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final, Literal

from mintid._record import (
    PROBLEM_CONTENT_TYPE,
    REPLAYED_HEADER,
    REPLAYED_VALUE,
    RETRY_AFTER_HEADER,
    Problem,
)
from mintid.store import StoredResponse

__all__ = ["HttpAnswer", "from_stored", "problem_answer", "status_answer", "to_stored"]

_MAGIC: Final = b"mintid-http/1 "
_CRLF: Final = b"\r\n"
_TITLES: Final = {401: "Unauthorized", 413: "Content Too Large", 500: "Internal Server Error"}


@dataclass(frozen=True)
class HttpAnswer:
    """A complete HTTP response: status, headers (lower-case names) and body bytes."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (case-insensitive), or ``None``."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)

    def with_header(self, name: str, value: str) -> HttpAnswer:
        """The same answer with one more header."""
        return HttpAnswer(self.status, (*self.headers, (name.lower(), value)), self.body)


def _document(
    status: int, type_uri: str, title: str, detail: str | None, extra: tuple[tuple[str, str], ...]
) -> HttpAnswer:
    document: dict[str, object] = {"type": type_uri, "title": title, "status": status}
    if detail is not None:
        document["detail"] = detail
    body = json.dumps(document, separators=(",", ":")).encode()
    return HttpAnswer(status, (("content-type", PROBLEM_CONTENT_TYPE), *extra), body)


def problem_answer(
    problem: Problem, detail: str | None = None, extra: tuple[tuple[str, str], ...] = ()
) -> HttpAnswer:
    """The ``application/problem+json`` answer for the core's ``problem``."""
    return _document(problem.status, problem.type_uri, problem.title, detail, extra)


def status_answer(status: Literal[401, 413, 500], detail: str | None = None) -> HttpAnswer:
    """A plain HTTP status as a problem (RFC 9457 §4.2.1: type ``about:blank``)."""
    return _document(status, "about:blank", _TITLES[status], detail, ())


def retry_after(secs: int) -> tuple[str, str]:
    """The ``Retry-After`` header with its seconds."""
    return (RETRY_AFTER_HEADER.lower(), str(secs))


def replayed_header() -> tuple[str, str]:
    """The replay marker header (``Idempotent-Replayed: true``)."""
    return (REPLAYED_HEADER.lower(), REPLAYED_VALUE)


def to_stored(answer: HttpAnswer, keep: frozenset[str]) -> StoredResponse:
    """The stored form of ``answer``, keeping the headers named in ``keep`` besides content-type."""
    content_type = ""
    head = _MAGIC + str(answer.status).encode() + _CRLF
    for name, value in answer.headers:
        if name == "content-type":
            content_type = value
        elif name in keep:
            head += f"{name}: {value}".encode("latin-1") + _CRLF
    return StoredResponse(content_type, head + _CRLF + answer.body)


def from_stored(stored: StoredResponse) -> HttpAnswer:
    """The answer a stored response replays.

    Raises :class:`ValueError` when the stored bytes are not an envelope.
    """
    head, blank, body = stored.body.partition(_CRLF + _CRLF)
    lines = head.decode("latin-1").split("\r\n") if blank else []
    first = lines.pop(0) if lines else ""
    status_text = first[len(_MAGIC) :]
    if not first.startswith(_MAGIC.decode()) or not status_text.isdigit():
        raise ValueError("the stored response is not a mintid-http/1 envelope")
    status = int(status_text)
    if not 100 <= status <= 599:
        raise ValueError(f"the stored response has status {status}")
    headers: list[tuple[str, str]] = []
    if stored.content_type:
        headers.append(("content-type", stored.content_type))
    for line in lines:
        name, colon, value = line.partition(": ")
        if not colon or not name:
            raise ValueError(f"the stored response has a bad header line: {line!r}")
        headers.append((name, value))
    return HttpAnswer(status, tuple(headers), body)
