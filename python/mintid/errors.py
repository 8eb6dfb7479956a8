"""Every error mintid raises: one base class, a class per concern, one per kind.

Each error carries the core's stable dotted ``code`` (the code the shared
test vectors name, identical in every language) and the core's one-line
message::

    try:
        mintid.Snowflake(worker=5000)
    except mintid.SnowflakeWorkerOutOfRangeError as error:
        print(error.code)  # snowflake.worker_out_of_range

Catch :class:`MintidError` for everything, a concern class such as
:class:`SnowflakeError` for one module, or a leaf class for one kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mintid._ffi import mintid_ffi as _ffi

_BY_CODE: dict[str, type[MintidError]] = {}
_BY_CONCERN: dict[str, type[MintidError]] = {}


class MintidError(Exception):
    """Base class of every error mintid raises.

    ``code`` is the stable dotted code (``"snowflake.worker_out_of_range"``),
    ``message`` the one-line explanation, which names the offending value.
    """

    #: The code of a leaf class, or the concern prefix of a concern class.
    CODE: ClassVar[str] = ""

    code: str
    message: str
    #: The part of the input at fault (``"scope"`` of a key), when the core says.
    part: str | None
    #: The zero-based byte offset of the problem in the input, when the core says.
    position: int | None
    #: The stable name of the HTTP problem (``"grant_expired"``) the core maps
    #: this error to, when it names one (see :class:`mintid.Problem`).
    problem_name: str | None

    def __init_subclass__(cls, *, code: str = "", concern: str = "", **kwargs: Any) -> None:
        """Register a leaf class under its ``code`` or a concern class under its prefix."""
        super().__init_subclass__(**kwargs)
        if code:
            cls.CODE = code
            _BY_CODE[code] = cls
        if concern:
            cls.CODE = concern
            _BY_CONCERN[concern] = cls

    def __init__(
        self,
        message: str,
        code: str | None = None,
        *,
        part: str | None = None,
        position: int | None = None,
        problem_name: str | None = None,
    ) -> None:
        """Create the error; ``code`` defaults to the class's own code."""
        super().__init__(message)
        self.message = message
        self.code = code if code is not None else type(self).CODE
        self.part = part
        self.position = position
        self.problem_name = problem_name

    def __repr__(self) -> str:
        """Show class, code and message."""
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


def error_class(code: str) -> type[MintidError]:
    """The class raised for ``code``: its leaf class, else its concern's class.

    A code this version does not know (from a newer core) still maps to its
    concern class, or to :class:`MintidError` itself.
    """
    known = _BY_CODE.get(code)
    if known is not None:
        return known
    return _BY_CONCERN.get(code.partition(".")[0], MintidError)


class ArgumentError(MintidError, concern="argument"):
    """A value no core type can hold (``argument.*``)."""


class SnowflakeError(MintidError, concern="snowflake"):
    """Snowflake layouts, IDs and generators (``snowflake.*``)."""


class UuidError(MintidError, concern="uuid"):
    """UUID text of any version (``uuid.*``)."""


class Uuid7Error(MintidError, concern="uuid7"):
    """UUIDv7 values and generators (``uuid7.*``)."""


class IdempotencyKeyError(MintidError, concern="key"):
    """Idempotency keys (``key.*``); ``part`` and ``position`` say where."""


class FingerprintError(MintidError, concern="fingerprint"):
    """Payload fingerprints (``fingerprint.*``); ``position`` says where in the JSON."""


class RequestIdError(MintidError, concern="request_id"):
    """Request IDs, grants and key rings (``request_id.*``)."""


class RecordError(MintidError, concern="record"):
    """The idempotency record state machine (``record.*``)."""


class LeaseError(MintidError, concern="lease"):
    """Worker-id leases (``lease.*``)."""


class SegmentError(MintidError, concern="segment"):
    """Segment allocators (``segment.*``)."""


class OutboxError(MintidError, concern="outbox"):
    """The outbox relay (``outbox.*``)."""


class HttpError(MintidError, concern="http"):
    """The HTTP integrations' shared rules (``http.*``)."""


@dataclass(frozen=True)
class ErrorCode:
    """One entry of the core's error-code registry."""

    #: The stable dotted code, e.g. ``"request_id.bad_tag"``.
    code: str
    #: The part before the dot, e.g. ``"request_id"``.
    concern: str
    #: The name of the HTTP problem a request failing this way answers with, if any.
    problem_name: str | None
    #: Whether a host can meet this code (the ``base64url.*`` codes stay in Rust).
    host: bool
    #: What the code means, in one sentence.
    summary: str
    #: The message of an error of this code, a named field in braces for each
    #: value it fills in, e.g. ``"unknown key id {key_id}"``.
    template: str


def error_codes() -> list[ErrorCode]:
    """Every code of the core's registry, sorted by code."""
    return [
        ErrorCode(
            entry.code,
            entry.concern,
            None if entry.problem is None else _ffi.record_problem_details(entry.problem).name,
            entry.host,
            entry.summary,
            entry.template,
        )
        for entry in _ffi.error_codes()
    ]


#: The leaf class name of each concern's codes: ``<prefix><Kind>Error``.
_LEAF_PREFIX = {
    "argument": "Argument",
    "snowflake": "Snowflake",
    "uuid": "Uuid",
    "uuid7": "Uuid7",
    "key": "Key",
    "fingerprint": "Fingerprint",
    "request_id": "RequestId",
    "record": "Record",
    "lease": "Lease",
    "segment": "Segment",
    "outbox": "Outbox",
    "http": "Http",
}


def _leaf_name(code: str) -> str:
    """The class name of ``code``: ``snowflake.worker_out_of_range`` is
    ``SnowflakeWorkerOutOfRangeError``, ``internal.panic`` ``InternalError``.
    """  # noqa: D205
    concern, _, kind = code.partition(".")
    if concern == "internal":
        return "InternalError"
    return (
        _LEAF_PREFIX[concern]
        + "".join(part[:1].upper() + part[1:] for part in kind.split("_"))
        + "Error"
    )


def _derive_leaf_classes() -> list[str]:
    """One class per code of the core's registry, under its concern's class.

    The ``store.*`` classes are :mod:`mintid.store`'s (their names are the
    store's own); ``base64url.*`` never leaves the core.
    """
    names = []
    for entry in error_codes():
        if not entry.host or entry.concern == "store":
            continue
        parent = _BY_CONCERN.get(entry.concern, MintidError)
        name = _leaf_name(entry.code)
        made = type(
            name, (parent,), {"__doc__": entry.summary, "__module__": __name__}, code=entry.code
        )
        globals()[name] = made
        names.append(name)
    return names


__all__ = sorted(
    [
        "ErrorCode",
        "MintidError",
        "error_codes",
        "ArgumentError",
        "SnowflakeError",
        "UuidError",
        "Uuid7Error",
        "IdempotencyKeyError",
        "FingerprintError",
        "RequestIdError",
        "RecordError",
        "LeaseError",
        "SegmentError",
        "OutboxError",
        "HttpError",
        "error_class",
        *_derive_leaf_classes(),
    ]
)
