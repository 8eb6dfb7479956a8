"""UUIDs: the four text forms, version 8, and RFC 9562 UUIDv7 values (not generators)."""

from __future__ import annotations

import builtins
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Final, Literal

from mintid._native import call, check_uint, ffi

__all__ = [
    "TextForm",
    "Uuid7",
    "UuidInfo",
    "format_uuid",
    "inspect_uuid",
    "parse_uuid",
    "uuid_v8",
]

#: A text form of a UUID: ``hyphenated`` (36 characters, lower case),
#: ``simple`` (32 hex digits), ``urn`` (``urn:uuid:`` + hyphenated) or
#: ``base32`` (26 Crockford digits, upper case).
TextForm = Literal["hyphenated", "simple", "urn", "base32"]

_FORMS: Final[dict[str, ffi.UuidTextForm]] = {
    "hyphenated": ffi.UuidTextForm.HYPHENATED,
    "simple": ffi.UuidTextForm.SIMPLE,
    "urn": ffi.UuidTextForm.URN,
    "base32": ffi.UuidTextForm.BASE32,
}
_VARIANTS: Final[dict[ffi.UuidVariant, str]] = {
    ffi.UuidVariant.NCS: "ncs",
    ffi.UuidVariant.RFC9562: "rfc9562",
    ffi.UuidVariant.MICROSOFT: "microsoft",
    ffi.UuidVariant.FUTURE: "future",
}
_UNIX_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _bytes_of(value: uuid.UUID | bytes | str) -> bytes:
    """The 16 bytes of a UUID given as :class:`uuid.UUID`, bytes or text in any form."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return call(ffi.uuid_parse, value).bytes
    raise TypeError(f"expected a UUID, bytes or str, got {type(value).__name__}")


def _form(form: str) -> ffi.UuidTextForm:
    try:
        return _FORMS[form]
    except (KeyError, TypeError):
        raise ValueError(f"form must be one of {', '.join(_FORMS)}, got {form!r}") from None


def parse_uuid(text: str) -> uuid.UUID:
    """Read a UUID of any version in any of the four text forms.

    Unlike :class:`uuid.UUID` this reads the base32 form and nothing else
    (no braces, no spaces); errors are :class:`~mintid.UuidError` subclasses.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return uuid.UUID(bytes=call(ffi.uuid_parse, text).bytes)


def format_uuid(value: uuid.UUID | bytes, form: TextForm = "hyphenated") -> str:
    """Write a UUID (a :class:`uuid.UUID` or 16 bytes) in ``form``."""
    if isinstance(value, str):
        raise TypeError("format_uuid takes a UUID or bytes; use parse_uuid for text")
    return call(ffi.uuid_format, _bytes_of(value), _form(form))


@dataclass(frozen=True)
class UuidInfo:
    """What a UUID says about itself."""

    uuid: uuid.UUID
    #: The version field, 0 to 15 (whatever the variant).
    version: int
    #: ``ncs``, ``rfc9562``, ``microsoft`` or ``future``.
    variant: str


def inspect_uuid(value: uuid.UUID | bytes | str) -> UuidInfo:
    """The version and variant fields of a UUID (object, 16 bytes or text)."""
    info = call(ffi.uuid_inspect, _bytes_of(value))
    return UuidInfo(uuid.UUID(bytes=info.bytes), info.version, _VARIANTS[info.variant])


def uuid_v8(custom: bytes) -> uuid.UUID:
    """A version 8 UUID carrying the 16 ``custom`` bytes, except its version and variant bits."""
    if not isinstance(custom, bytes | bytearray | memoryview):
        raise TypeError(f"custom must be bytes, got {type(custom).__name__}")
    return uuid.UUID(bytes=call(ffi.uuid_new_v8, bytes(custom)))


@dataclass(frozen=True)
class Uuid7:
    """A UUID known to be version 7 with the RFC 9562 variant, and its fields.

    Build one with :meth:`parse`, :meth:`from_bytes`, :meth:`from_uuid` or
    :meth:`from_fields`; a wrong version or variant raises a
    :class:`~mintid.Uuid7Error` subclass.
    """

    #: The 16 bytes, most significant first.
    bytes: builtins.bytes
    #: Milliseconds since the Unix epoch (48 bits).
    unix_millis: int
    #: The 12 bits after the version field.
    rand_a: int
    #: The 62 bits after the variant field.
    rand_b: int
    #: mintid's 16-bit counter: ``rand_a`` and the top 4 bits of ``rand_b``.
    counter: int

    @classmethod
    def _of(cls, fields: ffi.Uuid7Fields) -> Uuid7:
        return cls(fields.bytes, fields.unix_millis, fields.rand_a, fields.rand_b, fields.counter)

    @classmethod
    def parse(cls, text: str) -> Uuid7:
        """Read a UUIDv7 in any of the four text forms."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return cls._of(call(ffi.uuid7_parse, text))

    @classmethod
    def from_bytes(cls, data: builtins.bytes) -> Uuid7:
        """Read 16 bytes (most significant first) as a UUIDv7."""
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"data must be bytes, got {type(data).__name__}")
        return cls._of(call(ffi.uuid7_from_bytes, bytes(data)))

    @classmethod
    def from_uuid(cls, value: uuid.UUID) -> Uuid7:
        """Read a :class:`uuid.UUID` as a UUIDv7."""
        if not isinstance(value, uuid.UUID):
            raise TypeError(f"value must be a uuid.UUID, got {type(value).__name__}")
        return cls._of(call(ffi.uuid7_from_bytes, value.bytes))

    @classmethod
    def from_fields(cls, unix_millis: int, rand_a: int, rand_b: int) -> Uuid7:
        """Pack a UUIDv7 of ``unix_millis`` (< 2^48), ``rand_a`` (< 2^12), ``rand_b`` (< 2^62)."""
        return cls._of(
            call(
                ffi.uuid7_from_fields,
                check_uint("unix_millis", unix_millis),
                check_uint("rand_a", rand_a, 16),
                check_uint("rand_b", rand_b),
            )
        )

    @property
    def uuid(self) -> uuid.UUID:
        """The ID as a :class:`uuid.UUID`."""
        return uuid.UUID(bytes=self.bytes)

    @property
    def datetime(self) -> datetime:
        """The timestamp, in UTC."""
        return _UNIX_EPOCH + timedelta(milliseconds=self.unix_millis)

    def format(self, form: TextForm = "hyphenated") -> str:
        """The ID in ``form``."""
        return format_uuid(self.bytes, form)

    def __str__(self) -> str:
        """The hyphenated form."""
        return self.format()
