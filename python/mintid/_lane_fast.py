"""The Redis fast path on the lane: the core's plain C entry points
(``mintid_lane_fast_*``), one :mod:`ctypes` call per decision.

The layout is the core's (``docs/spec.md``, "The lane"); this module only
packs what Redis said and what the database path came to, and reads the
core's calls and verdicts back.
"""  # noqa: D205

from __future__ import annotations

import ctypes
import struct
from typing import Any, Final

from mintid._lane import _BYTES_P, _CAP, _OUTCOMES, _P, _SIZE, Finished, Lane, _entry, _error

__all__ = ["FastLane", "RedisCall"]

#: A script to run: its name, its keys, its arguments.
RedisCall = tuple[str, list[str], list[bytes]]

_C_U64 = ctypes.c_uint64
_C_I64 = ctypes.c_int64
_U32: Final = struct.Struct("<I")
_U64: Final = struct.Struct("<Q")
_FENCE: Final = struct.Struct("<QQQ")
_FAIL: Final = 5

_NEW: Final = _entry("mintid_lane_fast_new", _P, _C_U64, _C_I64)
_FREE: Final = _entry("mintid_lane_fast_free", None, _P)
_CHECK: Final = _entry(
    "mintid_lane_fast_check", _SIZE, _P, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _C_I64, _C_U64, _P, _SIZE
)
_READ: Final = _entry(
    "mintid_lane_fast_read", _SIZE, _P, _BYTES_P, _SIZE, _BYTES_P, _SIZE, _P, _SIZE
)
_SETTLE: Final = _entry(
    "mintid_lane_fast_settle",
    _SIZE,
    _P,
    _BYTES_P,
    _SIZE,
    _BYTES_P,
    _SIZE,
    _BYTES_P,
    _SIZE,
    _C_U64,
    _P,
    _SIZE,
)
_CLAIMED: Final = _entry(
    "mintid_lane_fast_claimed", _SIZE, _P, _BYTES_P, _SIZE, _C_U64, _C_U64, _P, _SIZE
)
_buffer = ctypes.create_string_buffer
_string_at = ctypes.string_at


def _packed(entry: Any, *args: Any) -> bytes:
    """Call ``entry`` with ``args`` and an output buffer; the bytes it packed
    (computed again into a buffer that fits when longer: the calls are pure).
    """  # noqa: D205
    out = _buffer(_CAP)
    length = entry(*args, out, _CAP)
    if length > _CAP:
        out = _buffer(length)
        entry(*args, out, length)
    packed = _string_at(out, length)
    if packed[0] == _FAIL:
        raise _error(packed)
    return packed


def _call(packed: bytes) -> RedisCall | None:
    """A packed call: ``None``, or the script's name, keys and arguments."""
    if packed[0] == 0:
        return None
    end = 2 + packed[1]
    name = packed[2:end].decode()
    at = end
    lists: list[list[bytes]] = []
    for _ in range(2):
        count = packed[at]
        at += 1
        items = []
        for _ in range(count):
            length = _U32.unpack_from(packed, at)[0]
            items.append(packed[at + 4 : at + 4 + length])
            at += 4 + length
        lists.append(items)
    return name, [key.decode() for key in lists[0]], lists[1]


def _bytes(raw: bytes) -> bytes:
    return _U32.pack(len(raw)) + raw


def answer(reply: Any) -> bytes:
    """What Redis said to a ``check``, packed: nil, the fields of an array, or
    a failure (a reply of another shape).
    """  # noqa: D205
    if reply is None:
        return b"\0"
    if not isinstance(reply, list):
        return failed(f"a reply of type {type(reply).__name__}")
    out = bytearray(b"\1")
    out += _U32.pack(len(reply))
    for field in reply:
        if field is None:
            out.append(0)
        elif isinstance(field, bytes):
            out.append(1)
            out += _bytes(field)
        elif isinstance(field, int | str):
            out.append(1)
            out += _bytes(str(field).encode())
        else:
            return failed(f"an element of type {type(field).__name__}")
    return bytes(out)


def failed(message: str) -> bytes:
    """Redis failed (an error, a timeout, a lost connection), packed."""
    return b"\2" + _bytes(message.encode("utf-8", "replace"))


def _fence(held: Any) -> bytes:
    return _FENCE.pack(held.token, held.created_millis, held.lease_deadline_millis)


