"""UUIDv7 generators: :class:`Uuid7Generator` and the process-wide :func:`uuid7`, :func:`uuid7_str`.

Apart from :mod:`mintid._uuid` (values and text forms) so that a program's first
ID loads this module, :mod:`mintid._buffer` and the light loader
(:mod:`mintid._library`) and nothing else: a generator with the core's defaults
calls the light entry points (``mintid_light_uuid7_*``); one with a test clock,
fixed entropy or its own rollback policy, the generated bindings. Both are the
core's generator, with its rules and errors.
"""

from __future__ import annotations

import _thread
import ctypes
import operator
import sys
import time
from array import array
from itertools import repeat

from mintid._buffer import Buffer, register_for_fork
from mintid._library import Answers, entry
from mintid._native import call, check_uint, ffi

TYPE_CHECKING = False
if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable
    from typing import Any

    from mintid._policy import RollbackPolicy
    from mintid.testing import ManualClock

    # Bound by _bind_uuid() (below).
    _UUID: type[uuid.UUID]
    _set_int: Callable[[uuid.UUID, int], None]
    _set_is_safe: Callable[[uuid.UUID, uuid.SafeUUID], None]
    _SAFE_UNKNOWN: uuid.SafeUUID

__all__ = ["Uuid7Generator", "uuid7", "uuid7_str"]

_BIG_ENDIAN_HOST = sys.byteorder == "big"
_time_ns = time.time_ns
_new_object = object.__new__
_uuid_bound = False

_HANDLE = ctypes.c_void_p
_U32 = ctypes.c_uint32
_SIZE = ctypes.c_size_t
_NEW = entry("mintid_light_uuid7_new", _HANDLE)
_BATCH = entry("mintid_light_uuid7_batch", _SIZE, _HANDLE, _U32, _HANDLE, _SIZE)
_TEXT_BATCH = entry("mintid_light_uuid7_text_batch", _SIZE, _HANDLE, _U32, _HANDLE, _SIZE)
_BYTES = entry("mintid_light_uuid7_bytes", _SIZE, _HANDLE, _U32, _HANDLE, _SIZE)
_POLICY = entry("mintid_light_uuid7_policy", ctypes.c_uint8, _HANDLE, ctypes.c_void_p)
_FREE = entry("mintid_light_uuid7_free", None, _HANDLE)


def _bind_uuid() -> None:
    """Bind :class:`uuid.UUID` and its slot setters, once, on the first refill of a
    buffer of UUIDs (before :meth:`Uuid7Generator.next_uuid` first makes one): the
    ``uuid`` module (and ``platform`` and ``enum`` with it) costs more to import
    than a program's first :func:`uuid7_str`, which does not need it.

    uuid.UUID keeps its fields in __slots__; writing them through the slot
    descriptors (as UUID.__init__ does through object.__setattr__) skips the
    128-bit range check of the constructor, which the core's output never needs.
    """  # noqa: D205
    global _uuid_bound, _UUID, _set_int, _set_is_safe, _SAFE_UNKNOWN
    if _uuid_bound:
        return
    import uuid

    _UUID = uuid.UUID
    _set_int = _UUID.__dict__["int"].__set__
    _set_is_safe = _UUID.__dict__["is_safe"].__set__
    _SAFE_UNKNOWN = uuid.SafeUUID.unknown
    _uuid_bound = True


def _ints_of_bytes(raw: bytes) -> list[int]:
    """128-bit values from 16 bytes each, most significant first."""
    halves = array("Q", raw)
    if not _BIG_ENDIAN_HOST:
        halves.byteswap()
    values = halves.tolist()
    highs = map(operator.lshift, values[::2], repeat(64))
    return list(map(operator.or_, highs, values[1::2]))


class _LightCore:
    """The core's generator with its defaults, through the light entry points."""

    __slots__ = ("_answers", "_handle")

    def __init__(self) -> None:
        self._handle = _NEW()
        self._answers = Answers()

    def batch(self, handed_out: int) -> tuple[bytes, int]:
        raw = self._answers.take(_BATCH, self._handle, handed_out)
        return raw[8:], int.from_bytes(raw[:8], "little")

    def text_batch(self, handed_out: int) -> tuple[list[str], int]:
        raw = self._answers.take(_TEXT_BATCH, self._handle, handed_out)
        return raw[8:].decode().split(" "), int.from_bytes(raw[:8], "little")

    def next_bytes(self, count: int) -> bytes:
        self._answers.reserve(9 + 16 * count)
        return self._answers.take(_BYTES, self._handle, count)[8:]

    def policy(self) -> RollbackPolicy:
        from mintid._policy import RollbackPolicy

        bound = ctypes.c_uint64()
        kind = _POLICY(self._handle, ctypes.byref(bound))
        if kind == 0:
            return RollbackPolicy.fail()
        if kind == 1:
            return RollbackPolicy.wait(bound.value)
        return RollbackPolicy.logical(bound.value)

    def __del__(self) -> None:
        _FREE(self._handle)


