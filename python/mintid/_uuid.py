"""UUIDs: the four text forms, version 8, and RFC 9562 UUIDv7 values and generators."""

from __future__ import annotations

import builtins
import operator
import sys
import threading
import time
import uuid
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import repeat
from typing import Any, Final, Literal

from mintid._buffer import Buffer, register_for_fork
from mintid._native import call, check_uint, ffi
from mintid._policy import RollbackPolicy
from mintid.testing import ManualClock

__all__ = [
    "TextForm",
    "Uuid7",
    "Uuid7Generator",
    "UuidInfo",
    "format_uuid",
    "inspect_uuid",
    "parse_uuid",
    "uuid7",
    "uuid7_str",
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
_BIG_ENDIAN_HOST: Final = sys.byteorder == "big"
_time_ns = time.time_ns
_UUID = uuid.UUID
_new_object = object.__new__
# uuid.UUID keeps its fields in __slots__; writing them through the slot
# descriptors (as UUID.__init__ does through object.__setattr__) skips the
# 128-bit range check of the constructor, which the core's output never needs.
_set_int = _UUID.__dict__["int"].__set__
_set_is_safe = _UUID.__dict__["is_safe"].__set__
_SAFE_UNKNOWN = uuid.SafeUUID.unknown


def _ints_of_bytes(raw: bytes) -> list[int]:
    """128-bit values from 16 bytes each, most significant first."""
    halves = array("Q", raw)
    if not _BIG_ENDIAN_HOST:
        halves.byteswap()
    values = halves.tolist()
    highs = map(operator.lshift, values[::2], repeat(64))
    return list(map(operator.or_, highs, values[1::2]))


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


class _IntBuffer(Buffer[int]):
    """UUIDv7s as 128-bit ints; :class:`uuid.UUID` objects are made as they go out."""

    __slots__ = ("_core",)

    def __init__(self, core: ffi.Uuid7Generator, lock: threading.Lock, unbuffered: bool) -> None:
        super().__init__(lock, unbuffered)
        self._core = core

    def _fetch(self, handed_out: int) -> tuple[list[int], int]:
        raw = call(self._core.next_batch, handed_out)
        return _ints_of_bytes(raw[8:]), int.from_bytes(raw[:8], "little")

    def _fetch_one(self) -> int:
        return _ints_of_bytes(call(self._core.next_bytes, 1))[0]


class _TextBuffer(Buffer[str]):
    """UUIDv7s in the hyphenated form."""

    __slots__ = ("_core",)

    def __init__(self, core: ffi.Uuid7Generator, lock: threading.Lock, unbuffered: bool) -> None:
        super().__init__(lock, unbuffered)
        self._core = core

    def _fetch(self, handed_out: int) -> tuple[list[str], int]:
        parts = call(self._core.next_text_batch, handed_out, ffi.UuidTextForm.HYPHENATED).split(" ")
        fresh_until = int(parts[0])
        del parts[0]
        return parts, fresh_until

    def _fetch_one(self) -> str:
        return call(self._core.next_text, 1, ffi.UuidTextForm.HYPHENATED)


class Uuid7Generator:
    """A UUIDv7 generator (RFC 9562 method 1: a 16-bit counter, 58 random bits).

    Every ID it hands out is unique and greater than the one before, also
    when threads share it, and its timestamp is never more than 1 ms behind
    the clock (IDs are fetched from the core in batches; a stale batch is
    dropped, not served). :meth:`next_uuid` and :meth:`next_str` share one
    order: switching between them drops the other's batch, so use one form
    per generator for speed. After ``os.fork()`` the child drops its
    batches and reseeds its randomness.

    ``rollback`` defaults to counting on from the last timestamp while the
    clock is at most 10 s behind. ``clock`` and ``entropy`` (bytes, replayed
    and cycled) make the generator deterministic and unbuffered, for tests.
    """

    __slots__ = ("__weakref__", "_core", "_lock", "_texts", "_uuids")

    def __init__(
        self,
        *,
        rollback: RollbackPolicy | None = None,
        clock: ManualClock | None = None,
        entropy: bytes | None = None,
    ) -> None:
        """Create a generator (see the class documentation)."""
        if rollback is not None and not isinstance(rollback, RollbackPolicy):
            raise TypeError(f"rollback must be a RollbackPolicy, got {type(rollback).__name__}")
        if clock is not None and not isinstance(clock, ManualClock):
            raise TypeError(f"clock must be a ManualClock, got {type(clock).__name__}")
        if entropy is not None and not isinstance(entropy, bytes | bytearray | memoryview):
            raise TypeError(f"entropy must be bytes, got {type(entropy).__name__}")
        core = call(
            ffi.Uuid7Generator,
            None if rollback is None else rollback._to_ffi(),
            None if clock is None else clock._core,
            None if entropy is None else bytes(entropy),
        )
        self._core = core
        self._lock = threading.Lock()
        unbuffered = clock is not None or entropy is not None
        self._uuids = _IntBuffer(core, self._lock, unbuffered)
        self._texts = _TextBuffer(core, self._lock, unbuffered)
        self._uuids.exclusive_with(self._texts)
        register_for_fork(self)

    def next_uuid(self) -> uuid.UUID:
        """The next ID as a :class:`uuid.UUID`."""
        batch, deadline = self._uuids._batch
        try:
            value = next(batch)
        except StopIteration:
            value = self._uuids.take_slow()
        else:
            if _time_ns() >= deadline:
                value = self._uuids.take_slow()
        made = _new_object(_UUID)
        _set_int(made, value)
        _set_is_safe(made, _SAFE_UNKNOWN)
        return made

    def next_str(self) -> str:
        """The next ID in the hyphenated form (36 characters, lower case)."""
        batch, deadline = self._texts._batch
        try:
            value = next(batch)
        except StopIteration:
            return self._texts.take_slow()
        if _time_ns() < deadline:
            return value
        return self._texts.take_slow()

    def next_bytes(self, count: int) -> bytes:
        """``count`` new IDs in one call, 16 bytes each, most significant first."""
        count = check_uint("count", count, 32)
        with self._lock:
            self._uuids.drop()
            self._texts.drop()
            return call(self._core.next_bytes, count)

    @property
    def rollback(self) -> RollbackPolicy:
        """The rollback policy in force."""
        policy: Any = self._core.policy()
        if policy.is_FAIL():
            return RollbackPolicy.fail()
        if policy.is_WAIT():
            return RollbackPolicy.wait(policy.max_millis)
        return RollbackPolicy.logical(policy.max_millis)

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._uuids.reset_after_fork(self._lock)
        self._texts.reset_after_fork(self._lock)


_DEFAULT: Final = Uuid7Generator()

#: A new UUIDv7 as a :class:`uuid.UUID`, from the process-wide generator.
uuid7: Callable[[], uuid.UUID] = _DEFAULT.next_uuid
#: A new UUIDv7 in the hyphenated form, from the same process-wide generator:
#: :func:`uuid7` and :func:`uuid7_str` draw from one sequence, so IDs taken
#: through either, in any order, increase.
uuid7_str: Callable[[], str] = _DEFAULT.next_str