def executed(held: Any, content_type: str, body: bytes) -> bytes:
    """The operation ran under ``held`` and this response is committed, packed."""
    return b"\0" + _fence(held) + _bytes(content_type.encode()) + _bytes(body)


def failed_stored(held: Any, message: str, response: tuple[str, bytes] | None) -> bytes:
    """The operation ran under ``held`` and its final failure is committed, packed."""
    stored = (
        b"\0" if response is None else b"\1" + _bytes(response[0].encode()) + _bytes(response[1])
    )
    return b"\1" + _fence(held) + _bytes(message.encode("utf-8", "replace")) + stored


def other(held: Any) -> bytes:
    """Anything else (``held``: the claim the request held, if any), packed."""
    return b"\2\0" if held is None else b"\2\1" + _fence(held)


#: The verdicts that send the request on to the database, by their tag (the lane's
#: layout), named as ``FastVerdict::as_str`` names them; the other tags are a ``hit``.
_ON_TO_DATABASE: Final = {0: "miss", 1: "fallback"}


def _verdict(packed: bytes) -> tuple[str, Finished | None]:
    """A packed verdict: its name (``hit``, ``miss``, ``fallback``) and, for a
    hit, the end to answer with (``replay`` or ``in_progress``).
    """  # noqa: D205
    kind = packed[0]
    if kind in _ON_TO_DATABASE:
        return _ON_TO_DATABASE[kind], None
    return "hit", _answer(packed)


def _answer(packed: bytes) -> Finished:
    """A hit's end: a replay or in progress."""
    kind = packed[0]
    if kind == 2:
        outcome = _OUTCOMES[packed[1]]
        at = 3
        response = None
        if packed[2]:
            length = _U32.unpack_from(packed, at)[0]
            content_type = packed[at + 4 : at + 4 + length].decode()
            at += 4 + length
            length = _U32.unpack_from(packed, at)[0]
            response = (content_type, packed[at + 4 : at + 4 + length])
            at += 4 + length
        error = None
        if packed[at]:
            length = _U32.unpack_from(packed, at + 1)[0]
            error = packed[at + 5 : at + 5 + length].decode()
        return ("replay", outcome, response, error)
    assert kind == 3, f"a verdict tagged {kind}"
    return ("in_progress", _U64.unpack_from(packed, 1)[0])


class FastLane:
    """The fast path of one store on the lane (a core handle), under the
    policy of its record ``lane``.
    """  # noqa: D205

    __slots__ = ("_handle", "_lane")

    def __init__(self, lane: Lane, ttl_millis: int | None) -> None:
        """The fast path of ``lane``'s policy; entries live at most ``ttl_millis``."""
        self._lane = lane  # keeps the record lane's handle alive
        self._handle = _NEW(lane._handle, -1 if ttl_millis is None else ttl_millis)

    def check(
        self, key_text: str, digest: bytes, key_created_millis: int | None, now_millis: int
    ) -> RedisCall | None:
        """The ``check`` to run before the database, or ``None``."""
        key = key_text.encode()
        created = -1 if key_created_millis is None else key_created_millis
        args = (self._handle, key, len(key), digest, len(digest), created, now_millis)
        return _call(_packed(_CHECK, *args))

    def read(self, digest: bytes, packed_answer: bytes) -> tuple[str, Finished | None]:
        """What Redis's packed answer means (see :func:`_verdict`)."""
        args = (self._handle, digest, len(digest), packed_answer, len(packed_answer))
        return _verdict(_packed(_READ, *args))

    def settle(self, key_text: str, digest: bytes, settled: bytes, now_millis: int) -> RedisCall:
        """The script after the database path, for what it came to (packed)."""
        key = key_text.encode()
        args = (self._handle, key, len(key), digest, len(digest), settled, len(settled), now_millis)
        call = _call(_packed(_SETTLE, *args))
        assert call is not None
        return call

    def claimed(self, key_text: str, held: Any) -> RedisCall | None:
        """The script after a claim (a takeover invalidates the entry), or ``None``."""
        key = key_text.encode()
        args = (self._handle, key, len(key), held.token, held.created_millis)
        return _call(_packed(_CLAIMED, *args))

    def __del__(self) -> None:
        """Free the core's handle."""
        _FREE(self._handle)
