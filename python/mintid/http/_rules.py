"""The rules every HTTP integration shares, from the core (``mintid::http``):
the default key kind, which bodies are fingerprinted as JSON, the problem
and grant documents, the stored response envelope and the defaults. The
integrations build on these and compute none of them again.
"""  # noqa: D205

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mintid._fingerprint import Fingerprint
from mintid._native import call, check_uint, ffi
from mintid._record import Problem
from mintid.errors import MintidError

__all__ = [
    "DEFAULT_BODY_LIMIT",
    "DEFAULT_GRANT_TTL_MILLIS",
    "DEFAULT_METHODS",
    "DEFAULT_STORED_HEADERS",
    "GRANT_CONTENT_TYPE",
    "IDEMPOTENCY_KEY_HEADER",
    "REQUEST_ID_HEADER",
    "EnvelopeResponse",
    "StoredEnvelope",
    "admit_key",
    "decode_envelope",
    "default_kind",
    "encode_envelope",
    "fingerprint_body",
    "fingerprint_request",
    "grant_document",
    "is_json_content_type",
    "problem_document",
    "status_document",
]

_DEFAULTS: Final = ffi.http_defaults()
_U64_MAX: Final = (1 << 64) - 1
#: The header carrying a signed request ID unless configured otherwise.
REQUEST_ID_HEADER: Final[str] = _DEFAULTS.request_id_header
#: The IETF draft's header.
IDEMPOTENCY_KEY_HEADER: Final[str] = _DEFAULTS.idempotency_key_header
#: The default body limit: 1 MiB.
DEFAULT_BODY_LIMIT: Final[int] = _DEFAULTS.body_limit
#: The methods covered by default.
DEFAULT_METHODS: Final[tuple[str, ...]] = tuple(_DEFAULTS.methods)
#: The response headers stored (besides content-type) by default.
DEFAULT_STORED_HEADERS: Final[tuple[str, ...]] = tuple(_DEFAULTS.stored_headers)
#: How long a grant lasts by default, in milliseconds (one hour).
DEFAULT_GRANT_TTL_MILLIS: Final[int] = _DEFAULTS.grant_ttl_millis
#: The content type of a grant endpoint's answer.
GRANT_CONTENT_TYPE: Final[str] = _DEFAULTS.grant_content_type


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _check_optional_str(name: str, value: object) -> str | None:
    return None if value is None else _check_str(name, value)


def _check_bytes(name: str, value: object) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise TypeError(f"{name} must be bytes, got {type(value).__name__}")
    return bytes(value)


def default_kind(method: str, path: str) -> str:
    """The default key kind of a request: ``http.<method in lower case>.<first
    10 hex digits of SHA-256 of the path>``.

    ``path`` is the full path as the application sees it, mount prefix
    included (ASGI ``root_path`` and ``path``, WSGI ``SCRIPT_NAME`` +
    ``PATH_INFO``); the core cuts off a query and decodes ``%XX`` escapes.
    Raises :class:`~mintid.errors.HttpInvalidMethodError` for a method no
    kind can hold.
    """  # noqa: D205
    return call(ffi.http_default_kind, _check_str("method", method), _check_str("path", path))


def is_json_content_type(content_type: str | None) -> bool:
    """Whether a content type is JSON (``application/json`` or ``application/…+json``)."""
    return ffi.http_is_json_content_type(_check_optional_str("content_type", content_type))


def fingerprint_body(content_type: str | None, body: bytes) -> Fingerprint:
    """A body's fingerprint: a non-empty JSON body (by its content type)
    through the core's canonicaliser; any other body as raw bytes.

    Raises :class:`~mintid.errors.HttpMalformedBodyError` (problem
    ``malformed_body``) for a JSON content type whose body is not JSON.
    """  # noqa: D205
    digest = call(
        ffi.http_fingerprint_body,
        _check_optional_str("content_type", content_type),
        _check_bytes("body", body),
    )
    return Fingerprint._of_core(digest)


def fingerprint_request(content_type: str | None, query: str, body: bytes) -> Fingerprint:
    """A request's fingerprint, compared when its key comes again: the body's
    (:func:`fingerprint_body`) and the raw ``query`` string (without ``?``),
    so that another query under the same key is a mismatch.

    Raises :class:`~mintid.errors.HttpMalformedBodyError` as :func:`fingerprint_body`.
    """  # noqa: D205
    digest = call(
        ffi.http_fingerprint_request,
        _check_optional_str("content_type", content_type),
        _check_str("query", query),
        _check_bytes("body", body),
    )
    return Fingerprint._of_core(digest)


