"""The package's native library, opened with :mod:`ctypes` alone (the light loader).

The generated bindings (``mintid._ffi.mintid_ffi``, 16,000 lines) take longer to
import than a whole ID costs a program that needs one; this module opens the
same shared library by path and nothing else, so the plain C entry points
(``mintid_light_*`` for the ID hot paths, ``mintid_lane_*`` for the drivers)
are reachable without it. Both open one library: the process has one copy of
its state (thread randomness, ...), whichever loaded it first.

API: :func:`library` (the ``ctypes.CDLL``), :func:`entry` (one typed entry
point), :func:`refusal` (a packed ``FAIL`` answer as the core's typed error)
and :class:`Answers` (the buffer a ``mintid_light_*`` entry point answers into).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from mintid.errors import MintidError

__all__ = ["Answers", "entry", "library", "refusal"]

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_opened: ctypes.CDLL | None = None


def _path() -> str:
    """Where the wheel puts the library: beside the generated module, in ``mintid/_ffi``."""
    if sys.platform == "darwin":
        name = "libmintid_ffi.dylib"
    elif sys.platform.startswith("win"):
        name = "mintid_ffi.dll"
    else:
        name = "libmintid_ffi.so"
    return os.path.join(os.path.dirname(__file__), "_ffi", name)


def library() -> ctypes.CDLL:
    """The package's native library (opened once, by path, on first use)."""
    global _opened
    if _opened is None:
        _opened = ctypes.CDLL(_path())
    return _opened


def entry(name: str, restype: Any, *argtypes: Any) -> Any:
    """The C entry point ``name`` of :func:`library`, with its result and argument types set."""
    function = getattr(library(), name)
    function.argtypes = argtypes
    function.restype = restype
    return function


def _optional(packed: bytes, at: int) -> tuple[bytes | None, int]:
    if packed[at] == 0:
        return None, at + 1
    length = _U32.unpack_from(packed, at + 1)[0]
    return packed[at + 5 : at + 5 + length], at + 5 + length


def refusal(packed: bytes) -> MintidError:
    """The core's typed error packed in ``packed`` (a lane ``FAIL``: tag, code,
    detail, part, position, problem; ``docs/spec.md``, "The lane"), of the class
    its code names. Imports :mod:`mintid.errors` (and the generated bindings):
    errors are the slow path.
    """  # noqa: D205
    from mintid.errors import error_class

    at = 1
    fields: list[str] = []
    for _ in range(2):
        length = _U32.unpack_from(packed, at)[0]
        fields.append(packed[at + 4 : at + 4 + length].decode())
        at += 4 + length
    part, at = _optional(packed, at)
    position = None
    if packed[at]:
        position = _U64.unpack_from(packed, at + 1)[0]
        at += 8
    problem, _ = _optional(packed, at + 1)
    code, detail = fields
    return error_class(code)(
        detail,
        code,
        part=None if part is None else part.decode(),
        position=position,
        problem_name=None if problem is None else problem.decode(),
    )


class Answers:
    """The buffer one object's ``mintid_light_*`` calls answer into (``docs/spec.md``,
    "The light entry points"), grown to the longest answer. Not thread-safe: its
    owner calls it under its own lock.
    """  # noqa: D205

    __slots__ = ("_buffer", "_cap")

    def __init__(self, cap: int = 1024) -> None:
        """A buffer of ``cap`` bytes to start with."""
        self._cap = cap
        self._buffer = ctypes.create_string_buffer(cap)

    def reserve(self, length: int) -> None:
        """Grow the buffer to ``length`` bytes (an answer whose length is known)."""
        if length > self._cap:
            self._cap = length
            self._buffer = ctypes.create_string_buffer(length)

    def take(self, function: Any, *args: Any) -> bytes:
        """``function(*args, buffer, cap)``'s answer after its ``0``: the 8-byte
        freshness bound and the IDs. An answer longer than the buffer is asked for
        again with a buffer of its length (its IDs are lost, never issued twice); a
        refusal raises the core's error.
        """  # noqa: D205
        while True:
            length = function(*args, self._buffer, self._cap)
            if length <= self._cap:
                break
            self.reserve(length)
        packed = ctypes.string_at(self._buffer, length)
        if packed[0]:
            raise refusal(packed)
        return packed[1:]