class _GeneratedCore:
    """The core's generator through the generated bindings (a test clock, fixed
    entropy or a rollback policy of one's own).
    """  # noqa: D205

    __slots__ = ("_core",)

    def __init__(
        self, rollback: RollbackPolicy | None, clock: ManualClock | None, entropy: bytes | None
    ) -> None:
        self._core = call(
            ffi.Uuid7Generator,
            None if rollback is None else rollback._to_ffi(),
            None if clock is None else clock._core,
            entropy,
        )

    def batch(self, handed_out: int) -> tuple[bytes, int]:
        raw = call(self._core.next_batch, handed_out)
        return raw[8:], int.from_bytes(raw[:8], "little")

    def text_batch(self, handed_out: int) -> tuple[list[str], int]:
        parts = call(self._core.next_text_batch, handed_out, ffi.UuidTextForm.HYPHENATED).split(" ")
        fresh_until = int(parts[0])
        del parts[0]
        return parts, fresh_until

    def next_bytes(self, count: int) -> bytes:
        return call(self._core.next_bytes, count)

    def policy(self) -> RollbackPolicy:
        from mintid._policy import RollbackPolicy

        policy: Any = self._core.policy()
        if policy.is_FAIL():
            return RollbackPolicy.fail()
        if policy.is_WAIT():
            return RollbackPolicy.wait(policy.max_millis)
        return RollbackPolicy.logical(policy.max_millis)


_Core = _LightCore | _GeneratedCore


class _IntBuffer(Buffer[int]):
    """UUIDv7s as 128-bit ints; :class:`uuid.UUID` objects are made as they go out."""

    __slots__ = ("_core",)

    def __init__(self, core: _Core, lock: _thread.LockType, unbuffered: bool) -> None:
        super().__init__(lock, unbuffered)
        self._core = core

    def _fetch(self, handed_out: int) -> tuple[list[int], int]:
        _bind_uuid()
        raw, fresh_until = self._core.batch(handed_out)
        return _ints_of_bytes(raw), fresh_until

    def _fetch_one(self) -> int:
        _bind_uuid()
        return _ints_of_bytes(self._core.next_bytes(1))[0]


class _TextBuffer(Buffer[str]):
    """UUIDv7s in the hyphenated form."""

    __slots__ = ("_core",)

    def __init__(self, core: _Core, lock: _thread.LockType, unbuffered: bool) -> None:
        super().__init__(lock, unbuffered)
        self._core = core

    def _fetch(self, handed_out: int) -> tuple[list[str], int]:
        return self._core.text_batch(handed_out)

    def _fetch_one(self) -> str:
        from mintid._uuid import format_uuid

        return format_uuid(self._core.next_bytes(1))


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
        core: _Core
        if rollback is None and clock is None and entropy is None:
            core = _LightCore()
        else:
            from mintid._policy import RollbackPolicy
            from mintid.testing import ManualClock

            if rollback is not None and not isinstance(rollback, RollbackPolicy):
                raise TypeError(f"rollback must be a RollbackPolicy, got {type(rollback).__name__}")
            if clock is not None and not isinstance(clock, ManualClock):
                raise TypeError(f"clock must be a ManualClock, got {type(clock).__name__}")
            if entropy is not None and not isinstance(entropy, bytes | bytearray | memoryview):
                raise TypeError(f"entropy must be bytes, got {type(entropy).__name__}")
            core = _GeneratedCore(rollback, clock, None if entropy is None else bytes(entropy))
        self._core = core
        self._lock = _thread.allocate_lock()
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
            return self._core.next_bytes(count)

    @property
    def rollback(self) -> RollbackPolicy:
        """The rollback policy in force."""
        return self._core.policy()

    def _after_fork_in_child(self) -> None:
        self._lock = _thread.allocate_lock()
        self._uuids.reset_after_fork(self._lock)
        self._texts.reset_after_fork(self._lock)


_DEFAULT = Uuid7Generator()

#: A new UUIDv7 as a :class:`uuid.UUID`, from the process-wide generator.
uuid7: Callable[[], uuid.UUID] = _DEFAULT.next_uuid
#: A new UUIDv7 in the hyphenated form, from the same process-wide generator:
#: :func:`uuid7` and :func:`uuid7_str` draw from one sequence, so IDs taken
#: through either, in any order, increase.
uuid7_str: Callable[[], str] = _DEFAULT.next_str