def check_body_read(
    content_length: str | None, transfer_encoding: str | None, read: int, fix: str
) -> None:
    """Check that the ``read`` bytes a middleware got are the request's whole
    body (the core's rule): a request declaring a body (``Content-Length``
    above 0, or a ``Transfer-Encoding``) whose stream gave fewer bytes than
    its length was read by something else first, and is never fingerprinted
    as empty.

    Raises :class:`~mintid.errors.HttpBodyConsumedError`, naming ``fix``.
    """  # noqa: D205
    length = (content_length or "").strip()
    declared = min(int(length), _U64_MAX) if length.isascii() and length.isdigit() else None
    call(
        ffi.http_check_body_read,
        declared,
        transfer_encoding is not None,
        False,  # an ASGI or WSGI stream cannot tell; the length check stands
        check_uint("read", read),
        _check_str("fix", fix),
    )


def problem_document(problem: Problem, detail: str | None = None) -> bytes:
    """The ``application/problem+json`` body of the core's ``problem``."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    text = ffi.http_problem_document(problem.value, _check_optional_str("detail", detail))
    return text.encode()


def status_document(status: int, detail: str | None = None) -> bytes:
    """The ``about:blank`` problem body of a plain status (401, 413 or 500).

    Raises :class:`~mintid.errors.HttpInvalidStatusError` for any other status.
    """
    check_uint("status", status, 16)
    return call(ffi.http_status_document, status, _check_optional_str("detail", detail)).encode()


def grant_document(grant: str, expires_millis: int) -> bytes:
    """The body of a grant endpoint's answer: ``{"grant", "expiresMillis"}``."""
    check_uint("expires_millis", expires_millis)
    return ffi.http_grant_document(_check_str("grant", grant), expires_millis).encode()


@dataclass(frozen=True)
class EnvelopeResponse:
    """A complete response as the envelope holds it."""

    #: The status code.
    status: int
    #: Header names and values, in order.
    headers: tuple[tuple[str, str], ...]
    #: The body bytes.
    body: bytes


@dataclass(frozen=True)
class StoredEnvelope:
    """A response as the store keeps it: its content type and the envelope bytes."""

    #: The content type; empty when the response had none.
    content_type: str
    #: The envelope: status, stored headers and body.
    body: bytes


def encode_envelope(
    status: int, headers: tuple[tuple[str, str], ...], body: bytes, stored_headers: tuple[str, ...]
) -> StoredEnvelope:
    """The stored form of a response: its content type, and the envelope with
    its status, the headers named in ``stored_headers`` (case-insensitive,
    written in lower case) and its body.

    Raises :class:`~mintid.errors.HttpInvalidStatusError` (outside 100-599)
    or :class:`~mintid.errors.HttpInvalidHeaderError` (a stored header that
    is no token, or whose value holds CR, LF or NUL).
    """  # noqa: D205
    check_uint("status", status, 16)
    response = ffi.HttpResponse(
        status=status,
        headers=[
            ffi.HttpHeader(name=_check_str("header name", n), value=_check_str("header value", v))
            for n, v in headers
        ],
        body=_check_bytes("body", body),
    )
    kept = [_check_str("stored header", name) for name in stored_headers]
    stored = call(ffi.http_encode_envelope, response, kept)
    return StoredEnvelope(stored.content_type, stored.bytes)


def decode_envelope(content_type: str, body: bytes) -> EnvelopeResponse:
    """The response a stored envelope replays: ``content-type`` first (when
    not empty), then the stored headers, and the body.

    Raises :class:`~mintid.errors.HttpBadStoredResponseError` (with
    ``position``) when the bytes are not an envelope.
    """  # noqa: D205
    response = call(
        ffi.http_decode_envelope,
        _check_str("content_type", content_type),
        _check_bytes("body", body),
    )
    headers = tuple((header.name, header.value) for header in response.headers)
    return EnvelopeResponse(response.status, headers, response.body)


def admit_key(
    request_id_header: str | None,
    accepts_idempotency_key: bool,
    *,
    caller: bool,
    request_id_sent: bool,
    idempotency_key_sent: bool,
) -> tuple[int, str, bytes] | bool:
    """Where a covered request's key is read from: ``True`` a signed request ID (from
    ``request_id_header``, given only with a key ring), ``False`` an ``Idempotency-Key``; or the
    refusal to answer first, ``(status, code, problem document)``: 401 ``http.unauthenticated``
    without a ``caller``, 400 ``http.missing_key`` naming the header(s) the route accepts.
    The core's rule (``http::admit_key``).
    """  # noqa: D205
    made = ffi.http_admit_key(
        request_id_header, accepts_idempotency_key, caller, request_id_sent, idempotency_key_sent
    )
    if isinstance(made, ffi.KeyAdmission.REFUSED):
        return made.status, made.code, made.document.encode()
    return isinstance(made, ffi.KeyAdmission.SIGNED_REQUEST_ID)


def key_refusal(error: MintidError, *, signed: bool) -> Problem | None:
    """The problem refusing a request whose key failed to read with ``error``, from a signed
    request ID (``signed``) or an ``Idempotency-Key``; ``None``: the server's failure (a kind or
    scope it computed, a key ring that cannot verify), to be raised. The core's rule.
    """  # noqa: D205
    made = ffi.http_key_refusal(signed, error.code, error.part)
    return None if made is None else Problem(made)
