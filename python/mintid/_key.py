"""Idempotency keys: which operation, for whom, and which attempt."""

from __future__ import annotations

from collections.abc import Sequence

from mintid._fingerprint import Fingerprint
from mintid._native import call, ffi
from mintid._wire import key_text
from mintid._wire_codec import SURROGATE
from mintid.errors import error_class

__all__ = ["IdempotencyKey", "key_id_from_fields", "parse_idempotency_key_header"]


def _text(name: str, value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _field(index: int, value: str) -> str:
    """A business field, which may hold any character but a lone surrogate (UTF-8 has none)."""
    lone = SURROGATE.search(_text("field", value))
    if lone is not None:
        raise error_class("key.invalid_character")(
            f"fields[{index}] holds a lone surrogate at index {lone.start()}, "
            "which UTF-8 cannot encode",
            part="id",
        )
    return value


def _raw(name: str, value: str | bytes) -> bytes:
    """Bytes as given, or a str encoded as UTF-8 (positions in errors count its bytes)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise TypeError(f"{name} must be str or bytes, got {type(value).__name__}")


class IdempotencyKey:
    """An idempotency key: ``kind`` (the operation, ``a-z 0-9 . _ -``, 1-32 bytes),
    ``scope`` (whose key: a tenant, user or client) and ``id`` (which attempt),
    the latter two 1-64 bytes of printable ASCII without spaces.

    ``str(key)`` is the canonical text ``kind:scope:id`` (``%`` and ``:`` in
    the scope escaped), which :meth:`parse` reads back. Invalid parts raise a
    :class:`~mintid.IdempotencyKeyError` subclass whose ``part`` and
    ``position`` say where.
    """  # noqa: D205

    __slots__ = ("id", "kind", "scope", "text")

    kind: str
    scope: str
    id: str
    text: str

    def __init__(self, kind: str, scope: str, id: str) -> None:
        """Check and hold the three parts."""
        self.text = key_text(_text("kind", kind), _text("scope", scope), _text("id", id))
        self.kind, self.scope, self.id = kind, scope, id

    def _load(self, key: ffi.IdempotencyKey) -> None:
        self.kind, self.scope, self.id, self.text = key.kind, key.scope, key.id, key.text

    @classmethod
    def _of(cls, key: ffi.IdempotencyKey) -> IdempotencyKey:
        made = cls.__new__(cls)
        made._load(key)
        return made

    @classmethod
    def from_header(cls, kind: str, scope: str, header: str | bytes) -> IdempotencyKey:
        """A key whose id is an ``Idempotency-Key`` header value (quoted or bare)."""
        return cls._of(
            call(
                ffi.idempotency_key_from_header,
                _text("kind", kind),
                _text("scope", scope),
                _raw("header", header),
            )
        )

    @classmethod
    def from_fields(cls, kind: str, scope: str, fields: Sequence[str]) -> IdempotencyKey:
        """A key whose id is built from business fields (see :func:`key_id_from_fields`)."""
        return cls._of(
            call(
                ffi.idempotency_key_from_fields,
                _text("kind", kind),
                _text("scope", scope),
                [_field(index, field) for index, field in enumerate(fields)],
            )
        )

    @classmethod
    def derived(cls, kind: str, scope: str, fingerprint: Fingerprint) -> IdempotencyKey:
        """A key for a request that came without one: its id is a UUIDv8 derived
        from the payload's fingerprint, so a retried payload gets the same key.
        """  # noqa: D205
        if not isinstance(fingerprint, Fingerprint):
            raise TypeError(f"fingerprint must be a Fingerprint, got {type(fingerprint).__name__}")
        return cls._of(
            call(
                ffi.idempotency_key_derived,
                _text("kind", kind),
                _text("scope", scope),
                fingerprint.digest,
            )
        )

    @classmethod
    def parse(cls, text: str | bytes) -> IdempotencyKey:
        """Read the canonical text ``kind:scope:id``."""
        return cls._of(call(ffi.idempotency_key_parse, _raw("text", text)))

    def __str__(self) -> str:
        """The canonical text ``kind:scope:id``."""
        return self.text

    def __repr__(self) -> str:
        """Show the three parts."""
        return f"IdempotencyKey({self.kind!r}, {self.scope!r}, {self.id!r})"

    def __eq__(self, other: object) -> bool:
        """Keys are equal when their parts are."""
        if not isinstance(other, IdempotencyKey):
            return NotImplemented
        return self.text == other.text

    def __hash__(self) -> int:
        """Hash of the canonical text."""
        return hash(self.text)


def parse_idempotency_key_header(value: str | bytes) -> str:
    """The id carried by an ``Idempotency-Key`` header value.

    Reads a Structured Field String (``"..."``) or a bare token, as clients
    send both.
    """
    return call(ffi.idempotency_key_parse_header, _raw("value", value))


def key_id_from_fields(fields: Sequence[str]) -> str:
    """An id built from business fields, e.g. ``["user", "123"]`` gives ``user:123``."""
    return call(
        ffi.idempotency_key_id_from_fields,
        [_field(index, field) for index, field in enumerate(fields)],
    )
