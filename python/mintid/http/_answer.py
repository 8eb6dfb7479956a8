"""What the HTTP integrations send, and how a response is stored.

Refusals are ``application/problem+json`` documents written by the core
(:func:`~mintid.http.problem_document`); the only others are the core's
plain-status ``about:blank`` documents (401, 413, 500). A stored response is
the core's envelope (:func:`~mintid.http.encode_envelope`), so that any
mintid integration, in any language, replays what another stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mintid._record import (
    PROBLEM_CONTENT_TYPE,
    REPLAYED_HEADER,
    REPLAYED_VALUE,
    RETRY_AFTER_HEADER,
    Problem,
)
from mintid.http._rules import decode_envelope, encode_envelope, problem_document, status_document
from mintid.store import StoredResponse

__all__ = [
    "HttpAnswer",
    "from_stored",
    "problem_answer",
    "refusal_answer",
    "status_answer",
    "to_stored",
]


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


def problem_answer(
    problem: Problem, detail: str | None = None, extra: tuple[tuple[str, str], ...] = ()
) -> HttpAnswer:
    """The ``application/problem+json`` answer for the core's ``problem``."""
    body = problem_document(problem, detail)
    return HttpAnswer(problem.status, (("content-type", PROBLEM_CONTENT_TYPE), *extra), body)


def status_answer(status: Literal[401, 413, 500], detail: str | None = None) -> HttpAnswer:
    """A plain HTTP status as a problem (RFC 9457 §4.2.1: type ``about:blank``)."""
    body = status_document(status, detail)
    return HttpAnswer(status, (("content-type", PROBLEM_CONTENT_TYPE),), body)


def refusal_answer(status: int, document: bytes) -> HttpAnswer:
    """A refusal the core wrote in full: its ``status`` and problem ``document``."""
    return HttpAnswer(status, (("content-type", PROBLEM_CONTENT_TYPE),), document)


def retry_after(secs: int) -> tuple[str, str]:
    """The ``Retry-After`` header with its seconds."""
    return (RETRY_AFTER_HEADER.lower(), str(secs))


def replayed_header() -> tuple[str, str]:
    """The replay marker header (``Idempotent-Replayed: true``)."""
    return (REPLAYED_HEADER.lower(), REPLAYED_VALUE)


def to_stored(answer: HttpAnswer, keep: tuple[str, ...]) -> StoredResponse:
    """The stored form of ``answer``, keeping the headers named in ``keep`` besides content-type.

    Raises :class:`~mintid.errors.HttpError` when a kept header cannot be stored.
    """
    stored = encode_envelope(answer.status, answer.headers, answer.body, keep)
    return StoredResponse(stored.content_type, stored.body)


def from_stored(stored: StoredResponse) -> HttpAnswer:
    """The answer a stored response replays.

    Raises :class:`~mintid.errors.HttpBadStoredResponseError` when the stored
    bytes are not an envelope.
    """
    response = decode_envelope(stored.content_type, stored.body)
    return HttpAnswer(response.status, response.headers, response.body)
